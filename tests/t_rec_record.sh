#!/bin/bash
# Issue 34, the headless side, on a real multi-pass tree: realdump/steps_hook_tp2
# (sglang_hook TP2, prefill + 3 decode steps, decode_pos at L2 from decode
# step 3 = pass 3; gen.sh "steps_hook_tp2", truth in cases_steps.tsv).
# - a bisect belongs to its (phase, pass): --pass 0 on a session that found
#   L2 on pass 3 bisects pass 0 and keeps pass 3's; --pass 3 resumes it;
#   export centres on the found one and lists both (report.md, metrics.json);
#   replay judges both
# - a verdict the user typed is the user's (bisect good/bad, bisect log)
# - bisect --no-session is accepted (as the workbench's)
# - export never writes over another session's report/ in one folder
set -eu
: "${DB_BIN:?}" "${DB_FIXTURES:?}" "${DB_TMP:?}"
rm -rf "$DB_TMP"; mkdir -p "$DB_TMP/w"
cd "$DB_FIXTURES"
R=realdump/steps_hook_tp2
W=$DB_TMP/w
S=$W/a.session
FAILS=0
check() { local w=$1; shift; if ! "$@"; then echo "FAIL: $w" >&2; FAILS=$((FAILS + 1)); fi; }

# 1. one bisect per pass
rc=0; "$DB_BIN" bisect $R/ref $R/target --auto --session "$S" >"$W/b3.out" 2>&1 || rc=$?
check "pass 3: found (exit 1, got $rc)" test "$rc" -eq 1
check "pass 3: first bad layer L2" grep -q '^first bad layer L2' "$W/b3.out"
rc=0; "$DB_BIN" bisect --auto --session "$S" --pass 0 >"$W/b0.out" 2>&1 || rc=$?
check "pass 0: nothing bad (exit 0, got $rc)" test "$rc" -eq 0
check "the session is on pass 0" grep -qx 'pass: "0"' "$S"
check "pass 3's bisect is kept with its 4 steps" python3 - "$S" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
early = t.split("\nearlier:\n", 1)[1]
assert '  pass: "3"' in early, early
assert early.count("verdict:") == 4, early
PY
rc=0; "$DB_BIN" bisect --auto --session "$S" --pass 3 >"$W/b3again.out" 2>&1 || rc=$?
check "pass 3 again resumes the found bisect (exit 1, got $rc)" test "$rc" -eq 1
check "resumed, not begun again: still 4 steps" grep -q '^   4\. L2 ' "$W/b3again.out"
check "no fifth step" bash -c "! grep -q '^   5\. ' '$W/b3again.out'"
check "pass 0's bisect is kept now" grep -qx '  pass: "0"' "$S"
# back on pass 0 (the screen's), then export: the found one first
"$DB_BIN" bisect --auto --session "$S" --pass 0 >/dev/null 2>&1 || true
"$DB_BIN" export "$S" >"$W/exp.out" 2>"$W/exp.err"
MD=$W/report/report.md
check "export summary names L2" grep -q '^first bad layer L2' "$MD"
check "export: pass 3's log, then pass 0's" python3 - "$MD" <<'PY'
import sys
t = open(sys.argv[1]).read()
log = t.split("## Bisect log", 1)[1].split("## Marks", 1)[0]
i3, i0 = log.find("### pass 3"), log.find("### pass 0")
assert 0 <= i3 < i0, log
assert "first bad layer: L2" in log[i3:i0], log
PY
check "metrics.json: both bisects, the found one first" python3 - "$W/report/metrics.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
b = d["bisects"]
assert [x["pass"] for x in b] == ["3", "0"], b
assert b[0]["first_bad_layer"] == 2 and b[0]["state"] == "found", b[0]
assert len(b[0]["steps"]) == 4 and b[1]["first_bad_layer"] is None, b
assert d["marks"] == [], d["marks"]
PY
rp=$("$DB_BIN" replay "$S" 2>&1 || true)
check "replay says whose pass its table is" grep -q '^replay of .*/a\.session (1 steps on pass 0) against$' <<<"$rp"
check "replay judges pass 0's and the kept pass 3's" grep -q \
	'^  1\. phase - pass 3: 4 of 4 verdicts hold; first bad layer: then L2, now L2$' <<<"$rp"

# 4. a typed verdict is the user's, also when it agrees with the data
V=$W/v.session
"$DB_BIN" bisect start $R/ref $R/target --session "$V" --pass 3 >/dev/null
"$DB_BIN" bisect bad --session "$V" >/dev/null     # final: the data says bad too
check "bisect bad agreeing with auto: by user" grep -q '{layer: final, verdict: bad, by: user, auto: bad' "$V"
lg=$("$DB_BIN" bisect log --session "$V")
check "bisect log says user" grep -qx '# final: auto bad, cos .* drift, by user' <<<"$lg"
check "bisect log starts on its pass" grep -q "^dumpbisect bisect start .* --pass '3' --session" <<<"$lg"

# 7. --no-session: the workbench's flag, the same meaning headless
rc=0; (cd "$W" && "$DB_BIN" bisect "$DB_FIXTURES/$R/ref" "$DB_FIXTURES/$R/target" --auto \
	--no-session >"$W/ns.out" 2>&1) || rc=$?
check "bisect --auto --no-session runs (exit 1: found, got $rc)" test "$rc" -eq 1
check "--no-session writes no session" test -z "$(find "$W" -newer "$V" -name '*.yaml' -o -newer "$V" -name '*.session')"
rc=0; "$DB_BIN" bisect $R/ref $R/target --auto --no-session --session "$W/x.session" \
	>/dev/null 2>"$W/ns.err" || rc=$?
check "--session with --no-session: usage error (exit 2, got $rc)" test "$rc" -eq 2
check "in the workbench's words" grep -q -- '--session and --no-session: give one' "$W/ns.err"

# 5. two sessions in one folder: each its own report
B=$W/b.session
"$DB_BIN" bisect $R/ref $R/target --auto --session "$B" --pass 2 >/dev/null 2>&1 || true
cp "$MD" "$W/a_report.md"
"$DB_BIN" export "$B" >"$W/expb.out" 2>"$W/expb.err"
check "b's export went to report-b/" grep -qx "$W/report-b/report.md" "$W/expb.out"
check "and says whose report/ is" grep -q "report/ holds the report of session $W/a.session" "$W/expb.err"
check "a's report.md untouched" cmp -s "$MD" "$W/a_report.md"
check "report-b names b" grep -qx -- "- session: \`$W/b.session\`" "$W/report-b/report.md"
"$DB_BIN" export "$S" >"$W/exp2.out" 2>&1
check "a again: report/, its own" grep -qx "$W/report/report.md" "$W/exp2.out"
"$DB_BIN" export "$B" >"$W/expb2.out" 2>&1
check "b again: report-b/" grep -qx "$W/report-b/report.md" "$W/expb2.out"
[ "$FAILS" -eq 0 ] || { echo "$FAILS check(s) failed" >&2; exit 1; }
echo ok
