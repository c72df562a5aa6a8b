/* Parallel layout of a tensor from the dump's own metadata. SGLang's
 * dumper v2 stores {value, meta}; meta['dims'] names each dim of the value
 * ("t attn_h[attn_tp]", "t h[attn_tp:partial]", "t h # tp:replicated"): a
 * bracketed group after a dim's name means the ranks of that group split
 * the tensor along that dim (concat), ":partial" that each rank holds a
 * partial sum. The index keeps tensors only, so this reads the string
 * itself. Not a public header. */
#ifndef DB_META_DIMS_H
#define DB_META_DIMS_H
#include <stddef.h>
#include "db_profile.h"

typedef enum db_dims_kind {
	DB_DIMS_NONE = 0,       /* no meta.dims in the file */
	DB_DIMS_REPLICATED,     /* no bracketed dim */
	DB_DIMS_SPLIT,          /* concat along dim */
	DB_DIMS_PARTIAL,        /* sum of the ranks' partials */
	DB_DIMS_UNKNOWN         /* a dims string this parser does not follow */
} db_dims_kind;

typedef struct db_dims {
	db_dims_kind kind;
	int dim;                /* SPLIT: the dim, counting from 0 */
	char group[32];         /* the bracketed group ("attn_tp", "moe_ep") */
} db_dims;

/* The index of the dim named "t" (the tokens: "t h", "t[sp] 1 h"), or -1. */
int db_dims_token_dim(const char *s);
/* Parse a dims string. Never fails: unparsable is DB_DIMS_UNKNOWN. */
void db_dims_parse(const char *s, db_dims *out);
/* Parallel sizes from the same meta. */
typedef struct db_meta_par {
	int sp_size;            /* megatron_parallel_info.sp_size (Megatron sequence
	                         * parallel: activations split on the token dim); 1 none */
	int group_size;         /* sglang_parallel_info.<group>_size of the dims'
	                         * bracketed group ("attn_tp" -> attn_tp_size); 0 unknown */
} db_meta_par;

/* meta['dims'] of the torch.save file at path into buf (NUL-terminated,
 * truncated to len). 1 found, 0 no such string (or not a dict payload),
 * -1 the file cannot be read. Reads only the pickle, never tensor data.
 * par (may be NULL) gets the parallel sizes, found or not. */
int db_meta_dims_read(const char *path, char *buf, size_t len, db_meta_par *par);
/* The shard rule (dim, how) that unshards a tensor of this layout; false
 * when the layout is not split or partial. pattern/re stay NULL. */
bool db_dims_rule(const db_dims *d, db_shard_rule *r);

#endif
