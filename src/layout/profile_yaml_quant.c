/* A profile's `quant:` rules: which companion tensors scale a quantized
 * weight, and how (db_quant.h, man 5 dumpbisect-profile). */
#include "profile_yaml_priv.h"

#include <stdlib.h>
#include <string.h>

static const char *const QUANT_KEYS =
	"name, of, as, scale, scale2, zero, also, values, scale_type, block, group, "
	"invert, nibbles, split, pack_dim, zero_pack_dim, order, transposed, offset, "
	"zero_offset, group_index";

static int get_bool(ctx *c, const yaml_node_t *vn, const char *what, bool *out)
{
	const char *s = yp_scalar(vn);
	if (s && (!strcmp(s, "true") || !strcmp(s, "false"))) {
		*out = !strcmp(s, "true");
		return 0;
	}
	return yp_fail(c, vn, "%s: expected true or false", what);
}

/* order: a permutation of 0..7, nibble k holding element order[k] */
static int get_order(ctx *c, const yaml_node_t *vn, uint8_t *order)
{
	if (vn->type != YAML_SEQUENCE_NODE ||
	    vn->data.sequence.items.top - vn->data.sequence.items.start != 8)
		return yp_fail(c, vn, "quant.order: expected eight numbers, a permutation of 0..7");
	unsigned seen = 0;
	for (int i = 0; i < 8; i++) {
		int v;
		if (yp_get_int(c, yp_node(c, vn->data.sequence.items.start[i]), "quant.order", 0, 7, &v))
			return -1;
		if (seen & (1u << v))
			return yp_fail(c, vn, "quant.order: %d twice, expected a permutation of 0..7", v);
		seen |= 1u << v;
		order[i] = (uint8_t)v;
	}
	return 0;
}

static int quant_pair(ctx *c, const char *k, const yaml_node_t *kn, const yaml_node_t *vn, void *arg)
{
	db_quant_rule *r = arg;
	if (!strcmp(k, "name"))
		return yp_get_str(c, vn, "quant.name", &r->name);
	if (!strcmp(k, "of"))
		return yp_get_str(c, vn, "quant.of", &r->of);
	if (!strcmp(k, "as"))
		return yp_get_str(c, vn, "quant.as", &r->as);
	if (!strcmp(k, "scale"))
		return yp_get_str(c, vn, "quant.scale", &r->scale);
	if (!strcmp(k, "scale2"))
		return yp_get_str(c, vn, "quant.scale2", &r->scale2);
	if (!strcmp(k, "zero"))
		return yp_get_str(c, vn, "quant.zero", &r->zero);
	if (!strcmp(k, "also"))
		return yp_get_str_list(c, vn, "quant.also", &r->also, &r->n_also);
	if (!strcmp(k, "values")) {
		const char *s = yp_scalar(vn);
		if (s && !strcmp(s, "fp8"))
			r->values = DB_QV_FP8;
		else if (s && !strcmp(s, "e2m1"))
			r->values = DB_QV_E2M1;
		else if (s && !strcmp(s, "int8"))
			r->values = DB_QV_INT8;
		else if (s && !strcmp(s, "int4"))
			r->values = DB_QV_INT4;
		else
			return yp_fail(c, vn, "quant.values: expected fp8, e2m1, int8 or int4");
		return 0;
	}
	if (!strcmp(k, "scale_type")) {
		const char *s = yp_scalar(vn);
		if (s && !strcmp(s, "stored"))
			r->scale_type = DB_QS_STORED;
		else if (s && !strcmp(s, "e8m0"))
			r->scale_type = DB_QS_E8M0;
		else if (s && !strcmp(s, "e4m3"))
			r->scale_type = DB_QS_E4M3;
		else
			return yp_fail(c, vn, "quant.scale_type: expected stored, e8m0 or e4m3");
		return 0;
	}
	if (!strcmp(k, "block")) {
		if (vn->type != YAML_SEQUENCE_NODE ||
		    vn->data.sequence.items.top - vn->data.sequence.items.start != 2)
			return yp_fail(c, vn, "quant.block: expected [rows, cols]");
		for (int i = 0; i < 2; i++)
			if (yp_get_int(c, yp_node(c, vn->data.sequence.items.start[i]), "quant.block",
			               1, 1 << 24, &r->block[i]))
				return -1;
		return 0;
	}
	if (!strcmp(k, "group")) {
		r->block[0] = 1;
		return yp_get_int(c, vn, "quant.group", 1, 1 << 24, &r->block[1]);
	}
	if (!strcmp(k, "invert"))
		return get_bool(c, vn, "quant.invert", &r->invert);
	if (!strcmp(k, "nibbles")) {
		const char *s = yp_scalar(vn);
		if (s && !strcmp(s, "low_first"))
			r->high_first = false;
		else if (s && !strcmp(s, "high_first"))
			r->high_first = true;
		else
			return yp_fail(c, vn, "quant.nibbles: expected low_first or high_first");
		return 0;
	}
	if (!strcmp(k, "split"))
		return yp_get_int(c, vn, "quant.split", 1, 1 << 20, &r->split);
	if (!strcmp(k, "pack_dim"))
		return yp_get_int(c, vn, "quant.pack_dim", 0, 1, &r->pack_dim);
	if (!strcmp(k, "zero_pack_dim"))
		return yp_get_int(c, vn, "quant.zero_pack_dim", 0, 1, &r->zero_pack_dim);
	if (!strcmp(k, "order"))
		return get_order(c, vn, r->order);
	if (!strcmp(k, "transposed"))
		return get_bool(c, vn, "quant.transposed", &r->transposed);
	if (!strcmp(k, "offset"))
		return yp_get_int(c, vn, "quant.offset", -15, 15, &r->offset);
	if (!strcmp(k, "zero_offset"))
		return yp_get_int(c, vn, "quant.zero_offset", -15, 15, &r->zero_offset);
	if (!strcmp(k, "group_index"))
		return yp_get_str(c, vn, "quant.group_index", &r->group_index);
	return yp_fail(c, kn, "quant: unknown key '%s' (known: %s)", k, QUANT_KEYS);
}

