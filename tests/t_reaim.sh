#!/bin/bash
# Issue 22 point 3: a bisect can be re-aimed. `bisect start --pass N` on a
# session with steps begins a new bisect on pass N; the earlier one stays
# in the session ('earlier') and replay still judges it. Without another
# --pass / --phase, start still refuses. Truth: steps_v2_tp1 has decode_pos
# at L4 from step=2 (cases_steps.tsv): pass 3 and pass 2 both find L4.
set -eu
: "${DB_BIN:?}" "${DB_FIXTURES:?}" "${DB_TMP:?}"
rm -rf "$DB_TMP"; mkdir -p "$DB_TMP"
cd "$DB_FIXTURES"
R=realdump/steps_v2_tp1
S=$DB_TMP/s.yaml
FAILS=0
check() { local w=$1; shift; if ! "$@"; then echo "FAIL: $w" >&2; FAILS=$((FAILS + 1)); fi; }

"$DB_BIN" bisect $R/ref $R/target --auto --session "$S" --pass 3 >/dev/null 2>&1 || true
check "the session has 5 steps on pass 3" test "$(grep -c 'verdict:' "$S")" -eq 5
rc=0; "$DB_BIN" bisect start $R/ref $R/target --session "$S" >/dev/null 2>"$DB_TMP/err" || rc=$?
check "start without another pass refuses (exit 2, got $rc)" test "$rc" -eq 2
check "it says how to re-aim" grep -q 'or start one on another --pass / --phase' "$DB_TMP/err"
out=$("$DB_BIN" bisect start $R/ref $R/target --session "$S" --pass 2)
check "start --pass 2 keeps the earlier one" grep -qx "the bisect on pass 3 (5 steps) is kept in the session" <<<"$out"
check "the session is on pass 2" grep -qx 'pass: "2"' "$S"
check "the earlier bisect is in the file" grep -qx 'earlier:' "$S"
check "with its pass" grep -qx '  pass: "3"' "$S"
check "and its 5 steps" test "$(grep -c 'verdict:' "$S")" -eq 5
rp=$("$DB_BIN" replay "$S" 2>/dev/null || true)
check "replay judges the earlier bisect" grep -qx \
	'  1. phase - pass 3: 5 of 5 verdicts hold; first bad layer: then L4, now L4' <<<"$rp"
js=$("$DB_BIN" replay "$S" --format json 2>/dev/null || true)
check "replay JSON: earlier" python3 -c '
import json, sys
e = json.loads(sys.argv[1])["earlier"]
assert len(e) == 1 and e[0]["pass"] == "3" and e[0]["steps"] == 5 and e[0]["all_hold"], e
assert e[0]["first_bad_then"] == 4 and e[0]["first_bad_now"] == 4, e' "$js"
# an old session (no 'earlier') still loads
sed '/^earlier:/,$d' "$S" >"$DB_TMP/old.yaml"
check "a session without 'earlier' replays" bash -c "'$DB_BIN' replay '$DB_TMP/old.yaml' >/dev/null 2>&1; test \$? -le 1"
[ "$FAILS" -eq 0 ] || { echo "$FAILS check(s) failed" >&2; exit 1; }
echo ok
