/* NumPy .npz: a ZIP of <key>.npy members (formats.md §6). savez stores
 * members (read zero-copy from the mapping); savez_compressed deflates them
 * (inflated into buffers the db_file owns). A bad member becomes an entry
 * error; the other members still load. */
#include "st_npy.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader_impl.h"
#include "util/budget.h"
#include "zip.h"

/* Decompression-bomb guards for deflated members, none of which refuses an
 * honest savez_compressed (a large all-zero mask deflates ~1030:1 and must
 * load):
 * - a member must inflate to exactly its declared size (zip.c stops at
 *   declared + 1 byte, so a lying member cannot run on);
 * - deflate cannot exceed DEFLATE_MAX_RATIO (258 bytes from 2 bits), so a
 *   member declaring more than that from its compressed size is a lie and is
 *   refused before anything is allocated;
 * - all inflated members of one file share NPZ_MAX_TOTAL: 1 GiB keeps a
 *   crafted file from making us allocate and fill unbounded memory while
 *   leaving room for any real intermediate dump (which is mostly < 100 MB
 *   per file). Checked against the declared sizes before allocating. */
#define DEFLATE_MAX_RATIO 1032u
#define DEFLATE_SLACK 1024u
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define NPZ_MAX_TOTAL ((uint64_t)1 << 30)
#else
#define NPZ_MAX_TOTAL ((uint64_t)1 << 20) /* fuzzing: keep each run fast */
#endif

/* Key of a member: its name without ".npy"; NULL when not an array member. */
static char *npz_key(const db_zip_entry *e)
{
	if (e->name_len < 4 || memcmp(e->name + e->name_len - 4, ".npy", 4) != 0)
		return NULL;
	char *k = malloc(e->name_len - 3);
	if (k) {
		memcpy(k, e->name, e->name_len - 4);
		k[e->name_len - 4] = '\0';
	}
	return k;
}

/* The per-file cap and ratio checks a deflated member must pass before it
 * is inflated: 0, or -1 with eerr (budget: what the file has left). */
static int inflate_ok(const db_zip *z, const db_zip_entry *e, const char *key, uint64_t budget,
                      db_err *eerr)
{
	uint64_t lim = e->csize > (UINT64_MAX - DEFLATE_SLACK) / DEFLATE_MAX_RATIO
	               ? UINT64_MAX : e->csize * DEFLATE_MAX_RATIO + DEFLATE_SLACK;
	if (e->usize > budget)
		return db_err_set(eerr, z->fname, key, (int64_t)e->cd_off,
		                  "inflate cap exceeded: %" PRIu64 " bytes declared, %" PRIu64
		                  " left of the %" PRIu64 "-byte cap on inflated data per file",
		                  e->usize, budget, NPZ_MAX_TOTAL);
	if (e->usize > lim)
		return db_err_set(eerr, z->fname, key, (int64_t)e->cd_off,
		                  "inflate ratio too large: %" PRIu64 " bytes declared from %" PRIu64
		                  " compressed, more than deflate can produce (%u:1)",
		                  e->usize, e->csize, DEFLATE_MAX_RATIO);
	return 0;
}

/* One member into f: 0 (entry or entry error added), -1 on OOM. budget:
 * what the per-file cap leaves; *held: the process budget f took for
 * members still to inflate. */
