#include "db_watch.h"

#include <dirent.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/inotify.h>
#endif

#include "read/walk.h"

enum { POLL_MS = 250, QUIET_MS = 100, BURST_MAX_MS = 500 };

struct db_watch {
	int fd;                 /* inotify; -1 in the poll fallback */
	char **roots;
	size_t n;
	uint64_t hash;          /* poll: the listing last seen */
	int64_t listed_ms;      /* poll: when */
};

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint64_t listing_hash(const db_watch *w)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < w->n; i++) {
		db_walk wk = {0};
		bool is_file;
		char msg[256];
		/* a root that is gone hashes as empty: its return is a change */
		if (db_walk_root(w->roots[i], &wk, &is_file, msg, sizeof msg) == 0)
			h = (h ^ db_walk_hash(&wk, false)) * 1099511628211ull;
		db_walk_free(&wk);
	}
	return h;
}

#ifdef __linux__
#define WATCH_MASK (IN_CREATE | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | \
                    IN_MODIFY | IN_ATTRIB | IN_ONLYDIR)

/* Watch dir and every directory below it (depth bounded: symlink loops). */
static int add_tree(int fd, const char *dir, int depth)
{
	if (depth > 64)
		return 0;
	int n = inotify_add_watch(fd, dir, WATCH_MASK) >= 0;
	DIR *d = opendir(dir);
	if (!d)
		return n;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		/* readdir's d_type says which entries are directories: a stat
		 * per file cost a path walk each (100k-file trees, issue 12) */
		if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN)
			continue;
		char *sub = db_path_join(dir, e->d_name);
		struct stat st;
		if (sub && (e->d_type == DT_DIR || (!lstat(sub, &st) && S_ISDIR(st.st_mode))))
			n += add_tree(fd, sub, depth + 1);
		free(sub);
	}
	closedir(d);
	return n;
}

/* Read the queued events; new directories get watched (their files may
 * have been written before the watch: the caller rescans anyway). */
static bool drain(db_watch *w)
{
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool any = false, rewatch = false;
	for (;;) {
		ssize_t r = read(w->fd, buf, sizeof buf);
		if (r <= 0)
			break;
		any = true;
		for (char *p = buf; p < buf + r;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			if ((ev->mask & IN_ISDIR && ev->mask & (IN_CREATE | IN_MOVED_TO)) ||
			    ev->mask & IN_Q_OVERFLOW)
				rewatch = true;
			p += sizeof *ev + ev->len;
		}
	}
	if (rewatch)    /* adding a watch twice returns the same one */
		for (size_t i = 0; i < w->n; i++)
			add_tree(w->fd, w->roots[i], 0);
	return any;
}
#endif

int db_watch_open(const char *const *roots, size_t n, db_watch **out, db_err *err)
{
	return db_watch_open_dirs(roots, n, NULL, 0, out, err);
}

int db_watch_open_dirs(const char *const *roots, size_t n, const char *const *dirs,
                       size_t n_dirs, db_watch **out, db_err *err)
{
	*out = NULL;
	db_watch *w = calloc(1, sizeof *w);
	if (!w || !(w->roots = calloc(n ? n : 1, sizeof *w->roots))) {
		free(w);
		return db_err_set(err, NULL, NULL, -1, "out of memory");
	}
	w->fd = -1;
	for (size_t i = 0; i < n; i++)
		if (!(w->roots[w->n++] = strdup(roots[i]))) {
			db_watch_free(w);
			return db_err_set(err, NULL, NULL, -1, "out of memory");
		}
#ifdef __linux__
	const char *force = getenv("DUMPBISECT_WATCH");
	if (!(force && !strcmp(force, "poll"))) {
		w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		int watched = 0;
		for (size_t i = 0; w->fd >= 0 && i < n_dirs; i++)
			watched += inotify_add_watch(w->fd, dirs[i], WATCH_MASK) >= 0;
		for (size_t i = 0; w->fd >= 0 && !n_dirs && i < w->n; i++)
			watched += add_tree(w->fd, w->roots[i], 0);
		if (w->fd >= 0 && !watched) {
			close(w->fd);
			w->fd = -1;
		}
	}
#endif
	if (w->fd < 0) {
		w->hash = listing_hash(w);
		w->listed_ms = now_ms();
	}
	*out = w;
	return 0;
}

void db_watch_free(db_watch *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	for (size_t i = 0; i < w->n; i++)
		free(w->roots[i]);
	free(w->roots);
	free(w);
}

const char *db_watch_how(const db_watch *w)
{
	return w->fd >= 0 ? "inotify" : "poll";
}

/* A signal ends the nap early: the caller looks at it. */
static void nap_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
	nanosleep(&ts, NULL);
}

int db_watch_changed(db_watch *w, int timeout_ms)
{
	int64_t end = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
#ifdef __linux__
	if (w->fd >= 0) {
		struct pollfd pf = {w->fd, POLLIN, 0};
		int left = timeout_ms > 0 ? timeout_ms : 0;
		if (poll(&pf, 1, left) <= 0 || !drain(w))
			return 0;
		/* a dump writes many files at once: gather the burst */
		int64_t burst_end = now_ms() + BURST_MAX_MS;
		while (now_ms() < burst_end && poll(&pf, 1, QUIET_MS) > 0 && drain(w))
			;
		return 1;
	}
#endif
	for (;;) {
		/* listing a big tree is not free: at most every POLL_MS */
		int64_t wait = w->listed_ms + POLL_MS - now_ms();
		if (wait > 0) {
			if (now_ms() + wait > end)
				return 0;
			nap_ms((int)wait);
		}
		w->listed_ms = now_ms();
		uint64_t h = listing_hash(w);
		if (h != w->hash) {
			w->hash = h;
			return 1;
		}
		int64_t left = end - now_ms();
		if (left <= 0)
			return 0;
		nap_ms(left < POLL_MS ? (int)left : POLL_MS);
	}
}
