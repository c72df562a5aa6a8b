/* dumpbisect ls PATH: a tree — what the profile parsed, counted per
 * side/phase/pass/rank/layer/stage, plus unparsed, skipped and refused
 * files; a single file — its tensors (with --stats, sum/min/max/mean). */
#include "db_cmd.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd_util.h"
#include "db_esc.h"
#include "db_index.h"
#include "db_json.h"
#include "db_metrics.h"
#include "db_profile.h"
#include "db_reader.h"
#include "db_bus.h"
#include "util/strmap.h"
#include "read/walk.h"

/* ---- one file ---------------------------------------------------------- */

typedef struct stats_job {
	const db_tensor *t;
	db_stats *s;
	db_err *err;
} stats_job;

static int stats_run(void *arg)
{
	stats_job *j = arg;
	return db_stats_compute(j->t, j->s, j->err);
}

/* The stats read the mapping: a file that shrinks meanwhile is an error
 * for this entry (db_bus.h), not the end of the process. */
static int stats_guarded(const db_file *f, const db_entry *e, db_stats *s)
{
	db_err se;
	stats_job j = {&e->t, s, &se};
	const void *at = NULL;
	int rc = db_bus_run(stats_run, &j, &at);
	if (rc == DB_BUS_FAULT)
		fprintf(stderr, "dumpbisect ls: %s: entry '%s': byte %lld: file changed while read "
		        "(it shrank under its mapping)\n", db_esc(f->path), db_esc(e->key),
		        at ? (long long)((const uint8_t *)at - f->map) : -1LL);
	return rc;
}

static int ls_file(const char *path, bool json, bool stats)
{
	db_file *f;
	db_err err = {{0}};
	if (db_file_open(path, &f, &err) != 0) {
		fprintf(stderr, "dumpbisect ls: %s\n", err.msg);
		return 2;
	}
	int rc = 0;
	if (json) {
		fputs("{\"file\": ", stdout);
		db_json_str(stdout, path);
		fputs(", \"format\": ", stdout);
		db_json_str(stdout, db_format_name(f->format));
		fputs(", \"tensors\": [", stdout);
	} else {
		printf("%s (%s, %zu tensors)\n", db_esc(path), db_format_name(f->format), f->n_entries);
		if (stats)
			printf("%-32s %-14s %-20s %14s %14s %14s %14s\n", "key", "dtype", "shape", "sum",
			       "min", "max", "mean");
		else
			printf("%-32s %-14s %s\n", "key", "dtype", "shape");
	}
	for (size_t i = 0; i < f->n_entries; i++) {
		const db_entry *e = &f->entries[i];
		const char *key = e->key ? e->key : "";
		db_stats s;
		bool have_stats = false;
		if (e->err) {
			fprintf(stderr, "dumpbisect ls: %s\n", db_esc(e->err));
			rc = 2;
		} else if (stats) {
			int sr = stats_guarded(f, e, &s);
			have_stats = sr == 0;
			if (sr == DB_BUS_FAULT)
				rc = 2;
		}
		char shape[256];
		if (!e->err)
			db_fmt_shape(e->t.ndim, e->t.shape, shape, sizeof shape);
		if (json) {
			fputs(i ? ",\n  {\"key\": " : "\n  {\"key\": ", stdout);
			db_json_str(stdout, key);
			if (e->err) {
				fputs(", \"error\": ", stdout);
				db_json_str(stdout, e->err);
			} else {
				fputs(", \"dtype\": ", stdout);
				db_json_str(stdout, db_dtype_name(e->t.dtype));
				fputs(", \"shape\": ", stdout);
				db_json_shape(stdout, e->t.ndim, e->t.shape);
				if (stats) {
					const char *names[] = {"sum", "min", "max", "mean"};
					double v[] = {s.sum, s.min, s.max, s.mean};
					for (int k = 0; k < 4; k++) {
						printf(", \"%s\": ", names[k]);
						db_json_num(stdout, have_stats && (k == 0 || s.n) ? v[k] : NAN);
					}
				}
			}
			fputc('}', stdout);
		} else if (e->err) {
			printf("%-32s error: %s\n", *key ? db_esc(key) : "(tensor)", db_esc(e->err));
		} else if (stats && have_stats) {
			printf("%-32s %-14s %-20s %14.6g %14.6g %14.6g %14.6g\n", *key ? db_esc(key) : "(tensor)",
			       db_dtype_name(e->t.dtype), shape, s.sum, s.min, s.max, s.mean);
		} else {
			printf("%-32s %-14s %s%s\n", *key ? db_esc(key) : "(tensor)", db_dtype_name(e->t.dtype),
			       shape, stats ? "  (no stats: not comparable)" : "");
		}
	}
	if (json)
		fputs("\n]}\n", stdout);
	db_file_close(f);
	return rc;
}