static int npz_member(db_file *f, const db_zip *z, const db_zip_entry *e,
                      uint64_t *budget, uint64_t *held, db_err *err)
{
	const char *fn = z->fname;
	db_err eerr;
	char *key = npz_key(e);
	if (!key) {
		if (e->name_len && e->name[e->name_len - 1] == '/')
			return 0;       /* a directory record holds nothing */
		db_err_set(&eerr, fn, e->name, (int64_t)e->lho, "npz member is not a .npy array");
		return db_file_add_entry_error(f, e->name, &eerr, err);
	}
	int rc = 0;
	const uint8_t *p;
	size_t len;
	void *owned = NULL;
	uint64_t off = 0;
	int64_t base = -1;
	if (e->method == 8) {
		if (inflate_ok(z, e, key, *budget, &eerr))
			goto entry_err;
		if (e->usize > *held) {
			char lim[32];
			db_err_set(&eerr, fn, key, (int64_t)e->cd_off,
			           "inflate budget exceeded: the file's members declare more than "
			           "the %s the process may hold inflated (DUMPBISECT_INFLATE_MAX)",
			           db_budget_size(db_budget_limit(&db_inflate_budget), lim, sizeof lim));
			goto entry_err;
		}
	} else if (db_zip_payload_offset(z, e, &off, &eerr))
		goto entry_err;
	else
		base = (int64_t)off;
	size_t cap = e->usize > SIZE_MAX ? SIZE_MAX : (size_t)e->usize;
	if (db_zip_data(z, e, &p, &len, &owned, cap, &eerr)) {
		if (e->method == 8) {   /* say which step failed, e.g. a size lie */
			size_t m = strlen(eerr.msg);
			snprintf(eerr.msg + m, sizeof eerr.msg - m, " (inflate failed)");
		}
		goto entry_err;
	}
	if (owned) {
		*budget -= len;
		*held -= len;
		if (db_file_own(f, owned)) {
			rc = db_err_set(err, fn, key, -1, "out of memory");
			goto out;
		}
	}
	db_tensor t;
	if (db_npy_parse(p, len, fn, key, base, &t, &eerr)) {
		if (base < 0) { /* offsets count from the start of the inflated bytes */
			size_t m = strlen(eerr.msg);
			snprintf(eerr.msg + m, sizeof eerr.msg - m, " (byte offset within the inflated member)");
		}
		goto entry_err;
	}
	db_entry *en = db_file_add_entry(f, key);
	if (!en)
		rc = db_err_set(err, fn, key, -1, "out of memory");
	else
		en->t = t;
	goto out;
entry_err:
	rc = db_file_add_entry_error(f, key, &eerr, err);
out:
	free(key);
	return rc;
}

int db_read_npz(db_file *f, const uint8_t *p, size_t n, db_err *err)
{
	const char *fn = f->path ? f->path : "?";
	db_zip z;
	if (db_zip_open(p, n, fn, &z, err))
		return -1;
	f->format = DB_FMT_NPZ;
	/* What the deflated members will hold, taken from the process's
	 * budget at once before any is inflated: files are held open by
	 * several threads, and twelve files inflating 1 GiB each were 8.4 GB
	 * under a per-file cap alone. */
	uint64_t budget = NPZ_MAX_TOTAL, want = 0;
	for (size_t k = 0; k < z.n_entries; k++) {
		const db_zip_entry *e = &z.entries[k];
		db_err eerr;
		if (e->method == 8 && e->name_len >= 4 && !memcmp(e->name + e->name_len - 4, ".npy", 4) &&
		    !inflate_ok(&z, e, e->name, budget, &eerr)) {
			budget -= e->usize;
			want += e->usize;
		}
	}
	uint64_t held = want;
	int rc = db_file_take_inflate(f, want);
	if (rc == -2) {
		db_zip_close(&z);
		char lim[32];
		return db_err_set(err, fn, NULL, -1, "waiting for inflate budget (%s held by other "
		                  "open files)", db_budget_size(db_budget_limit(&db_inflate_budget),
		                                                lim, sizeof lim)), -2;
	}
	if (rc)
		held = 0;       /* more than the whole budget: each member says so */
	budget = NPZ_MAX_TOTAL;
	rc = 0;
	for (size_t k = 0; k < z.n_entries && rc == 0; k++)
		rc = npz_member(f, &z, &z.entries[k], &budget, &held, err);
	db_file_give_inflate(f, held);  /* members that failed before inflating */
	db_zip_close(&z);
	return rc;
}
