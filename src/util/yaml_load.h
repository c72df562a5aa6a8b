/* Bounds for the YAML readers (profiles, sessions), checked around
 * libyaml's loader: nesting is refused from the raw text before libyaml
 * sees it (its scanner is quadratic in depth: 400k levels took minutes),
 * and a loaded document whose aliases would expand past a multiple of its
 * text is refused before a reader copies anything (one 100 KB scalar
 * aliased 100,000 times was 9.8 GB). Private. */
#ifndef DB_YAML_LOAD_H
#define DB_YAML_LOAD_H
#include <stddef.h>
#include <yaml.h>

#include "db_err.h"

#define DB_YAML_MAX_DEPTH 128           /* collections inside collections */
#define DB_YAML_EXPAND_RATIO 16         /* expanded bytes per byte of text */
#define DB_YAML_EXPAND_MIN ((size_t)1 << 20)

/* text[0..len) nests collections at most DB_YAML_MAX_DEPTH deep (flow
 * brackets, block indentation, "- - -"); else -1 with "ORIGIN:LINE:COL:"
 * at the first level too deep. A conservative scan: quoted and block
 * scalars and comments are skipped. */
int db_yaml_check_depth(const char *origin, const char *text, size_t len, db_err *err);
/* doc (loaded from len bytes) expands, aliases followed, to at most
 * max(DB_YAML_EXPAND_MIN, DB_YAML_EXPAND_RATIO * len) bytes (scalars plus
 * 8 per node), and no alias contains itself; else -1 with err at the node. */
int db_yaml_check_expansion(const char *origin, yaml_document_t *doc, size_t len, db_err *err);

#endif
