/* compare --watch: the trees are being written (a shell on the dump node).
 * Compare what is there, then rescan whenever files arrive or change and
 * print the summary again when it changed; until --timeout or Ctrl-C.
 * Nothing to compare (yet, or again: a tree emptied and refilled, its files
 * all being rewritten, its folder replaced) is a wait, never the end. */
#include "cmd_compare_watch.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db_json.h"
#include "db_variants.h"
#include "db_watch.h"

/* A file the reader refuses is retried while younger than this. */
enum { SETTLE_MS = 2000, TICK_MS = 500 };

static volatile sig_atomic_t interrupted;

static void on_int(int sig)
{
	(void)sig;
	interrupted = 1;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The summary of c as one line (table) or one JSON object (json). */
static void summary(const db_compare *c, bool json, unsigned round, char *buf, size_t len)
{
	db_variant_counts k;
	db_variant_count(c, &k);
	long fd = db_first_divergence(c, NULL, NULL, -2);
	char lab[512] = "";
	const db_pair *p = fd >= 0 ? &c->pairs[fd] : NULL;
	if (p)
		db_pair_label_cell(c, p, lab, sizeof lab);
	size_t settling = db_compare_settling(c);
	if (json) {
		FILE *m = fmemopen(buf, len, "w");
		if (!m) {
			buf[0] = 0;
			return;
		}
		fprintf(m, "{\"round\": %u, \"pairs\": %zu, \"ok\": %zu, \"diverge\": %zu, "
		        "\"missing\": %zu, \"error\": %zu, \"settling\": %zu, "
		        "\"first_divergence\": ", round, k.pairs, k.ok, k.diverge, k.missing, k.error,
		        settling);
		db_json_str(m, p ? lab : NULL);
		fputs("}\n", m);
		fclose(m);
		return;
	}
	size_t l = (size_t)snprintf(buf, len, "watch %u: %zu pairs: %zu ok, %zu diverge, "
	                            "%zu missing, %zu error", round, k.pairs, k.ok, k.diverge,
	                            k.missing, k.error);
	if (l < len && settling)
		l += (size_t)snprintf(buf + l, len - l, "; %zu file%s still being written", settling,
		                      settling == 1 ? "" : "s");
	if (l < len && !p)
		snprintf(buf + l, len - l, "; no divergence\n");
	else if (l < len && p->status == DB_ST_OK)
		snprintf(buf + l, len - l, "; first divergence %s [%s]\n", lab, db_band_name(p->band));
	else if (l < len)
		snprintf(buf + l, len - l, "; first divergence %s: %s\n", lab,
		         db_status_name(p->status));
}

/* The summary without its round number: printed again only when this
 * changed. */
static const char *body(const char *s, bool json)
{
	const char *b = strchr(s, json ? ',' : ':');
	return b ? b : s;
}

int db_compare_watch(const db_cmd *cmd, const db_cmp_args *ca, const char *ref,
                     const char *tgt, bool json, double timeout_s)
{
	db_compare_opts o = {0};
	if (db_cmp_args_apply(cmd, ca, &o) != 0)
		return 2;
	o.settle_ms = SETTLE_MS;
	db_err err = {{0}};
	const char *roots[2] = {ref, tgt ? tgt : ref};
	db_watch *w;
	if (db_watch_open(roots, 2, &w, &err) < 0)
		return db_cmd_error(cmd, "%s", err.msg);
	struct sigaction sa, old_int, old_term;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_int;         /* no SA_RESTART: waits end early */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	double end = timeout_s > 0 ? now_s() + timeout_s : 0;
	/* Nothing to compare yet (the target's first files are still being
	 * written): say so once and wait for files. */
	db_compare *c = NULL;
	bool said = false;
	while (db_compare_open(ref, tgt, &o, &c, &err) < 0) {
		if (!said && !json)
			printf("waiting: %s\n", err.msg);
		fflush(stdout);
		said = true;
		double left = end > 0 ? end - now_s() : TICK_MS / 1000.0;
		if (interrupted || left <= 0) {
			sigaction(SIGINT, &old_int, NULL);
			sigaction(SIGTERM, &old_term, NULL);
			db_watch_free(w);
			return db_cmd_error(cmd, "%s", err.msg);
		}
		db_watch_changed(w, left * 1000 < TICK_MS ? (int)(left * 1000) + 1 : TICK_MS);
	}
	if (said) {     /* a tree that appeared meanwhile is watched from now on */
		db_watch *nw;
		if (db_watch_open(roots, 2, &nw, &err) == 0) {
			db_watch_free(w);
			w = nw;
		}
	}
	if (!json)
		fprintf(stdout, "watching %s and %s (%s); %s\n", c->ref_root, c->tgt_root,
		        db_watch_how(w), timeout_s > 0 ? "until --timeout" : "until Ctrl-C");
	char last[1024] = "", cur[1024];
	unsigned round = 0;
	int rc = 0;
	bool scan = true;
	bool force = said;      /* files written before the new watcher: once more */
	bool waiting = false;   /* the last rescan found nothing to compare */
	while (!interrupted) {
		if (scan) {
			db_compare_run(c);
			summary(c, json, ++round, cur, sizeof cur);
			if (strcmp(body(cur, json), body(last, json))) {
				fputs(cur, stdout);
				fflush(stdout);
				memcpy(last, cur, sizeof last);
			} else {
				round--;
			}
		}
		double left = end > 0 ? end - now_s() : TICK_MS / 1000.0;
		if (left <= 0)
			break;
		int ms = left * 1000 < TICK_MS ? (int)(left * 1000) + 1 : TICK_MS;
		/* unfinished files are retried every tick until they read or
		 * age, and so is a tree that had nothing to compare (its
		 * directories may be new ones no watcher knows yet) */
		scan = db_watch_changed(w, ms) == 1 || db_compare_settling(c) > 0 || force || waiting;
		force = false;
		if (!scan || interrupted)
			continue;
		if (db_compare_rescan(c, &err) < 0) {
			/* emptied, or every file being rewritten: wait as at the
			 * start; the old numbers stand until it is whole again */
			if (!waiting && !json) {
				printf("waiting: %s\n", err.msg);
				fflush(stdout);
			}
			waiting = true;
			scan = false;
			continue;
		}
		if (waiting) {
			waiting = false;
			last[0] = '\0';        /* after "waiting:", the summary again */
			db_watch *nw;   /* a folder replaced meanwhile: watch the new one */
			if (db_watch_open(roots, 2, &nw, &err) == 0) {
				db_watch_free(w);
				w = nw;
			}
		}
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (waiting)    /* still nothing to compare at the end: as at the start */
		rc = db_cmd_error(cmd, "%s", err.msg);
	else
		rc = db_first_divergence(c, NULL, NULL, -2) >= 0 ? 1 : 0;
	db_watch_free(w);
	db_compare_free(c);
	if (fflush(stdout) != 0)
		return 2;
	return rc;
}
