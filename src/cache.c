/* Metrics cache (issue 5): not active yet; every lookup misses. */
#include "compare_priv.h"

bool db_cache_lookup(db_compare *c, db_pair *p)
{
	(void)c;
	(void)p;
	return false;
}

void db_cache_store(db_compare *c, const db_pair *p)
{
	(void)c;
	(void)p;
}

void db_cache_flush(db_compare *c)
{
	(void)c;
}

void db_cache_close(db_compare *c)
{
	(void)c;
}
