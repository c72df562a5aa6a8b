/* Listing a dump tree without opening any file: regular files only, in
 * natural path order; symlink loops, special files (FIFO, devices, sockets)
 * and unreadable directories are noted, never opened. A symlink to a
 * directory outside the tree's root (a link to /, to $HOME) is noted and
 * not followed unless asked (db_walk_follow_links): it would list another
 * tree, maybe the whole disk, as this one's. Shared by the index and the
 * profile detection. */
#ifndef DB_WALK_H
#define DB_WALK_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

typedef struct db_walk_file {
	char *rel;              /* path relative to the root (owned) */
	off_t size;             /* -1: not stat'ed yet (db_walk_root2, want_stat false) */
	int64_t mtime_ns;
	uint64_t ident;         /* db_stat_ident */
} db_walk_file;

/* Inode and ctime (ns) of a file, hashed: a rewrite changes them even when
 * the size stays and the mtime is put back (touch -r), which size + mtime
 * alone cannot see. Part of every cache key over file contents. */
static inline uint64_t db_stat_ident(const struct stat *st)
{
	uint64_t h = (uint64_t)st->st_ino * 0x9E3779B97F4A7C15ull;
	h ^= (uint64_t)st->st_ctim.tv_sec * 1000000000ull + (uint64_t)st->st_ctim.tv_nsec;
	h ^= (uint64_t)st->st_dev << 17;
	return h * 0xBF58476D1CE4E5B9ull;
}

/* A directory as the walk found it, stat'ed before it was read: adding,
 * removing or renaming an entry changes its mtime (a file rewritten in
 * place does not). The cheap check of a reopen (db_walk_dirs_same). */
typedef struct db_walk_stamp {
	char *rel;              /* "" for the root (owned) */
	uint64_t dev, ino;
	int64_t mtime_ns;
} db_walk_stamp;

typedef struct db_walk {
	db_walk_file *files;    /* depth first, each directory in db_natcmp order */
	size_t n_files, cap_files;
	char **skipped;         /* "rel: why" (owned) */
	size_t n_skipped, cap_skipped;
	db_walk_stamp *dirs;    /* every directory listed, the root first */
	size_t n_dirs, cap_dirs;
	size_t n_links_out;     /* of skipped: directory links leaving the root */
	/* A stand-in for a listing known only by its size and hashes (a
	 * reopen that trusted its directory stamps): files is NULL, n_files
	 * is the count, db_walk_hash returns hash[names_only]. */
	bool stub;
	uint64_t hash[2];
} db_walk;

/* List the regular files under dir (recursively). -1 with msg when dir
 * itself cannot be opened; problems below it go to w->skipped. */
int db_walk_dir(const char *dir, db_walk *w, char *msg, size_t msglen);
/* want_stat false: regular files the directory reports as such are not
 * stat'ed (size -1, mtime and ident 0); only the names are needed, or
 * whoever opens them fills the stat in (db_index_scan_walk). */
int db_walk_dir2(const char *dir, db_walk *w, bool want_stat, char *msg, size_t msglen);
void db_walk_free(db_walk *w);
/* List root as the index sees it: a directory is walked (with stat); a
 * regular file is one entry named by its basename (*is_file true). -1 with
 * msg when root is missing, unreadable or neither ("ROOT: why"). */
int db_walk_root(const char *root, db_walk *w, bool *is_file, char *msg, size_t msglen);
/* The same; want_stat false lists a directory as db_walk_dir2 does. */
int db_walk_root2(const char *root, db_walk *w, bool want_stat, bool *is_file, char *msg,
                  size_t msglen);
/* Stat every file of w still at size -1 (below root); one that is gone
 * keeps -1, so a hash over w matches no later listing. */
void db_walk_fill_stat(const char *root, db_walk *w);
/* A hash over every file's path, size, mtime and ident (names_only: paths
 * only): equal listings give equal hashes. */
uint64_t db_walk_hash(const db_walk *w, bool names_only);
/* Every directory of dirs still has its device, inode and mtime (stat
 * below root, symlinks followed as the walk does). */
bool db_walk_dirs_same(const char *root, const db_walk_stamp *dirs, size_t n);

/* The reason in skipped of a directory link that leaves the root, not
 * followed: "rel: " DB_WALK_LINK_OUT " (/target); not followed ...". */
#define DB_WALK_LINK_OUT "symlink to a directory outside the tree"
/* Follow directory links that leave the root (--follow-links); default
 * false. Process-wide: set before any walk. Part of every key of a cached
 * listing (the stamps). */
void db_walk_follow_links(bool on);
bool db_walk_follows_links(void);

/* Walks in the calling thread stop early once *stop is non-zero (NULL:
 * never); their listing is then incomplete. For a listing that may stop
 * being wanted (the reopen's check, when the workbench quits). */
void db_walk_stop_on(const _Atomic int *stop);

/* Natural order: digit runs compare by value ("layer2" < "layer10"). */
int db_natcmp(const char *a, const char *b);
/* A byte key of s whose order (db_natkey_cmp) is db_natcmp's: out holds
 * at least 4 * strlen(s) + 1 bytes; returns the key's length. Exact for
 * digit runs shorter than 256 (file names are at most 255 bytes). */
size_t db_natkey(const char *s, unsigned char *out);
int db_natkey_cmp(const unsigned char *a, size_t na, const unsigned char *b, size_t nb);
/* "root/rel" (malloc'd). */
char *db_path_join(const char *root, const char *rel);

#endif
