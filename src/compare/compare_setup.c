/* What opening (compare_open.c) and reopening from snapshots
 * (compare_reopen.c) share, below both: the profile choice, the one-folder
 * flags and the kept list of the trees' directories. */
#include "db_compare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pair/compare_priv.h"
#include "layout/index_priv.h"
#include "read/walk.h"

void db_drop_dirs(db_cmp_priv *pr)
{
	for (size_t i = 0; i < pr->n_dirs; i++)
		free(pr->dirs[i]);
	free(pr->dirs);
	pr->dirs = NULL;
	pr->n_dirs = 0;
}

void db_keep_dirs(db_compare *c, const char *root, const db_walk *w, bool append)
{
	db_cmp_priv *pr = c->priv;
	if (!append)
		db_drop_dirs(pr);
	char **d = realloc(pr->dirs, (pr->n_dirs + w->n_dirs + 1) * sizeof *d);
	if (!d)
		return;         /* the watcher lists the trees itself */
	pr->dirs = d;
	for (size_t i = 0; i < w->n_dirs; i++)
		if ((d[pr->n_dirs] = db_path_join(root, w->dirs[i].rel)))
			pr->n_dirs++;
}

const char *const *db_compare_dirs(const db_compare *c, size_t *n)
{
	const db_cmp_priv *pr = c->priv;
	*n = pr->n_dirs;
	return (const char *const *)pr->dirs;
}

int db_choose_profile(db_compare *c, const db_compare_opts *opts, const db_walk *w,
                      int list_rc, const char *list_msg, db_err *err)
{
	db_cmp_priv *pr = c->priv;
	int rc;
	if (opts->profile && *opts->profile) {
		if ((rc = db_profile_load(opts->profile, &c->profile, err)) == 0)
			snprintf(c->why, sizeof c->why, "%s: %s", c->profile->name,
			         opts->profile_from ? opts->profile_from : "given with --profile");
	} else if (list_rc != 0) {
		rc = db_err_set(err, NULL, NULL, -1, "%s", list_msg);
	} else {
		rc = db_profile_detect_walk(c->ref_root, w, pr->cache_dir, &c->profile, c->why,
		                            sizeof c->why, err);
	}
	if (rc != 0)
		c->profile = NULL;
	return rc;
}

void db_set_folders(db_compare *c, bool tgt_given, bool same)
{
	db_cmp_priv *pr = c->priv;
	/* one folder: TARGET left out, or the same folder with a side group
	 * (the same folder without one, or holding one side only, compares a
	 * tree with itself) */
	pr->twice = tgt_given && same;
	pr->one_folder = !tgt_given || (same && db_profile_has_side_group(c->profile));
}
