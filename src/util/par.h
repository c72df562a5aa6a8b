/* Work spread over threads: the same function on several threads sharing
 * one job (each takes the next piece from an atomic counter), this thread
 * among them. */
#ifndef DB_PAR_H
#define DB_PAR_H

/* The CPUs online, at least 1. */
int db_cpus(void);
/* f(arg) on nt threads, this one and up to nt - 1 more (fewer when a
 * thread cannot be made: the work is still done); returns when every one
 * has. nt is capped at 64. */
void db_par_run(void *(*f)(void *), void *arg, int nt);

#endif
