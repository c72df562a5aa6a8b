/* The TUI's key parser (ui/base/keys.c: key names, key strings, the keymap file)
 * and the key-script loader (ui/base/script.c). They live in the binary, not in
 * dbcore, so their sources are compiled into this harness directly.
 * Properties: every parsed key has a name that parses back to the same key;
 * loading any keymap file or script is an error message, never a crash. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* actions.c has a static table named like curses' raw() */
#define raw actions_raw
#include "../../ui/base/actions.c"
#undef raw
#include "../../ui/base/keys.c"
#include "../../ui/base/script.c"

static char path[64];
/* The default bindings, made once: building them per run parses every
 * action's keys and cost most of the time; each run restores this copy. */
static struct binding *defaults;
static size_t n_defaults;

static void restore_defaults(void)
{
	if (!defaults) {
		tui_bind_defaults();
		n_defaults = n_binds;
		defaults = malloc(n_binds * sizeof *defaults);
		if (!defaults)
			abort();
		memcpy(defaults, binds, n_binds * sizeof *defaults);
	}
	if (cap_binds < n_defaults) {
		struct binding *nb = realloc(binds, n_defaults * sizeof *nb);
		if (!nb)
			abort();
		binds = nb, cap_binds = n_defaults;
	}
	memcpy(binds, defaults, n_defaults * sizeof *binds);
	n_binds = n_defaults;
}

static int write_tmp(const uint8_t *data, size_t size)
{
	if (!path[0]) {
		/* tmpfs when there is one: a file is written per run */
		const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
		snprintf(path, sizeof path, "%s/fuzz_keys.%ld", dir, (long)getpid());
	}
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	size_t w = fwrite(data, 1, size, f);
	fclose(f);
	return w == size ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	int ks[256];
	const char *bad = NULL;
	int n = tui_keys_parse(s, ks, 256, &bad);
	if (n < 0 && (bad < s || bad > s + size))
		__builtin_trap();
	for (int i = 0; i < n; i++) {
		char name[64];
		tui_key_name(ks[i], name, sizeof name);
		const char *p = name;
		int back = tui_key_parse(&p);
		if (back != ks[i] || *p)
			__builtin_trap(); /* a key's name must parse back to the key */
	}
	free(s);
	if (write_tmp(data, size) == 0) {
		char err[512];
		restore_defaults();
		tui_keymap_load(path, err, sizeof err);
		tui_key_action(KM_GENERIC, 'q');
		if (script_open(path, err, sizeof err) == 0) {
			while (script_next() >= 0)
				;
		}
		script_free();
	}
	return 0;
}
