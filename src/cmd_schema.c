/* dumpbisect schema REF TARGET: names, shapes and dtypes only — what is in
 * one tree and not the other, shape and dtype differences, unreadable
 * files — before any number is computed (the seed's Phase 1). */
#include "db_cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_util.h"
#include "db_compare.h"
#include "db_json.h"

static const char usage_text[] =
	"usage: dumpbisect schema REF [TARGET] [options]\n"
	"\n"
	"List tensors only in the reference, only in the target, with another\n"
	"shape, with another dtype, or unreadable. No metrics are computed.\n"
	"\n"
	"options:\n"
	"  --profile P          profile name or YAML file (default: auto-detect)\n"
	"  --filter RE          only stages (or inner keys) matching the PCRE2 regex\n"
	"  --format F           table (default) or json\n"
	"  -h, --help           this help\n"
	"\n"
	"exit status: 0 the schemas agree, 1 they differ, 2 usage or input error.\n";

static const char *kind_of(const db_pair *p)
{
	switch (p->status) {
	case DB_ST_REF_ONLY: return "ref_only";
	case DB_ST_TARGET_ONLY: return "target_only";
	case DB_ST_SHAPE_MISMATCH: return "shape";
	case DB_ST_ERROR: return "error";
	case DB_ST_OK: return p->dtype_differs ? "dtype" : NULL;
	}
	return NULL;
}

int db_cmd_schema(int argc, char **argv)
{
	const char *profile = NULL, *filter = NULL, *format = "table";
	bool help = false;
	const db_opt opts[] = {
		{"profile", 0, true, &profile, NULL},
		{"filter", 0, true, &filter, NULL},
		{"format", 0, true, &format, NULL},
		{"help", 'h', false, NULL, &help},
	};
	const char *pos[2];
	int npos;
	char msg[256];
	if (db_opts_parse(argc, argv, opts, sizeof opts / sizeof *opts, pos, 2, &npos, msg,
	                  sizeof msg) != 0) {
		fprintf(stderr, "dumpbisect schema: %s\n%s", msg, usage_text);
		return 2;
	}
	if (help) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (npos < 1) {
		fprintf(stderr, "dumpbisect schema: REF is missing\n%s", usage_text);
		return 2;
	}
	bool json = !strcmp(format, "json");
	if (!json && strcmp(format, "table")) {
		fprintf(stderr, "dumpbisect schema: --format must be table or json\n");
		return 2;
	}
	db_compare_opts o = {.profile = profile, .filter = filter};
	db_compare *c;
	db_err err = {{0}};
	if (db_compare_open(pos[0], npos > 1 ? pos[1] : NULL, &o, &c, &err) != 0) {
		fprintf(stderr, "dumpbisect schema: %s\n", err.msg);
		return 2;
	}
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
		printf("profile %s (%s)\n", c->profile->name, c->why);
	}
	size_t nd = 0;
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *p = &c->pairs[i];
		const char *kind = kind_of(p);
		if (!kind)
			continue;
		int k = p->status == DB_ST_REF_ONLY ? 0 : p->status == DB_ST_TARGET_ONLY ? 1
		      : p->status == DB_ST_SHAPE_MISMATCH ? 2 : p->status == DB_ST_ERROR ? 4 : 3;
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
		switch (p->status) {
		case DB_ST_REF_ONLY:
			printf("ref_only     %s  %s %s\n", lab, sr, dr);
			break;
		case DB_ST_TARGET_ONLY:
			printf("target_only  %s  %s %s\n", lab, stg, dt);
			break;
		case DB_ST_SHAPE_MISMATCH:
			printf("shape        %s  ref %s target %s\n", lab, sr, stg);
			break;
		case DB_ST_ERROR:
			printf("error        %s  %s\n", lab, p->error ? p->error : "");
			break;
		case DB_ST_OK:
			printf("dtype        %s  ref %s target %s\n", lab, dr, dt);
			break;
		}
		/* a shape mismatch can hide a dtype change too */
		if (p->status == DB_ST_SHAPE_MISMATCH && p->dtype_ref != p->dtype_tgt)
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
