#include "budget.h"

#include <stdio.h>
#include <stdlib.h>

#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define PICKLE_DEF ((uint64_t)256 << 20)
#define INFLATE_DEF ((uint64_t)2 << 30)
#define JSON_DEF ((uint64_t)2 << 30)
#define JSON_ENTRIES_DEF ((uint64_t)1 << 18)
#else   /* fuzzing: keep each run small */
#define PICKLE_DEF ((uint64_t)16 << 20)
#define INFLATE_DEF ((uint64_t)16 << 20)
#define JSON_DEF ((uint64_t)16 << 20)
#define JSON_ENTRIES_DEF ((uint64_t)1 << 14)
#endif

db_budget db_pickle_budget = DB_BUDGET_INIT("DUMPBISECT_PICKLE_MAX", PICKLE_DEF);
db_budget db_inflate_budget = DB_BUDGET_INIT("DUMPBISECT_INFLATE_MAX", INFLATE_DEF);
db_budget db_json_budget = DB_BUDGET_INIT("DUMPBISECT_JSON_MAX", JSON_DEF);
db_budget db_json_entries = DB_BUDGET_INIT("DUMPBISECT_JSON_ENTRIES", JSON_ENTRIES_DEF);

static uint64_t parse_size(const char *s, uint64_t def)
{
	if (!s || !*s)
		return def;
	char *end;
	double v = strtod(s, &end);
	uint64_t mul = 1;
	switch (*end) {
	case 'k': case 'K': mul = 1ull << 10; end++; break;
	case 'm': case 'M': mul = 1ull << 20; end++; break;
	case 'g': case 'G': mul = 1ull << 30; end++; break;
	default: break;
	}
	if (*end == 'i' || *end == 'B')
		end += *end == 'i' && end[1] == 'B' ? 2 : 1;
	if (*end || !(v > 0) || v * (double)mul >= 1.8e19)
		return def;
	return (uint64_t)(v * (double)mul);
}

/* The limit, read from the environment at first use (under b->mu). */
static void ensure_locked(db_budget *b)
{
	if (!b->ready) {
		b->limit = parse_size(getenv(b->env), b->def);
		b->ready = true;
	}
}

uint64_t db_budget_limit(db_budget *b)
{
	pthread_mutex_lock(&b->mu);
	ensure_locked(b);
	uint64_t l = b->limit;
	pthread_mutex_unlock(&b->mu);
	return l;
}

int db_budget_take(db_budget *b, uint64_t n, bool wait)
{
	pthread_mutex_lock(&b->mu);
	ensure_locked(b);
	if (n > b->limit || !n) {
		pthread_mutex_unlock(&b->mu);
		return n ? -1 : 0;
	}
	while (b->limit - b->used < n) {
		if (!wait) {
			pthread_mutex_unlock(&b->mu);
			return -2;
		}
		pthread_cond_wait(&b->cv, &b->mu);
	}
	b->used += n;
	pthread_mutex_unlock(&b->mu);
	return 0;
}

void db_budget_give(db_budget *b, uint64_t n)
{
	if (!n)
		return;
	pthread_mutex_lock(&b->mu);
	b->used = b->used > n ? b->used - n : 0;
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
}

const char *db_budget_size(uint64_t n, char *buf, unsigned len)
{
	static const char *const unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
	double v = (double)n;
	int u = 0;
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.4g %s" : "%.0f %s", v, unit[u]);
	return buf;
}
