/* --slots: how each pass of the tree was read (split into N slots, or
 * skipped and why), as text (compare's header) and JSON ("slots"). */
#include "db_export.h"

#include <stdio.h>

#include "db_esc.h"
#include "db_json.h"

void db_slots_text(FILE *out, const db_compare *c)
{
	if (!c->n_slots)
		return;
	fprintf(out, "slots   %d in one tree: slot 0's rows (ref side) against slot k's (target "
	        "side), judged bitwise; slot k is shown as rank k\n", c->n_slots);
	for (size_t i = 0; i < c->n_slot_passes; i++) {
		const db_slot_pass *s = &c->slot_passes[i];
		fprintf(out, "  %s%s%spass %s: %s", s->used ? "" : "skipped ", s->phase[0] ? "phase " : "",
		        s->phase[0] ? db_esc(s->phase) : "", db_esc(s->pass), db_esc(s->why));
		if (s->used)
			fprintf(out, " (%zu slot pairs; %zu tensors without the batch's token rows left "
			        "out)", s->n_pairs, s->n_left);
		fputc('\n', out);
	}
}

void db_slots_json(FILE *out, const db_compare *c)
{
	if (!c->n_slots)
		return;
	fprintf(out, ", \"slots\": {\"n\": %d, \"passes\": [", c->n_slots);
	for (size_t i = 0; i < c->n_slot_passes; i++) {
		const db_slot_pass *s = &c->slot_passes[i];
		fputs(i ? ", {\"phase\": " : "{\"phase\": ", out);
		db_json_str(out, s->phase[0] ? s->phase : NULL);
		fputs(", \"pass\": ", out);
		db_json_field(out, s->pass, true);
		fprintf(out, ", \"used\": %s, \"why\": ", s->used ? "true" : "false");
		db_json_str(out, s->why);
		fprintf(out, ", \"pairs\": %zu, \"left_out\": %zu}", s->n_pairs, s->n_left);
	}
	fputs("]}", out);
}
