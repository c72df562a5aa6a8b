/* dumpbisect compare REF [TARGET]: pair two trees, measure every pair,
 * print a table / CSV / JSON, exit 0 when all is in the ok band. */
#include "db_cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd_compare_watch.h"
#include "cmd_util.h"
#include "gate.h"
#include "db_calls.h"
#include "db_compare.h"
#include "db_dequant.h"
#include "db_esc.h"
#include "db_export.h"
#include "db_grid.h"
#include "db_hints.h"
#include "db_noise.h"
#include "db_routing.h"
#include "db_slot.h"
#include "db_variants.h"
#include "db_verdict.h"
#include "read/walk.h"

static const char *or_none(const char *s)
{
	return *s ? s : "(none)";
}

/* Both sides have tensors that did not pair: name the fields that keep the
 * first such ref tensor from a target tensor of the same layer and stage
 * (a one-shot reference against per-call files differs in the pass). */
/* pairing: calls: each run of calls only one side makes, once, where it is */
static void calls_out(const db_compare *c, FILE *out)
{
	size_t runs = 0, shown = 0;
	for (size_t i = 0; i < c->n_pairs; i++) {
		char fd[1024], lab[512];
		size_t first;
		if (!db_call_finding(c, i, fd, sizeof fd, &first) || first != i)
			continue;
		if (!runs++)
			fputs("calls only one side makes (aligned by order, name and shape in each layer):\n",
			      out);
		if (shown >= 20)
			continue;
		shown++;
		db_call_where(&c->pairs[i], lab, sizeof lab);
		fprintf(out, "  %s: %s\n", db_esc(lab), db_esc(fd));
	}
	if (runs > shown)
		fprintf(out, "  (%zu more)\n", runs - shown);
	if (c->calls_unaligned)
		fprintf(out, "calls of %zu layer%s not aligned, paired by their names and counters: "
		        "too many to align (the largest %zu x %zu calls; a call only one side makes "
		        "shifts the pairs after it there)\n", c->calls_unaligned,
		        c->calls_unaligned == 1 ? "" : "s", c->calls_unaligned_ref,
		        c->calls_unaligned_tgt);
}

static void explain_unpaired(const db_compare *c, FILE *out)
{
	size_t n = 0;
	const db_pair *a = NULL, *b = NULL;
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *r = &c->pairs[i];
		if (r->status != DB_ST_REF_ONLY)
			continue;
		for (size_t k = 0; k < c->n_pairs; k++) {
			const db_pair *t = &c->pairs[k];
			if (t->status == DB_ST_TARGET_ONLY && t->f.layer == r->f.layer &&
			    !strcmp(t->f.stage, r->f.stage)) {
				if (!n++) {
					a = r;
					b = t;
				}
				break;
			}
		}
	}
	if (!a)
		return;
	char why[512] = "";
	size_t l = 0;
#define DIFF(fmt, ...) l += (size_t)snprintf(why + l, l < sizeof why ? sizeof why - l : 0, fmt, __VA_ARGS__)
	if (strcmp(a->f.phase, b->f.phase))
		DIFF("%sphase %s vs %s", l ? ", " : "", or_none(a->f.phase), or_none(b->f.phase));
	if (strcmp(a->f.pass, b->f.pass))
		DIFF("%spass %s vs %s", l ? ", " : "", or_none(a->f.pass), or_none(b->f.pass));
	if (a->f.rank != b->f.rank)
		DIFF("%srank %d vs %d", l ? ", " : "", a->f.rank, b->f.rank);
	if (a->occurrence != b->occurrence)
		DIFF("%soccurrence %d vs %d", l ? ", " : "", a->occurrence, b->occurrence);
#undef DIFF
	if (!*why)
		return;
	char lab[512];
	if (a->f.layer >= 0)
		snprintf(lab, sizeof lab, "L%d %s", a->f.layer, a->f.stage);
	else
		snprintf(lab, sizeof lab, "%s", a->f.stage);
	fprintf(out, "unpaired: %zu ref tensor%s %s a target tensor of the same layer and stage; "
	        "e.g. %s differs in %s (ref vs target)\n", n, n == 1 ? "" : "s",
	        n == 1 ? "has" : "have", db_esc(lab), db_esc(why));
}

