#include "cache_writes.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "compare_priv.h"

typedef struct snap_due {
	char *dir, *root;
	const char *side;       /* "ref", "target" (static) or NULL */
	uint64_t key;
	const db_index *ix;     /* c's */
} snap_due;

struct db_cwrites {
	snap_due snaps[2];
	size_t n_snaps;
	pthread_t th;
	bool running;
};

static struct db_cwrites *get(db_compare *c)
{
	db_cmp_priv *pr = c->priv;
	if (!pr->writes)
		pr->writes = calloc(1, sizeof *pr->writes);
	return pr->writes;
}

int db_cwrites_snap(db_compare *c, const char *dir, const char *root, const char *side,
                    uint64_t key, const db_index *ix)
{
	struct db_cwrites *w = get(c);
	if (!w || w->running || w->n_snaps == 2)
		return -1;
	snap_due *s = &w->snaps[w->n_snaps];
	s->dir = strdup(dir);
	s->root = strdup(root);
	if (!s->dir || !s->root) {
		free(s->dir);
		free(s->root);
		return -1;
	}
	s->side = side;
	s->key = key;
	s->ix = ix;
	w->n_snaps++;
	return 0;
}

/* Each file is written atomically: a workbench killed before they are done
 * leaves the older snapshots, or none, never half a file. */
static void write_all(struct db_cwrites *w)
{
	for (size_t i = 0; i < w->n_snaps; i++) {
		snap_due *s = &w->snaps[i];
		db_isnap_store(s->dir, s->root, s->side, s->key, s->ix);
		free(s->dir);
		free(s->root);
	}
	w->n_snaps = 0;
}

static void *writer(void *arg)
{
#ifdef SYS_gettid
	/* Linux: a thread's nice value is its own */
	(void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
#endif
	write_all(arg);
	return NULL;
}

void db_cwrites_start(db_compare *c)
{
	db_cmp_priv *pr = c->priv;
	struct db_cwrites *w = pr ? pr->writes : NULL;
	if (!w || w->running || !w->n_snaps)
		return;
	if (pthread_create(&w->th, NULL, writer, w) == 0)
		w->running = true;
	else
		write_all(w);
}

void db_cwrites_join(db_compare *c)
{
	db_cmp_priv *pr = c->priv;
	struct db_cwrites *w = pr ? pr->writes : NULL;
	if (!w)
		return;
	if (w->running)
		pthread_join(w->th, NULL);
	else
		write_all(w);
	free(w);
	pr->writes = NULL;
}