/* ---- a tree ------------------------------------------------------------ */

typedef struct counter {
	db_strmap idx;
	char **names;
	size_t *counts;
	size_t n;
} counter;

static void count(counter *c, const char *name)
{
	bool added;
	size_t *v = db_strmap_put(&c->idx, name, c->n, &added);
	if (!v)
		return;
	if (added) {
		char **nn = realloc(c->names, (c->n + 1) * sizeof *nn);
		size_t *nc = realloc(c->counts, (c->n + 1) * sizeof *nc);
		if (nn)
			c->names = nn;
		if (nc)
			c->counts = nc;
		if (!nn || !nc || !(c->names[c->n] = strdup(name)))
			return;
		c->counts[c->n++] = 0;
	}
	c->counts[*v]++;
}

static void counter_free(counter *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->names[i]);
	free(c->names);
	free(c->counts);
	db_strmap_free(&c->idx);
}

static counter *sort_ctx;

static int cmp_nat_idx(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return db_natcmp(sort_ctx->names[x], sort_ctx->names[y]);
}

/* Print a counter; sorted naturally unless keep_order (execution order). */
static void print_counter(const char *title, counter *c, bool keep_order, bool json, bool first)
{
	size_t *ord = malloc((c->n + 1) * sizeof *ord);
	if (!ord)
		return;
	for (size_t i = 0; i < c->n; i++)
		ord[i] = i;
	if (!keep_order) {
		sort_ctx = c;
		qsort(ord, c->n, sizeof *ord, cmp_nat_idx);
	}
	if (json) {
		fputs(first ? "" : ", ", stdout);
		db_json_str(stdout, title);
		fputs(": {", stdout);
		for (size_t k = 0; k < c->n; k++) {
			fputs(k ? ", " : "", stdout);
			db_json_str(stdout, c->names[ord[k]]);
			printf(": %zu", c->counts[ord[k]]);
		}
		fputs("}", stdout);
	} else if (c->n) {
		printf("%-8s", db_esc(title));
		for (size_t k = 0; k < c->n; k++)
			printf("%s%s %zu", k ? ", " : " ", *c->names[ord[k]] ? db_esc(c->names[ord[k]]) : "(none)",
			       c->counts[ord[k]]);
		putchar('\n');
	}
	free(ord);
}

/* The passes of each phase: the phases' steps are distinct passes (Miles'
 * engine step 0 is not its training's micro-batch 0). Text: one passes line
 * per phase; JSON: "phase_passes": {phase: {pass: count}}. */
static void print_phase_passes(const db_index *ix, const counter *phases, bool json)
{
	if (json)
		fputs(", \"phase_passes\": {", stdout);
	for (size_t k = 0; k < phases->n; k++) {
		counter c = {0};
		db_strmap_init(&c.idx);
		for (size_t i = 0; i < ix->n_items; i++)
			if (!strcmp(ix->items[i].f.phase, phases->names[k]))
				count(&c, ix->items[i].f.pass);
		if (json) {
			print_counter(phases->names[k], &c, false, true, k == 0);
		} else if (c.n > 1 || (c.n == 1 && *c.names[0])) {
			char title[64];
			snprintf(title, sizeof title, "passes   %s:",
			         *phases->names[k] ? phases->names[k] : "(none)");
			print_counter(title, &c, false, false, false);
		}
		counter_free(&c);
	}
	if (json)
		fputc('}', stdout);
}

