/* Auto-detecting the profile of a tree: list the files once, count for each
 * profile how many it parses by path (no file is opened), keep the best. */
#include "db_index.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "index_priv.h"
#include "read/walk.h"
#include "util/par.h"

/* A listing above this many files is counted on an evenly spaced sample
 * of that many (issue 24: 8 profiles x 406k names was 0.9 s of a 10^6-file
 * first open). The sample decides only when its winner is clear
 * (decided_on_sample); otherwise every file is counted, as below it. */
#define DETECT_SAMPLE 16384

/* The i-th file counted out of n_count (n_count < n_files: a sample). */
static size_t sample_at(const db_walk *w, size_t n_count, size_t i)
{
	return n_count == w->n_files ? i : (size_t)((uint64_t)i * w->n_files / n_count)   /* i < 2^14 */;
}

/* Files of w (n_count of them, sample_at) that p parses by path. A regex
 * that hits its limit stops the count with *errmsg (malloc'd): "not
 * parsed" would be a wrong answer. */
static size_t count_parsed(const db_profile *p, const db_walk *w, size_t n_count,
                           char **errmsg)
{
	size_t n = 0;
	for (size_t i = 0; i < n_count; i++) {
		db_fields f;
		db_err e;
		int rc = db_profile_match_path(p, w->files[sample_at(w, n_count, i)].rel, &f, &e);
		if (rc < 0) {
			*errmsg = strdup(e.msg);
			return 0;
		}
		n += rc == 1;
	}
	return n;
}

size_t db_profile_count_parsed(const db_profile *p, const db_walk *w)
{
	char *e = NULL;
	size_t n = count_parsed(p, w, w->n_files, &e);
	free(e);
	return n;
}

static void free_prof(db_profile *p)
{
	if (p)
		db_profile_free(p);
}

/* Ties go to the more specific profile: the generic one only wins alone. */
static bool is_generic(const char *name)
{
	return !strncmp(name, "generic", 7);
}

int db_profile_detect(const char *root, db_profile **out, char *why,
                      size_t whylen, db_err *err)
{
	*out = NULL;
	if (why && whylen)
		why[0] = 0;
	struct stat st;
	if (stat(root, &st) != 0)
		return db_err_set(err, root, NULL, -1, "cannot open: %s", strerror(errno));
	db_walk w;
	char msg[1024];
	if (S_ISDIR(st.st_mode)) {
		if (db_walk_dir2(root, &w, false, msg, sizeof msg) != 0)
			return db_err_set(err, NULL, NULL, -1, "%s", msg);
	} else if (S_ISREG(st.st_mode)) {
		memset(&w, 0, sizeof w);
		const char *b = strrchr(root, '/');
		w.files = calloc(1, sizeof *w.files);
		if (!w.files || !(w.files[0].rel = strdup(b ? b + 1 : root))) {
			db_walk_free(&w);
			return db_err_set(err, root, NULL, -1, "out of memory");
		}
		w.n_files = w.cap_files = 1;
	} else {
		return db_err_set(err, root, NULL, -1, "not a directory or regular file");
	}
	int rc = db_profile_detect_walk(root, &w, NULL, out, why, whylen, err);
	db_walk_free(&w);
	return rc;
}

/* Counting runs over the profiles in parallel: each count is a pure
 * function of (profile, listing). */
typedef struct count_job {
	db_profile **profs;
	size_t *counts;
	char **errs;
	size_t n;
	atomic_size_t next;
	const db_walk *w;
	size_t n_count;         /* files counted: all, or a sample */
} count_job;

static void *count_worker(void *arg)
{
	count_job *j = arg;
	for (size_t i; (i = atomic_fetch_add(&j->next, 1)) < j->n;)
		if (j->profs[i])
			j->counts[i] = count_parsed(j->profs[i], j->w, j->n_count, &j->errs[i]);
	return NULL;
}

static void count_all(db_profile **profs, size_t *counts, char **errs, size_t n,
                      const db_walk *w, size_t n_count)
{
	count_job j = {.profs = profs, .counts = counts, .errs = errs, .n = n, .w = w,
	               .n_count = n_count};
	atomic_init(&j.next, 0);
	db_par_run(count_worker, &j, n > 1 && w->n_files >= 256 ? 2 : 1);
}

/* The best profile and the next best by their counts (nn: none): more
 * files parsed wins, and on a tie a specific profile beats a generic one. */
static void best_two(db_profile *const *profs, const size_t *counts, size_t nn, size_t *bi,
                     size_t *si)
{
	*bi = *si = nn;
	for (size_t i = 0; i < nn; i++) {
		if (!profs[i])
			continue;
		size_t n = counts[i], best_n = *bi < nn ? counts[*bi] : 0;
		bool better = n > best_n || (n == best_n && n > 0 && *bi < nn &&
		                             is_generic(profs[*bi]->name) && !is_generic(profs[i]->name));
		if (better) {
			*si = *bi;
			*bi = i;
		} else if (*si == nn || n > counts[*si]) {
			*si = i;
		}
	}
}

/* A sample's winner stands when it parsed some file and no other specific
 * profile comes within 2 % of the sample of it: a closer race is counted
 * on every file. A tie with a generic profile goes to the specific one, as
 * on a full count; a few unsampled files only the generic one parses do not
 * turn the choice (decided so: the specific profile is the better answer). */
static bool decided_on_sample(db_profile *const *profs, const size_t *counts, size_t nn,
                              size_t bi)
{
	if (bi >= nn || counts[bi] == 0)
		return false;
	size_t margin = DETECT_SAMPLE / 50;
	for (size_t i = 0; i < nn; i++)
		if (i != bi && profs[i] && !is_generic(profs[i]->name) &&
		    counts[i] + margin >= counts[bi])
			return false;
	return true;
}