static void progress(db_compare *c)
{
	if (!isatty(STDERR_FILENO) || db_compare_start(c) != 0) {
		db_compare_run(c);
		return;
	}
	struct timespec ts = {0, 100 * 1000 * 1000};
	bool shown = false;
	while (!db_compare_finished(c)) {
		nanosleep(&ts, NULL);
		fprintf(stderr, "\rcomparing: %zu/%zu pairs", atomic_load(&c->n_done), c->n_pairs);
		shown = true;
	}
	db_compare_stop(c);
	if (shown)
		fputs("\r\033[K", stderr);
}

/* s left-aligned in width columns; counts UTF-8 code points, not bytes. */
static void put_pad(FILE *out, const char *s, int width)
{
	int cols = 0;
	for (const unsigned char *q = (const unsigned char *)s; *q; q++)
		cols += (*q & 0xC0) != 0x80;
	fputs(s, out);
	do      /* a name as wide as the column still ends before the next one */
		fputc(' ', out);
	while (++cols < width);
}

static bool any_phase(const db_compare *c)
{
	return c->n_phases > 1 || (c->n_phases == 1 && c->phases[0][0]);
}

static bool any_pass(const db_compare *c)
{
	for (size_t i = 0; i < c->n_pairs; i++)
		if (c->pairs[i].f.pass[0])
			return true;
	return false;
}

/* Directory links that leave a tree are listed, not followed (unless
 * --follow-links): say so under the counts, naming the first few, so a
 * tree that looks short (or a profile that looks odd) explains itself. */
static void links_out(const db_index *ix, const char *which, FILE *out)
{
	if (!ix || !ix->n_links_out)
		return;
	fprintf(out, "%s: %zu link%s to a directory outside the tree not followed "
	        "(--follow-links follows):", which, ix->n_links_out, ix->n_links_out == 1 ? "" : "s");
	size_t k = 0;
	for (size_t i = 0; i < ix->n_skipped && k < 5; i++) {
		const char *s = ix->skipped[i], *why = strstr(s, ": " DB_WALK_LINK_OUT " (");
		if (!why)
			continue;
		const char *to = why + strlen(": " DB_WALK_LINK_OUT " ("), *end = strstr(to, "); ");
		char rel[1024], dst[1024];
		snprintf(rel, sizeof rel, "%.*s", (int)(why - s), s);
		snprintf(dst, sizeof dst, "%.*s", end ? (int)(end - to) : 0, to);
		fprintf(out, "%s %s", k++ ? "," : "", db_esc(rel));
		fprintf(out, " -> %s", db_esc(dst));      /* db_esc's buffer: one per call */
	}
	fputs(ix->n_links_out > k ? ", ...\n" : "\n", out);
}

/* diverging: the rows of the pairs that diverge only (the summary below
 * still counts every pair). */
