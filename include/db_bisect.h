/* Layer bisect, git-bisect style (seed 002 Phase 4/5).
 *
 * Part 1, pure state machine (src/bisect/bisect.c, no I/O): a sorted list of
 * candidate layers, a good bound (default: before the first layer — the
 * model-level input counts as good) and a log of steps. Everything derived
 * (bounds, proposal, phase, probes left) is recomputed from the log after
 * every change, so undo is "drop the last step" and a session replays the
 * same state from its steps.
 *
 * Part 2, the runner (src/bisect/bisect_run.c): drives the state machine over a
 * db_compare — probe stage per layer, auto verdicts from the predicate,
 * layers not dumped yet (dump command / --run), and the end analysis
 * (input ids, intra-layer sub-stage walk, bad ranks, drift vs sudden drop). */
#ifndef DB_BISECT_H
#define DB_BISECT_H
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "db_compare.h"
#include "db_err.h"
#include "db_hints.h"
#include "db_metrics.h"

/* ------------------------------------------------------------ verdicts */

typedef enum db_verdict {
	DB_V_NONE = 0,          /* no verdict (not dumped / not comparable) */
	DB_V_GOOD, DB_V_BAD, DB_V_SKIP
} db_verdict;

const char *db_verdict_name(db_verdict v);      /* "good" "bad" "skip" "none" */
/* Parses the names above; DB_V_NONE (and false) for anything else. */
bool db_verdict_parse(const char *s, db_verdict *v);

/* When a probe is bad. Default: leaves the ok band. */
typedef enum db_pred_kind {
	DB_PRED_BAND,           /* bad when band is worse than worst_good */
	DB_PRED_THRESH,         /* bad when cos < cos_min or rel > rel_max */
	DB_PRED_RULES           /* bad when the CI gate's rules fail the pair (db_rules.h) */
} db_pred_kind;

typedef struct db_predicate {
	db_pred_kind kind;
	db_band worst_good;     /* BAND: DB_BAND_OK (default) or DB_BAND_DRIFT, ... */
	double cos_min, rel_max;/* THRESH: NaN = that side unused */
	const struct db_rules *rules;   /* RULES: shared, process lifetime (db_rules_intern) */
	bool beyond_drift;      /* the default predicate where compare names the first
	                           divergence beyond drift (db_first_beyond_drift_of):
	                           drift is good; set by the bisect's open, not saved */
} db_predicate;

void db_predicate_default(db_predicate *p);
/* Verdict for metrics m with band b: GOOD or BAD; NONE when b is
 * DB_BAND_NONE (not computed). NaN cos counts as bad. */
db_verdict db_predicate_eval(const db_predicate *p, const db_metrics *m,
                             db_band b);
/* Text form, also used in session files: "band:ok", "band:drift",
 * "cos<0.99", "rel>0.1", "cos<0.99,rel>0.1", or "pass-if:" and the CI
 * gate's rules, one a line ("pass-if:attn: rel <= 1e-2\nrel <= 1e-3": a
 * pair its rules fail is bad, one they pass good, one skipped or that no
 * rule names has no verdict). -1 with err on bad text. */
int db_predicate_parse(const char *s, db_predicate *p, db_err *err);
/* The verdict on pair p: with a noise tree (--noise) the default predicate
 * (band:ok) asks the run's own noise, bad = beyond noise; else as
 * db_predicate_eval, also bad when p leaves the ok band and strict is set;
 * without a noise verdict, a drift pair across layouts (replica, or merged
 * from another number of ranks) within 4 ulps (of its coarser dtype) of
 * its largest value is good for the default predicate. */
db_verdict db_predicate_eval_pair(const db_predicate *pr, const db_pair *p, bool strict);
/* Writes the text form into buf (always NUL-terminated); returns buf. */
char *db_predicate_str(const db_predicate *p, char *buf, size_t len);

/* ------------------------------------------------------- state machine */

/* Layer value of the "final output" sentinel: a runner may append it as the
 * last candidate so a bug after the last layer (final norm, lm_head) is
 * found as "final". Labels print it as "final". */
#define DB_LAYER_FINAL INT_MAX
/* Good bound before the first candidate (model-level input rows). */
#define DB_GOOD_BEFORE (-1L)

