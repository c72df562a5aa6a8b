/* Layer bisect, git-bisect style (seed 002 Phase 4/5): the proposed layer
 * with its probe metrics and auto verdict; Enter accepts, + - = override,
 * u undoes, x resets; the range, probes left, the layer strip and the
 * history; at the end the analysis (first bad layer, sub-stage, ranks,
 * drift vs sudden drop). The state machine lives in the core
 * (db_bisect.h) and in t->bisect, so it survives closing the view; so does
 * the analysis (t->analysis), which the export reads too. */
#include "base/app.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "db_bisect.h"
#include "db_notes.h"
#include "db_replay.h"
#include "db_session.h"
#include "db_noise.h"
#include "db_verdict.h"
#include "base/analysis_ui.h"
#include "base/draw.h"
#include "base/session_ui.h"
#include "bisect_words.h"
#include "base/triage_ui.h"

struct bisect_view {
	bool have_res;                  /* the view analysed: it shows last_result */
	int page;
	long at;                        /* replay: steps shown (-1 = live) */
	db_bisect past;                 /* replay: the state after `at` steps */
	bool have_past;
};

static int replace(char **dst, const char *src)
{
	char *d = src ? strdup(src) : NULL;
	if (src && !d)
		return -1;
	free(*dst);
	*dst = d;
	return 0;
}

/* Open the run once per process: from the session when it has bisect
 * settings, else from the current selection and probe. */
int tui_bisect_ensure(struct tui *t, bool replay)
{
	if (t->bisect) {
		if (replay)
			tui_bisect_replay(t);   /* once: it may have been opened without */
		return 0;
	}
	db_session *s = t->session;
	db_bisect_opts o;
	db_bisect_opts_default(&o);
	/* the core chooses the probe unless the user did (and says why) */
	o.stage = s && s->probe ? s->probe : t->probe_given ? t->probe : NULL;
	o.phase = s && s->phase ? s->phase : tui_phase(t);
	o.pass = s && s->pass ? s->pass : tui_pass(t);
	/* on the pass the triage chose, the core chooses it again and says
	 * why (the same triage, triage_ui.c) */
	if (!(s && (s->phase || s->pass)) && tui_on_triaged(t))
		o.phase = o.pass = NULL;
	if (s) {
		o.pred = s->pred;
		o.good_layer = s->good;
	}
	db_err err = {{0}};
	tui_yield_begin(t);     /* its triage of the passes may be long */
	int rc = db_bisect_run_open(t->cmp, &o, &t->bisect, &err);
	tui_yield_end();
	if (rc < 0) {
		tui_msg(t, true, "bisect: %s", err.msg);
		return -1;
	}
	tui_msg(t, false, "probe: %s (:probe STAGE changes it)", t->bisect->probe_why);
	if (s && s->n_layers) {
		db_bisect sm;
		if (db_session_to_bisect(s, &sm, &err) < 0) {
			tui_msg(t, true, "bisect: session: %s", err.msg);
		} else {
			db_bisect_free(&t->bisect->sm);
			t->bisect->sm = sm;
		}
	}
	if (replay)
		tui_bisect_replay(t);
	if (s) {
		db_bisect_run *r = t->bisect;
		replace(&s->probe, r->stage);
		replace(&s->phase, r->phase);
		replace(&s->pass, r->pass);
		s->pred = r->o.pred;
	}
	return 0;
}

void tui_bisect_replay(struct tui *t)
{
	db_session *s = t->session;
	if (t->replay_checked || !s || !s->n_steps)
		return;
	t->replay_checked = true;
	db_replay *rp = calloc(1, sizeof *rp);
	db_err err = {{0}};
	if (!rp || db_replay_session(s, t->cmp, rp, &err) < 0) {
		free(rp);
		tui_msg(t, true, "replay: %s", err.msg[0] ? err.msg : "out of memory");
		return;
	}
	if (!db_replay_changed(rp)) {
		db_replay_free(rp);
		free(rp);
		return;
	}
	t->replay = rp;
	char b1[64], b2[64];
	tui_msg(t, true, "replay: %zu of %zu logged verdicts changed; first bad layer then %s, "
	        "now %s (b shows them)", rp->n_changed, rp->n_rows,
	        db_replay_first_bad(&rp->then, b1, sizeof b1),
	        db_replay_first_bad(&rp->fresh->sm, b2, sizeof b2));
}

