/* Every input the fuzzers ever crashed on, replayed under the normal build
 * through the very same entry points (the harness sources are compiled in
 * here with LLVMFuzzerTestOneInput renamed): every file in tests/fuzz/regress/<harness>/.
 * A crash, ASan report or a harness property trap fails this test.
 *
 * fuzz_keys also needs ui/base/script.c, which calls curses; the test binary has
 * no curses, so its inputs replay through the key parser and the keymap
 * loader only (ui/base/keys.c and actions.c use curses' key codes, no calls). */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#define LLVMFuzzerTestOneInput fz_file
#include "fuzz/fuzz_file.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fz_zip
#include "fuzz/fuzz_zip.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fz_pickle
#include "fuzz/fuzz_pickle.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fz_safetensors
#include "fuzz/fuzz_safetensors.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fz_npy
#include "fuzz/fuzz_npy.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fz_profile
#include "fuzz/fuzz_profile.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fz_session
#include "fuzz/fuzz_session.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fz_msprobe
#include "fuzz/fuzz_msprobe.c"
#undef LLVMFuzzerTestOneInput

/* actions.c has a static table named like curses' raw() */
#define raw actions_raw
#include "../ui/base/actions.c"
#undef raw
#include "../ui/base/keys.c"

#define REGRESS SRCDIR "/tests/fuzz/regress"

/* The key parts of fuzz_keys without the script loader (see above). */
static int fz_keys(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	assert_non_null(s);
	memcpy(s, data, size);
	s[size] = '\0';
	int ks[256];
	int n = tui_keys_parse(s, ks, 256, NULL);
	for (int i = 0; i < n; i++) {
		char name[64];
		tui_key_name(ks[i], name, sizeof name);
	}
	free(s);
	char path[] = "/tmp/db_fuzz_regress_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, size), (ssize_t)size);
	close(fd);
	char err[512];
	tui_bind_defaults();
	tui_keymap_load(path, err, sizeof err);
	tui_bindings_free();
	unlink(path);
	return 0;
}

static uint8_t *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long sz = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = malloc(sz > 0 ? (size_t)sz : 1);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, (size_t)sz, f), (size_t)sz);
	fclose(f);
	*n = (size_t)sz;
	return b;
}

/* Replay every file of regress/<name> through fn; returns the count. */
static int replay(const char *name, int (*fn)(const uint8_t *, size_t))
{
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/%s", REGRESS, name);
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char path[2048];
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		struct stat st;
		if (stat(path, &st) || !S_ISREG(st.st_mode))
			continue;
		size_t len;
		uint8_t *b = slurp(path, &len);
		print_message("replay %s/%s (%zu bytes)\n", name, de->d_name, len);
		fn(b, len);
		fn(b, len);     /* twice: state left over from a run must not matter */
		free(b);
		n++;
	}
	closedir(d);
	return n;
}

static void test_replay_all(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		int (*fn)(const uint8_t *, size_t);
	} hs[] = {
		{"fuzz_file", fz_file}, {"fuzz_zip", fz_zip}, {"fuzz_pickle", fz_pickle},
		{"fuzz_safetensors", fz_safetensors}, {"fuzz_npy", fz_npy},
		{"fuzz_profile", fz_profile}, {"fuzz_session", fz_session},
		{"fuzz_keys", fz_keys}, {"fuzz_msprobe", fz_msprobe},
	};
	int total = 0;
	for (size_t i = 0; i < sizeof hs / sizeof hs[0]; i++)
		total += replay(hs[i].name, hs[i].fn);
	assert_true(total >= 1);
}

/* fuzz_keys found it: Ctrl-\ Ctrl-] Ctrl-^ Ctrl-_ (28..31) are parsed from
 * raw bytes but tui_key_name calls them "<C-|>" "<C-}>" "<C-~>" "<C-\x7f>",
 * which tui_key_parse refuses, so the help screen shows unusable names and
 * they cannot be written in a keymap file. Owner: ui/base/keys.c. */
static void test_key_names_parse_back(void **state)
{
	(void)state;
	for (int k = 1; k < 0x80; k++) {
		char name[64];
		tui_key_name(k, name, sizeof name);
		const char *p = name;
		int back = tui_key_parse(&p);
		if (back != k || *p)
			fail_msg("key %d is named '%s', which parses as %d", k, name, back);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replay_all),
		cmocka_unit_test(test_key_names_parse_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
