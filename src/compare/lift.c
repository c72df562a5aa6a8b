/* A file or a folder cut out of a tree keeps the names of the folders
 * around it (issue 33). `compare ref/TP0_PP0_Rank0_pid7/Pass00000.pt
 * target/TP0_PP0_Rank0_pid9/Pass00000.pt` or two rank folders lose the
 * folder names the profiles parse (the rank, the pass, the dumper's own
 * layout), so the generic profile won and the dump's order was lost: the
 * two commands named another place than the trees. When detection on the
 * path as given picks only the generic profile, it is tried again with one,
 * two, then three of the enclosing folders put back in front of each name;
 * when detection (its own rule: the most files parsed, ties to the more
 * specific profile) then picks a profile other than generic, it wins, and the
 * comparison is rooted at that ancestor, listing only what was given. */
#include "lift.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout/index_priv.h"
#include "read/walk.h"

/* path's folder (path itself, or a file's folder) split `depth` folders
 * up: *root the ancestor, *sub the folders below it ("a/b"). false when
 * the path is not that deep. */
static bool split_up(const char *path, bool is_file, int depth, char **root, char **sub)
{
	*root = *sub = NULL;
	char *d = strdup(path);
	if (!d)
		return false;
	size_t n = strlen(d);
	while (n > 1 && d[n - 1] == '/')
		d[--n] = '\0';
	if (is_file) {
		char *s = strrchr(d, '/');
		if (!s) {
			free(d);
			return false;
		}
		*s = '\0';
	}
	char *cut = d + strlen(d);
	for (int k = 0; k < depth; k++) {
		while (cut > d && cut[-1] != '/')
			cut--;
		if (cut == d || (k + 1 < depth && cut - 1 == d)) {
			free(d);
			return false;
		}
		if (k + 1 < depth)
			cut--;
	}
	/* cut: the first folder of sub, after a '/' */
	*sub = strdup(cut);
	cut[-1] = '\0';
	*root = strdup(cut - 1 == d ? "/" : d);
	free(d);
	if (!*root || !*sub || !**sub || !strcmp(*sub, ".") || strstr(*sub, "..")) {
		free(*root);
		free(*sub);
		*root = *sub = NULL;
		return false;
	}
	return true;
}

int db_walk_prefix(db_walk *w, const char *sub)
{
	size_t ls = strlen(sub);
	for (size_t i = 0; i < w->n_files; i++) {
		size_t lr = strlen(w->files[i].rel);
		char *r = malloc(ls + 1 + lr + 1);
		if (!r)
			return -1;
		memcpy(r, sub, ls);
		r[ls] = '/';
		memcpy(r + ls + 1, w->files[i].rel, lr + 1);
		free(w->files[i].rel);
		w->files[i].rel = r;
	}
	for (size_t i = 0; i < w->n_dirs; i++) {
		const char *o = w->dirs[i].rel;
		size_t lo = strlen(o);
		char *r = malloc(ls + 1 + lo + 1);
		if (!r)
			return -1;
		snprintf(r, ls + 1 + lo + 1, lo ? "%s/%s" : "%s", sub, o);
		free(w->dirs[i].rel);
		w->dirs[i].rel = r;
	}
	return 0;
}

/* A copy of w's names (no stat data needed for detection). */
static int copy_names(const db_walk *w, db_walk *out)
{
	memset(out, 0, sizeof *out);
	if (!(out->files = calloc(w->n_files + 1, sizeof *out->files)))
		return -1;
	for (size_t i = 0; i < w->n_files; i++) {
		if (!(out->files[i].rel = strdup(w->files[i].rel))) {
			db_walk_free(out);
			return -1;
		}
		out->n_files = i + 1;
	}
	out->cap_files = w->n_files + 1;
	return 0;
}

static bool generic(const db_profile *p)
{
	return !p || !strncmp(p->name, "generic", 7);
}

int db_lift_detect(const char *path, const db_walk *w, bool is_file, db_lift *out)
{
	memset(out, 0, sizeof *out);
	if (w->stub || !w->n_files)
		return 0;
	for (int depth = 1; depth <= 3; depth++) {
		char *root, *sub;
		if (!split_up(path, is_file, depth, &root, &sub))
			return 0;
		db_walk lw;
		db_profile *p = NULL;
		char why[512];
		db_err e;
		if (copy_names(w, &lw) == 0 && db_walk_prefix(&lw, sub) == 0 &&
		    db_profile_detect_walk(root, &lw, NULL, &p, why, sizeof why, &e) == 0 &&
		    !generic(p) && db_profile_count_parsed(p, &lw) > 0) {
			db_walk_free(&lw);
			out->profile = p;
			out->root = root;
			out->sub = sub;
			snprintf(out->why, sizeof out->why, "%.300s; named with the folder%s around it: %.150s/",
			         why, strchr(sub, '/') ? "s" : "", sub);
			return 1;
		}
		db_walk_free(&lw);
		if (p)
			db_profile_free(p);
		free(root);
		free(sub);
	}
	return 0;
}

bool db_lift_side(const char *path, bool is_file, const db_lift *like, char **root, char **sub)
{
	int depth = 1;
	for (const char *s = like->sub; *s; s++)
		depth += *s == '/';
	return split_up(path, is_file, depth, root, sub);
}