static void print_table(const db_compare *c, FILE *out, bool diverging)
{
	bool utf8 = db_term_utf8();
	bool ph = any_phase(c), pa = any_pass(c);
	fprintf(out, "profile %s (%s)\nref     %s\ntarget  %s\n", db_esc(c->profile->name),
	        db_esc(c->why), db_esc(db_compare_given(c, 0)), db_esc(db_compare_given(c, 1)));
	char xn[400];
	if (*db_compare_xform_note(c, xn, sizeof xn))
		fprintf(out, "layout  %s\n", db_esc(xn));
	if (db_noise_root(c))
		fprintf(out, "noise   %s (%zu floors; beyond noise: rel > %g x max(floor, %g))\n",
		        db_esc(db_noise_root(c)), db_noise_floors(c), c->profile->thresholds.noise_k,
		        c->profile->thresholds.noise_min_rel);
	db_slots_text(out, c);
	db_align_text(out, c);
	fputc('\n', out);
	fprintf(out, "%-3s %s%s%-5s %-5s %-28s %-18s %-12s %-11s %-6s %s\n", "", ph ? "phase     " : "",
	        pa ? "pass   " : "", "layer", c->n_slots ? "slot" : "rank", "stage", "shape", "cos", "rel", "bytes=", "status");
	size_t counts[DB_BAND_INPUTS + 1] = {0}, st[DB_ST_NOT_COMPARABLE + 1] = {0};
	size_t hidden = 0, hidden_none = 0;
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *p = &c->pairs[i];
		st[p->status]++;
		if (p->status == DB_ST_OK && p->band <= DB_BAND_INPUTS)
			counts[p->band]++;
		if (diverging && !db_pair_diverges(p)) {
			hidden++;
			hidden_none += p->status == DB_ST_OK && p->band == DB_BAND_NONE;
			continue;
		}
		char shape[128], layer[16], rank[16], cos[32], rel[32];
		if (p->ndim_ref >= 0)
			db_fmt_shape(p->ndim_ref, p->shape_ref, shape, sizeof shape);
		else
			db_fmt_shape(p->ndim_tgt, p->shape_tgt, shape, sizeof shape);
		if (p->status == DB_ST_SHAPE_MISMATCH || (p->slot.side && p->slot.side != DB_SLOT_IN_TREE) ||
		    (p->status == DB_ST_NOT_COMPARABLE && p->ndim_tgt >= 0 && p->ndim_ref >= 0 &&
		     (p->ndim_ref != p->ndim_tgt ||
		      memcmp(p->shape_ref, p->shape_tgt, (size_t)p->ndim_ref * sizeof *p->shape_ref)))) {
			size_t l = strlen(shape);
			snprintf(shape + l, sizeof shape - l, "%s", utf8 ? "≠" : "!=");
			l = strlen(shape);
			db_fmt_shape(p->ndim_tgt, p->shape_tgt, shape + l, sizeof shape - l);
		}
		snprintf(layer, sizeof layer, p->f.layer >= 0 ? "%d" : "-", p->f.layer);
		if (p->merged)
			snprintf(rank, sizeof rank, "all");
		else if (p->slot.ranked)        /* --slots over ranks: rank x slot */
			snprintf(rank, sizeof rank, "%d/%d", p->slot.rank, p->slot.k);
		else
			snprintf(rank, sizeof rank, p->f.rank >= 0 ? "%d" : "-", p->f.rank);
		if (p->status == DB_ST_OK && p->m.cos == p->m.cos)
			snprintf(cos, sizeof cos, "%.8f", p->m.cos);
		else if (p->status == DB_ST_OK && p->m.stats_only)
			snprintf(cos, sizeof cos, "stats-only");
		else
			snprintf(cos, sizeof cos, "-");
		if (p->status == DB_ST_OK && p->m.rel == p->m.rel)
			snprintf(rel, sizeof rel, "%.4e", p->m.rel);
		else
			snprintf(rel, sizeof rel, "-");
		char stage[300];
		snprintf(stage, sizeof stage, p->occurrence ? "%s #%d" : "%s", p->f.stage, p->occurrence);
		put_pad(out, db_pair_glyph(p, utf8), 4);
		if (ph)
			fprintf(out, "%-9s ", db_esc(p->f.phase));
		if (pa)
			fprintf(out, "%-6s ", db_esc(p->f.pass));
		fprintf(out, "%-5s %-5s ", layer, rank);
		put_pad(out, db_esc(stage), 29);
		put_pad(out, shape, 19);
		fprintf(out, "%-12s %-11s ", cos, rel);
		/* the weights question, "bit-identical?", next to cos */
		char be[16];
		put_pad(out, p->status == DB_ST_OK ? db_fmt_pair_bytes(p, utf8, be, sizeof be) : "-", 7);
		/* one word per pair, the one every surface prints (db_verdict.h);
		 * a floor that judged it is shown where it matters */
		char vt[128];
		db_judgement vd;
		db_pair_verdict(p, &vd);
		fputs(vd.by == DB_JUDGED_NOISE && vd.diverges ? db_verdict_text(p, vt, sizeof vt)
		      : vd.word, out);
		if (p->noise == DB_NOISE_NO_FLOOR && p->band != DB_BAND_OK)
			fputs(" (no noise floor)", out);
		if (p->dtype_differs)
			fprintf(out, " (dtype %s vs %s)", db_dtype_name(p->dtype_ref),
			        db_dtype_name(p->dtype_tgt));
		if (p->status == DB_ST_OK && p->m.dc_dtype && p->m.max_abs > 0)  /* diff_downcast */
			fprintf(out, " (downcast to %s: rel %.4e)", db_dtype_name(p->m.dc_dtype),
			        p->m.dc.rel);
		char dq[400];
		if (*db_pair_dequant_note(p, dq, sizeof dq))
			fprintf(out, " (%s)", db_esc(dq));
		char slot[128];
		db_hint sh;
		if (p->slot.side)
			db_pair_hint(c, p, &sh);
		/* the hint names the slot, unless another one (inputs) wins */
		if (p->slot.side && sh.kind != DB_HINT_BATCH_SLOT && *db_slot_str(p, slot, sizeof slot))
			fprintf(out, " (%s)", slot);
		char part[160];
		if (p->status == DB_ST_OK && *db_slot_part_str(p, part, sizeof part))
			fprintf(out, " (%s)", part);
		if (p->status == DB_ST_OK && p->band == DB_BAND_NONE && p->m.stats_only)
			fputs(" (nothing to compare: no statistic is a number on both sides)", out);
		if ((p->status == DB_ST_ERROR || p->status == DB_ST_NOT_COMPARABLE) && p->error)
			fprintf(out, ": %s", db_esc(p->error));
		char rw[96];
		if (*db_routing_words(c, p, rw, sizeof rw))
			fprintf(out, " (%s)", rw);
		db_hint h;
		char ht[256];
		db_pair_hint(c, p, &h);
		if (h.kind != DB_HINT_NONE)
			fprintf(out, "  hint %s", db_hint_text(&h, !utf8, ht, sizeof ht));
		fputc('\n', out);
	}
	if (diverging && hidden_none)
		fprintf(out, "(--diverging: %zu pair%s in the ok band and %zu with nothing to compare "
		        "not shown)\n", hidden - hidden_none, hidden - hidden_none == 1 ? "" : "s",
		        hidden_none);
	else if (diverging)
		fprintf(out, "(--diverging: %zu pair%s in the ok band not shown)\n", hidden,
		        hidden == 1 ? "" : "s");
	fprintf(out, "\n%zu pairs: %zu ok, %zu drift, %zu algo, %zu bug, %zu scramble; "
	        "%zu ref_only, %zu target_only, %zu shape_mismatch, %zu error", c->n_pairs,
	        counts[DB_BAND_OK], counts[DB_BAND_DRIFT], counts[DB_BAND_ALGO], counts[DB_BAND_BUG],
	        counts[DB_BAND_SCRAMBLE], st[DB_ST_REF_ONLY], st[DB_ST_TARGET_ONLY],
	        st[DB_ST_SHAPE_MISMATCH], st[DB_ST_ERROR]);
	if (st[DB_ST_NOT_COMPARABLE])
		fprintf(out, ", %zu not_comparable", st[DB_ST_NOT_COMPARABLE]);
	if (counts[DB_BAND_INPUTS])
		fprintf(out, "; %zu inputs_differ", counts[DB_BAND_INPUTS]);
	/* measured, yet no number on both sides (statistics all NaN or null):
	 * neither ok nor a divergence, and never hidden under "ok" (issue 37) */
	if (counts[DB_BAND_NONE])
		fprintf(out, "; %zu nothing to compare", counts[DB_BAND_NONE]);
	if (db_noise_root(c)) {         /* the floor's words, which decided the bands */
		size_t nz[DB_NOISE_NO_FLOOR + 1] = {0};
		for (size_t i = 0; i < c->n_pairs; i++)
			if (c->pairs[i].status == DB_ST_OK && (unsigned)c->pairs[i].noise <= DB_NOISE_NO_FLOOR)
				nz[(unsigned)c->pairs[i].noise]++;
		fprintf(out, "; %zu within noise, %zu beyond noise, %zu without a floor",
		        nz[DB_NOISE_WITHIN], nz[DB_NOISE_BEYOND], nz[DB_NOISE_NO_FLOOR]);
	}
	size_t bw[2] = {0};     /* judged bitwise: the words that decided, as the bands' */
	for (size_t i = 0; i < c->n_pairs; i++)
		if (c->pairs[i].status == DB_ST_OK && db_pair_judged_bitwise(&c->pairs[i]))
			bw[db_pair_diverges(&c->pairs[i])]++;
	if (bw[0] + bw[1])
		fprintf(out, "; judged bitwise: %zu bit-identical, %zu bits differ", bw[0], bw[1]);
	fputc('\n', out);
	links_out(c->ref, c->ref == c->tgt ? "tree" : "ref", out);
	if (c->tgt != c->ref)
		links_out(c->tgt, "target", out);
	/* Token ids first: runs fed other tokens explain everything after. */
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *p = &c->pairs[i];
		bool shape = p->status == DB_ST_SHAPE_MISMATCH &&
		             db_profile_is_input_ids(c->profile, p->f.stage);
		if (!shape && !(p->status == DB_ST_OK && p->band == DB_BAND_INPUTS))
			continue;
		char lab[512];
		db_pair_label(p, lab, sizeof lab);
		if (shape)
			fprintf(out, "inputs differ: %s: another shape", lab);
		else if (p->m.byte_equal == p->m.byte_equal)
			fprintf(out, "inputs differ: %s: %.0f of %llu ids differ", lab,
			        (1.0 - p->m.byte_equal) * (double)p->numel,
			        (unsigned long long)p->numel);
		else
			fprintf(out, "inputs differ: %s: max |diff| %g", lab, p->m.max_abs);
		fputs(" (the runs did not see the same tokens: fix the inputs first)\n", out);
		break;
	}
	if (c->profile->pair_calls)
		calls_out(c, out);
	else if (st[DB_ST_REF_ONLY] && st[DB_ST_TARGET_ONLY])
		explain_unpaired(c, out);
	db_passes_text(out, c);
	long fd = db_first_divergence(c, NULL, NULL, -2);
	if (fd < 0) {
		char nd[1400];
		fprintf(out, "%s\n", db_esc(db_no_divergence_text(c, nd, sizeof nd)));
		return;
	}
	const db_pair *p = &c->pairs[fd];
	if (ph)
		fprintf(out, "first divergent phase: %s\n", db_esc(p->f.phase));
	char lab[512], nz[96];
	db_pair_label_cell(c, p, lab, sizeof lab);
	db_judgement vd;
	db_pair_verdict(p, &vd);
	/* the word in brackets, what backs it after (db_verdict.h) */
	const char *back = "";
	if (vd.by == DB_JUDGED_NOISE)
		back = db_noise_str(p, nz, sizeof nz) + strlen(vd.word);
	else if (p->noise == DB_NOISE_NO_FLOOR)
		back = " (no noise floor)";
	if (p->status == DB_ST_OK && p->m.stats_only)
		fprintf(out, "first divergence: %s: statistics only, rel %.4e [%s]%s\n", lab,
		        p->m.rel, vd.word, back);
	else if (p->status == DB_ST_OK)
		fprintf(out, "first divergence: %s: cos %.8f rel %.4e [%s]%s\n", lab, p->m.cos,
		        p->m.rel, vd.word, back);
	else {
		char cf[1024];
		bool call = db_call_finding(c, (size_t)fd, cf, sizeof cf, NULL);
		fprintf(out, "first divergence: %s: %s%s%s\n", lab, db_status_name(p->status),
		        call ? ": " : "", call ? db_esc(cf) : "");
	}
	if (p->slot.side == DB_SLOT_IN_TREE && p->status == DB_ST_OK && p->slot.alone)
		fprintf(out, "  (judged bitwise: slot %d holds the prompt the reference ran alone, so "
		        "batch-invariant kernels owe it the same bits; max |diff| %.3g, band %s)\n",
		        p->slot.k, p->m.max_abs, db_band_name(p->band));
	else if (p->slot.side == DB_SLOT_IN_TREE && p->status == DB_ST_OK)
		fprintf(out, "  (judged bitwise: slot %d holds the prompt of slot 0 in the same batch, "
		        "so the same kernels owe it the same bits; max |diff| %.3g, band %s)\n",
		        p->slot.k, p->m.max_abs, db_band_name(p->band));
	else if (db_pair_judged_bitwise(p) && p->status == DB_ST_OK)
		fprintf(out, "  (judged bitwise: a batch slot, the prompt run alone against its rows in "
		        "the other side's batch; the first layer is bit-identical, so the same kernels "
		        "owe it the same bits; max |diff| %.3g, band %s)\n", p->m.max_abs,
		        db_band_name(p->band));
	else if (fd == db_first_not_identical(c))
		fputs("  (bit-identical regime: every pair before it is bit-identical, the same code and "
		      "kernels: it is where the runs part, whatever its band)\n", out);
	if (c->align_whole)     /* the verdict in token terms (issue 35) */
		db_token_text(out, c, fd, false);
	/* drift first (another TP size or dtype): also name where it gets worse */
	long fb = db_first_beyond_drift_of(c, fd);
	if (fb >= 0) {
		const db_pair *q = &c->pairs[fb];
		db_pair_label_cell(c, q, lab, sizeof lab);
		if (q->status == DB_ST_OK && q->m.stats_only)
			fprintf(out, "first divergence beyond drift: %s: statistics only, rel %.4e [%s]\n",
			        lab, q->m.rel, db_band_name(q->band));
		else if (q->status == DB_ST_OK)
			fprintf(out, "first divergence beyond drift: %s: cos %.8f rel %.4e [%s]\n", lab,
			        q->m.cos, q->m.rel, db_band_name(q->band));
		else
			fprintf(out, "first divergence beyond drift: %s: %s\n", lab,
			        db_status_name(q->status));
		if (c->align_whole)
			db_token_text(out, c, fb, true);
	}
}