typedef struct db_bisect_step {
	int layer;
	db_verdict verdict;     /* what counts: GOOD, BAD or SKIP */
	db_verdict auto_verdict;/* the predicate's verdict then; NONE = none */
	bool by_user;           /* the user chose/overrode (else accepted auto) */
	double cos, rel;        /* probe metrics then; NaN when not available */
	db_band band;           /* probe band then; DB_BAND_NONE when n/a */
	int64_t time;           /* unix seconds; 0 unknown */
} db_bisect_step;

typedef enum db_bisect_phase {
	DB_BP_BOUND,            /* checking the bad bound: next = last layer
	                           (walking down past skipped ones) */
	DB_BP_SEARCH,           /* narrowing (good, bad); next = midpoint */
	DB_BP_FOUND,            /* first_bad is the first bad layer */
	DB_BP_ONLY_SKIPPED,     /* only skipped layers left between the bounds:
	                           the first bad is one of them or the bad bound;
	                           msg "one of L9..L12 (L9–L11 not dumped)" or
	                           "(L10 skipped)" for a judged-skip */
	DB_BP_NO_BAD,           /* the bad bound came out good (or all skipped):
	                           nothing to bisect, said plainly in msg */
	DB_BP_CONTRADICTORY,    /* a good verdict at/after a bad one; msg says which */
	DB_BP_EMPTY             /* no candidate layers */
} db_bisect_phase;

const char *db_bisect_phase_name(db_bisect_phase p);

/* All arrays owned by the struct (db_bisect_free). Fields below "derived"
 * are read-only for callers and valid after every call that changes steps. */
typedef struct db_bisect {
	int *layers;            /* candidates, ascending, unique */
	size_t n_layers;
	long start_good;        /* index of the initial good bound, DB_GOOD_BEFORE */
	db_bisect_step *steps;  /* the log, oldest first */
	size_t n_steps, cap_steps;
	/* derived */
	db_bisect_phase phase;
	long good;              /* index of the good bound, DB_GOOD_BEFORE = -1 */
	long bad;               /* index of the bad bound, -1 = not known yet */
	long next;              /* index of the proposed layer, -1 = none */
	long first_bad;         /* FOUND: index of the first bad layer, else -1 */
	size_t n_remaining;     /* unskipped candidates strictly inside (good, bad) */
	size_t n_skipped_inside;/* skipped ones strictly inside */
	int probes_left;        /* ⌈log2(n_remaining + 1)⌉ (+1 in BOUND) */
	char msg[256];          /* plain status: "first bad layer: L5", ... */
	/* private (bisect_index.c): each candidate's latest verdict and the
	 * counts recompute reads, kept per step; owned, moves with the struct */
	struct db_bisect_idx *idx;
} db_bisect;

/* layers need not be sorted (they are sorted and deduplicated here).
 * good_layer: a layer known good, or DB_GOOD_BEFORE for "before the first";
 * a good_layer that is not a candidate counts as the last candidate below
 * it. -1 with err on OOM. */
int db_bisect_init(db_bisect *b, const int *layers, size_t n, long good_layer,
                   db_err *err);
void db_bisect_free(db_bisect *b);
/* New candidates (a rescan found more layers): the ones not yet there are
 * added; steps and the start bound are kept. -1 with err on OOM. */
int db_bisect_add_layers(db_bisect *b, const int *layers, size_t n, db_err *err);

/* Append a step (copied) and recompute. Any candidate layer may be given,
 * not only the proposal (an explicit good/bad bound). -1 with err when the
 * layer is not a candidate, the verdict is NONE, or on OOM. */
int db_bisect_record(db_bisect *b, const db_bisect_step *s, db_err *err);
/* Append steps[0..n) (copied) and recompute once: a session's log replays
 * in time linear in its steps and layers. -1 with err as db_bisect_record
 * for the first bad step (*bad its index; those before it are recorded). */
int db_bisect_replay(db_bisect *b, const db_bisect_step *steps, size_t n, size_t *bad,
                     db_err *err);
