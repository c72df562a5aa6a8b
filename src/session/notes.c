/* Numbered notes: notes/NN_<slug>.md, never overwritten. The number is
 * chosen under an flock on the directory (concurrent dumpbisect processes
 * agree on distinct numbers) and the file is created with O_EXCL (nothing
 * anybody else made is ever overwritten). Only regular files are notes,
 * and they are read without blocking (db_file.h). */
#include "db_notes.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "db_esc.h"
#include "db_file.h"

/* Leading number of "NN_..." (2+ digits then '_'), -1 otherwise. */
static int note_number(const char *name)
{
	int n = 0, digits = 0;
	for (; isdigit((unsigned char)name[digits]); digits++) {
		if (n > 100000000)
			return -1;
		n = n * 10 + (name[digits] - '0');
	}
	return digits >= 2 && name[digits] == '_' ? n : -1;
}

int db_notes_next_number(const char *dir)
{
	DIR *d = opendir(dir);
	int hi = 0;
	if (!d)
		return 1;
	for (struct dirent *e; (e = readdir(d));) {
		int n = note_number(e->d_name);
		if (n > hi)
			hi = n;
	}
	closedir(d);
	return hi + 1;
}

char *db_notes_slug(const char *title)
{
	char *s = malloc(49);
	if (!s)
		return NULL;
	size_t k = 0;
	for (const char *p = title ? title : ""; *p && k < 48; p++) {
		unsigned char ch = (unsigned char)*p;
		if (isalnum(ch) && ch < 0x80)
			s[k++] = (char)tolower(ch);
		else if (k && s[k - 1] != '_')
			s[k++] = '_';
	}
	while (k && s[k - 1] == '_')
		k--;
	s[k] = '\0';
	if (!k)
		strcpy(s, "note");
	return s;
}

char *db_notes_dir_for(const char *session_path)
{
	if (!session_path)
		return strdup("notes");
	char *copy = strdup(session_path);
	if (!copy)
		return NULL;
	const char *d = dirname(copy);
	size_t n = strlen(d) + 7;
	char *out = malloc(n);
	if (out)
		snprintf(out, n, "%s/notes", d);
	free(copy);
	return out;
}

int db_notes_mkdir(const char *dir, db_err *err)
{
	char *p = strdup(dir);
	if (!p)
		return db_err_set(err, dir, NULL, -1, "out of memory");
	for (char *q = p + 1; ; q++) {
		if (*q == '/' || !*q) {
			char c = *q;
			*q = '\0';
			if (mkdir(p, 0755) < 0 && errno != EEXIST) {
				db_err_set(err, p, NULL, -1, "cannot create notes directory: %s",
				           strerror(errno));
				free(p);
				return -1;
			}
			*q = c;
			if (!c)
				break;
		}
	}
	free(p);
	struct stat st;
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return db_err_set(err, dir, NULL, -1, "notes directory is not a directory");
	return 0;
}

static void section(FILE *f, const char *name, const char *body)
{
	fprintf(f, "## %s\n\n%s\n\n", name, body && *body ? body : "_to fill_");
}