/* One line per variant: where it first diverges and its counts, so the
 * variant that moves (or removes) the first divergence stands out. */
static void print_variant_summary(const db_variants *vs, FILE *out)
{
	fprintf(out, "ref     %s\n", vs->v[0]->ref_root);
	for (size_t v = 0; v < vs->n; v++) {
		const db_compare *c = vs->v[v];
		db_variant_counts k;
		db_variant_count(c, &k);
		fprintf(out, "variant %zu %s: ", v + 1, c->tgt_root);
		long fd = db_first_divergence(c, NULL, NULL, -2);
		if (fd < 0) {
			fputs("no divergence", out);
		} else {
			const db_pair *p = &c->pairs[fd];
			char lab[512];
			db_pair_label_cell(c, p, lab, sizeof lab);
			if (p->status == DB_ST_OK)
				fprintf(out, "first divergence %s [%s]", lab, db_band_name(p->band));
			else
				fprintf(out, "first divergence %s: %s", lab, db_status_name(p->status));
		}
		fprintf(out, "; %zu pairs: %zu ok, %zu diverge, %zu missing, %zu error\n", k.pairs,
		        k.ok, k.diverge, k.missing, k.error);
	}
}

/* compare REF T1 T2 ...: each target its own comparison with REF. */
static int compare_variants(const db_cmd *cmd, const db_cmp_args *ca, const char *const *pos,
                            int npos, int fmt, bool diverging)
{
	if (fmt == DB_FMT_CSV)
		return db_cmd_usage_error(cmd, "--format csv takes one target; with %d use json",
		                          npos - 1);
	db_compare_opts o = {0};
	if (db_cmp_args_apply(cmd, ca, &o) != 0)
		return 2;
	db_variants vs;
	db_err err = {{0}};
	if (db_variants_open(pos[0], pos + 1, (size_t)npos - 1, &o, &vs, &err) < 0)
		return db_cmd_error(cmd, "%s", err.msg);
	for (size_t v = 0; v < vs.n; v++)
		progress(vs.v[v]);
	if (fmt == DB_FMT_JSON) {
		db_variants_json(stdout, &vs);
	} else {
		print_variant_summary(&vs, stdout);
		/* which variant fixes which layer: the first phase, its pass */
		const db_compare *c0 = vs.v[0];
		const char *ph = c0->n_phases ? c0->phases[0] : NULL;
		db_variant_matrix m;
		if (db_variants_matrix(&vs, ph, db_default_pass(c0, ph), NULL, true, (size_t)-1,
		                       &m) == 0 && m.n_layers) {
			putchar('\n');
			db_variants_text(stdout, &vs, &m);
		}
		db_variant_matrix_free(&m);
		for (size_t v = 0; v < vs.n; v++) {
			printf("\n== variant %zu ==\n", v + 1);
			print_table(vs.v[v], stdout, diverging);
		}
	}
	int rc = 0;
	for (size_t v = 0; v < vs.n; v++)
		if (db_first_divergence(vs.v[v], NULL, NULL, -2) >= 0)
			rc = 1;
	db_variants_free(&vs);
	if (fflush(stdout) != 0)
		return 2;
	return rc;
}