/* Drop the last step; false when there is none. */
bool db_bisect_undo(db_bisect *b);
/* Drop all steps (the bounds go back to the start). */
void db_bisect_reset(db_bisect *b);
/* Current verdict of layer (its latest step), DB_V_NONE when none. */
db_verdict db_bisect_layer_verdict(const db_bisect *b, int layer);
/* Candidate index of layer, -1 when not a candidate. */
long db_bisect_index(const db_bisect *b, int layer);
/* True once nothing is left to probe (FOUND, ONLY_SKIPPED, NO_BAD,
 * CONTRADICTORY, EMPTY). */
bool db_bisect_done(const db_bisect *b);
/* "L12", "final", "input" (for DB_GOOD_BEFORE); writes into buf. */
const char *db_layer_label(int layer, char *buf, size_t len);

/* ---------------------------------------------------------- the runner */

/* How the layer probe was chosen (db_bisect_choose_probe). */
typedef enum db_probe_how {
	DB_PROBE_GIVEN,         /* --stage, :probe, a resumed session */
	DB_PROBE_CANDIDATE,     /* the profile's first candidate dumped in every layer */
	DB_PROBE_LAST_STAGE,    /* each layer's own last stage in execution order */
	DB_PROBE_FIRST_DIV      /* the first diverging stage (weights) */
} db_probe_how;

/* Reserved probe names, usable in a profile's probe list and --stage. */
#define DB_PROBE_LAST "@last"
#define DB_PROBE_FIRST_DIVERGENCE "@first-divergence"

const char *db_probe_how_name(db_probe_how h);  /* "given", "profile", ... */

/* Choose the probe over c's pairs in phase/pass (NULL = any): given (NULL
 * = none) wins; else the profile's first candidate that both trees dump in
 * every layer that has any tensor on both sides; else, in a tree of
 * weights only (a checkpoint: no activations), the stage of the first
 * weight beyond drift in the lowest layer, every weight computed; else
 * DB_PROBE_LAST. A candidate "@first-divergence" computes pairs in order
 * until one diverges. *stage is malloc'd (a stage, or DB_PROBE_LAST); why gets one
 * line saying which and why. -1 with err when a given stage is dumped
 * nowhere or no layer is dumped on both sides. */
int db_bisect_choose_probe(db_compare *c, const char *phase, const char *pass,
                           const char *given, char **stage, db_probe_how *how,
                           char *why, size_t whylen, db_err *err);
/* Choosing the probe of c computes pairs (a "@first-divergence"
 * candidate, or a tree of weights only): the workbench does not before
 * its first frame. */
bool db_probe_computes(const db_compare *c, const char *phase, const char *pass);
/* The stage probed at layer: stage itself, or for DB_PROBE_LAST the last
 * stage (by seq) that layer has on both sides in phase/pass. Borrowed from
 * stage or c's pairs; NULL when the layer has none. */
const char *db_probe_stage_at(const db_compare *c, const char *phase, const char *pass,
                              const char *stage, int layer);

/* The phase and pass a bisect of c would look at, by the same triage as
 * db_bisect_run_open (phases and passes in causal order; the first pass
 * that leaves the ok band after ok ones): the workbench opens there and
 * `f` goes there. phase NULL = triaged too. *phase_out / *pass_out are
 * malloc'd, NULL when the layout has none; why gets the pass's why ("" when
 * the phase has one pass). Computes the probes it needs. -1 with err when
 * there is no probe at all (no layer dumped on both sides). */
int db_bisect_triage(db_compare *c, const char *phase, char **phase_out, char **pass_out,
                     char *why, size_t whylen, db_err *err);

typedef struct db_bisect_opts {
	const char *stage;      /* probe; NULL = chosen (db_bisect_choose_probe) */
	const char *phase;      /* NULL = first phase that diverges, else first */
	const char *pass;       /* NULL = the first pass that diverges in causal
	                           order, from the profile's selection on (earlier
	                           ones are warmups); that selection when none does */
	db_predicate pred;
	long good_layer;        /* DB_GOOD_BEFORE (default) or a layer */
	int n_layers;           /* > 0: candidates are 0..n_layers-1 */
	bool fill_gaps;         /* n_layers 0: true (default) = 0..the highest
	                           layer any stage shows, layers not dumped
	                           included (skipped, so a bug among them is
	                           "one of L9..L12 (L9–L11 not dumped)", never a
	                           found L12); false = the layers whose probe is
	                           dumped in either tree */
	const char *run_cmd;    /* --run; NULL = none */
	bool final_sentinel;    /* add DB_LAYER_FINAL when the profile has
	                           model-level "after" stages (default true) */
} db_bisect_opts;

