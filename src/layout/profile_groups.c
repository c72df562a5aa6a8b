#include "profile_groups.h"

#include <stdlib.h>
#include <string.h>

static const char *const names[DB_G_N] = {
	"side", "phase", "phase_sub", "pass", "rank", "layer", "order", "stage", "file_stage",
};

const char *db_gnum_name(int g)
{
	return names[g];
}

db_gnums *db_gnums_new(const pcre2_code *re)
{
	if (!re)
		return NULL;
	db_gnums *gn = calloc(1, sizeof *gn);
	uint32_t esz = 0;
	if (!gn || pcre2_pattern_info(re, PCRE2_INFO_NAMEENTRYSIZE, &esz) != 0) {
		free(gn);
		return NULL;
	}
	for (int g = 0; g < DB_G_N; g++) {
		PCRE2_SPTR first, last;
		if (pcre2_substring_nametable_scan(re, (PCRE2_SPTR)names[g], &first, &last) < 0)
			continue;       /* no such group */
		for (PCRE2_SPTR e = first; e <= last; e += esz) {
			if (gn->n[g] == 8) {
				gn->over = 1;
				break;
			}
			gn->num[g][gn->n[g]++] = (uint16_t)(e[0] << 8 | e[1]);
		}
	}
	return gn;
}

/* A value too long for buf, as the group copies leave it: cut to cap-1
 * bytes (2); s is freed. */
static int cut_copy(PCRE2_UCHAR *s, PCRE2_SIZE len, char *buf, size_t cap)
{
	int rc = 1;
	if (len >= cap) {
		len = cap - 1;
		rc = 2;
	}
	memcpy(buf, s, len);
	buf[len] = 0;
	pcre2_substring_free(s);
	return rc;
}

int db_gnum_copy(const db_gnums *gn, int g, pcre2_match_data *md, char *buf, size_t cap)
{
	PCRE2_SIZE len = cap;
	if (!gn || gn->over) {
		/* straight into buf (no allocation: this runs per file and group) */
		int rc = pcre2_substring_copy_byname(md, (PCRE2_SPTR)names[g], (PCRE2_UCHAR *)buf,
		                                     &len);
		if (rc == 0)
			return 1;
		if (rc != PCRE2_ERROR_NOMEMORY)
			return 0;
		PCRE2_UCHAR *s;
		if (pcre2_substring_get_byname(md, (PCRE2_SPTR)names[g], &s, &len) != 0)
			return 0;
		return cut_copy(s, len, buf, cap);
	}
	PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
	uint32_t n_ov = pcre2_get_ovector_count(md);
	for (int i = 0; i < gn->n[g]; i++) {
		uint32_t num = gn->num[g][i];
		if (num >= n_ov || ov[2 * num] == PCRE2_UNSET)
			continue;       /* the first set one, as by name */
		int rc = pcre2_substring_copy_bynumber(md, num, (PCRE2_UCHAR *)buf, &len);
		if (rc == 0)
			return 1;
		PCRE2_UCHAR *v;
		if (rc != PCRE2_ERROR_NOMEMORY || pcre2_substring_get_bynumber(md, num, &v, &len) != 0)
			return 0;
		return cut_copy(v, len, buf, cap);
	}
	return 0;
}
