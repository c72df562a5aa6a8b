#include "walk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/hash.h"

#define WALK_MAX_DEPTH 64

typedef struct dev_ino { dev_t dev; ino_t ino; } dev_ino;

typedef struct walk_state {
	db_walk *w;
	bool want_stat;         /* size and mtime of files; else d_type suffices */
	dev_ino *seen;          /* directories already listed (loops, DAGs) */
	size_t n_seen, cap_seen;
	const char *real_root;  /* the root, links resolved; NULL: unknown */
} walk_state;

static bool follow_links;

void db_walk_follow_links(bool on)
{
	follow_links = on;
}

bool db_walk_follows_links(void)
{
	return follow_links;
}

/* A directory link under the root leads outside it: realpath of the link
 * (*to, malloc'd, for the message) is not the root nor below it. */
static bool leaves_root(const walk_state *s, const char *full, char **to)
{
	*to = NULL;
	if (follow_links || !s->real_root)
		return false;
	char *rp = realpath(full, NULL);
	if (!rp)
		return false;
	size_t n = strlen(s->real_root);
	bool inside = !strcmp(s->real_root, "/") ||
	              (!strncmp(rp, s->real_root, n) && (rp[n] == '/' || !rp[n]));
	if (inside)
		free(rp);
	else
		*to = rp;
	return !inside;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* Token by token: digit runs by value, then fewer leading zeros first. */
static int natcmp_tokens(const char *a, const char *b)
{
	while (*a && *b) {
		if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
			const char *za = a, *zb = b;
			while (*za == '0') za++;
			while (*zb == '0') zb++;
			const char *ea = za, *eb = zb;
			while (*ea >= '0' && *ea <= '9') ea++;
			while (*eb >= '0' && *eb <= '9') eb++;
			if (ea - za != eb - zb)
				return ea - za < eb - zb ? -1 : 1;
			int c = strncmp(za, zb, (size_t)(ea - za));
			if (c)
				return c < 0 ? -1 : 1;
			/* equal values: fewer leading zeros first, then go on */
			if (za - a != zb - b)
				return za - a < zb - b ? -1 : 1;
			a = ea;
			b = eb;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		a++;
		b++;
	}
	return *a ? 1 : *b ? -1 : 0;
}

/* db_natcmp after a common prefix of length i. */
static int natcmp_from(const char *a, const char *b, size_t i)
{
	if (a[i] == b[i])
		return 0;
	/* back up to the start of a digit run the prefix ends in; an
	 * identical prefix ending at a token boundary compares equal token
	 * by token */
	while (i > 0 && is_digit(a[i - 1]))
		i--;
	return natcmp_tokens(a + i, b + i);
}

int db_natcmp(const char *a, const char *b)
{
	size_t i = 0;
	while (a[i] && a[i] == b[i])
		i++;
	return natcmp_from(a, b, i);
}

char *db_path_join(const char *root, const char *rel)
{
	size_t lr = strlen(root), ll = strlen(rel);
	char *s = malloc(lr + ll + 2);
	if (!s)
		return NULL;
	memcpy(s, root, lr);
	size_t n = lr;
	if (ll) {
		if (n && s[n - 1] != '/')
			s[n++] = '/';
		memcpy(s + n, rel, ll);
		n += ll;
	}
	s[n] = 0;
	return s;
}

static void note_skip(db_walk *w, const char *rel, const char *fmt, ...)
{
	char why[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	if (w->n_skipped == w->cap_skipped) {
		size_t cap = w->cap_skipped ? w->cap_skipped * 2 : 8;
		char **s = realloc(w->skipped, cap * sizeof *s);
		if (!s)
			return;
		w->skipped = s;
		w->cap_skipped = cap;
	}
	size_t len = strlen(rel) + strlen(why) + 3;
	char *line = malloc(len);
	if (!line)
		return;
	snprintf(line, len, "%s: %s", *rel ? rel : ".", why);
	w->skipped[w->n_skipped++] = line;
}

/* Takes *rel (malloc'd) on success and sets it NULL. */
static int add_file(db_walk *w, char **rel, const struct stat *st)
{
	if (w->n_files == w->cap_files) {
		size_t cap = w->cap_files ? w->cap_files * 2 : 64;
		db_walk_file *f = realloc(w->files, cap * sizeof *f);
		if (!f)
			return -1;
		w->files = f;
		w->cap_files = cap;
	}
	db_walk_file *f = &w->files[w->n_files++];
	f->rel = *rel;
	*rel = NULL;
	f->size = st->st_size;
	f->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
	f->ident = db_stat_ident(st);
	return 0;
}

static _Thread_local const _Atomic int *walk_stop;

void db_walk_stop_on(const _Atomic int *stop)
{
	walk_stop = stop;
}

static bool stopped(void)
{
	return walk_stop && *walk_stop;
}

static int add_dir(db_walk *w, const char *rel, const struct stat *st)
{
	if (w->n_dirs == w->cap_dirs) {
		size_t cap = w->cap_dirs ? w->cap_dirs * 2 : 8;
		db_walk_stamp *d = realloc(w->dirs, cap * sizeof *d);
		if (!d)
			return -1;
		w->dirs = d;
		w->cap_dirs = cap;
	}
	db_walk_stamp *d = &w->dirs[w->n_dirs];
	if (!(d->rel = strdup(rel)))
		return -1;
	d->dev = (uint64_t)st->st_dev;
	d->ino = (uint64_t)st->st_ino;
	d->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
	w->n_dirs++;
	return 0;
}

static int seen_add(walk_state *s, const struct stat *st)
{
	for (size_t i = 0; i < s->n_seen; i++)
		if (s->seen[i].dev == st->st_dev && s->seen[i].ino == st->st_ino)
			return 1;
	if (s->n_seen == s->cap_seen) {
		size_t cap = s->cap_seen ? s->cap_seen * 2 : 16;
		dev_ino *d = realloc(s->seen, cap * sizeof *d);
		if (!d)
			return -1;
		s->seen = d;
		s->cap_seen = cap;
	}
	s->seen[s->n_seen++] = (dev_ino){st->st_dev, st->st_ino};
	return 0;
}

static const char *special_kind(mode_t m)
{
	if (S_ISFIFO(m)) return "FIFO";
	if (S_ISCHR(m)) return "character device";
	if (S_ISBLK(m)) return "block device";
	if (S_ISSOCK(m)) return "socket";
	return "special file";
}

size_t db_natkey(const char *s, unsigned char *out)
{
	size_t n = 0;
	while (*s) {
		if (!is_digit(*s)) {
			out[n++] = (unsigned char)*s++;
			continue;
		}
		/* a digit run: '0' (orders against other bytes as any digit
		 * would), significant length, the digits, leading zeros */
		const char *z = s;
		while (*z == '0')
			z++;
		const char *e = z;
		while (is_digit(*e))
			e++;
		size_t sig = (size_t)(e - z), zeros = (size_t)(z - s);
		out[n++] = '0';
		out[n++] = (unsigned char)(sig > 255 ? 255 : sig);
		memcpy(out + n, z, sig);
		n += sig;
		out[n++] = (unsigned char)(zeros > 255 ? 255 : zeros);
		s = e;
	}
	return n;
}

int db_natkey_cmp(const unsigned char *a, size_t na, const unsigned char *b, size_t nb)
{
	int c = memcmp(a, b, na < nb ? na : nb);
	return c ? (c < 0 ? -1 : 1) : na < nb ? -1 : na > nb;
}

typedef struct dname {
	char *name;             /* in the directory's arena */
	unsigned char *key;     /* db_natkey of name, after it in the arena */
	size_t klen;
	size_t off;             /* of name in the arena, while it grows */
	bool reg;               /* readdir says regular file */
} dname;

/* Sorting compares precomputed keys with memcmp: names in a dump share
 * long prefixes and a directory holds thousands of them. */
static int cmp_name(const void *va, const void *vb)
{
	const dname *a = va, *b = vb;
	return db_natkey_cmp(a->key, a->klen, b->key, b->klen);
}

/* dir = full path of the directory, rel = its path below the root ("" root),
 * dst its stat (taken before it is read). */
static int walk_rec(walk_state *s, const char *dir, const char *rel, const struct stat *dst,
                    int depth)
{
	if (depth > WALK_MAX_DEPTH) {
		note_skip(s->w, rel, "deeper than %d directories; not listed", WALK_MAX_DEPTH);
		return 0;
	}
	if (add_dir(s->w, rel, dst) != 0)
		return -1;
	DIR *d = opendir(dir);
	if (!d) {
		note_skip(s->w, rel, "cannot open directory: %s", strerror(errno));
		return 0;
	}
	dname *names = NULL;
	size_t n = 0, cap = 0;
	/* every name and its key in one arena: a malloc of five times the
	 * name's length per entry was most of listing 406k names (issue 24) */
	char *arena = NULL;
	size_t a_n = 0, a_cap = 0;
	int rc = 0;
	struct dirent *de;
	unsigned char kbuf[4 * sizeof ((struct dirent *)0)->d_name + 1];  /* any name's key */
	while (!stopped() && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			dname *nn = realloc(names, cap * sizeof *nn);
			if (!nn) { rc = -1; break; }
			names = nn;
		}
		size_t l = strlen(de->d_name);
		size_t kl = db_natkey(de->d_name, kbuf);
		if (a_n + l + 1 + kl > a_cap) {
			size_t ac = a_cap ? a_cap * 2 : 65536;
			while (ac < a_n + l + 1 + kl)
				ac *= 2;
			char *na = realloc(arena, ac);
			if (!na) { rc = -1; break; }
			arena = na;
			a_cap = ac;
		}
		names[n].off = a_n;
		memcpy(arena + a_n, de->d_name, l + 1);
		memcpy(arena + a_n + l + 1, kbuf, kl);
		a_n += l + 1 + kl;
		names[n].klen = kl;
		names[n].reg = de->d_type == DT_REG;
		n++;
	}
	for (size_t i = 0; i < n; i++) {        /* the arena has stopped moving */
		names[i].name = arena + names[i].off;
		names[i].key = (unsigned char *)names[i].name + strlen(names[i].name) + 1;
	}
	if (n)
		qsort(names, n, sizeof *names, cmp_name);
	/* stat relative to the open directory: no path walk per file */
	int dfd = dirfd(d);
	for (size_t i = 0; i < n && rc == 0 && !stopped(); i++) {
		const char *name = names[i].name;
		char *r = db_path_join(rel, name);
		if (!r) {
			rc = -1;
			break;
		}
		struct stat st;
		if (!s->want_stat && names[i].reg) {
			memset(&st, 0, sizeof st);
			if ((rc = add_file(s->w, &r, &st)) == 0)
				s->w->files[s->w->n_files - 1].size = -1;
		} else if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			note_skip(s->w, r, "%s", strerror(errno));
		} else {
			bool link = S_ISLNK(st.st_mode);
			if (link && fstatat(dfd, name, &st, 0) != 0) {
				note_skip(s->w, r, errno == ELOOP ? "symlink loop" : "dangling symlink (%s)",
				          strerror(errno));
			} else if (S_ISDIR(st.st_mode)) {
				char *full = db_path_join(dir, name), *to = NULL;
				if (!full) {
					rc = -1;
				} else if (link && leaves_root(s, full, &to)) {
					/* before seen_add: the same directory reached
					 * inside the tree is still listed there */
					note_skip(s->w, r, DB_WALK_LINK_OUT " (%s); not followed "
					          "(--follow-links follows it)", to);
					s->w->n_links_out++;
				} else {
					int sv = seen_add(s, &st);
					if (sv < 0)
						rc = -1;
					else if (sv > 0)
						note_skip(s->w, r, link ? "symlink loop (directory already listed)"
						                        : "directory already listed");
					else
						rc = walk_rec(s, full, r, &st, depth + 1);
				}
				free(to);
				free(full);
			} else if (S_ISREG(st.st_mode)) {
				rc = add_file(s->w, &r, &st);
			} else {
				note_skip(s->w, r, "%s; not opened", special_kind(st.st_mode));
			}
		}
		free(r);
	}
	closedir(d);
	free(arena);
	free(names);
	return rc;
}