void db_bisect_opts_default(db_bisect_opts *o);

/* Probe of one layer right now. */
typedef struct db_probe {
	int layer;
	size_t pair;            /* pair used (merged/rank-less, else worst rank),
	                           DB_NO_PAIR when not dumped on both sides */
	bool dumped;            /* both sides have the probe for this layer */
	db_metrics m;           /* valid when dumped and computed */
	db_band band;
	db_verdict auto_verdict;/* NONE when not dumped or not comparable */
	/* --noise, the default predicate: a pair before the probe (execution
	 * order, this selection) beyond noise, which makes the probe bad even
	 * when the probe itself is back within noise; DB_NO_PAIR none */
	size_t beyond;
} db_probe;

/* What a stage did to the error (the intra-layer walk). A stage receives
 * the error of its input (the previous comparable stage in execution order,
 * or the layer's input for the first) and leaves its own; "ok" is the
 * predicate's good. */
typedef enum db_stage_role {
	DB_ROLE_OK,             /* leaves no error the predicate calls bad */
	DB_ROLE_INTRODUCES,     /* receives ok, leaves bad */
	DB_ROLE_AMPLIFIES,      /* receives bad, leaves >= amplify × as much */
	DB_ROLE_INHERITS,       /* receives bad, passes it on */
	DB_ROLE_ON_ENTRY,       /* an input tensor (X.inputs.N) already bad:
	                           never the culprit */
	DB_ROLE_NOT_COMPARABLE, /* could not be compared (reason in the row) */
	DB_ROLE_ONE_SIDE        /* in one tree only at this layer */
} db_stage_role;

/* "ok", "introduces", "amplifies", "inherits", "bad on entry",
 * "not comparable", "one side only". */
const char *db_stage_role_name(db_stage_role r);

/* Sub-stage row of the end analysis (intra-layer walk). */
typedef struct db_substage_row {
	size_t pair;
	const char *stage;      /* borrowed from the pair */
	char top[256];          /* top-level stage it belongs to */
	double cos, rel;
	db_band band;
	const char *word;       /* the pair's verdict word (db_verdict_word,
	                           static); NULL without a pair */
	double step_drop;       /* cos(previous row) - cos(this row) */
	double err_in, err_out; /* relative L2 error received / left; NaN n/a */
	double amp;             /* err_out / err_in (INFINITY when err_in is 0) */
	double sqnr_db;         /* -20 log10(err_out); INFINITY when identical */
	db_stage_role role;
	bool stats_only;        /* measured on the dump's statistics: no cos */
	bool culprit;           /* the first drop: the first stage that
	                           introduces, else the one that amplifies most */
	const char *one_side;   /* static: "only in the reference" / "only in the
	                           target" when the other tree lacks this module
	                           at this layer only (pair DB_NO_PAIR), else NULL */
	const char *reason;     /* DB_ROLE_NOT_COMPARABLE: why (borrowed from the
	                           pair, or static) */
} db_substage_row;

typedef enum db_bisect_kind {
	DB_KIND_NONE,           /* nothing bad ("none") */
	DB_KIND_SUDDEN,         /* "sudden-drop" */
	DB_KIND_DRIFT,          /* "accumulated-drift" */
	DB_KIND_INPUT_IDS,      /* "input-ids": token ids differ (reported first) */
	DB_KIND_BACKWARD,       /* "first-gradient": the phase runs backward
	                           (gradients): no layer search, the first
	                           diverging tensor in execution order */
	DB_KIND_INCONCLUSIVE    /* "inconclusive": only skipped layers left,
	                           contradictory bounds, or the bad bound good
	                           while an earlier layer is bad */
} db_bisect_kind;

const char *db_bisect_kind_name(db_bisect_kind k);

