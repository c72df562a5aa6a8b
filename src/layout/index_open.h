/* Opening the files of a scan (index.c): each file's entries read, spread
 * over threads, from the entry cache when it is unchanged. Not a public
 * header. */
#ifndef DB_INDEX_OPEN_H
#define DB_INDEX_OPEN_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "index_priv.h"
#include "read/binio.h"

/* One file of a scan, from its listing to its items. */
typedef struct file_job {
	const char *rel;
	db_ifields f;           /* from the path; the entries' keys refine a copy */
	size_t wi;              /* its file in the listing */
	off_t size;             /* -1: the listing did not stat it (the open does) */
	int64_t mtime_ns;
	uint64_t ident;
	ent_meta *ents;
	size_t n_ents;
	db_wbuf blob;           /* its entries for the entry cache (enc: some) */
	bool enc;
	char *err;              /* the file refused (by its name or the reader) */
	bool read_err;          /* by the reader: may pass (db_item.refused) */
} file_job;

/* root joined with j's path (root itself when it names the file); malloc'd,
 * NULL on OOM. */
char *db_index_job_full(const char *root, bool root_is_file, const file_job *j);
/* Read the entries of jobs[0..n) (those not refused by their names) into
 * each job's ents, or its err; jobs the listing did not stat get the open's
 * stat. With enc, entries to remember are encoded in the job's blob (enc),
 * put into ic by the caller's thread. */
void db_index_open_all(const char *root, bool root_is_file, file_job *jobs, size_t n,
                       db_icache *ic, bool enc);

#endif