int db_walk_dir(const char *dir, db_walk *w, char *msg, size_t msglen)
{
	return db_walk_dir2(dir, w, true, msg, msglen);
}

int db_walk_dir2(const char *dir, db_walk *w, bool want_stat, char *msg, size_t msglen)
{
	memset(w, 0, sizeof *w);
	struct stat st;
	if (stat(dir, &st) != 0) {
		snprintf(msg, msglen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(msg, msglen, "%s: not a directory", dir);
		return -1;
	}
	DIR *probe = opendir(dir);
	if (!probe) {
		snprintf(msg, msglen, "%s: cannot open directory: %s", dir, strerror(errno));
		return -1;
	}
	closedir(probe);
	char *real_root = realpath(dir, NULL);
	walk_state s = {.w = w, .want_stat = want_stat, .real_root = real_root};
	int rc = seen_add(&s, &st) < 0 ? -1 : walk_rec(&s, dir, "", &st, 0);
	free(s.seen);
	free(real_root);
	if (rc != 0) {
		snprintf(msg, msglen, "%s: out of memory while listing", dir);
		db_walk_free(w);
		return -1;
	}
	/* each directory's names were sorted: depth-first order is stable */
	return 0;
}

void db_walk_free(db_walk *w)
{
	if (!w)
		return;
	for (size_t i = 0; w->files && i < w->n_files; i++)      /* a stub has none */
		free(w->files[i].rel);
	free(w->files);
	for (size_t i = 0; i < w->n_skipped; i++)
		free(w->skipped[i]);
	free(w->skipped);
	for (size_t i = 0; i < w->n_dirs; i++)
		free(w->dirs[i].rel);
	free(w->dirs);
	memset(w, 0, sizeof *w);
}

int db_walk_root(const char *root, db_walk *w, bool *is_file, char *msg, size_t msglen)
{
	return db_walk_root2(root, w, true, is_file, msg, msglen);
}

void db_walk_fill_stat(const char *root, db_walk *w)
{
	for (size_t i = 0; i < w->n_files; i++) {
		db_walk_file *f = &w->files[i];
		if (f->size >= 0)
			continue;
		char *p = db_path_join(root, f->rel);
		struct stat st;
		if (p && stat(p, &st) == 0) {
			f->size = st.st_size;
			f->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
			f->ident = db_stat_ident(&st);
		}
		free(p);
	}
}

int db_walk_root2(const char *root, db_walk *w, bool want_stat, bool *is_file, char *msg,
                  size_t msglen)
{
	memset(w, 0, sizeof *w);
	*is_file = false;
	struct stat st;
	if (stat(root, &st) != 0) {
		snprintf(msg, msglen, "%s: cannot open: %s", root, strerror(errno));
		return -1;
	}
	if (S_ISDIR(st.st_mode))
		return db_walk_dir2(root, w, want_stat, msg, msglen);
	if (!S_ISREG(st.st_mode)) {
		snprintf(msg, msglen, "%s: not a directory or regular file", root);
		return -1;
	}
	const char *b = strrchr(root, '/');
	w->files = calloc(1, sizeof *w->files);
	if (!w->files || !(w->files[0].rel = strdup(b ? b + 1 : root))) {
		db_walk_free(w);
		snprintf(msg, msglen, "%s: out of memory", root);
		return -1;
	}
	w->n_files = w->cap_files = 1;
	w->files[0].size = st.st_size;
	w->files[0].mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	w->files[0].ident = db_stat_ident(&st);
	*is_file = true;
	return 0;
}

uint64_t db_walk_hash(const db_walk *w, bool names_only)
{
	if (w->stub)
		return w->hash[names_only];
	uint64_t h = db_hash64(&w->n_files, sizeof w->n_files, DB_HASH_SEED);
	for (size_t i = 0; i < w->n_files; i++) {
		const db_walk_file *f = &w->files[i];
		h = db_hash64(f->rel, strlen(f->rel), h);
		if (!names_only) {
			int64_t v[3] = {(int64_t)f->size, f->mtime_ns, (int64_t)f->ident};
			h = db_hash64(v, sizeof v, h);
		}
	}
	return h;
}

bool db_walk_dirs_same(const char *root, const db_walk_stamp *dirs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char *full = db_path_join(root, dirs[i].rel);
		struct stat st;
		bool ok = full && stat(full, &st) == 0 && S_ISDIR(st.st_mode) &&
		          (uint64_t)st.st_dev == dirs[i].dev && (uint64_t)st.st_ino == dirs[i].ino &&
		          (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec ==
		                  dirs[i].mtime_ns;
		free(full);
		if (!ok)
			return false;
	}
	return n > 0;
}