/* compare with the CI gate: rules from --pass-if or the profile's pass_if
 * (gate.c); frees c. */
/* Every pair measured, then written as the table, JSON or CSV: the same
 * writers as the export's metrics.json / metrics.csv. Each writer asks each
 * diverging pair's hint, so the cells' reads come first, on every core. */
static void write_pairs(db_compare *c, int fmt, bool diverging)
{
	progress(c);
	db_hints_warm(c);
	if (fmt == DB_FMT_JSON)
		db_export_metrics_json(stdout, c);
	else if (fmt == DB_FMT_CSV)
		db_export_metrics_csv_where(stdout, c, diverging ? db_pair_diverges : NULL);
	else
		print_table(c, stdout, diverging);
}

static int gate_compare(const db_cmd *cmd, db_compare *c, const db_optlist *pass_if,
                        const db_optlist *allow_failed, const db_optlist *allow_skipped, int fmt,
                        bool diverging)
{
	db_rules *rules = NULL;
	char from[300] = "--pass-if";
	const db_profile *pf = c->profile;
	if (!pass_if->n && !pf->n_pass_if)
		snprintf(from, sizeof from, "the bands (no rules)");
	size_t n = pass_if->n ? pass_if->n : pf->n_pass_if;
	if (!pass_if->n && n)
		snprintf(from, sizeof from, "profile %s (pass_if)", pf->name);
	int rc = 0;
	if (n && !(rules = db_rules_new()))
		rc = db_cmd_error(cmd, "out of memory");
	for (size_t i = 0; rc == 0 && i < n; i++) {
		db_err err = {{0}};
		if (db_rules_add(rules, pass_if->n ? pass_if->v[i] : pf->pass_if[i], &err) < 0)
			rc = pass_if->n ? db_cmd_usage_error(cmd, "--pass-if: %s", err.msg)
			                : db_cmd_error(cmd, "%s: pass_if: %s", pf->origin, err.msg);
	}
	if (rc == 0 && !rules && (allow_failed->n || allow_skipped->n))
		rc = db_cmd_usage_error(cmd, "--allow-failed and --allow-skipped go with --pass-if "
		                        "rules (or a profile's pass_if)");
	db_gate_cfg g = {.rules = rules, .allow_failed = allow_failed,
	                 .allow_skipped = allow_skipped, .rules_from = from};
	if (rc == 0)
		rc = db_gate_check(cmd, c, &g);
	if (rc == 0 && fmt == DB_FMT_JSONL) {
		rc = db_gate_jsonl(cmd, c, &g, stdout);
		if (!rules && rc != 2)  /* without rules nothing changes: the bands' exit */
			rc = db_first_divergence(c, NULL, NULL, -2) >= 0 ? 1 : 0;
	} else if (rc == 0) {
		write_pairs(c, fmt, diverging);
		rc = db_gate_text(cmd, c, &g, stdout, fmt != DB_FMT_TABLE);
	}
	db_gate_free(&g);
	db_rules_free(rules);
	db_compare_free(c);
	if (fflush(stdout) != 0)
		return 2;
	return rc;
}