static void json_list(const char *title, char **v, size_t n)
{
	printf(", \"%s\": [", title);
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ", " : "", stdout);
		db_json_str(stdout, v[i]);
	}
	fputc(']', stdout);
}

/* Every item got its side only by lacking the other side's marker (atom:
 * no ref_ prefix means target): in a tree of one run that says nothing,
 * the same files are the reference when given as REF. */
static bool unmarked_side(const db_profile *p, const counter *sides)
{
	if (sides->n != 1)
		return false;
	const char *s = sides->names[0];
	return (!strcmp(s, "target") && !*p->side_target) || (!strcmp(s, "ref") && !*p->side_ref);
}

/* Regular files the profile's file pattern does not take (gen.sh, *.json
 * beside the dumps): the rest of the files seen. */
static size_t files_other(const db_index *ix)
{
	size_t used = ix->n_files + ix->n_unparsed;
	return ix->n_files_seen > used ? ix->n_files_seen - used : 0;
}

static int ls_tree(const char *root, const char *profile, bool json)
{
	db_profile *p = NULL;
	db_err err = {{0}};
	char why[512];
	if (profile) {
		if (db_profile_load(profile, &p, &err) != 0) {
			fprintf(stderr, "dumpbisect ls: %s\n", err.msg);
			return 2;
		}
		snprintf(why, sizeof why, "%s: given with --profile", p->name);
	} else if (db_profile_detect(root, &p, why, sizeof why, &err) != 0) {
		fprintf(stderr, "dumpbisect ls: %s\n", err.msg);
		return 2;
	}
	db_index *ix;
	if (db_index_scan(root, p, NULL, &ix, &err) != 0) {
		fprintf(stderr, "dumpbisect ls: %s\n", err.msg);
		db_profile_free(p);
		return 2;
	}
	counter sides = {0}, phases = {0}, passes = {0}, ranks = {0}, layers = {0}, stages = {0};
	counter *all[] = {&sides, &phases, &passes, &ranks, &layers, &stages};
	for (size_t k = 0; k < 6; k++)
		db_strmap_init(&all[k]->idx);
	size_t n_err = 0;
	bool any_side = false;
	for (size_t i = 0; i < ix->n_items; i++) {
		const db_item *it = &ix->items[i];
		char b[32];
		any_side |= it->f.side[0] != 0;
		count(&sides, it->f.side);
		count(&phases, it->f.phase);
		count(&passes, it->f.pass);
		snprintf(b, sizeof b, it->f.rank >= 0 ? "%d" : "-", it->f.rank);
		count(&ranks, b);
		snprintf(b, sizeof b, it->f.layer >= 0 ? "%d" : "-", it->f.layer);
		count(&layers, b);
		count(&stages, it->f.stage);
		n_err += it->err != NULL;
	}
	if (json) {
		fputs("{\"root\": ", stdout);
		db_json_str(stdout, root);
		fputs(", \"profile\": ", stdout);
		db_json_str(stdout, p->name);
		fputs(", \"why\": ", stdout);
		db_json_str(stdout, why);
		printf(", \"files_seen\": %zu, \"files\": %zu, \"files_other\": %zu, \"refused\": %zu, "
		       "\"links_not_followed\": %zu, \"tensors\": %zu, ", ix->n_files_seen, ix->n_files,
		       files_other(ix), ix->n_refused, ix->n_links_out, ix->n_items);
		if (unmarked_side(p, &sides))   /* one run: no side to claim (as the text) */
			fputs("\"sides\": {}, \"one_run\": true", stdout);
		else
			print_counter("sides", &sides, false, true, true);
		print_counter("phases", &phases, true, true, false);
		print_counter("passes", &passes, false, true, false);
		print_phase_passes(ix, &phases, true);
		print_counter("ranks", &ranks, false, true, false);
		print_counter("layers", &layers, false, true, false);
		print_counter("stages", &stages, true, true, false);
		json_list("unparsed", ix->unparsed, ix->n_unparsed);
		json_list("skipped", ix->skipped, ix->n_skipped);
		fputs(", \"errors\": [", stdout);
		size_t k = 0;
		for (size_t i = 0; i < ix->n_items; i++) {
			const db_item *it = &ix->items[i];
			if (!it->err)
				continue;
			fputs(k++ ? ", {\"path\": " : "{\"path\": ", stdout);
			db_json_str(stdout, it->path);
			fputs(", \"key\": ", stdout);
			db_json_str(stdout, it->key);
			fputs(", \"error\": ", stdout);
			db_json_str(stdout, it->err);
			fputc('}', stdout);
		}
		fputs("]}\n", stdout);
	} else {
		printf("profile %s (%s)\nroot    %s\n", db_esc(p->name), db_esc(why), db_esc(root));
		/* the three parts add up to the regular files seen; refused ones
		 * are among the parsed, skipped ones (not regular files, loops,
		 * unreadable) are not among the files seen */
		printf("files   %zu parsed (%zu refused) + %zu unparsed + %zu not dump-named = %zu files; "
		       "%zu skipped", ix->n_files, ix->n_refused, ix->n_unparsed, files_other(ix),
		       ix->n_files_seen, ix->n_skipped);
		if (ix->n_links_out)
			printf(" (%zu link%s to a directory outside the tree, not followed)",
			       ix->n_links_out, ix->n_links_out == 1 ? "" : "s");
		putchar('\n');
		printf("tensors %zu\n", ix->n_items);
		if (any_side && unmarked_side(p, &sides))
			puts("sides    none marked: one run, REF or TARGET as it is given");
		else if (any_side)
			print_counter("sides", &sides, false, false, false);
		if (phases.n > 1 || (phases.n == 1 && *phases.names[0]))
			print_counter("phases", &phases, true, false, false);
		if (phases.n > 1)
			print_phase_passes(ix, &phases, false);
		else if (passes.n > 1 || (passes.n == 1 && *passes.names[0]))
			print_counter("passes", &passes, false, false, false);
		print_counter("ranks", &ranks, false, false, false);
		print_counter("layers", &layers, false, false, false);
		print_counter("stages", &stages, true, false, false);
		if (ix->n_unparsed) {
			puts("unparsed (no pattern of the profile matches):");
			for (size_t i = 0; i < ix->n_unparsed; i++)
				printf("  %s\n", db_esc(ix->unparsed[i]));
		}
		if (ix->n_skipped) {
			puts("skipped:");
			for (size_t i = 0; i < ix->n_skipped; i++)
				printf("  %s\n", db_esc(ix->skipped[i]));
		}
		if (n_err) {
			puts("errors:");
			for (size_t i = 0; i < ix->n_items; i++)
				if (ix->items[i].err)
					printf("  %s\n", db_esc(ix->items[i].err));
		}
	}
	int rc = 0;
	if (ix->n_items == 0) {
		fprintf(stderr, "dumpbisect ls: %s: no tensors the profile %s understands\n",
		        db_esc(root), db_esc(p->name));
		rc = 2;
	}
	for (size_t k = 0; k < 6; k++)
		counter_free(all[k]);
	db_index_free(ix);
	db_profile_free(p);
	return rc;
}

