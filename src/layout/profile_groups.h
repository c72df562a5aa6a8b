/* The numbers of the named groups the index reads (side, phase, pass, rank,
 * layer, order, stage...), found once per pattern when a profile is loaded:
 * copying a group by name scanned the pattern's name table per file and
 * group, 12 % of a first scan's instructions (issue 24). Not a public
 * header. */
#ifndef DB_PROFILE_GROUPS_H
#define DB_PROFILE_GROUPS_H
#include <stddef.h>
#include <stdint.h>

#ifndef PCRE2_CODE_UNIT_WIDTH
#define PCRE2_CODE_UNIT_WIDTH 8
#endif
#include <pcre2.h>

enum {
	DB_G_SIDE, DB_G_PHASE, DB_G_PHASE_SUB, DB_G_PASS, DB_G_RANK, DB_G_LAYER, DB_G_ORDER,
	DB_G_STAGE, DB_G_FILE_STAGE, DB_G_N
};

/* A name may name several groups ((?J) duplicates): all of them, in the
 * name table's order, as pcre2_substring_copy_byname tries them. */
typedef struct db_gnums {
	uint16_t num[DB_G_N][8];
	uint8_t n[DB_G_N];
	uint8_t over;           /* a name with more than 8 groups: by name */
} db_gnums;

/* The table of re (NULL: none, or no memory; the caller copies by name). */
db_gnums *db_gnums_new(const pcre2_code *re);
/* The name of group g ("side", "phase"...). */
const char *db_gnum_name(int g);
/* Group g of md (a match of the pattern gn was made from; gn NULL: by name)
 * into buf: 1 set, 0 unset or absent, 2 set but cut to cap-1 bytes. */
int db_gnum_copy(const db_gnums *gn, int g, pcre2_match_data *md, char *buf, size_t cap);

#endif