int db_cmd_compare(int argc, char **argv)
{
	const char *format = "table", *timeout = NULL;
	bool watch = false, diverging = false;
	db_cmp_args ca = {0};
	/* the CI gate (gate.c) */
	db_optlist pass_if = {.name = "pass-if"}, allow_failed = {.name = "allow-failed"},
	           allow_skipped = {.name = "allow-skipped"};
	db_optlist *const lists[] = {&pass_if, &allow_failed, &allow_skipped};
	const db_opt opts[] = {
		DB_CMP_OPTS(ca, DB_PROFILE_HELP),
		DB_NOISE_OPT(ca),
		DB_SLOTS_OPT(ca),
		{"format", 0, "F", &format, NULL, "table (default), csv, json or jsonl (one line\n"
		 "per pair as it is measured, then a summary line)"},
		{"pass-if", 0, "[REGEX:] EXPR", NULL, NULL, "the CI gate (repeatable): the first rule whose\n"
		 "REGEX is in the stage judges a pair, e.g.\n"
		 "'attn: rel <= 1e-2' 'rel <= 1e-3 or max_abs <= 1e-4';\n"
		 "exit 0 all passed or allowed, 1 not"},
		{"allow-failed", 0, "REGEX", NULL, NULL, "with --pass-if: failures whose stage, label or\n"
		 "file matches are allowed (repeatable)"},
		{"allow-skipped", 0, "REGEX", NULL, NULL, "with --pass-if: pairs one side lacks (or not\n"
		 "comparable) that match are allowed (repeatable)"},
		{"watch", 0, NULL, NULL, &watch, "print the summary again as files arrive\n"
		 "(json: one object per summary)"},
		{"timeout", 0, "S", &timeout, NULL, "--watch: stop after S seconds (default: Ctrl-C)"},
		{"diverging", 0, NULL, NULL, &diverging, "table and csv: only the pairs that diverge\n"
		 "(the summary still counts every pair)"},
		{"slot", 0, "[SIDE:]DIM:START:LEN", &ca.slot, NULL,
		 "measure a pair whose shapes differ along DIM on\n"
		 "rows START..START+LEN-1 of SIDE (ref or target;\n"
		 "default: the longer side)"},
	};
	const db_cmd cmd = {
		.name = "compare",
		.args = "REF [TARGET...] [options]",
		.desc = "Pair the tensors of REF and TARGET and measure every pair in float64.",
		.exit = "0 every pair is in the ok band, 1 something diverges (or a pair is missing, "
		        "mismatched or unreadable), 2 usage or input error. With --pass-if rules: 0 "
		        "every pair passed or was allowed, 1 one failed or was skipped unallowed.",
		.opts = opts,
		.n_opts = sizeof opts / sizeof *opts,
		.max_pos = DB_MAX_VARIANTS + 1,
		.lists = lists,
		.n_lists = 3,
	};
	const char *pos[DB_MAX_VARIANTS + 1];
	int npos, rc = db_cmd_parse(&cmd, argc, argv, pos, &npos);
	if (rc >= 0)
		return rc;
	if (npos < 1)
		return db_cmd_usage_error(&cmd, "REF is missing");
	int fmt = db_cmd_format(&cmd, format, DB_FMT_BIT(DB_FMT_TABLE) | DB_FMT_BIT(DB_FMT_CSV) |
	                                      DB_FMT_BIT(DB_FMT_JSON) | DB_FMT_BIT(DB_FMT_JSONL));
	if (fmt < 0)
		return 2;
	bool gating = pass_if.n || fmt == DB_FMT_JSONL;
	if ((allow_failed.n || allow_skipped.n) && !pass_if.n)
		gating = true;  /* the profile's pass_if may give the rules */
	if (gating && (watch || npos > 2))
		return db_cmd_usage_error(&cmd, "--pass-if, --allow-* and jsonl take one target, "
		                          "without --watch");
	double tmo = 0;
	if (timeout) {
		char *end;
		tmo = strtod(timeout, &end);
		if (*end || !(tmo > 0))
			return db_cmd_usage_error(&cmd, "--timeout wants seconds > 0, not '%s'", timeout);
		if (!watch)
			return db_cmd_usage_error(&cmd, "--timeout goes with --watch");
	}
	if (diverging && (fmt == DB_FMT_JSON || watch))
		return db_cmd_usage_error(&cmd, "--diverging goes with the table or csv (json "
		                          "keeps every pair: its indices name them)");
	if (watch) {
		if (npos > 2 || fmt == DB_FMT_CSV)
			return db_cmd_usage_error(&cmd, "--watch takes one target and table or json");
		return db_compare_watch(&cmd, &ca, pos[0], npos > 1 ? pos[1] : NULL,
		                        fmt == DB_FMT_JSON, tmo);
	}
	if (npos > 2)
		return compare_variants(&cmd, &ca, pos, npos, fmt, diverging);
	db_compare *c;
	if ((rc = db_cmd_open_compare(&cmd, &ca, pos, npos, &c)) != 0)
		return rc;
	if (gating || c->profile->n_pass_if)
		return gate_compare(&cmd, c, &pass_if, &allow_failed, &allow_skipped, fmt, diverging);
	write_pairs(c, fmt, diverging);
	rc = db_first_divergence(c, NULL, NULL, -2) >= 0 ? 1 : 0;
	if (c->cache_err[0])
		fprintf(stderr, "dumpbisect compare: metrics cache not saved: %s (the numbers are right; "
		        "they are computed again next time)\n", db_esc(c->cache_err));
	db_compare_free(c);
	if (fflush(stdout) != 0)
		return 2;
	return rc;
}
