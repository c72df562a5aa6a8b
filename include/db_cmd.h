/* Headless commands, shared by the binary's dispatcher (ui/main.c). Each
 * takes the arguments after its name (argv[0] = command name) and returns
 * the process exit code: 0 all ok, 1 something diverges/changed, 2 usage or
 * input error. Below them, the one option parser, --help layout and error
 * style of every command and of the workbench. */
#ifndef DB_CMD_H
#define DB_CMD_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "db_compare.h"

int db_cmd_compare(int argc, char **argv);
int db_cmd_ls(int argc, char **argv);
int db_cmd_schema(int argc, char **argv);
int db_cmd_bisect(int argc, char **argv);
int db_cmd_replay(int argc, char **argv);
int db_cmd_export(int argc, char **argv);

/* One option: the --help line is made from the same row as the parsing,
 * so the two cannot drift. */
/* The values of a repeatable option (its db_opt row has val NULL), in the
 * order given (borrowed from argv). */
#define DB_OPTLIST_MAX 64
typedef struct db_optlist {
	const char *name;       /* the option's long name */
	const char *v[DB_OPTLIST_MAX];
	size_t n;
} db_optlist;

typedef struct db_opt {
	const char *name;       /* long name without "--" */
	char short_name;        /* 0: none */
	const char *arg;        /* the value's name in the help ("P"); NULL: a flag */
	const char **val;       /* arg: where the value goes (borrowed from argv) */
	bool *flag;             /* !arg: set true when given */
	const char *help;       /* help text ('\n' starts a continuation line) */
} db_opt;

/* A command as its --help shows it: usage, one-line description, options
 * (then -h/--help and -V/--version, which every command takes), exit status. */
typedef struct db_cmd {
	const char *name;       /* "compare"; NULL: the workbench (no command) */
	const char *args;       /* the usage line after the name: "REF [TARGET] [options]" */
	const char *desc;       /* one line */
	const char *exit;       /* "0 ..., 1 ..., 2 ..." (wrapped when printed) */
	const db_opt *opts;
	size_t n_opts;
	int max_pos;            /* positional arguments at most */
	void (*more)(FILE *out);        /* extra help after the options; NULL: none */
	db_optlist *const *lists;       /* the repeatable options' values */
	size_t n_lists;
} db_cmd;

/* Parse argv[1..]: "--name v", "--name=v", "-x v", "-xv"; "--" ends the
 * options; options and positionals in any order. Positionals go to pos.
 * Returns -1 when the command should run; otherwise the exit code to
 * return at once: 0 after --help or --version (printed on stdout), 2 after
 * a usage error (printed on stderr by db_cmd_usage_error). */
int db_cmd_parse(const db_cmd *c, int argc, char **argv, const char **pos, int *n_pos);
/* The command's --help text. */
void db_cmd_usage(const db_cmd *c, FILE *out);
/* "dumpbisect NAME: MESSAGE" and the hint "Try 'dumpbisect NAME --help'."
 * on stderr; returns 2 (the usage-error exit status). */
int db_cmd_usage_error(const db_cmd *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "dumpbisect NAME: MESSAGE" on stderr (input errors: no hint); returns 2. */
int db_cmd_error(const db_cmd *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* --format values. The human format is "table" in every command, with
 * "text" accepted as its alias. */
typedef enum db_fmt { DB_FMT_TABLE, DB_FMT_CSV, DB_FMT_JSON, DB_FMT_JSONL } db_fmt;
#define DB_FMT_BIT(f) (1u << (f))
/* The format v names among allowed (DB_FMT_BIT mask); -1 after a usage
 * error message. */
int db_cmd_format(const db_cmd *c, const char *v, unsigned allowed);

/* The options of every command that opens a comparison (and of the
 * workbench): --profile/-p, --filter, --threads/-j, --no-cache.
 * profile_help says what the default profile is. */
typedef struct db_cmp_args {
	const char *profile, *filter, *threads;
	bool no_cache;
	bool follow_links;      /* --follow-links: directory links leaving a tree */
	const char *slot;       /* compare --slot (not in DB_CMP_OPTS) */
	const char *noise;      /* --noise DIR (DB_NOISE_OPT) */
	const char *slots;      /* --slots N (DB_SLOTS_OPT) */
	const char *align;      /* --align auto|tokens|passes (DB_CMP_OPTS) */
} db_cmp_args;
#define DB_SLOTS_OPT(a)                                                             \
	{"slots", 0, "N", &(a).slots, NULL,                                          \
	 "one TREE whose batch holds the same prompt N times:\n"                     \
	 "slot 0 against slots 1..N-1, bitwise (slot k is\n"                         \
	 "shown as rank k); REF TARGET: REF ran the prompt\n"                        \
	 "alone, each of TARGET's N slots against it"}
#define DB_NOISE_OPT(a)                                                             \
	{"noise", 0, "DIR", &(a).noise, NULL,                                        \
	 "the reference side run again (the target's layout or\n"                    \
	 "dtype, no bug): judge each pair against that run's\n"                      \
	 "error at the same place (within / beyond noise)"}
#define DB_CMP_OPTS(a, profile_help)                                                \
	{"profile", 'p', "P", &(a).profile, NULL, profile_help},                    \
	{"filter", 0, "RE", &(a).filter, NULL,                                       \
	 "only stages (or inner keys) matching the PCRE2 regex"},                    \
	{"threads", 'j', "N", &(a).threads, NULL,                                    \
	 "worker threads (default: the number of CPUs)"},                            \
	{"no-cache", 0, NULL, NULL, &(a).no_cache,                                   \
	 "do not read or write any cache (metrics, file index)"},                    \
	{"follow-links", 0, NULL, NULL, &(a).follow_links,                           \
	 "follow symlinks to directories outside a tree\n"                          \
	 "(default: listed as skipped, not followed)"},                              \
	{"align", 0, "HOW", &(a).align, NULL,                                        \
	 "auto (default): one side's passes that add up along\n"                    \
	 "tokens to the other's one pass are lined up by token;\n"                  \
	 "tokens: insist; passes: pair passes by name"}
#define DB_PROFILE_HELP "profile name or YAML file (default: auto-detect)"
#define DB_PROFILE_SESSION_HELP "profile name or YAML file (default: the session's)"
/* a into o (strings borrowed; o's other fields untouched). 0, or 2 after a
 * usage error message (a bad --threads). */
int db_cmp_args_apply(const db_cmd *c, const db_cmp_args *a, db_compare_opts *o);

/* Opening the workbench from a command (`replay --tui`, `bisect` on a
 * terminal without --auto): the binary's main (ui/) sets it to the
 * workbench's entry point; the commands call it with workbench arguments
 * (argv[0] = "dumpbisect", then e.g. --session FILE --ref DIR --target DIR
 * --profile P) and return its exit code. NULL when no workbench is linked. */
extern int (*db_cmd_tui_hook)(int argc, char **argv);

#endif