int db_notes_create(const char *dir, const char *title,
                    const db_note_sections *sec, char **out_path,
                    int *out_number, db_err *err)
{
	if (out_path)
		*out_path = NULL;
	if (db_notes_mkdir(dir, err) < 0)
		return -1;
	char *slug = db_notes_slug(title);
	if (!slug)
		return db_err_set(err, dir, NULL, -1, "out of memory");
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	if (dfd < 0) {
		free(slug);
		return db_err_set(err, dir, NULL, -1, "cannot open notes directory: %s", strerror(errno));
	}
	/* Serialises our own creators; O_EXCL below covers everyone else. */
	while (flock(dfd, LOCK_EX) < 0 && errno == EINTR)
		;
	size_t plen = strlen(dir) + strlen(slug) + 32;
	char *path = malloc(plen);
	int fd = -1, num = db_notes_next_number(dir);
	for (int tries = 0; path && tries < 1000; tries++, num++) {
		snprintf(path, plen, "%s/%02d_%s.md", dir, num, slug);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	int saved = errno;
	flock(dfd, LOCK_UN);
	close(dfd);
	free(slug);
	if (!path)
		return db_err_set(err, dir, NULL, -1, "out of memory");
	if (fd < 0) {
		db_err_set(err, path, NULL, -1, "cannot create note: %s", strerror(saved));
		free(path);
		return -1;
	}
	FILE *f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(path);
		db_err_set(err, path, NULL, -1, "cannot write note: %s", strerror(errno));
		free(path);
		return -1;
	}
	char when[64] = "";
	time_t now = time(NULL);
	struct tm tm;
	if (localtime_r(&now, &tm))
		strftime(when, sizeof when, "%Y-%m-%d %H:%M", &tm);
	/* The title may quote a stage name: escaped prose (db_esc_md_text). */
	fprintf(f, "# %02d — ", num);
	db_esc_md_text(title && *title ? title : "note", f);
	fprintf(f, "\n\n_%s, written with dumpbisect_\n\n", when);
	section(f, "Hypothesis", sec ? sec->hypothesis : NULL);
	section(f, "Experiment", sec ? sec->experiment : NULL);
	section(f, "Data", sec ? sec->data : NULL);
	section(f, "Conclusion", sec ? sec->conclusion : NULL);
	section(f, "Next step", sec ? sec->next_step : NULL);
	int bad = fflush(f) != 0 || ferror(f) || fsync(fileno(f)) < 0;
	saved = errno;
	if (fclose(f) != 0)
		bad = 1;
	if (bad) {
		unlink(path);
		db_err_set(err, path, NULL, -1, "cannot write note: %s", strerror(saved));
		free(path);
		return -1;
	}
	if (out_number)
		*out_number = num;
	if (out_path)
		*out_path = path;
	else
		free(path);
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	const db_note_entry *x = a, *y = b;
	if (x->number != y->number)
		return x->number < y->number ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The title of a note: its first "# " line without the "NN — " the note
 * was written with (lists show the number already). */
static char *read_title(const char *path, int num)
{
	FILE *f = db_fopen_regular(path, NULL);
	char line[512];
	char *t = NULL;
	if (!f)
		return NULL;
	for (int i = 0; i < 20 && fgets(line, sizeof line, f); i++) {
		if (strncmp(line, "# ", 2))
			continue;
		line[strcspn(line, "\r\n")] = '\0';
		const char *ti = line + 2;
		char *end;
		long n = strtol(ti, &end, 10);
		if (end != ti && n == num && !strncmp(end, " — ", strlen(" — ")) &&
		    end[strlen(" — ")])
			ti = end + strlen(" — ");
		t = strdup(ti);
		break;
	}
	fclose(f);
	return t;
}

size_t db_notes_list(const char *dir, db_note_entry **out)
{
	*out = NULL;
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	size_t n = 0, cap = 0;
	db_note_entry *v = NULL;
	for (struct dirent *e; (e = readdir(d));) {
		int num = note_number(e->d_name);
		size_t len = strlen(e->d_name);
		struct stat st;
		/* a note is a regular file: a FIFO, a device or a directory of
		 * that name is no note (and reading one would block) */
		if (num < 0 || len < 4 || strcmp(e->d_name + len - 3, ".md") ||
		    fstatat(dirfd(d), e->d_name, &st, 0) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 16;
			db_note_entry *nv = realloc(v, nc * sizeof *nv);
			if (!nv)
				break;
			v = nv;
			cap = nc;
		}
		db_note_entry *x = &v[n];
		x->number = num;
		x->name = strdup(e->d_name);
		x->path = malloc(strlen(dir) + len + 2);
		if (!x->name || !x->path) {
			free(x->name);
			free(x->path);
			break;
		}
		sprintf(x->path, "%s/%s", dir, e->d_name);
		x->title = read_title(x->path, x->number);
		if (!x->title)
			x->title = strdup(x->name);
		n++;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof *v, cmp_entry);
	*out = v;
	return n;
}

void db_notes_list_free(db_note_entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(e[i].name);
		free(e[i].path);
		free(e[i].title);
	}
	free(e);
}
