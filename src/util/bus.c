#include "db_bus.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

/* The mappings of dump files, for the handler: a slot is free while its lo
 * is 0; hi is written before lo, so a reader that sees lo sees hi. */
#define MAPS 4096
static _Atomic uintptr_t map_lo[MAPS], map_hi[MAPS];

/* the innermost guard of this thread (initial-exec TLS in a static
 * library: safe to read in a signal handler) */
static _Thread_local db_bus_guard *cur;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct sigaction before;         /* the SIGBUS handler we found */

static int mapped(const void *addr)
{
	uintptr_t a = (uintptr_t)addr;
	for (int i = 0; i < MAPS; i++) {
		uintptr_t lo = atomic_load_explicit(&map_lo[i], memory_order_acquire);
		if (lo && a >= lo && a < atomic_load_explicit(&map_hi[i], memory_order_relaxed))
			return 1;
	}
	return 0;
}

void db_bus_recover(int sig, siginfo_t *si)
{
	db_bus_guard *g = cur;
	/* only a fault of the CPU (si_code > 0: BUS_ADRERR ...) on a dump
	 * mapping, inside a guard; a raised SIGBUS is never ours */
	if (sig != SIGBUS || !g || !si || si->si_code <= 0 || !mapped(si->si_addr))
		return;
	g->addr = si->si_addr;
	cur = g->prev;
	/* the handler may have run with SIGBUS blocked (not ours, or
	 * without SA_NODEFER): the next fault must find it open */
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGBUS);
	sigprocmask(SIG_UNBLOCK, &s, NULL);
	siglongjmp(g->jb, 1);
}

static void on_bus(int sig, siginfo_t *si, void *uc)
{
	db_bus_recover(sig, si);
	/* not a guarded fault: as if we were not here */
	if ((before.sa_flags & SA_SIGINFO) && before.sa_sigaction) {
		before.sa_sigaction(sig, si, uc);
		return;
	}
	if (!(before.sa_flags & SA_SIGINFO) && before.sa_handler != SIG_DFL &&
	    before.sa_handler != SIG_IGN) {
		before.sa_handler(sig);
		return;
	}
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(SIGBUS, &dfl, NULL);
	/* a CPU fault happens again on return and now kills; a sent one is
	 * sent again */
	if (!si || si->si_code <= 0)
		raise(sig);
}

static void install(void)
{
	struct sigaction sa, now;
	if (sigaction(SIGBUS, NULL, &now) == 0 && (now.sa_flags & SA_SIGINFO) &&
	    now.sa_sigaction == on_bus)
		return;                 /* ours already: keep what it chains to */
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_sigaction = on_bus;
	/* SA_NODEFER: a guard jumps out of the handler with SIGBUS open */
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGBUS, &sa, &before);
}

void db_bus_install(void)
{
	pthread_once(&once, install);
}

void db_bus_reinstall(void)
{
	db_bus_install();
	install();
}

void db_bus_enter(db_bus_guard *g)
{
	db_bus_install();
	g->addr = NULL;
	for (int i = 0; i < DB_BUS_HOLDS; i++)
		g->hold_fn[i] = NULL;
	g->prev = cur;
	cur = g;
}

void db_bus_leave(db_bus_guard *g)
{
	cur = g->prev;
}

int db_bus_hold(void (*fn)(void *), void *arg)
{
	db_bus_guard *g = cur;
	for (int i = 0; g && i < DB_BUS_HOLDS; i++)
		if (!g->hold_fn[i]) {
			g->hold_arg[i] = arg;
			g->hold_fn[i] = fn;     /* after arg: a fault between sees both */
			return i;
		}
	return -1;
}

void db_bus_drop(int slot)
{
	if (slot >= 0 && cur)
		cur->hold_fn[slot] = NULL;
}

void db_bus_unwind(db_bus_guard *g)
{
	for (int i = DB_BUS_HOLDS - 1; i >= 0; i--) {
		void (*fn)(void *) = g->hold_fn[i];
		g->hold_fn[i] = NULL;
		if (fn)
			fn(g->hold_arg[i]);
	}
}

void db_bus_map_add(const void *p, size_t n)
{
	uintptr_t lo = (uintptr_t)p;
	if (!lo || !n)
		return;
	db_bus_install();
	for (int i = 0; i < MAPS; i++) {
		uintptr_t z = 0;
		/* claim the slot with hi first: lo stays 0 until both are set */
		if (atomic_load(&map_lo[i]) || !atomic_compare_exchange_strong(&map_hi[i], &z, lo + n))
			continue;
		atomic_store_explicit(&map_lo[i], lo, memory_order_release);
		return;
	}
}

void db_bus_map_remove(const void *p)
{
	uintptr_t lo = (uintptr_t)p;
	if (!lo)
		return;
	for (int i = 0; i < MAPS; i++)
		if (atomic_load(&map_lo[i]) == lo) {
			atomic_store(&map_lo[i], 0);
			atomic_store(&map_hi[i], 0);
			return;
		}
}

int db_bus_run(int (*fn)(void *arg), void *arg, const void **addr)
{
	db_bus_guard g;
	if (sigsetjmp(g.jb, 0) != 0) {
		db_bus_unwind(&g);
		if (addr)
			*addr = g.addr;
		return DB_BUS_FAULT;
	}
	db_bus_enter(&g);
	int rc = fn(arg);
	db_bus_leave(&g);
	return rc;
}
