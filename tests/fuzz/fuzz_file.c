/* Any bytes through the format dispatcher: zip directory, pickle VM, .pt
 * (zip and legacy), safetensors, npy, npz. Every tensor the reader accepts
 * is then walked end to end, so a bounds check that lies is caught by ASan.
 * Then the same bytes as a file of a scratch tree go through `ls FILE`
 * (text and JSON), `ls TREE`, `compare` and `schema`, stdout and stderr
 * captured: every byte written must be one db_esc leaves as it is (newlines
 * apart), so no raw control, DEL, C1 or bidi character and no invalid UTF-8
 * from a dump reaches a terminal; the harness traps otherwise. */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db_cmd.h"
#include "db_esc.h"
#include "db_reader.h"
#include "fuzz_walk.h"

/* The scratch tree: ff_root/a/layers.0.fuzz.pt, and the capture file. */
static char ff_root[64], ff_tree[96], ff_file[128], ff_out[96];

/* The scratch tree goes when the process ends (fuzzer or regress test). */
static void ff_cleanup(void)
{
	unlink(ff_file);
	unlink(ff_out);
	rmdir(ff_tree);
	rmdir(ff_root);
}

static int ff_setup(void)
{
	if (ff_root[0])
		return 0;
	snprintf(ff_root, sizeof ff_root, "/tmp/fuzz_file.XXXXXX");
	if (!mkdtemp(ff_root))
		return -1;
	atexit(ff_cleanup);
	snprintf(ff_tree, sizeof ff_tree, "%s/a", ff_root);
	snprintf(ff_file, sizeof ff_file, "%s/layers.0.fuzz.pt", ff_tree);
	snprintf(ff_out, sizeof ff_out, "%s/out", ff_root);
	/* no cache is written (--no-cache, ls FILE); none read from the user's */
	setenv("XDG_CACHE_HOME", ff_root, 1);
	return mkdir(ff_tree, 0700);
}

/* Traps unless every byte of s[0..n) is one db_esc would leave as it is. */
static void ff_check(const char *s, size_t n, const char *what)
{
	char ch[DB_ESC_CHAR_MAX];
	for (size_t i = 0; i < n;) {
		if (s[i] == '\n') {
			i++;
			continue;
		}
		size_t k = db_esc_char(s + i, n - i, ch);
		if (strlen(ch) != k || memcmp(ch, s + i, k) != 0) {
			fprintf(stderr, "fuzz_file: %s wrote the raw byte 0x%02x at %zu\n", what,
			        (unsigned char)s[i], i);
			abort();
		}
		i += k;
	}
}

/* Runs a command with stdout and stderr going to ff_out, then checks them. */
static void ff_run(int (*cmd)(int, char **), char **argv, const char *what)
{
	int argc = 0;
	while (argv[argc])
		argc++;
	fflush(stdout);
	fflush(stderr);
	int fd = open(ff_out, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return;
	int so = dup(1), se = dup(2);
	dup2(fd, 1);
	dup2(fd, 2);
	cmd(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	off_t n = lseek(fd, 0, SEEK_END);
	char *buf = n > 0 ? malloc((size_t)n) : NULL;
	if (buf && pread(fd, buf, (size_t)n, 0) == n)
		ff_check(buf, (size_t)n, what);
	free(buf);
	close(fd);
}

static void ff_commands(const uint8_t *data, size_t size)
{
	if (ff_setup() < 0)
		return;
	FILE *f = fopen(ff_file, "wb");
	if (!f)
		return;
	size_t w = fwrite(data, 1, size, f);
	if (fclose(f) != 0 || w != size)
		return;
	char *ls_file[] = {"ls", ff_file, NULL};
	char *ls_json[] = {"ls", "--format", "json", ff_file, NULL};
	char *ls_tree[] = {"ls", ff_tree, NULL};
	char *compare[] = {"compare", "--no-cache", "-j", "1", ff_tree, ff_tree, NULL};
	char *schema[] = {"schema", "--no-cache", "-j", "1", ff_tree, ff_tree, NULL};
	ff_run(db_cmd_ls, ls_file, "ls FILE");
	ff_run(db_cmd_ls, ls_json, "ls --format json FILE");
	ff_run(db_cmd_ls, ls_tree, "ls TREE");
	ff_run(db_cmd_compare, compare, "compare");
	ff_run(db_cmd_schema, schema, "schema");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	db_file *f = NULL;
	db_err err;
	if (db_file_open_mem("fuzz.bin", data, size, &f, &err) == 0) {
		fuzz_walk_file(f);
		db_file_close(f);
	}
	ff_commands(data, size);
	return 0;
}
