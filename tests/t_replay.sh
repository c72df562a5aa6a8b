#!/bin/bash
# replay: a session re-judged against the dumps as they are now. Unchanged
# dumps: every verdict holds (exit 0). After "fixing" layer 11 (its target
# files replaced by the reference's), the L11 verdict changes and the first
# bad layer moves (exit 1). Corrupt sessions and moved trees: exit 2 with a
# message naming file:line:column / offering --ref/--target.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
fresh_tmp

W=$DB_TMP/work
mkdir -p "$W"
cp -r "$DB_FIXTURES/bisect/signflip_tp2/ref" "$DB_FIXTURES/bisect/signflip_tp2/target" "$W/"
S=$DB_TMP/s.yaml
"$DB_BIN" bisect "$W/ref" "$W/target" --auto --session "$S" >/dev/null
[ $? -eq 1 ] || fail "bisect: exit status"

out=$("$DB_BIN" replay "$S")
rc=$?
[ $rc -eq 0 ] || fail "replay of unchanged dumps: exit $rc: $out"
echo "$out" | grep -q '^5 of 5 verdicts hold$' || fail "replay text: $out"
echo "$out" | grep -q '^first bad layer: then L11, now L11$' || fail "replay text: $out"
"$DB_BIN" replay "$S" --format json >"$DB_TMP/r0.json"
grep -q '"all_hold": true' "$DB_TMP/r0.json" || fail "replay json: $(cat "$DB_TMP/r0.json")"
grep -q '"first_bad_moved": false' "$DB_TMP/r0.json" || fail "replay json: not moved"

# the fix: layer 11 of the target becomes the reference's
RD=$(echo "$W"/ref/sglang_dump_*)
TD=$(echo "$W"/target/sglang_dump_*)
n=0
for f in "$RD"/*layer_id=11.pt; do
	cp "$f" "$TD/$(basename "$f")"
	n=$((n + 1))
done
[ $n -gt 0 ] || fail "no layer-11 files to swap"
out=$("$DB_BIN" replay "$S")
rc=$?
[ $rc -eq 1 ] || fail "replay after the fix: exit $rc, want 1"
echo "$out" | grep -Eq '^ +[0-9]+\. L11 +bad  \(auto\) +then bad  cos 0\.917[0-9]+ +now good cos 1\.0+ +CHANGED$' \
	|| fail "replay: L11 should change bad -> good: $out"
echo "$out" | grep -q '^4 of 5 verdicts hold$' || fail "replay count: $out"
echo "$out" | grep -q '^first bad layer: then L11, now L12 (moved)$' || fail "replay move: $out"
"$DB_BIN" replay "$S" --format json >"$DB_TMP/r1.json"
[ $? -eq 1 ] || fail "replay json after the fix: exit status"
grep -q '"all_hold": false, "first_bad_then": 11, "first_bad_now": 12, "first_bad_moved": true' "$DB_TMP/r1.json" \
	|| fail "replay json after the fix: $(tail -c 200 "$DB_TMP/r1.json")"
# the session itself is not changed by a replay
grep -q '{layer: 11, verdict: bad' "$S" || fail "replay rewrote the session"

# other trees given on the command line: the original fixture (bug intact)
"$DB_BIN" replay "$S" --ref "$DB_FIXTURES/bisect/signflip_tp2/ref" \
	--target "$DB_FIXTURES/bisect/signflip_tp2/target" >/dev/null
[ $? -eq 0 ] || fail "replay with --ref/--target on the original trees: want 0"

# moved trees: said plainly, with the way out
mv "$W" "$DB_TMP/moved"
"$DB_BIN" replay "$S" >/dev/null 2>"$DB_TMP/e1"
[ $? -eq 2 ] || fail "moved trees: want exit 2"
grep -q "reference tree $W/ref is gone (No such file or directory; moved?); give --ref DIR" "$DB_TMP/e1" \
	|| fail "moved trees: $(cat "$DB_TMP/e1")"
"$DB_BIN" replay "$S" --ref "$DB_TMP/moved/ref" --target "$DB_TMP/moved/target" >/dev/null
[ $? -eq 1 ] || fail "moved trees with --ref/--target: want 1 (the fixed copy)"

# unreadable sessions
printf 'dumpbisect_session: 1\nlayers: [1, 2]\nsteps:\n  - {layer: 1, verdict: bad, by: robot}\n' >"$DB_TMP/bad.yaml"
"$DB_BIN" replay "$DB_TMP/bad.yaml" >/dev/null 2>"$DB_TMP/e2"
[ $? -eq 2 ] || fail "corrupt session: want exit 2"
grep -q "bad.yaml:4:34: 'by': expected auto or user" "$DB_TMP/e2" || fail "corrupt session: $(cat "$DB_TMP/e2")"
"$DB_BIN" replay "$DB_TMP/none.yaml" >/dev/null 2>&1
[ $? -eq 2 ] || fail "missing session: want exit 2"
head -c 40 "$S" >"$DB_TMP/trunc.yaml"
"$DB_BIN" replay "$DB_TMP/trunc.yaml" >/dev/null 2>"$DB_TMP/e3"
[ $? -eq 2 ] || fail "truncated session: want exit 2 ($(cat "$DB_TMP/e3"))"
"$DB_BIN" replay >/dev/null 2>&1
[ $? -eq 2 ] || fail "no session: want exit 2"

finish t_replay
