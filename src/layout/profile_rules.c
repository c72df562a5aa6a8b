/* A profile's per-stage rules (execution order, hierarchy, input and
 * routing ids, shards, layer classes, the dump command) and pass
 * selection: answers about stages the index already named. */
#include "db_profile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_re.h"

/* A per-stage rule's regex (compiled from pat) on stage: true on a match.
 * A limit hit is kept in p (the first one; db_profile_regex_error) and
 * then every such rule answers false at once: the caller reports it. */
static bool stage_match(const db_profile *p, const void *re, const char *pat, const char *s)
{
	if (!re || !s || atomic_load(&((db_profile *)p)->re_error))
		return false;
	db_err e;
	int rc = db_re_search(re, pat, s, NULL, &e);
	if (rc >= 0)
		return rc == 1;
	char *msg = strdup(e.msg);
	void *none = NULL;
	if (!msg || !atomic_compare_exchange_strong(&((db_profile *)p)->re_error, &none, msg))
		free(msg);
	return false;
}

const char *db_profile_regex_error(const db_profile *p)
{
	return p ? atomic_load(&((db_profile *)p)->re_error) : NULL;
}

/* ---- per-stage rules ---- */

int db_profile_stage_pos(const db_profile *p, const char *stage)
{
	for (size_t i = 0; i < p->n_stage_order; i++)
		if (db_glob_match(p->stage_order[i], stage))
			return (int)i;
	return -1;
}

int db_profile_phase_pos(const db_profile *p, const char *phase)
{
	for (size_t i = 0; i < p->n_phase_order; i++)
		if (!strcmp(p->phase_order[i], phase))
			return (int)i;
	return -1;
}

static bool known_has(const char *const *known, size_t n, const char *s, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(known[i]) == len && !strncmp(known[i], s, len))
			return true;
	return false;
}

const char *db_profile_parent(const db_profile *p, const char *stage,
                              const char *const *known, size_t n_known,
                              char *buf, size_t len)
{
	if (!len)
		return stage;
	for (size_t i = 0; i < p->n_substages; i++) {
		const db_substage_rule *r = &p->substages[i];
		if (strcmp(stage, r->parent) && stage_match(p, r->re, r->pattern, stage)) {
			snprintf(buf, len, "%s", r->parent);
			return buf;
		}
	}
	if (p->substage_sep) {
		/* the shortest proper prefix (at a separator) that is a known stage */
		for (const char *s = strchr(stage, p->substage_sep); s; s = strchr(s + 1, p->substage_sep)) {
			size_t l = (size_t)(s - stage);
			if (l && (!known || known_has(known, n_known, stage, l))) {
				snprintf(buf, len, "%.*s", (int)l, stage);
				return buf;
			}
		}
	}
	snprintf(buf, len, "%s", stage);
	return buf;
}

bool db_profile_is_model_after(const db_profile *p, const char *stage)
{
	for (size_t i = 0; i < p->n_model_after; i++)
		if (db_glob_match(p->model_after[i], stage))
			return true;
	return false;
}

bool db_profile_is_input_ids(const db_profile *p, const char *stage)
{
	return stage_match(p, p->input_ids_re, p->input_ids_pat, stage);
}

bool db_profile_is_routing_ids(const db_profile *p, const char *stage)
{
	return stage_match(p, p->routing_ids_re, p->routing_ids_pat, stage);
}

const db_shard_rule *db_profile_shard(const db_profile *p, const char *stage)
{
	for (size_t i = 0; i < p->n_shards; i++)
		if (stage_match(p, p->shards[i].re, p->shards[i].pattern, stage))
			return &p->shards[i];
	return NULL;
}

const char *db_profile_layer_class(const db_profile *p, int layer)
{
	if (layer < 0)
		return NULL;
	for (size_t i = 0; i < p->n_classes; i++) {
		const db_layer_class *c = &p->classes[i];
		if (layer >= c->lo && (c->hi < 0 || layer <= c->hi))
			return c->name;
	}
	return NULL;
}

char *db_profile_dump_command(const db_profile *p, int layer)
{
	if (!p->dump_command)
		return NULL;
	static const char tok[] = "{layer}";
	char num[16];
	snprintf(num, sizeof num, "%d", layer);
	size_t n = 0, cnt = 0;
	for (const char *s = p->dump_command; (s = strstr(s, tok)); s += sizeof tok - 1)
		cnt++;
	n = strlen(p->dump_command) + cnt * strlen(num) + 1;
	char *out = malloc(n), *o = out;
	if (!out)
		return NULL;
	for (const char *s = p->dump_command; *s;) {
		if (!strncmp(s, tok, sizeof tok - 1)) {
			o += sprintf(o, "%s", num);
			s += sizeof tok - 1;
		} else {
			*o++ = *s++;
		}
	}
	*o = 0;
	return out;
}

/* ---- passes ---- */

static bool is_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

int db_profile_pass_cmp(const char *a, const char *b)
{
	if (is_digits(a) && is_digits(b)) {
		while (*a == '0' && a[1])
			a++;
		while (*b == '0' && b[1])
			b++;
		size_t la = strlen(a), lb = strlen(b);
		if (la != lb)
			return la < lb ? -1 : 1;
	}
	return strcmp(a, b);
}

static bool pow2(int64_t n)
{
	return n > 0 && (n & (n - 1)) == 0;
}

int db_profile_select_pass(const db_profile *p, const char *const *passes,
                           const int64_t *ntok, size_t n)
{
	if (!n)
		return -1;
	switch (p->pass_select) {
	case DB_PASS_FIRST:
		return 0;
	case DB_PASS_LAST:
		return (int)n - 1;
	case DB_PASS_ALL:
		return -1;
	case DB_PASS_VALUE:
		for (size_t i = 0; i < n; i++)
			if (p->pass_value && !db_profile_pass_cmp(passes[i], p->pass_value))
				return (int)i;
		return -1;
	case DB_PASS_PREFILL: {
		/* ATOM pick_prefill_call: a real prefill has a token count that is
		 * a multiple of the slots and larger than them; warm-up dummies use
		 * powers of two. Fallback: the first pass. */
		int64_t slots = p->pass_slots > 0 ? p->pass_slots : 1;
		int best = -1;
		for (size_t i = 0; ntok && i < n; i++) {
			int64_t t = ntok[i];
			if (t <= slots || t % slots)
				continue;
			if (best < 0 || (pow2(ntok[best]) && !pow2(t)))
				best = (int)i;
		}
		return best >= 0 ? best : 0;
	}
	}
	return 0;
}

int db_profile_token_dim(const db_profile *p, const char *stage)
{
	for (size_t i = 0; i < p->n_token_dim; i++)
		if (db_glob_match(p->token_dim_glob[i], stage))
			return p->token_dim[i];
	return -1;
}