/* End analysis. Strings owned by the result (db_bisect_result_free) or
 * borrowed from the compare/profile where said.
 *
 * Drift vs sudden drop (seed 002 Phase 4). Over the probe of every dumped
 * layer in order, starting from the input (cos 1, rel 0, band ok), each
 * layer has a step dcos = cos(prev) - cos(layer), drel = rel(layer) -
 * rel(prev). A layer "stands out" when its band is worse than the previous
 * layer's AND one of
 *   - it jumps two bands or more at once (ok -> algo, drift -> bug, ...);
 *   - dcos > 0.001 and dcos > 4 × the median dcos of the other layers;
 *   - drel > ok_rel and drel > 4 × the median drel of the other layers.
 * kind = "sudden-drop" when the bisect's first bad layer stands out (or the
 * first bad is the final output: first_bad_layer null, first_bad_stage the
 * final stage); "accumulated-drift" with first_bad_layer null when it does
 * not; "none" when nothing is bad; "inconclusive" otherwise; "input-ids"
 * replaces the kind when token ids differ (the rest is still filled in).
 * crossing_layer = the first dumped layer whose probe the predicate calls
 * bad (null when none). Example: bf16 vs fp32, no bug: rel 0.005, 0.007,
 * 0.009, 0.008, 0.013 ... leaves ok at L4 by a step no larger than the
 * others -> drift, crossing 4. A sign flip: cos 1.0 -> 0.92 at L11 -> ok to
 * bug in one step -> sudden-drop at 11. */
typedef struct db_bisect_result {
	db_bisect_kind kind;
	bool by_noise;          /* judged against a noise run (--noise): the
	                           steps' words are within / beyond noise */
	bool by_bits;           /* judged bitwise (--slots, or the prompt alone
	                           against a batch): the steps' words are
	                           bit-identical / bits differ */
	bool input_ids_mismatch;
	char *input_ids_stage;  /* the stage that differs, NULL */
	bool has_first_bad;     /* false: first_bad_layer is null in JSON */
	int first_bad_layer;    /* valid when has_first_bad */
	char *first_bad_stage;  /* top-level stage of the culprit (probe when
	                           no walk), NULL when nothing bad */
	char *first_bad_substage;/* first sub-stage leaving ok / dropping; NULL */
	db_stage_role first_bad_role;/* what the culprit did (introduces, amplifies) */
	char calls[512];        /* pairing: calls: the first call only one side
	                           makes in the culprit layer (db_calls.h), "" none */
	char frame_ref[384], frame_tgt[384];    /* pairing: calls: the Python frame
	                           that made the culprit call on each side, "" none */
	char *at_or_before;     /* the stages just before the culprit that could
	                           not be compared ("a, b, c"): the culprit is
	                           "at or before" it; NULL when none */
	db_hint first_bad_hint; /* the culprit pair's root-cause hint (db_hints.h);
	                           kind DB_HINT_NONE when none */
	const char *layer_class;/* borrowed from the profile; NULL none */
	int *bad_ranks;         /* every rank bad at the culprit, ascending
	                           (--slots: the slots, slot k being rank k) */
	bool slots;             /* --slots: the ranks are slots */
	int slot_n;             /* --slots over several ranks: each bad rank is
	                           rank * slot_n + slot; 0 otherwise */
	size_t n_bad_ranks;
	bool all_ranks_bad;     /* bad_ranks holds every rank the culprit has */
	bool ranks_unknown;     /* the culprit is compared merged only (the other
	                           side has another layout) and its shards are not
	                           slices of the other side: no rank can be named */
	char ranks_why[256];    /* ranks_unknown: why ("partial sums: ..."), else
	                           ""; with bad_ranks from shards judged against
	                           their slices (db_rank_split.h): "" too */
	bool ranks_sliced;      /* bad_ranks come from such slices */
	db_probe_how probe_how;
	char probe[256];        /* the probe (DB_PROBE_LAST: the first bad layer's
	                           last stage, else the chosen stage) */
	char probe_why[384];    /* which probe and why (db_bisect_run.probe_why) */
	char phase[64];         /* the phase bisected ("" when the layout has none) */
	char pass[64];          /* the pass bisected, as the pairs carry it ("" none) */
	char pass_why[384];     /* db_bisect_run.pass_why */
	char ref_pass[64];      /* --slots against the prompt alone: the alone
	                           run's pass aligned with pass ("" none) */
	bool has_crossing;
	int crossing_layer;
	db_substage_row *walk;  /* the intra-layer walk (owned array) */
	size_t n_walk;
	int standout_layer;     /* first layer that stands out; INT_MIN none */
	char summary[512];      /* one line for the text output */
	/* The culprit pair's first bad token (db_token.h; issue 35): its row in
	 * the aligned sequence when the passes are aligned by token. */
	bool has_token;
	int64_t token, token_row, token_rows;
} db_bisect_result;