/* Forget the replay (the log moved on, or the run is closed). */
static void replay_drop(struct tui *t)
{
	if (!t->replay)
		return;
	db_replay_free(t->replay);
	free(t->replay);
	t->replay = NULL;
}

void tui_bisect_close(struct tui *t)
{
	replay_drop(t);
	tui_analysis_drop(t);
	db_bisect_run_free(t->bisect);
	t->bisect = NULL;
}

/* The analysis this view showed last (kept while the log changes, until
 * the view analyses again), NULL when it has not analysed. */
static const db_bisect_result *last_result(const struct tui *t, const struct bisect_view *b)
{
	return b->have_res && t->analysis && t->analysis->ok ? &t->analysis->res : NULL;
}

static bool same_sel(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

/* "phase P, pass N" / "pass N" / "this selection" into buf. */
static const char *sel_str(const char *ph, const char *pa, char *buf, size_t len)
{
	bool hp = ph && *ph, hs = pa && *pa;
	snprintf(buf, len, "%s%s%s%s%s", hp ? "phase " : "", hp ? ph : "", hp && hs ? ", " : "",
	         hs ? "pass " : "", hs ? pa : "");
	if (!buf[0])
		snprintf(buf, len, "this selection");
	return buf;
}

/* Choosing another phase or pass and starting the bisect (b, x) goes to
 * the bisect of that pass: a bisect belongs to its (phase, pass). The one
 * left stays in the session (db_session_switch_bisect: the export and
 * replay list it); the one of the pass chosen resumes where it was, or a
 * new one begins. True when it re-aimed. */
static bool reaim(struct tui *t)
{
	db_session *s = t->session;
	const char *ph, *pa;
	if (t->bisect)
		ph = t->bisect->phase, pa = t->bisect->pass;
	else if (s && (s->phase || s->pass))
		ph = s->phase, pa = s->pass;
	else
		return false;
	if (same_sel(ph, tui_phase(t)) && same_sel(pa, tui_pass(t)))
		return false;
	char was[160], now[160];
	sel_str(ph, pa, was, sizeof was);
	db_err err = {{0}};
	int resumed = 0;
	size_t left = t->bisect ? t->bisect->sm.n_steps : s ? s->n_steps : 0;
	if (s) {
		if (t->bisect)
			db_session_sync_bisect(s, &t->bisect->sm, &err);
		if (!s->phase && !s->pass && t->bisect) {
			/* a bisect the core aimed (triage): its place, to be kept by */
			replace(&s->phase, t->bisect->phase);
			replace(&s->pass, t->bisect->pass);
		}
		resumed = db_session_switch_bisect(s, tui_phase(t), tui_pass(t), t->probe_given);
		if (resumed < 0) {
			tui_msg(t, true, "bisect: out of memory");
			return false;
		}
	}
	tui_bisect_close(t);
	t->replay_checked = true;       /* the resumed log was checked, or is new */
	if (tui_bisect_ensure(t, false) < 0)
		return true;
	tui_session_save(t);
	sel_str(t->bisect->phase, t->bisect->pass, now, sizeof now);
	if (resumed)
		tui_msg(t, false, "back to the bisect on %s (%zu steps)%s%s%s", now,
		        t->bisect->sm.n_steps, left ? "; the one on " : "", left ? was : "",
		        left ? " is kept" : "");
	else if (left && s)
		tui_msg(t, false, "new bisect on %s; the one on %s is kept (b on %s resumes it)",
		        now, was, was);
	else
		tui_msg(t, false, "new bisect on %s", now);
	return true;
}

static int bisect_open(struct view *v, struct tui *t)
{
	struct bisect_view *b = v->priv;
	b->at = -1;
	reaim(t);
	return tui_bisect_ensure(t, true);
}

/* Replay: rebuild the state machine from the first `at` steps of the log
 * (the range as it was then). */
static db_bisect *replay_state(struct tui *t, struct bisect_view *b)
{
	db_bisect *sm = &t->bisect->sm;
	if (b->at < 0)
		return sm;
	if (b->have_past)
		db_bisect_free(&b->past);
	b->have_past = false;
	db_err err = {{0}};
	long good = sm->start_good >= 0 ? sm->layers[sm->start_good] : DB_GOOD_BEFORE;
	if (db_bisect_init(&b->past, sm->layers, sm->n_layers, good, &err) < 0)
		return sm;
	b->have_past = true;
	for (long i = 0; i < b->at && (size_t)i < sm->n_steps; i++)
		db_bisect_record(&b->past, &sm->steps[i], &err);
	return &b->past;
}

static void bisect_done(struct view *v, struct tui *t)
{
	struct bisect_view *b = v->priv;
	if (b->have_past)
		db_bisect_free(&b->past);
}

static const char *label(int layer, char *buf, size_t len)
{
	return db_layer_label(layer, buf, len);
}

static enum tui_color verdict_color(db_verdict v)
{
	return v == DB_V_GOOD ? C_GOOD : v == DB_V_BAD ? C_MARK : v == DB_V_SKIP ? C_HILITE : C_DIM;
}

static const char *verdict_glyph(db_verdict v)
{
	switch (v) {
	case DB_V_GOOD: return G("✓", "g");
	case DB_V_BAD: return G("✗", "b");
	case DB_V_SKIP: return G("∅", "s");     /* not drift's ~ */
	default: return G("·", ".");
	}
}

/* The analysis the view shows, shared with the export. */
static const db_bisect_result *analyze(struct tui *t, struct bisect_view *b)
{
	const db_bisect_result *res = tui_bisect_result(t);
	b->have_res = res != NULL;
	return res;
}

/* The layer strip: every candidate, its verdict, the range and the next. */
static int draw_strip(const db_bisect *sm, WINDOW *w, int y)
{
	int W = getmaxx(w), x = 8;
	draw_text(w, y, 0, 8, C_DIM, 0, "layers");
	for (size_t i = 0; i < sm->n_layers; i++) {
		char lab[16];
		if (sm->layers[i] == DB_LAYER_FINAL)
			snprintf(lab, sizeof lab, "fin");
		else
			snprintf(lab, sizeof lab, "%d", sm->layers[i]);
		int lw = (int)strlen(lab) + 1;
		if (x + lw > W) {
			y += 2, x = 8;
			if (y + 1 >= getmaxy(w))
				break;
		}
		bool inside = (long)i > sm->good && (sm->bad < 0 || (long)i <= sm->bad);
		bool next = (long)i == sm->next;
		draw_text(w, y, x, lw, C_DEFAULT,
		          (next ? A_REVERSE : 0) | (inside ? A_BOLD : A_DIM), lab);
		db_verdict vd = db_bisect_layer_verdict(sm, sm->layers[i]);
		draw_text(w, y + 1, x, lw, verdict_color(vd), A_BOLD,
		          next ? G("▲", "^") : verdict_glyph(vd));
		x += lw;
	}
	return y + 2;
}

static void bisect_draw(struct view *v, struct tui *t, WINDOW *w, int y0, int h)
{
	struct bisect_view *b = v->priv;
	db_bisect_run *r = t->bisect;
	db_bisect *sm = replay_state(t, b);
	bool replay = b->at >= 0;
	int W = getmaxx(w), y = y0, x;
	char pred[96], a[16], c[16];
	x = draw_text(w, y, 0, W, C_DEFAULT, A_BOLD, "Layer bisect");
	draw_textf(w, y++, x, W - x, C_DIM, 0, "  probe %s  phase %s  pass %s",
	           strcmp(r->stage, DB_PROBE_LAST) ? r->stage : "each layer's last stage",
	           r->phase && *r->phase ? r->phase : "-", r->pass && *r->pass ? r->pass : "-");
	if (r->pass_why[0])
		draw_textf(w, y++, 0, W, C_DIM, 0, "pass: %s", r->pass_why);
	draw_textf(w, y++, 0, W, C_DIM, 0, "a layer is bad when %s",
	           tui_bisect_pred_words(&r->o.pred, pred, sizeof pred));
	/* Steps logged on other dumps that no longer hold: their outcome is
	 * history, not a finding about these trees. */
	const db_replay *rp = !replay ? t->replay : NULL;
	if (rp) {
		char b1[64], b2[64];
		draw_textf(w, y++, 0, W, C_ERROR, A_BOLD,
		           "[replay] %zu of %zu logged verdicts changed on these trees",
		           rp->n_changed, rp->n_rows);
		draw_textf(w, y++, 0, W, C_DEFAULT, 0, "first bad layer: then %s, now %s%s",
		           db_replay_first_bad(&rp->then, b1, sizeof b1),
		           db_replay_first_bad(&rp->fresh->sm, b2, sizeof b2),
		           rp->moved ? " (moved)" : "");
	} else {
		/* accumulated drift: the search ends on a layer, but the analysis
		 * says no layer is the culprit; "[found]" would contradict it */
		const char *ph = db_bisect_phase_name(sm->phase), *msg = sm->msg;
		char dm[160];
		if (!replay && sm->phase == DB_BP_FOUND && sm->first_bad >= 0) {
			const db_bisect_result *res = analyze(t, b);
			if (res && res->kind == DB_KIND_DRIFT) {
				snprintf(dm, sizeof dm, "no single layer stands out; the band is crossed at %s",
				         label(sm->layers[sm->first_bad], a, sizeof a));
				ph = "drift";
				msg = dm;
			}
		}
		x = draw_textf(w, y, 0, W, C_DIM, 0, "[%s] ", ph);
		draw_text(w, y++, x, W - x, db_bisect_done(sm) ? C_HILITE : C_DEFAULT, A_BOLD, msg);
	}
	if (sm->good >= 0 || sm->bad >= 0 || sm->n_layers) {
		/* plain words: the last layer known good, the first known bad */
		const char *bad = sm->bad >= 0 ? label(sm->layers[sm->bad], c, sizeof c) : "";
		draw_textf(w, y++, 0, W, C_DEFAULT, 0,
		           "%sgood up to %s, %s%s; %zu layer%s to test (%zu skipped), ~%d probe%s left",
		           rp ? "logged: " : "",
		           sm->good >= 0 ? label(sm->layers[sm->good], a, sizeof a) : "the input",
		           sm->bad >= 0 ? "bad from " : "no bad layer seen yet",
		           bad, sm->n_remaining, sm->n_remaining == 1 ? "" : "s",
		           sm->n_skipped_inside, sm->probes_left, sm->probes_left == 1 ? "" : "s");
	}
	y++;
	y = draw_strip(sm, w, y) + 1;

	if (rp) {
		draw_textf(w, y++, 0, W, C_DEFAULT, 0, "now: %s", rp->fresh->sm.msg);
		draw_text(w, y++, 0, W, C_DIM, 0,
		          "x resets and bisects these trees  u undoes the last logged step");
	} else if (replay) {
		draw_textf(w, y++, 0, W, C_HILITE, A_BOLD,
		           "replay: step %ld of %zu  (<Left> back, <Right> forward, live after "
		           "the last)", b->at, r->sm.n_steps);
	} else if (sm->next >= 0) {
		int layer = sm->layers[sm->next];
		db_probe pr;
		db_bisect_probe(r, layer, &pr);
		x = draw_textf(w, y, 0, W, C_DEFAULT, A_BOLD, "next %s: ", label(layer, a, sizeof a));
		if (pr.pair != DB_NO_PAIR && !strcmp(r->stage, DB_PROBE_LAST))  /* which stage */
			x += draw_textf(w, y, x, W - x, C_DIM, 0, "%s  ", r->c->pairs[pr.pair].f.stage);
		if (!pr.dumped) {
			draw_text(w, y++, x, W - x, C_MISSING, 0, "not dumped on both sides yet");
			char *cmd = db_bisect_dump_hint(r, layer);
			if (cmd)
				draw_textf(w, y++, 2, W - 2, C_DEFAULT, 0, "dump it: %s", cmd);
			free(cmd);
			char vk[128];
			draw_textf(w, y++, 2, W - 2, C_DIM, 0, "%s; by hand: %s",
			           t->watch ? "it shows here once written (the trees are watched)"
			                    : "then <C-r> rescans",
			           tui_bisect_verdict_keys(vk, sizeof vk, ", "));
		} else {
			char rel[16];
			fmt_sci(pr.m.rel, rel, sizeof rel, 9);
			x += draw_textf(w, y, x, W - x, C_DEFAULT, 0, "cos %.6f  rel %s  ", pr.m.cos, rel);
			x += draw_text(w, y, x, W - x, draw_band_color(pr.band), 0,
			               draw_band_glyph(pr.band));
			x += draw_textf(w, y, x, W - x, C_DEFAULT, 0, " %s  auto verdict: ",
			                pr.pair != DB_NO_PAIR ? db_verdict_word(&t->cmp->pairs[pr.pair])
			                                      : db_band_name(pr.band));
			draw_text(w, y++, x, W - x, verdict_color(pr.auto_verdict), A_BOLD,
			          db_verdict_name(pr.auto_verdict));
			char vk[128];
			draw_textf(w, y++, 2, W - 2, C_DIM, 0, "<Enter> accepts  %s  u undo  x reset",
			           tui_bisect_verdict_keys(vk, sizeof vk, "  "));
		}
	} else if (db_bisect_done(sm)) {
		const db_bisect_result *res = analyze(t, b);
		if (res) {
			draw_textf(w, y++, 0, W, C_MARK, A_BOLD, "%s", res->summary);
			x = draw_textf(w, y, 0, W, C_DEFAULT, 0, "kind %s", db_bisect_kind_name(res->kind));
			if (res->has_first_bad)
				x += draw_textf(w, y, x, W - x, C_DEFAULT, 0, "   first bad layer %s%s%s%s",
				                label(res->first_bad_layer, a, sizeof a),
				                res->layer_class ? " (" : "",
				                res->layer_class ? res->layer_class : "",
				                res->layer_class ? ")" : "");
			if (res->has_crossing)
				draw_textf(w, y, x, W - x, C_DEFAULT, 0, "   crosses the ok band at %s",
				           label(res->crossing_layer, c, sizeof c));
			y++;
			if (res->first_bad_stage) {
				char ht[256];
				db_hint_text(&res->first_bad_hint, !draw_utf8, ht, sizeof ht);
				draw_textf(w, y++, 0, W, C_DEFAULT, 0, "stage %s%s%s%s%s",
				           res->first_bad_stage,
				           res->first_bad_substage ? "   first bad sub-stage " : "",
				           res->first_bad_substage ? res->first_bad_substage : "",
				           ht[0] ? "   hint " : "", ht);
			}
			if (res->n_bad_ranks) {
				x = draw_text(w, y, 0, W, C_DEFAULT, 0, "bad ranks");
				for (size_t i = 0; i < res->n_bad_ranks; i++)
					x += draw_textf(w, y, x, W - x, C_MARK, A_BOLD, " %d", res->bad_ranks[i]);
				draw_text(w, y, x, W - x, C_DEFAULT, 0, res->all_ranks_bad ? " (every rank)"
				          : " (the other ranks are good)");
				y++;
			}
			if (res->input_ids_mismatch)
				draw_textf(w, y++, 0, W, C_ERROR, A_BOLD, "input ids differ (%s)",
				           res->input_ids_stage ? res->input_ids_stage : "?");
			draw_text(w, y++, 0, W, C_DIM, 0, res->has_first_bad
			          ? "<Enter> shows it on the heatmap  u undo  x reset  w note"
			          : "u undo  x reset  w note");
		}
	}
	y++;
	/* history */
	draw_textf(w, y++, 0, W, C_DIM, A_BOLD, "history (%zu step%s)", sm->n_steps,
	           sm->n_steps == 1 ? "" : "s");
	b->page = y0 + h - y;
	if (b->page < 1)
		return;
	int n = (int)sm->n_steps;
	sm = &r->sm;                    /* the steps come from the whole log */
	/* newest at the bottom; show the last page */
	int first = n > b->page ? n - b->page : 0;
	for (int i = first; i < n; i++, y++) {
		const db_bisect_step *s = &sm->steps[i];
		char rel[16];
		fmt_sci(s->rel, rel, sizeof rel, 9);
		x = draw_textf(w, y, 0, W, C_DEFAULT, 0, "%3d  %-6s ", i + 1,
		               label(s->layer, a, sizeof a));
		x += draw_textf(w, y, x, W - x, verdict_color(s->verdict), A_BOLD, "%-5s",
		                db_verdict_name(s->verdict));
		x += draw_textf(w, y, x, W - x, C_DIM, 0, " %-5s", s->by_user ? "user" : "auto");
		if (!isnan(s->cos))
			x += draw_textf(w, y, x, W - x, C_DEFAULT, 0, "  cos %.6f  rel %s  %s", s->cos,
			                rel, db_noise_root(t->cmp) && s->band == DB_BAND_OK ? "within noise"
			                     : db_noise_root(t->cmp) && s->band >= DB_BAND_ALGO ? "beyond noise"
			                     : db_band_name(s->band));
		if (rp && (size_t)i < rp->n_rows && !rp->rows[i].holds) {
			const db_probe *now = &rp->rows[i].now;
			x += draw_textf(w, y, x, W - x, C_DEFAULT, 0, "  now %s",
			                db_verdict_name(now->auto_verdict));
			if (now->dumped)
				x += draw_textf(w, y, x, W - x, C_DEFAULT, 0, " cos %.6f", now->m.cos);
			draw_text(w, y, x, W - x, C_ERROR, A_BOLD, "  CHANGED");
		}
	}
}

/* Record a verdict for the proposed layer: accept (v NONE) or override. */
static void step(struct tui *t, db_verdict v)
{
	db_bisect_run *r = t->bisect;
	if (r->sm.next < 0) {
		tui_msg(t, false, "nothing left to probe (u undoes, x resets)");
		return;
	}
	int layer = r->sm.layers[r->sm.next];
	db_bisect_step s;
	db_bisect_auto_step(r, layer, &s);
	if (v == DB_V_NONE) {
		if (s.auto_verdict == DB_V_NONE) {
			char a[16];
			char vk[128];
			tui_msg(t, true, "%s has no auto verdict (not dumped): %s",
			        label(layer, a, sizeof a), tui_bisect_verdict_keys(vk, sizeof vk, ", "));
			return;
		}
		s.verdict = s.auto_verdict;
		s.by_user = false;
	} else {
		/* logged as the headless verbs log it (db_bisect_user_step): a
		 * verdict the user typed is the user's, agreeing or not */
		s.verdict = v;
		s.by_user = true;
	}
	db_err err = {{0}};
	if (db_bisect_record(&r->sm, &s, &err) < 0) {
		tui_msg(t, true, "bisect: %s", err.msg);
		return;
	}
	tui_session_save(t);
}

/* The culprit on the heatmap: the first bad sub-stage, else the stage. */
static void show_culprit(struct tui *t, struct bisect_view *b)
{
	const db_bisect_result *res = last_result(t, b);
	if (!res || !res->has_first_bad) {
		tui_msg(t, false, "no first bad layer to show");
		return;
	}
	const char *want = res->first_bad_substage ? res->first_bad_substage
	                                           : res->first_bad_stage;
	const db_bisect_run *r = t->bisect;
	size_t best = DB_NO_PAIR;
	for (size_t i = 0; want && i < t->cmp->n_pairs; i++) {
		const db_pair *p = &t->cmp->pairs[i];
		if (p->f.layer != res->first_bad_layer || strcmp(p->f.stage, want) ||
		    strcmp(p->f.phase, r->phase ? r->phase : "") ||
		    strcmp(p->f.pass, r->pass ? r->pass : ""))
			continue;
		/* prefer the first bad rank, else the rank on screen */
		int want_rank = res->n_bad_ranks ? res->bad_ranks[0] : tui_rank(t);
		if (best == DB_NO_PAIR || (p->f.rank == want_rank && !p->merged))
			best = i;
	}
	if (best == DB_NO_PAIR) {
		tui_msg(t, true, "%s is not in the heatmap's selection", want ? want : "?");
		return;
	}
	tui_select_rank_of(t, best);
	heatmap_goto_pair(t, best);
}

static bool bisect_request(struct view *v, struct tui *t, enum tui_action a)
{
	struct bisect_view *b = v->priv;
	db_bisect *sm = &t->bisect->sm;
	db_err err = {{0}};
	if (a == A_VIEW_BISECT) {       /* "b" again: never a verdict */
		char vk[128];
		tui_msg(t, false, "this is the bisect: <Enter> accepts, %s",
		        tui_bisect_verdict_keys(vk, sizeof vk, ", "));
		return true;
	}
	if (a == A_BISECT_REPLAY_BACK || a == A_BISECT_REPLAY_FORWARD) {
		long n = (long)sm->n_steps;
		if (a == A_BISECT_REPLAY_BACK)
			b->at = b->at < 0 ? (n > 0 ? n - 1 : -1) : (b->at > 0 ? b->at - 1 : 0);
		else if (b->at >= 0)
			b->at = b->at + 1 >= n ? -1 : b->at + 1;
		t->dirty = true;
		return true;
	}
	bool changes = a == A_BISECT_ACCEPT || a == A_ENTER || a == A_BISECT_GOOD ||
	               a == A_BISECT_BAD || a == A_BISECT_SKIP || a == A_BISECT_UNDO ||
	               a == A_BISECT_RESET || a == A_BISECT_RESCAN;
	if (changes)
		replay_drop(t);         /* the log moves on: now it is live */
	if (b->at >= 0 && changes) {
		b->at = -1;             /* verdicts apply to the live state only */
		tui_msg(t, false, "back to the live bisect");
		t->dirty = true;
		return true;
	}
	switch (a) {
	case A_BISECT_ACCEPT: case A_ENTER:
		if (db_bisect_done(sm))
			show_culprit(t, b);
		else
			step(t, DB_V_NONE);
		break;
	case A_BISECT_GOOD: step(t, DB_V_GOOD); break;
	case A_BISECT_BAD: step(t, DB_V_BAD); break;
	case A_BISECT_SKIP: step(t, DB_V_SKIP); break;
	case A_BISECT_UNDO:
		if (!db_bisect_undo(sm))
			tui_msg(t, false, "nothing to undo");
		tui_session_save(t);
		break;
	case A_BISECT_RESET:
		if (reaim(t)) {         /* another phase / pass chosen: sm is gone */
			t->dirty = true;
			return true;
		}
		db_bisect_reset(sm);
		tui_msg(t, false, "bisect reset");
		tui_session_save(t);
		break;
	case A_BISECT_RESCAN:
		/* Pair indices change: only the heatmap and this view survive. */
		while (t->n_views > 1)
			tui_pop(t);
		t->passes_valid = false;        /* the pairs may change */
		if (db_bisect_rescan(t->bisect, &err) < 0) {
			tui_msg(t, true, "rescan: %s", err.msg);
		} else {
			tui_rescanned(t);
			tui_msg(t, false, "rescanned: %zu pairs", t->cmp->n_pairs);
		}
		tui_push(t, &bisect_view, DB_NO_PAIR);
		return true;            /* v is gone */
	default:
		return false;
	}
	t->dirty = true;
	return true;
}

/* The probe pair of the first bad layer when found, else of the next. */
static size_t bisect_selected(struct view *v, struct tui *t)
{
	const db_bisect_result *res = last_result(t, v->priv);
	db_bisect *sm = &t->bisect->sm;
	int layer;
	if (res && res->has_first_bad)
		layer = res->first_bad_layer;
	else if (sm->next >= 0)
		layer = sm->layers[sm->next];
	else
		return DB_NO_PAIR;
	db_probe pr;
	db_bisect_probe(t->bisect, layer, &pr);
	return pr.pair;
}

static void bisect_note(struct view *v, struct tui *t, FILE *out)
{
	char *md = db_md_bisect(&t->bisect->sm, last_result(t, v->priv));
	if (md) {
		fputs(md, out);
		free(md);
	}
}

const struct view_ops bisect_view = {
	.name = "bisect",
	.keymap = KM_BISECT,
	.private_size = sizeof(struct bisect_view),
	.open = bisect_open,
	.draw = bisect_draw,
	.request = bisect_request,
	.done = bisect_done,
	.selected = bisect_selected,
	.note_data = bisect_note,
};
