/* Auto-detecting the profile of a tree: list the files once, count for each
 * profile how many it parses by path (no file is opened), keep the best. */
#include "db_index.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <errno.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "index_priv.h"
#include "walk.h"

static size_t count_parsed(const db_profile *p, const db_walk *w)
{
	size_t n = 0;
	pcre2_match_data *md = p->files_re
		? pcre2_match_data_create_from_pattern(p->files_re, NULL) : NULL;
	for (size_t i = 0; i < w->n_files; i++) {
		const char *rel = w->files[i].rel;
		if (p->files_re && (!md || pcre2_match(p->files_re, (PCRE2_SPTR)rel,
		                                       PCRE2_ZERO_TERMINATED, 0, 0, md, NULL) < 0))
			continue;
		db_fields f;
		if (db_profile_match_path(p, rel, &f))
			n++;
	}
	pcre2_match_data_free(md);
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
	int rc = db_profile_detect_walk(root, &w, out, why, whylen, err);
	db_walk_free(&w);
	return rc;
}

int db_profile_detect_walk(const char *root, const db_walk *wp, db_profile **out,
                           char *why, size_t whylen, db_err *err)
{
	*out = NULL;
	if (why && whylen)
		why[0] = 0;
	const db_walk w = *wp;
	if (w.n_files == 0)
		return db_err_set(err, root, NULL, -1, "no files (empty directory)");

	char **names = NULL;
	size_t nn = db_profile_names(&names);
	db_profile *best = NULL, *second = NULL;
	size_t best_n = 0, second_n = 0;
	char bad[512] = "";
	for (size_t i = 0; i < nn; i++) {
		db_profile *p = NULL;
		db_err e;
		if (db_profile_load(names[i], &p, &e) != 0) {
			if (!bad[0])
				snprintf(bad, sizeof bad, "; profile %s not loadable: %.400s", names[i], e.msg);
			continue;
		}
		size_t n = count_parsed(p, &w);
		bool better = n > best_n ||
			(n == best_n && n > 0 && best && is_generic(best->name) && !is_generic(p->name));
		if (better) {
			free_prof(second);
			second = best;
			second_n = best_n;
			best = p;
			best_n = n;
		} else if (!second || n > second_n) {
			free_prof(second);
			second = p;
			second_n = n;
		} else {
			db_profile_free(p);
		}
	}
	for (size_t i = 0; i < nn; i++)
		free(names[i]);
	free(names);
	size_t total = w.n_files;
	if (!best || best_n == 0) {
		free_prof(best);
		free_prof(second);
		return db_err_set(err, root, NULL, -1,
		                  "no profile parses any of its %zu files (try --profile)%s",
		                  total, bad);
	}
	if (why && whylen) {
		if (second)
			snprintf(why, whylen, "%s: %zu of %zu files parsed; next best %s: %zu",
			         best->name, best_n, total, second->name, second_n);
		else
			snprintf(why, whylen, "%s: %zu of %zu files parsed", best->name, best_n, total);
	}
	free_prof(second);
	*out = best;
	return 0;
}
