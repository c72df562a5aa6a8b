/* Profile YAML: libyaml events, our schema checks, PCRE2 compilation, and a
 * match of a fixed path and key with whatever parsed. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "db_profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	db_profile *p = NULL;
	db_err err;
	if (db_profile_parse((const char *)data, size, "fuzz.yaml", &p, &err) != 0)
		return 0;
	db_fields f;
	if (db_profile_match_path(p, "forward_pass_id=1___rank=0___name=x___dump_index=2___layer_id=3.pt", &f, NULL) == 1)
		db_profile_match_key(p, "model.layers.3.self_attn", &f, NULL);
	char *cmd = db_profile_dump_command(p, 7);
	(void)cmd;
	free(cmd);
	db_profile_free(p);
	return 0;
}
