/* Dump files that shrink while they are mapped: reading a page past the
 * new end raises SIGBUS (torch.save truncates before it writes, so a dumper
 * running again into the same path does this to a live tree). Code that
 * reads mapped dump data runs under a guard; a SIGBUS whose address lies in
 * a registered dump mapping, in a thread inside a guard, jumps back to the
 * guard instead of killing the process, and the caller turns it into an
 * error for that file ("file changed while read"). Any other SIGBUS goes on
 * to the handler installed before, or kills as it would have: real bugs
 * stay loud. Use:
 *
 *     db_bus_guard g;
 *     if (sigsetjmp(g.jb, 0) == 0) {
 *             db_bus_enter(&g);
 *             ... read the mapping ...
 *             db_bus_leave(&g);
 *     } else {
 *             ... g.addr: where it faulted; g is left already ...
 *     }
 *
 * Between enter and leave: no locks taken, nothing that must not be cut
 * short; locals changed inside and read after a fault must be volatile.
 * Heap work half done inside (a parse's arena, zlib's state) is held with
 * db_bus_hold and freed by db_bus_unwind in the fault branch: the frames
 * that owned it are gone after the jump. */
#ifndef DB_BUS_H
#define DB_BUS_H
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>

#define DB_BUS_HOLDS 8
typedef struct db_bus_guard {
	sigjmp_buf jb;
	struct db_bus_guard *prev;      /* guards nest */
	const void *volatile addr;      /* after a fault: its address */
	/* db_bus_hold's: what a fault leaves to free (a slot is free while
	 * its fn is NULL) */
	void (*volatile hold_fn[DB_BUS_HOLDS])(void *);
	void *volatile hold_arg[DB_BUS_HOLDS];
} db_bus_guard;

/* Installs the handler (once; idempotent, thread-safe). */
void db_bus_install(void);
/* Installs it again now, over whatever handler is there (chained to it):
 * for a test harness that sets its own per test (cmocka). Not for
 * programs: a handler that chains back to ours would loop. */
void db_bus_reinstall(void);
void db_bus_enter(db_bus_guard *g);
void db_bus_leave(db_bus_guard *g);
/* arg (heap, not on the stack: the jump leaves that frame) must be freed
 * with fn(arg) if a fault jumps to this thread's innermost guard before
 * db_bus_drop(the slot returned). -1 (hold nothing) outside a guard or
 * with every slot taken: a fault then leaks arg, as before. */
int db_bus_hold(void (*fn)(void *), void *arg);
void db_bus_drop(int slot);
/* In g's fault branch: frees what was held in g, the newest first. */
void db_bus_unwind(db_bus_guard *g);
/* [p, p + n) maps a dump file: register it before reading it, remove it
 * before munmap. A mapping that finds the table full is not guarded. */
void db_bus_map_add(const void *p, size_t n);
void db_bus_map_remove(const void *p);
/* fn(arg) under a guard: fn's result, or DB_BUS_FAULT with *addr (may be
 * NULL) where it faulted. For callers that read a mapping in one call. */
#define DB_BUS_FAULT (-1000)
int db_bus_run(int (*fn)(void *arg), void *arg, const void **addr);
/* For another SIGBUS handler (the workbench's crash report): jumps to the
 * thread's guard when the fault is a guarded one; else returns. */
void db_bus_recover(int sig, siginfo_t *si);

#endif
