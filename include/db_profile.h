/* Profiles: how a dump tree's paths, and the keys inside dict payloads,
 * map to the fields side/phase/pass/rank/layer/stage. A profile is YAML
 * (libyaml) whose patterns are PCRE2 regexes with named groups. Built-in
 * profiles are profiles/NAME.yaml embedded at build time; user profiles live
 * in $XDG_CONFIG_HOME/dumpbisect/profiles/NAME.yaml. Format: man 5
 * dumpbisect-profile. */
#ifndef DB_PROFILE_H
#define DB_PROFILE_H
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "db_err.h"
#include "db_metrics.h"
#include "db_quant.h"

/* Where one tensor sits in the model run. */
typedef struct db_fields {
	char side[16];          /* "ref", "target", or "" when the tree is one side */
	char phase[32];         /* "" when the layout has none */
	char pass[32];          /* forward pass / step / call; "" when none */
	int rank;               /* -1: none */
	int layer;              /* -1: model-level (embed, final logits, ...) */
	char stage[256];        /* "hidden_out", "attn.q_rope", "self_attn.o_proj" */
	int64_t order;          /* execution order from the name (dump_index); -1 none */
	/* stage came from a (?<file_stage>) group: used only while the inner key
	 * gives no stage (plain tensor files); db_profile_match_key clears it */
	bool stage_is_file;
	/* a value did not fit its field and was cut (stage over 255 bytes,
	 * phase or pass over 31): the index refuses the item, since a cut name
	 * would pair with another that agrees in its first bytes */
	bool cut;
} db_fields;

/* The fields as an index item and a pair keep them: each name points to
 * its one interned copy (util/intern.h: process lifetime, shared by every
 * item with that name), so equal names have equal pointers. db_fields is
 * the scratch profile matching writes into; db_fields_store interns it.
 * Nothing here is owned: never free these strings, never write to them. */
typedef struct db_ifields {
	const char *side, *phase, *pass, *stage;        /* never NULL */
	int rank;
	int layer;
	int64_t order;
	bool stage_is_file;
	bool cut;
} db_ifields;

/* Intern f's names into *out (0; -1 on OOM). */
int db_fields_store(const db_fields *f, db_ifields *out);
/* Copy stored fields back into a scratch to match or rename. */
void db_fields_load(const db_ifields *in, db_fields *out);

/* FUSED: each rank holds its own slices of several tensors fused along dim
 * ([q_r; k_r; v_r]), so the ranks' concat is not the one-rank tensor. */
typedef enum { DB_UNSHARD_CONCAT, DB_UNSHARD_SUM, DB_UNSHARD_FUSED } db_unshard;

typedef struct db_shard_rule {
	char *pattern; void *re;        /* stage regex */
	int dim;                        /* concat dimension; negative counts from the end */
	db_unshard how;
	/* FUSED: relative sizes of the fused parts along dim (q:k:v = 2:1:1);
	 * n_parts 0 = unknown, then mixed layouts are not comparable */
	int parts[8];
	int n_parts;
} db_shard_rule;

typedef struct db_substage_rule {
	char *parent;                   /* top-level stage */
	char *pattern; void *re;        /* regex of its sub-stages */
} db_substage_rule;

/* rewrite: one sed-like substitution on a field's value (pcre2_substitute,
 * first match only, $n / ${name} in the replacement) */
typedef enum { DB_RW_PHASE, DB_RW_PASS, DB_RW_STAGE } db_rewrite_field;
typedef struct db_rewrite_rule {
	db_rewrite_field field;
	char *pattern; void *re;
	char *to;
	bool no_empty;          /* re finds no match in "": an empty value is kept
	                           without a substitution per file (issue 24) */
} db_rewrite_rule;

typedef struct db_layer_class {
	char *name;
	int lo, hi;                     /* inclusive; hi == -1: open-ended */
} db_layer_class;

typedef enum {
	DB_PASS_FIRST, DB_PASS_LAST, DB_PASS_ALL, DB_PASS_PREFILL, DB_PASS_VALUE
} db_pass_select;

