#!/bin/bash
# The truth tests on the real-upstream trees (tests/fixtures/realdump: written by the
# real SGLang / ATOM / Miles dumpers with one injected bug, see its README.md).  For
# every case of cases.tsv: `compare` (text and --format json) and `bisect --auto
# --format json`, then tests/lib/realdump_check.py asserts the bisect answer (layer,
# stage, bad ranks, all_ranks_bad), compare's `first divergence:` layer / stage / phase,
# that the headline is no pairing artefact (ref_only / target_only), and the execution
# order of the stages within a layer, against the ground truth derived from the bug.
#
# The decode-step cases (cases_steps.tsv, when present: a bug from decode step S on)
# add the pass both must name (bisect's JSON "pass", compare's headline `pass N`).
#
# It prints a per-case table of PASS / FAIL.  Checks known to fail today are listed in
# DB_REALDUMP_XFAIL (a file of `case:check` lines; default
# tests/fixtures/realdump/xfail.txt, empty string = none): those print xfail and do not
# fail the test; one that passes prints XPASS (not fatal: shrink xfail.txt).
# DB_REALDUMP_CASES="a b" runs only those cases.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
fresh_tmp
need_python "to check the JSON answers"
R=$DB_FIXTURES/realdump
XF=${DB_REALDUMP_XFAIL-$R/xfail.txt}
[ -f "$R/cases.tsv" ] || { echo "no $R/cases.tsv"; exit 1; }

n=0
# cases.tsv, then the decode-step cases (cases_steps.tsv) when present
while IFS=$'\t' read -r case trees _; do
	case $case in '#'* | case | '') continue ;; esac
	if [ -n "${DB_REALDUMP_CASES:-}" ] && ! grep -qw -- "$case" <<<"$DB_REALDUMP_CASES"; then
		continue
	fi
	if [ "$trees" = onedir ]; then
		set -- "$R/$case/onedir"
	else
		set -- "$R/$case/ref" "$R/$case/target"
	fi
	for d in "$@"; do [ -d "$d" ] || fail "$case: no tree $d"; done
	o=$DB_TMP/$case
	timeout 120 "$DB_BIN" compare "$@" >"$o.compare.txt" 2>"$o.compare.err"
	echo $? >"$o.compare.rc"
	timeout 120 "$DB_BIN" compare "$@" --format json >"$o.compare.json" 2>>"$o.compare.err"
	timeout 120 "$DB_BIN" bisect "$@" --auto --format json >"$o.bisect.json" 2>"$o.bisect.err"
	echo $? >"$o.bisect.rc"
	n=$((n + 1))
done < <(cat "$R/cases.tsv" $([ -f "$R/cases_steps.tsv" ] && echo "$R/cases_steps.tsv"))
[ $n -ge 1 ] || fail "no case ran"

if [ -n "${DB_REALDUMP_CASES:-}" ]; then
	# only the selected rows of cases.tsv
	mkdir -p "$DB_TMP/sel"
	awk -F'\t' -v sel=" $DB_REALDUMP_CASES " 'substr($0,1,1)=="#" || $1=="case" || index(sel, " " $1 " ")' \
		"$R/cases.tsv" >"$DB_TMP/sel/cases.tsv"
	[ -f "$R/cases_steps.tsv" ] && awk -F'\t' -v sel=" $DB_REALDUMP_CASES " \
		'substr($0,1,1)=="#" || $1=="case" || index(sel, " " $1 " ")' \
		"$R/cases_steps.tsv" >"$DB_TMP/sel/cases_steps.tsv"
	cp "$R/orders.txt" "$DB_TMP/sel/"
	"$PY" "$DB_SRC/tests/lib/realdump_check.py" "$DB_TMP/sel" "$DB_TMP" "$XF" || fail "truth checks (above)"
else
	"$PY" "$DB_SRC/tests/lib/realdump_check.py" "$R" "$DB_TMP" "$XF" || fail "truth checks (above)"
fi
echo "$n cases"
finish t_realdump
