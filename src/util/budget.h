/* Process-wide memory budgets: bytes that several threads may hold at once
 * (pickles being parsed, inflated npz members held by open files), so what
 * one file may take is bounded per process too, not only per file. Each
 * budget's limit comes from an environment variable (bytes, or with a K, M
 * or G suffix). Private to the core. */
#ifndef DB_BUDGET_H
#define DB_BUDGET_H
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct db_budget {
	const char *env;        /* the variable that sets the limit */
	uint64_t def;           /* the limit without it */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool ready;             /* limit read from env */
	uint64_t limit, used;
} db_budget;

#define DB_BUDGET_INIT(env_, def_) \
	{ (env_), (def_), PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, 0, 0 }

/* Pickles being parsed (the bytes of data.pkl): DUMPBISECT_PICKLE_MAX. */
extern db_budget db_pickle_budget;
/* Inflated npz members held by open files: DUMPBISECT_INFLATE_MAX. */
extern db_budget db_inflate_budget;
/* JSON dump indexes being read (msprobe's dump.json, by their size):
 * DUMPBISECT_JSON_MAX. */
extern db_budget db_json_budget;
/* Not a budget taken, a per-file limit read like one: the tensor entries
 * one dump.json may hold, DUMPBISECT_JSON_ENTRIES. Bytes alone did not
 * bound what a file costs parsed: 37-byte tensor records made a 37 MB
 * dump.json 2.0 GB in compare (issue 37). */
extern db_budget db_json_entries;

/* Take n bytes. 0: taken. -1: n is more than the whole limit (it never
 * fits). -2 (only when !wait): the rest is held by others just now. With
 * wait, blocks until they give enough back: only a thread holding none of
 * b may wait (else two could wait for each other). */
int db_budget_take(db_budget *b, uint64_t n, bool wait);
void db_budget_give(db_budget *b, uint64_t n);
uint64_t db_budget_limit(db_budget *b);
/* "256 MiB", "1.5 GiB": a size for messages. */
const char *db_budget_size(uint64_t n, char *buf, unsigned len);

#endif
