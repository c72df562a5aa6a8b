/* dumpbisect schema REF TARGET: names, shapes and dtypes only — what is in
 * one tree and not the other, shape and dtype differences, unreadable
 * files — before any number is computed (the seed's Phase 1). */
#include "db_cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_util.h"
#include "db_compare.h"
#include "db_dequant.h"
#include "db_esc.h"
#include "db_json.h"

/* A batch slot (db_slot.h) or a transposed weight (db_pair.tposed) is
 * measured by compare, but its shapes differ: the schema names it as a
 * shape change. */
static db_status status_of(const db_pair *p)
{
	return p->slot.side || p->tposed ? DB_ST_SHAPE_MISMATCH : p->status;
}

static const char *kind_of(const db_pair *p)
{
	switch (status_of(p)) {
	case DB_ST_REF_ONLY: return "ref_only";
	case DB_ST_TARGET_ONLY: return "target_only";
	case DB_ST_SHAPE_MISMATCH: return "shape";
	case DB_ST_ERROR: return "error";
	case DB_ST_NOT_COMPARABLE: return NULL;    /* a layout difference, not the schema's */
	case DB_ST_OK: return p->dtype_differs ? "dtype" : NULL;
	}
	return NULL;
}

int db_cmd_schema(int argc, char **argv)
{
	const char *format = "table";
	db_cmp_args ca = {0};
	const db_opt opts[] = {
		DB_CMP_OPTS(ca, DB_PROFILE_HELP),
		{"format", 0, "F", &format, NULL, "table (default) or json"},
	};
	const db_cmd cmd = {
		.name = "schema",
		.args = "REF [TARGET] [options]",
		.desc = "List tensors only in one tree, with another shape or dtype, or unreadable.",
		.exit = "0 the schemas agree, 1 they differ, 2 usage or input error.",
		.opts = opts,
		.n_opts = sizeof opts / sizeof *opts,
		.max_pos = 2,
	};
	const char *pos[2];
	int npos, rc = db_cmd_parse(&cmd, argc, argv, pos, &npos);
	if (rc >= 0)
		return rc;
	if (npos < 1)
		return db_cmd_usage_error(&cmd, "REF is missing");
	int fmt = db_cmd_format(&cmd, format, DB_FMT_BIT(DB_FMT_TABLE) | DB_FMT_BIT(DB_FMT_JSON));
	if (fmt < 0)
		return 2;
	bool json = fmt == DB_FMT_JSON;
	db_compare *c;
	if ((rc = db_cmd_open_compare(&cmd, &ca, pos, npos, &c)) != 0)
		return rc;
	size_t counts[5] = {0};     /* ref_only, target_only, shape, dtype, error */
	if (json) {
		fputs("{\"profile\": ", stdout);
		db_json_str(stdout, c->profile->name);
		fputs(", \"ref\": ", stdout);
		db_json_str(stdout, c->ref_root);
		fputs(", \"target\": ", stdout);
		db_json_str(stdout, c->tgt_root);
		printf(", \"pairs\": %zu, \"differences\": [", c->n_pairs);
	} else {
		printf("profile %s (%s)\n", db_esc(c->profile->name), db_esc(c->why));
	}
	size_t nd = 0;
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *p = &c->pairs[i];
		const char *kind = kind_of(p);
		if (!kind)
			continue;
		db_status st = status_of(p);
		int k = st == DB_ST_REF_ONLY ? 0 : st == DB_ST_TARGET_ONLY ? 1
		      : st == DB_ST_SHAPE_MISMATCH ? 2 : st == DB_ST_ERROR ? 4 : 3;
		counts[k]++;
		char sr[128], stg[128], lab[512];
		db_fmt_shape(p->ndim_ref, p->shape_ref, sr, sizeof sr);
		db_fmt_shape(p->ndim_tgt, p->shape_tgt, stg, sizeof stg);
		const char *dr = p->ndim_ref >= 0 ? db_dtype_name(p->dtype_ref) : NULL;
		const char *dt = p->ndim_tgt >= 0 ? db_dtype_name(p->dtype_tgt) : NULL;
		if (json) {
			char *rn = db_item_name(p->ref), *tn = db_item_name(p->tgt);
			fputs(nd++ ? ",\n  {\"kind\": " : "\n  {\"kind\": ", stdout);
			db_json_str(stdout, kind);
			fputs(", \"phase\": ", stdout);
			db_json_field(stdout, p->f.phase, false);
			fputs(", \"pass\": ", stdout);
			db_json_field(stdout, p->f.pass, true);
			if (p->merged || p->f.rank < 0)
				fputs(", \"rank\": null", stdout);
			else
				printf(", \"rank\": %d", p->f.rank);
			if (p->f.layer < 0)
				fputs(", \"layer\": null", stdout);
			else
				printf(", \"layer\": %d", p->f.layer);
			fputs(", \"stage\": ", stdout);
			db_json_str(stdout, p->f.stage);
			fputs(", \"ref_name\": ", stdout);
			db_json_str(stdout, rn);
			fputs(", \"target_name\": ", stdout);
			db_json_str(stdout, tn);
			fputs(", \"shape_ref\": ", stdout);
			db_json_shape(stdout, p->ndim_ref, p->shape_ref);
			fputs(", \"shape_target\": ", stdout);
			db_json_shape(stdout, p->ndim_tgt, p->shape_tgt);
			fputs(", \"dtype_ref\": ", stdout);
			db_json_str(stdout, dr);
			fputs(", \"dtype_target\": ", stdout);
			db_json_str(stdout, dt);
			fputs(", \"error\": ", stdout);
			db_json_str(stdout, p->status == DB_ST_ERROR ? p->error : NULL);
			fputc('}', stdout);
			free(rn);
			free(tn);
			continue;
		}
		db_pair_label(p, lab, sizeof lab);
		switch (st) {
		case DB_ST_REF_ONLY:
			printf("ref_only     %s  %s %s\n", lab, sr, dr);
			break;
		case DB_ST_TARGET_ONLY:
			printf("target_only  %s  %s %s\n", lab, stg, dt);
			break;
		case DB_ST_SHAPE_MISMATCH:
			printf("shape        %s  ref %s target %s%s\n", lab, sr, stg,
			       p->tposed ? " (transposed: compare reads it transposed)" : "");
			break;
		case DB_ST_ERROR:
			printf("error        %s  %s\n", lab, db_esc(p->error));
			break;
		case DB_ST_OK:
			printf("dtype        %s  ref %s target %s", lab, dr, dt);
			/* quantized codes: which rule dequantizes them for compare */
			for (int sd = 0; sd < 2; sd++) {
				const db_qgroup *g = db_pair_qgroup(p, sd == 0);
				if (g)
					printf(" (%s: %s codes, compared dequantized)",
					       sd ? "target" : "ref", g->rule->name);
			}
			putchar('\n');
			break;
		case DB_ST_NOT_COMPARABLE:     /* kind_of skips it */
			break;
		}
		/* a shape mismatch can hide a dtype change too */
		if (st == DB_ST_SHAPE_MISMATCH && p->dtype_ref != p->dtype_tgt)
			printf("dtype        %s  ref %s target %s\n", lab, dr, dt);
	}
	size_t total = counts[0] + counts[1] + counts[2] + counts[3] + counts[4];
	if (json)
		printf("\n], \"ref_only\": %zu, \"target_only\": %zu, \"shape\": %zu, \"dtype\": %zu, "
		       "\"error\": %zu}\n", counts[0], counts[1], counts[2], counts[3], counts[4]);
	else
		printf("%s%zu pairs checked: %zu ref-only, %zu target-only, %zu shape, %zu dtype, "
		       "%zu unreadable\n", total ? "\n" : "", c->n_pairs, counts[0], counts[1],
		       counts[2], counts[3], counts[4]);
	db_compare_free(c);
	return total ? 1 : 0;
}
