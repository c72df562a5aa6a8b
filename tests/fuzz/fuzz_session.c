/* Session YAML: libyaml events, our schema, predicate strings, steps and
 * marks. A session that parses must dump to text that parses again to the
 * same dump (sessions round-trip through every save), and must turn into a
 * bisect state or a clean error. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>

#include "db_bisect.h"
#include "db_session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	db_session *s = NULL;
	db_err err;
	if (db_session_parse((const char *)data, size, "fuzz.yaml", &s, &err))
		return 0;
	size_t len = 0;
	char *text = db_session_dump(s, &len);
	if (text) {
		db_session *s2 = NULL;
		if (db_session_parse(text, len, "dump.yaml", &s2, &err))
			__builtin_trap(); /* our own output must load */
		size_t len2 = 0;
		char *text2 = db_session_dump(s2, &len2);
		if (text2 && (len2 != len || memcmp(text, text2, len)))
			__builtin_trap(); /* and be a fixed point */
		free(text2);
		db_session_free(s2);
		free(text);
	}
	db_bisect b;
	if (db_session_to_bisect(s, &b, &err) == 0)
		db_bisect_free(&b);
	db_session_view_get(s, "cursor");
	db_session_find_mark(s, 0, NULL);
	db_session_free(s);
	return 0;
}