int db_profile_detect_walk(const char *root, const db_walk *w, const char *cache_dir,
                           db_profile **out, char *why, size_t whylen, db_err *err)
{
	*out = NULL;
	if (why && whylen)
		why[0] = 0;
	if (w->n_files == 0 && w->n_links_out) {
		/* its dumps may all be behind such a link: say which */
		const char *first = "";
		for (size_t i = 0; i < w->n_skipped && !*first; i++)
			if (strstr(w->skipped[i], DB_WALK_LINK_OUT))
				first = w->skipped[i];
		return db_err_set(err, root, NULL, -1, "no files here; %zu link%s out of the tree "
		                  "not followed, the first: %s", w->n_links_out,
		                  w->n_links_out == 1 ? "" : "s", first);
	}
	if (w->n_files == 0)
		return db_err_set(err, root, NULL, -1, "no files (empty directory)");

	char **names = NULL;
	size_t nn = db_profile_names(&names);
	db_profile **profs = calloc(nn + 1, sizeof *profs);
	size_t *counts = calloc(nn + 1, sizeof *counts);
	if (!profs || !counts) {
		for (size_t i = 0; i < nn; i++)
			free(names[i]);
		free(names);
		free(profs);
		free(counts);
		return db_err_set(err, root, NULL, -1, "out of memory");
	}
	char bad[512] = "";
	for (size_t i = 0; i < nn; i++) {
		db_err e;
		if (db_profile_load(names[i], &profs[i], &e) != 0) {
			profs[i] = NULL;
			if (!bad[0])
				snprintf(bad, sizeof bad, "; profile %s not loadable: %.400s", names[i], e.msg);
		}
	}
	for (size_t i = 0; i < nn; i++)
		free(names[i]);
	free(names);

	/* the same listing and profiles as last time: the same answer */
	uint64_t key = 0;
	char hit_name[256], hit_why[512];
	bool cacheable = cache_dir && *cache_dir && !bad[0];
	if (cacheable) {
		key = db_detect_key(w, (const db_profile *const *)profs, nn);
		if (db_detect_load(cache_dir, root, key, hit_name, sizeof hit_name, hit_why,
		                   sizeof hit_why)) {
			for (size_t i = 0; i < nn && !*out; i++)
				if (!strcmp(profs[i]->name, hit_name)) {
					*out = profs[i];
					profs[i] = NULL;
				}
			if (*out && why && whylen)
				snprintf(why, whylen, "%s", hit_why);
		}
	}
	if (*out) {
		for (size_t i = 0; i < nn; i++)
			free_prof(profs[i]);
		free(profs);
		free(counts);
		return 0;
	}

	if (w->stub) {           /* no names to count: the caller lists the tree */
		for (size_t i = 0; i < nn; i++)
			free_prof(profs[i]);
		free(profs);
		free(counts);
		return db_err_set(err, root, NULL, -1, "detection needs the listing");
	}
	char **errs = calloc(nn + 1, sizeof *errs);
	if (!errs) {
		for (size_t i = 0; i < nn; i++)
			free_prof(profs[i]);
		free(profs);
		free(counts);
		return db_err_set(err, root, NULL, -1, "out of memory");
	}
	size_t n_count = w->n_files > DETECT_SAMPLE ? DETECT_SAMPLE : w->n_files;
	count_all(profs, counts, errs, nn, w, n_count);
	size_t bi, si;
	best_two(profs, counts, nn, &bi, &si);
	if (n_count < w->n_files && !decided_on_sample(profs, counts, nn, bi)) {
		for (size_t i = 0; i < nn; i++) {
			free(errs[i]);
			errs[i] = NULL;
		}
		n_count = w->n_files;
		count_all(profs, counts, errs, nn, w, n_count);
		best_two(profs, counts, nn, &bi, &si);
	}
	size_t bad_i = nn;
	for (size_t i = 0; i < nn && bad_i == nn; i++)
		if (errs[i])
			bad_i = i;
	if (bad_i < nn)
		db_err_set(err, root, NULL, -1, "profile %s: %s (choose a profile with --profile)",
		           profs[bad_i]->name, errs[bad_i]);
	for (size_t i = 0; i < nn; i++)
		free(errs[i]);
	free(errs);
	if (bad_i < nn) {
		for (size_t i = 0; i < nn; i++)
			free_prof(profs[i]);
		free(profs);
		free(counts);
		return -1;
	}
	db_profile *best = bi < nn ? profs[bi] : NULL, *second = si < nn ? profs[si] : NULL;
	size_t best_n = best ? counts[bi] : 0, second_n = second ? counts[si] : 0;
	for (size_t i = 0; i < nn; i++)
		if (i != bi && i != si)
			free_prof(profs[i]);
	free(profs);
	free(counts);
	size_t total = w->n_files;
	if (!best || best_n == 0) {
		free_prof(best);
		free_prof(second);
		return db_err_set(err, root, NULL, -1,
		                  "no profile parses any of its %zu files (try --profile)%s",
		                  total, bad);
	}
	char line[512], of[96];
	if (n_count < total)
		snprintf(of, sizeof of, "%zu sampled files parsed (%zu files in all)", n_count, total);
	else
		snprintf(of, sizeof of, "%zu files parsed", total);
	if (second)
		snprintf(line, sizeof line, "%s: %zu of %s; next best %s: %zu", best->name, best_n, of,
		         second->name, second_n);
	else
		snprintf(line, sizeof line, "%s: %zu of %s", best->name, best_n, of);
	if (why && whylen)
		snprintf(why, whylen, "%s", line);
	if (cacheable)
		db_detect_store(cache_dir, root, key, best->name, line);
	free_prof(second);
	*out = best;
	return 0;
}
