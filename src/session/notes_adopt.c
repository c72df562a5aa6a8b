/* Notes live beside their session (notes/ in the session file's folder).
 * Before issue 34, a workbench without --session kept its session under
 * $XDG_STATE_HOME/dumpbisect but wrote its notes into notes/ of the folder
 * it ran in, listed relative to it: opened from anywhere else they were
 * "0 notes". db_notes_adopt brings such notes beside their session: moved
 * (never over another file: a name taken gets the next number) with a
 * symbolic link left where they were, so nothing the user knew of is gone. */
#include "db_notes.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db_session.h"

static bool regular(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Copy src to dst, created exclusively (a cross-device move). */
static int copy_excl(const char *src, const char *dst)
{
	int in = open(src, O_RDONLY | O_NOFOLLOW), out = -1, rc = -1;
	if (in >= 0)
		out = open(dst, O_WRONLY | O_CREAT | O_EXCL, 0644);
	char buf[65536];
	ssize_t n;
	if (out >= 0) {
		while ((n = read(in, buf, sizeof buf)) > 0)
			if (write(out, buf, (size_t)n) != n)
				break;
		rc = n == 0 && fsync(out) == 0 ? 0 : -1;
		if (close(out) != 0)
			rc = -1;
		if (rc < 0)
			unlink(dst);
	}
	if (in >= 0)
		close(in);
	return rc;
}

/* Move the note src into dir as its own name, or under the next free
 * number when that is taken; *dst gets the new path. Never overwrites:
 * link() and O_EXCL fail on a name that exists. */
static int move_note(const char *src, const char *dir, char *dst, size_t len)
{
	const char *name = strrchr(src, '/') ? strrchr(src, '/') + 1 : src;
	const char *rest = strchr(name, '_');
	for (int tries = 0; tries < 100; tries++) {
		if (!tries)
			snprintf(dst, len, "%s/%s", dir, name);
		else
			snprintf(dst, len, "%s/%02d%s", dir, db_notes_next_number(dir),
			         rest ? rest : "_note.md");
		if (link(src, dst) == 0 || (errno == EXDEV && copy_excl(src, dst) == 0)) {
			if (unlink(src) < 0 || symlink(dst, src) < 0) {
				/* both names stay: the note is not lost either way */
			}
			return 0;
		}
		if (errno != EEXIST)
			return -1;
	}
	return -1;
}

int db_notes_adopt(db_session *s, const char *dir, char *msg, size_t len)
{
	char *own = dir ? strdup(dir) : db_notes_dir_for(s->path);
	char adir[PATH_MAX], real[PATH_MAX], dst[PATH_MAX], first_lost[PATH_MAX] = "";
	int moved = 0, lost = 0;
	if (msg && len)
		msg[0] = '\0';
	if (!own)
		return -1;
	bool have_dir = realpath(own, adir) != NULL;
	for (size_t i = 0; i < s->n_notes; i++) {
		const char *p = s->notes[i];
		const char *name = strrchr(p, '/') ? strrchr(p, '/') + 1 : p;
		char *fixed = NULL;
		size_t dl = strlen(adir);
		if (have_dir && realpath(p, real) && !strncmp(real, adir, dl) && real[dl] == '/') {
			/* (a) already beside the session: listed by its full path */
			fixed = strcmp(p, real) ? strdup(real) : NULL;
		} else if (snprintf(dst, sizeof dst, "%s/%s", have_dir ? adir : own, name) > 0 &&
		           regular(dst)) {
			/* (b) there under its name (listed relative to another folder) */
			fixed = strcmp(p, dst) ? strdup(dst) : NULL;
		} else if (regular(p)) {
			/* (c) a note of the folder the workbench ran in: brought over */
			if (!have_dir) {
				db_err err;
				if (db_notes_mkdir(own, &err) < 0 || !realpath(own, adir))
					break;
				have_dir = true;
			}
			if (move_note(p, adir, dst, sizeof dst) < 0)
				continue;
			fixed = strdup(dst);
			moved++;
		} else {
			if (!lost++)
				snprintf(first_lost, sizeof first_lost, "%s", p);
			continue;
		}
		if (fixed) {
			free(s->notes[i]);
			s->notes[i] = fixed;
		}
	}
	if (msg && len && moved)
		snprintf(msg, len, "moved %d note%s beside the session into %s (a link stays where "
		         "%s)", moved, moved == 1 ? "" : "s", adir, moved == 1 ? "it was" : "they were");
	if (msg && len && lost) {
		size_t k = strlen(msg);
		snprintf(msg + k, len - k, "%s%d note%s the session lists not found from here (%s%s): "
		         "written by a workbench without --session in another folder; open it once "
		         "from there to bring %s beside the session", k ? "; " : "", lost,
		         lost == 1 ? "" : "s", first_lost, lost > 1 ? ", ..." : "",
		         lost == 1 ? "it" : "them");
	}
	free(own);
	return moved;
}