/* ---- the profiles ------------------------------------------------------ */

/* Every profile --profile accepts by name, with where it comes from: the
 * built-in copy or the user's file that shadows it (as db_profile_load
 * would choose). A user file that does not load is listed with its error. */
static int ls_profiles(bool json)
{
	char **names = NULL;
	size_t n = db_profile_names(&names);
	if (!names) {
		fputs("dumpbisect ls: out of memory\n", stderr);
		return 2;
	}
	int w = 0, rc = 0;
	for (size_t i = 0; i < n; i++)
		if ((int)strlen(names[i]) > w)
			w = (int)strlen(names[i]);
	if (json)
		fputs("[", stdout);
	for (size_t i = 0; i < n; i++) {
		db_profile *p = NULL;
		db_err err = {{0}};
		bool ok = db_profile_load(names[i], &p, &err) == 0;
		const char *origin = ok ? p->origin : NULL;
		if (json) {
			fputs(i ? ",\n {\"name\": " : "\n {\"name\": ", stdout);
			db_json_str(stdout, names[i]);
			fputs(", \"origin\": ", stdout);
			db_json_str(stdout, origin);
			fputs(", \"error\": ", stdout);
			db_json_str(stdout, ok ? NULL : err.msg);
			fputc('}', stdout);
		} else if (ok) {
			printf("%-*s  %s\n", w, db_esc(names[i]), db_esc(origin));
		} else {
			printf("%-*s  error: %s\n", w, db_esc(names[i]), err.msg);
		}
		if (!ok)
			rc = 2;
		db_profile_free(p);
		free(names[i]);
	}
	free(names);
	if (json)
		fputs("\n]\n", stdout);
	return rc;
}