/* All strings and arrays are owned by the profile (db_profile_free). */
typedef struct db_profile {
	char *name, *description;
	char *origin;                   /* "built-in" or the file it came from */
	char *files_pat; void *files_re;/* which files belong to the layout at all */
	char *path_pat; void *path_re;  /* named groups over the relative path */
	char *key_pat; void *key_re;    /* named groups over the inner key; NULL = any */
	struct db_gnums *path_g, *key_g;        /* their groups' numbers (layout/
	                                           profile_groups.h); NULL: by name */
	char *value_key;                /* dict payloads: key holding the tensor */
	char **ignore_keys; size_t n_ignore_keys;
	char *side_ref, *side_target;   /* values of (?<side>) meaning ref / target;
	                                 * "" = the group is empty or did not take part */
	char **phase_order; size_t n_phase_order;
	char **stage_order; size_t n_stage_order;   /* globs, execution order */
	bool dict_order_none;           /* dict key order is not execution order (weights) */
	/* pairing: calls. Inside each layer of a pass and rank, the two sides'
	 * entries are aligned by order, name and shape (pair/call_align.c), a
	 * "#<n>" in a stage being a call counter, not part of the name: runs
	 * that call different APIs pair what they share, and the rest are
	 * calls only one side makes, in their place. */
	bool pair_calls;
	char **model_after; size_t n_model_after;   /* globs: model-level stages drawn after the layers */
	db_substage_rule *substages; size_t n_substages;
	char substage_sep;              /* "a.b" is a sub-stage of "a"; 0 = off */
	db_shard_rule *shards; size_t n_shards;
	db_pass_select pass_select;
	char *pass_value;               /* DB_PASS_VALUE */
	int pass_slots;                 /* DB_PASS_PREFILL: n_slots (default 1) */
	db_thresholds thresholds;
	/* bisect probe candidates in order (none by default): the first one
	 * dumped in every layer wins; "@last" = each layer's last stage in
	 * execution order; "@first-divergence" = the first diverging stage
	 * (weights, which do not accumulate). See db_bisect_choose_probe. */
	char **probes; size_t n_probes;
	char **weight_phases; size_t n_weight_phases; /* globs: phases holding weights,
	                                 * probed as "@first-divergence" */
	db_layer_class *classes; size_t n_classes;
	char *dump_command;             /* with {layer}; NULL = none */
	char *input_ids_pat; void *input_ids_re; /* stages holding token ids */
	char *routing_ids_pat; void *routing_ids_re; /* stages holding routed expert
	                                 * ids per token (last dim = top-k); NULL none */
	char **rename_from, **rename_to; size_t n_rename; /* exact stage renames, applied last */
	/* token_dim: {GLOB: DIM}: the token/batch dim of the stages a glob
	 * matches (first match wins), where a batch slot is looked for */
	char **token_dim_glob; int *token_dim; size_t n_token_dim;
	db_rewrite_rule *rewrites; size_t n_rewrites;     /* in order, each on the previous result */
	/* pass_shift: {REGEX: N}: a tensor whose final stage matches belongs to
	 * pass (file's pass + N); first match wins. SGLang's forward hook writes
	 * the top module's output and the logits of pass P into Pass<P+1>.pt. */
	char **pass_shift_pat; void **pass_shift_re; int *pass_shift_by; size_t n_pass_shift;
	/* quant: how quantized weights and their companions are grouped and
	 * dequantized, tried in order (db_quant.h) */
	db_quant_rule *quant; size_t n_quant;
	/* pass_if: the CI gate's rules ("EXPR" or "REGEX: EXPR", db_rules.h),
	 * parsed where they are used (compare's gate, bisect's predicate) */
	char **pass_if; size_t n_pass_if;
	/* replicated: stage regexes whose ranks hold one tensor each side
	 * (db_replicas.h checks they agree) */
	char **replicated; void **replicated_re; size_t n_replicated;
	/* The first regex error (a limit hit) of a per-stage rule (parent,
	 * input_ids, routing_ids, shards), whose answers are plain booleans:
	 * set once by any thread, then those rules answer "no" at once, and the
	 * caller reports it (db_profile_regex_error). char *, owned. */
	_Atomic(void *) re_error;
} db_profile;

/* Parse YAML text. origin names it in errors ("file:line:col: ..."). */
int db_profile_parse(const char *yaml, size_t len, const char *origin,
                     db_profile **out, db_err *err);
/* name_or_path: a file when it contains '/' or ends in ".yaml"; else
 * $XDG_CONFIG_HOME/dumpbisect/profiles/NAME.yaml (default ~/.config/...)
 * when it exists, else the built-in NAME. Errors: "FILE:LINE:COL: ...". */
