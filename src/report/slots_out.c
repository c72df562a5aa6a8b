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
	if (c->slots_alone)
		fprintf(out, "slots   %d in the target's batch, each against the reference (the prompt "
		        "run alone), judged bitwise; slot k is shown as rank k%s\n  aligned: %s\n",
		        c->n_slots, c->slots_found ? " (found from the data: the passes do not "
		        "line up by name; --slots N forces another N)" : "", db_esc(c->slots_align));
	else
		fprintf(out, "slots   %d in one tree: slot 0's rows (ref side) against slot k's (target "
		        "side), judged bitwise; slot k is shown as rank k\n", c->n_slots);
	for (size_t i = 0; i < c->n_slot_passes; i++) {
		const db_slot_pass *s = &c->slot_passes[i];
		if (!s->pass[0]) {      /* an alone pass nothing in the batch holds */
			fprintf(out, "  left over: %s\n", db_esc(s->why));
			continue;
		}
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
	fprintf(out, ", \"slots\": {\"n\": %d, \"alone\": %s, \"found\": %s, ", c->n_slots,
	        c->slots_alone ? "true" : "false", c->slots_found ? "true" : "false");
	if (c->slots_alone) {
		fputs("\"aligned\": ", out);
		db_json_str(out, c->slots_align);
		fputs(", ", out);
	}
	fputs("\"passes\": [", out);
	for (size_t i = 0; i < c->n_slot_passes; i++) {
		const db_slot_pass *s = &c->slot_passes[i];
		fputs(i ? ", {\"phase\": " : "{\"phase\": ", out);
		db_json_str(out, s->phase[0] ? s->phase : NULL);
		fputs(", \"pass\": ", out);
		db_json_field(out, s->pass, true);
		if (c->slots_alone) {
			fputs(", \"ref_pass\": ", out);
			db_json_field(out, s->ref_pass, true);
		}
		fprintf(out, ", \"used\": %s, \"why\": ", s->used ? "true" : "false");
		db_json_str(out, s->why);
		fprintf(out, ", \"pairs\": %zu, \"left_out\": %zu}", s->n_pairs, s->n_left);
	}
	fputs("]}", out);
}
