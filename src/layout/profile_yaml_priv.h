/* Private to the profile parser (profile_yaml*.c): the parse context and
 * the readers each part of a profile shares. Every reader reports through
 * yp_fail ("ORIGIN:LINE:COL: message") and returns -1 on error. */
#ifndef DB_PROFILE_YAML_PRIV_H
#define DB_PROFILE_YAML_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <yaml.h>

#include "db_err.h"
#include "db_profile.h"

typedef struct ctx {
	const char *origin;
	yaml_document_t *doc;
	db_err *err;            /* where yp_fail writes */
	db_profile *p;          /* the profile being filled */
} ctx;

/* Called by yp_each_pair for each pair of a mapping, with the key's text. */
typedef int (*pair_fn)(ctx *c, const char *key, const yaml_node_t *kn,
                       const yaml_node_t *vn, void *arg);

int yp_fail(ctx *c, const yaml_node_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* scalars, lists and regexes (profile_yaml_get.c); strings returned are
 * malloc'd and the caller's, replacing (and freeing) *out */
yaml_node_t *yp_node(ctx *c, int idx);
const char *yp_scalar(const yaml_node_t *n);
bool yp_is_null(const yaml_node_t *n);
int yp_oom(ctx *c, const yaml_node_t *n);
int yp_get_str(ctx *c, const yaml_node_t *n, const char *what, char **out);
int yp_get_int(ctx *c, const yaml_node_t *n, const char *what, long lo, long hi, int *out);
int yp_get_double(ctx *c, const yaml_node_t *n, const char *what, double *out);
void yp_free_list(char **a, size_t n);
int yp_get_str_list(ctx *c, const yaml_node_t *n, const char *what, char ***out, size_t *nout);
bool yp_known_group(const char *name);
int yp_compile_re(ctx *c, const yaml_node_t *n, const char *what, const char *pat,
                  bool fields, void **out);
int yp_get_re(ctx *c, const yaml_node_t *n, const char *what, bool fields,
              char **pat, void **re);
int yp_each_pair(ctx *c, const yaml_node_t *n, const char *what, pair_fn fn, void *arg);

/* parts of a profile (profile_yaml_parts.c): each fills c->p */
int yp_sides_pair(ctx *c, const char *k, const yaml_node_t *kn, const yaml_node_t *vn, void *arg);
int yp_substage_pair(ctx *c, const char *k, const yaml_node_t *kn, const yaml_node_t *vn, void *arg);
int yp_token_dim_pair(ctx *c, const char *k, const yaml_node_t *kn, const yaml_node_t *vn,
                      void *arg);
int yp_pass_shift_pair(ctx *c, const char *k, const yaml_node_t *kn, const yaml_node_t *vn,
                       void *arg);
int yp_rename_pair(ctx *c, const char *k, const yaml_node_t *kn, const yaml_node_t *vn, void *arg);
int yp_rewrite_pair(ctx *c, const char *k, const yaml_node_t *kn, const yaml_node_t *vn, void *arg);
int yp_get_shards(ctx *c, const yaml_node_t *n);
int yp_pass_pair(ctx *c, const char *k, const yaml_node_t *kn, const yaml_node_t *vn, void *arg);
int yp_thr_pair(ctx *c, const char *k, const yaml_node_t *kn, const yaml_node_t *vn, void *arg);
int yp_check_thresholds(ctx *c, const yaml_node_t *n);
int yp_get_classes(ctx *c, const yaml_node_t *n);
/* quant: rules (profile_yaml_quant.c) */
int yp_get_quant(ctx *c, const yaml_node_t *n);
void yp_free_quant(db_profile *p);

#endif