int yp_get_quant(ctx *c, const yaml_node_t *n)
{
	db_profile *p = c->p;
	if (n->type != YAML_SEQUENCE_NODE)
		return yp_fail(c, n, "quant: expected a list of {name, of, scale, values, ...}");
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		const yaml_node_t *e = yp_node(c, *it);
		db_quant_rule *a = realloc(p->quant, (p->n_quant + 1) * sizeof *a);
		if (!a)
			return yp_oom(c, e);
		p->quant = a;
		db_quant_rule *r = &a[p->n_quant++];
		memset(r, 0, sizeof *r);
		r->pack_dim = r->zero_pack_dim = 1;
		for (int k = 0; k < 8; k++)
			r->order[k] = (uint8_t)k;
		if (yp_each_pair(c, e, "quant", quant_pair, r))
			return -1;
		if (!r->name || !r->scale || !r->values)
			return yp_fail(c, e, "quant: name, scale and values are required");
		if (!r->of && !(r->of = strdup("weight")))
			return yp_oom(c, e);
		if (!r->as && !(r->as = strdup(r->of)))
			return yp_oom(c, e);
		if (!*r->of || !*r->scale)
			return yp_fail(c, e, "quant: of and scale must not be empty");
		if (r->n_also > 4)
			return yp_fail(c, e, "quant.also: at most 4 names");
		if (r->split && r->values != DB_QV_E2M1)
			return yp_fail(c, e, "quant.split: for packed e2m1 codes only");
		if (r->values == DB_QV_INT4 && (r->block[0] || r->block[1]))
			return yp_fail(c, e, "quant: int4 groups follow the shapes (block and group "
			               "are for the other values)");
	}
	return 0;
}

void yp_free_quant(db_profile *p)
{
	for (size_t i = 0; i < p->n_quant; i++) {
		db_quant_rule *r = &p->quant[i];
		free(r->name);
		free(r->of);
		free(r->as);
		free(r->scale);
		free(r->scale2);
		free(r->zero);
		free(r->group_index);
		yp_free_list(r->also, r->n_also);
	}
	free(p->quant);
}