void db_bisect_result_free(db_bisect_result *r);

/* Called after every recorded step (e.g. to save the session). Returning
 * -1 (with err) stops the run. */
typedef int (*db_bisect_step_cb)(const db_bisect *b, void *ctx, db_err *err);

typedef struct db_bisect_run {
	db_compare *c;          /* borrowed */
	db_bisect_opts o;       /* strings copied into the fields below */
	char *stage, *phase, *pass, *run_cmd;   /* owned; phase/pass NULL = any */
	char *final_stage;      /* owned: the model-level stage probed for
	                           DB_LAYER_FINAL (final logits), NULL = none */
	db_probe_how probe_how; /* how stage was chosen */
	bool backward;          /* the phase runs its layers backward: errors flow
	                           to lower layers, so the search is not a
	                           bisect (DB_KIND_BACKWARD) */
	char probe_why[384];    /* one line: which probe and why */
	char pass_why[384];     /* one line: which pass and why ("passes 0-2
	                           bit-identical at L7 mlp_output; pass 3 is the
	                           first that diverges"); "" when the phase has
	                           one pass */
	size_t n_passes;        /* passes of the phase (1 when none) */
	bool pass_given;        /* the pass was asked for (--pass, a session's) */
	bool phase_given;       /* the phase was asked for (--phase): the other
	                           phases were not looked at */
	db_bisect sm;           /* owned */
} db_bisect_run;

/* Set up a run over c (already opened; metrics may be pending — probes are
 * computed on demand). -1 with err when the probe stage does not exist in
 * either tree or there are no layers. */
int db_bisect_run_open(db_compare *c, const db_bisect_opts *o,
                       db_bisect_run **out, db_err *err);
void db_bisect_run_free(db_bisect_run *r);

/* Probe of layer now (computes the pair when needed). */
void db_bisect_probe(db_bisect_run *r, int layer, db_probe *out);
/* The profile's dump command for layer ({layer} filled in), NULL when the
 * profile has none. Caller frees. */
char *db_bisect_dump_hint(const db_bisect_run *r, int layer);
/* Fill a step for layer from its probe (auto verdict, metrics, time now).
 * verdict = auto verdict (SKIP when not available); by_user false. */
void db_bisect_auto_step(db_bisect_run *r, int layer, db_bisect_step *s);
/* A step decided by the user (a verb, a key, or the user's `bisect run`
 * command): metrics and auto verdict from the probe now, by_user always,
 * also when v is the auto verdict (accepting the auto verdict is
 * db_bisect_auto_step); recorded in r->sm. -1 with err as
 * db_bisect_record. */
int db_bisect_user_step(db_bisect_run *r, int layer, db_verdict v, db_err *err);
/* Rescan the trees (new dumps) and keep the run's state; layers that
 * appeared become candidates (unless n_layers fixed them). */
int db_bisect_rescan(db_bisect_run *r, db_err *err);
/* --run: sh -c CMD with {layer} substituted and DUMPBISECT_LAYER set, then
 * rescan. Returns 0 (ran, rescanned), 125 (the command said skip), or -1
 * with err (non-zero exit, signal, rescan failed) = abort. */
int db_bisect_run_cmd(db_bisect_run *r, int layer, db_err *err);
/* Whole bisect with auto verdicts (headless --auto). Layers not dumped are
 * produced with --run when set, else skipped. cb may be NULL. */
int db_bisect_run_auto(db_bisect_run *r, db_bisect_step_cb cb, void *ctx,
                       db_err *err);
/* End analysis from the current state (works at any point; uses FOUND's
 * first bad layer when there is one). */
int db_bisect_analyze(db_bisect_run *r, db_bisect_result *res, db_err *err);

/* JSON of the headless command: {"kind", "first_bad_layer", ...,
 * "steps": [...]} followed by a newline. */
void db_bisect_result_json(FILE *out, const db_bisect *b,
                           const db_bisect_result *res);
/* Human text: summary, the walk, the steps. */
void db_bisect_result_text(FILE *out, const db_bisect *b,
                           const db_bisect_result *res);

#endif