int db_cmd_ls(int argc, char **argv)
{
	const char *profile = NULL, *format = "table";
	bool stats = false, profiles = false, follow = false;
	const db_opt opts[] = {
		{"profile", 'p', "P", &profile, NULL,
		 "profile name or YAML file (trees; default: auto-detect)"},
		{"format", 0, "F", &format, NULL, "table (default) or json"},
		{"stats", 0, NULL, NULL, &stats, "files: sum, min, max and mean of each tensor"},
		{"profiles", 0, NULL, NULL, &profiles,
		 "list the profile names and their origins (no PATH)"},
		{"follow-links", 0, NULL, NULL, &follow,
		 "follow symlinks to directories outside the tree\n"
		 "(default: listed as skipped, not followed)"},
	};
	const db_cmd cmd = {
		.name = "ls",
		.args = "PATH [options]\n       dumpbisect ls --profiles [options]",
		.desc = "What a tree (as the profile parses it) or one dump file holds.",
		.exit = "0 listed, 2 usage error, unreadable or refused input, a tree holding no "
		        "tensor the profile understands, or a user profile that does not load.",
		.opts = opts,
		.n_opts = sizeof opts / sizeof *opts,
		.max_pos = 1,
	};
	const char *pos[1];
	int npos, rc = db_cmd_parse(&cmd, argc, argv, pos, &npos);
	if (rc >= 0)
		return rc;
	int fmt = db_cmd_format(&cmd, format, DB_FMT_BIT(DB_FMT_TABLE) | DB_FMT_BIT(DB_FMT_JSON));
	if (fmt < 0)
		return 2;
	bool json = fmt == DB_FMT_JSON;
	if (profiles) {
		if (npos > 0)
			return db_cmd_usage_error(&cmd, "--profiles takes no PATH");
		return ls_profiles(json);
	}
	if (npos < 1)
		return db_cmd_usage_error(&cmd, "PATH is missing");
	struct stat st;
	if (stat(pos[0], &st) != 0)
		return db_cmd_error(&cmd, "%s: %s", pos[0], strerror(errno));
	if (S_ISREG(st.st_mode))
		return ls_file(pos[0], json, stats);
	if (!S_ISDIR(st.st_mode))
		return db_cmd_error(&cmd, "%s: not a directory or regular file", pos[0]);
	db_walk_follow_links(follow);
	return ls_tree(pos[0], profile, json);
}