int db_profile_load(const char *name_or_path, db_profile **out, db_err *err);
void db_profile_free(db_profile *p);
/* Names of all profiles (built-in first, then user ones sorted, a user
 * profile shadowing a built-in listed once); the array is NULL-terminated;
 * caller frees the array and each string. */
size_t db_profile_names(char ***names);
/* The YAML text of a built-in profile, or NULL. Borrowed, static. */
const char *db_profile_builtin_yaml(const char *name);

/* Fill f from a relative path ('/'-separated); 1 when it matched, 0 when
 * `files` or `path` does not match, or a side/rank/layer/order capture is
 * not valid, -1 when a regex hit its limit (err names pattern and path).
 * Fields the path does not give are reset (rank -1, layer -1, order -1,
 * ""). Decimal passes lose leading zeros. A (?<phase_sub>) group that took
 * part is appended to the phase as ".<value>"; then the phase and pass
 * rewrite rules apply. Thread-safe. */
int db_profile_match_path(const db_profile *p, const char *relpath, db_fields *f,
                          db_err *err);
/* The path or key pattern has a (?<side>) group: both runs may share a folder. */
bool db_profile_has_side_group(const db_profile *p);
/* Refine f from an inner key (may be ""): key groups override path groups,
 * except stage, which is joined "path_stage.key_stage" when both exist.
 * false when the profile has a key pattern and the key does not match.
 * An empty inner key (plain tensor, or the value_key entry) always matches
 * and keeps the path's fields. Without a key pattern the whole inner key
 * is the key stage.
 * Call it once for EVERY entry, plain tensors too (key ""): it finalises
 * the stage (file_stage, stage rewrite rules, rename). key is the raw flattened key: value_key
 * and ignore_keys are applied here (an ignored key returns 0). 1 matched,
 * 0 not, -1 a regex hit its limit (err names pattern and key). */
int db_profile_match_key(const db_profile *p, const char *key, db_fields *f, db_err *err);
/* The key with value_key applied ("value" -> "", "value.0" -> "0"; a
 * suffix of key, borrowed), or NULL when ignore_keys drops it. */
const char *db_profile_inner_key(const db_profile *p, const char *key);
/* Position of phase in phase_order, or -1. */
int db_profile_phase_pos(const db_profile *p, const char *phase);
/* Order of pass names: numeric when both are decimal, else strcmp. */
int db_profile_pass_cmp(const char *a, const char *b);
/* The pass the profile selects among n distinct passes given in ascending
 * order; ntok[i] = dim-0 length of pass i's tensors (-1 unknown; only
 * DB_PASS_PREFILL reads it, may be NULL otherwise). Returns its index, or
 * -1 for DB_PASS_ALL / no pass / a literal value not present. */
int db_profile_select_pass(const db_profile *p, const char *const *passes,
                           const int64_t *ntok, size_t n);

bool db_glob_match(const char *glob, const char *s);
/* Position of stage in stage_order (first matching glob) or -1. */
int db_profile_stage_pos(const db_profile *p, const char *stage);
/* Top-level stage of stage (itself when top-level); writes into buf and
 * returns buf. First the substages rules (first regex that matches wins),
 * then substage_sep: the shortest prefix ending before a separator that is
 * in known[] (known == NULL: any prefix counts, i.e. the first component). */
const char *db_profile_parent(const db_profile *p, const char *stage,
                              const char *const *known, size_t n_known,
                              char *buf, size_t len);
bool db_profile_is_model_after(const db_profile *p, const char *stage);
bool db_profile_is_input_ids(const db_profile *p, const char *stage);
/* The token dim the profile names for stage (token_dim), or -1. */
int db_profile_token_dim(const db_profile *p, const char *stage);
bool db_profile_is_routing_ids(const db_profile *p, const char *stage);
/* The band of a measured tensor of stage: db_band_of with the profile's
 * thresholds, except that input_ids stages that differ in any element are
 * DB_BAND_INPUTS (cos 0.9999 between token ids means other tokens). */
db_band db_band_for(const db_profile *p, const char *stage, const db_metrics *m);
const db_shard_rule *db_profile_shard(const db_profile *p, const char *stage);
/* The first regex error of the per-stage rules above (NULL none); borrowed. */
const char *db_profile_regex_error(const db_profile *p);
const char *db_profile_layer_class(const db_profile *p, int layer); /* NULL none */
/* dump_command with {layer} replaced; caller frees; NULL when none. */
char *db_profile_dump_command(const db_profile *p, int layer);

#endif
