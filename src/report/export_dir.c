/* The folder an export goes to by default: report/ beside the session,
 * unless report/ holds another session's report (two sessions in one
 * folder): then report-<session name>/, so neither overwrites the other's
 * (issue 34). Whose a report is, is read from its report.md ("- session:
 * `path`", absolute since this change; a relative one, written before, is
 * matched by its file name, as sessions that share a folder differ by it). */
#include "db_export.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_file.h"

/* The session path report.md in dir names (malloc'd), NULL when there is
 * none (no report, or one of no session). */
static char *report_session(const char *dir)
{
	char path[PATH_MAX], line[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s/report.md", dir);
	FILE *f = db_fopen_regular(path, NULL);
	char *out = NULL;
	for (int i = 0; f && !out && i < 40 && fgets(line, sizeof line, f); i++) {
		static const char key[] = "- session: `";
		if (strncmp(line, key, sizeof key - 1))
			continue;
		char *v = line + sizeof key - 1, *end = strrchr(v, '`');
		if (end && end > v) {
			*end = '\0';
			out = strdup(v);
		}
	}
	if (f)
		fclose(f);
	return out;
}

static const char *base_of(const char *p)
{
	const char *b = strrchr(p, '/');
	return b ? b + 1 : p;
}

/* Whether the report's session (as report.md names it) is ours. */
static bool same_session(const char *theirs, const char *ours)
{
	if (!ours)
		return false;
	char a[PATH_MAX], b[PATH_MAX];
	if (theirs[0] == '/' && realpath(ours, b))
		return !strcmp(theirs, b) || (realpath(theirs, a) && !strcmp(a, b));
	return !strcmp(base_of(theirs), base_of(ours));
}

/* "report-<name>": the session file's name less its extension; a file
 * named session.yaml (the automatic sessions) by its folder's name. */
static void own_name(const char *session, char *out, size_t len)
{
	char copy[PATH_MAX];
	snprintf(copy, sizeof copy, "%s", session);
	const char *b = base_of(copy);
	if (!strcmp(b, "session.yaml")) {
		copy[b - copy > 0 ? (size_t)(b - copy) - 1 : 0] = '\0';
		b = *copy ? base_of(copy) : "session";
	}
	size_t k = 0;
	for (const char *c = b; *c && k + 1 < len && k < 64; c++)
		out[k++] = (*c == '/' || (unsigned char)*c < 0x20) ? '_' : *c;
	out[k] = '\0';
	char *dot = strrchr(out, '.');
	if (dot && dot != out)
		*dot = '\0';
}

int db_export_dir_for(const char *session, const char *base_dir, char **out, char *note,
                      size_t note_len, db_err *err)
{
	char dir[PATH_MAX], own[96];
	const char *base = base_dir && *base_dir ? base_dir : ".";
	*out = NULL;
	if (note_len)
		note[0] = '\0';
	snprintf(dir, sizeof dir, "%s/report", base);
	char *theirs = report_session(dir);
	if (!theirs || same_session(theirs, session) || !session) {
		/* a session-less export over another's report: said, still its own folder */
		if (theirs && !session)
			return db_err_set(err, dir, NULL, -1, "holds the report of session %s; give "
			                  "the export a folder of its own (:export DIR, --out DIR)",
			                  theirs);
		free(theirs);
		return (*out = strdup(dir)) ? 0 : db_err_set(err, NULL, NULL, -1, "out of memory");
	}
	char other[PATH_MAX];
	snprintf(other, sizeof other, "%s", theirs);
	free(theirs);
	own_name(session, own, sizeof own);
	snprintf(dir, sizeof dir, "%s/report-%s", base, own);
	theirs = report_session(dir);
	if (theirs && !same_session(theirs, session)) {
		db_err_set(err, dir, NULL, -1, "holds the report of session %s, and %s/report that of "
		           "%s; give the export a folder of its own (--out DIR)", theirs, base, other);
		free(theirs);
		return -1;
	}
	free(theirs);
	if (note_len)
		snprintf(note, note_len, "%s", other);
	return (*out = strdup(dir)) ? 0 : db_err_set(err, NULL, NULL, -1, "out of memory");
}
