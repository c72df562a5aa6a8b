#include "util/par.h"

#include <pthread.h>
#include <unistd.h>

int db_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 4096 ? 4096 : (int)n;
}

void db_par_run(void *(*f)(void *), void *arg, int nt)
{
	pthread_t th[64];
	int started = 0;
	for (int t = 1; t < nt && t < 64; t++)
		if (pthread_create(&th[started], NULL, f, arg) == 0)
			started++;
	f(arg);
	for (int t = 0; t < started; t++)
		pthread_join(th[t], NULL);
}
