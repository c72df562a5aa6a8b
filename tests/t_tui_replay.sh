#!/bin/bash
# replay --tui on fixed dumps (issue 11 item 9): the workbench shows which
# logged verdicts changed and where the first bad layer is now, in the same
# words as `dumpbisect replay` (one implementation, db_replay.h) — never
# "found L7" on a tree where everything is ok. On unchanged dumps the
# resumed bisect is as logged.
. "$DB_SRC/tests/tui/lib.sh"

S=$T/work/s.yaml
FIX=$T/fixed
mkdir -p "$T/work"
(cd "$DB_FIXTURES" && "$DB_BIN" bisect demo/ref demo/target --auto --session "$S" >/dev/null) || true
check "the session has 5 steps" test "$(grep -c 'verdict:' "$S")" -eq 5
# FIXED: the reference itself as the target, every pair ok
cp -r "$DB_FIXTURES/demo/ref" "$FIX"
cp "$S" "$T/work/same.yaml"     # the run below resets and re-bisects S
cli=$("$DB_BIN" replay "$S" --target "$FIX" || true)   # exit 1: changed
check "CLI replay: 3 verdicts changed" grep -qx '2 of 5 verdicts hold' <<<"$cli"
moved=$(grep '^first bad layer: ' <<<"$cli")
check "CLI replay: moved to none ($moved)" test "$moved" = "first bad layer: then L7, now none (no-bad) (moved)"

tui_run 100 30 replay "$S" --tui --target "$FIX" <<EOF
:save-display $T/replay_heatmap.screen
b
:save-display $T/replay_bisect.screen
x
<Enter>
:save-display $T/replay_live.screen
EOF
check "the start says the verdicts changed" grep_screen replay_heatmap \
	'^replay: 3 of 5 logged verdicts changed; first bad layer then L7, now none \(no-bad\) \(b shows them\)'
check "the bisect view says how many changed" \
	grep_screen replay_bisect '^\[replay\] 3 of 5 logged verdicts changed on these trees$'
check "the bisect view says what the CLI says" grep -qxF -- "$moved" "$T/replay_bisect.screen"
check "now: nothing bad" grep_screen replay_bisect '^now: the last layer, final, is good: nothing went wrong, nothing to bisect$'
check "never found on an all-ok tree" bash -c "! grep -Eq 'found|first bad layer L7|sudden|drift' '$T/replay_bisect.screen'"
check "the changed steps are marked" \
	test "$(grep -c ' now good cos 1\.000000  CHANGED$' "$T/replay_bisect.screen")" -eq 3
check "L5 still holds" grep_screen replay_bisect '^  2  L5     good  auto   cos 1\.000000  rel 7\.5e-6  ok$'
check "x then Enter: a live bisect of these trees, nothing bad" \
	grep_screen replay_live '^\[no-bad\] the last layer, final, is good: nothing went wrong, nothing to bisect$'
check "live: no replay banner" bash -c "! grep -q '^\[replay\]' '$T/replay_live.screen'"
check "the session now holds the live bisect" test "$(grep -c 'verdict:' "$S")" -eq 1

# The same session on its own dumps: nothing changed, the outcome as logged.
tui_run 100 30 replay "$T/work/same.yaml" --tui <<EOF
b
:save-display $T/replay_same.screen
EOF
check "unchanged dumps: found L7 as logged" grep_screen replay_same '^\[found\] first bad layer: L7$'
check "unchanged dumps: no replay banner" bash -c "! grep -q 'replay\]\|CHANGED' '$T/replay_same.screen'"
finish
