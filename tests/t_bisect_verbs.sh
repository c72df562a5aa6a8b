#!/bin/bash
# git-bisect verbs in the shell (issue 13 part 5): bisect start, then one
# verdict per command (good/bad/skip/undo), log, reset, run — the session
# file is the state. On the demo trees (sign flip at L7, tests/fixtures/
# gen_scenarios.py) the verdicts a user types must land on L7, the session
# must replay, and an override (a user verdict against the auto one) must
# move the result where it says.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
fresh_tmp
need_python "to read JSON"
D=$DB_FIXTURES/demo
S=$DB_TMP/v.session
js() { "$PY" -c "import json,sys; d=json.load(sys.stdin); print(json.dumps(d[sys.argv[1]]))" "$1" <<<"$out"; }

expect 2 "judge before start" "$DB_BIN" bisect good --session "$S"
has "$err" "no bisect in progress" "judge before start"

expect 0 "start" "$DB_BIN" bisect start "$D/ref" "$D/target" --session "$S" --format json
[ "$(js done)" = false ] || fail "start: done $(js done)"
[ "$(js next_layer)" = '"final"' ] || fail "start: first probe $(js next_layer), want final"
[ "$(js auto_verdict)" = '"bad"' ] || fail "start: auto verdict $(js auto_verdict)"
[ -s "$S" ] || fail "start wrote no session"
# a session without verdicts may be started again; with one it may not
expect 0 "start again" "$DB_BIN" bisect start "$D/ref" "$D/target" --session "$S"
# default session path: the environment, then ./dumpbisect.session
expect 0 "judge via DUMPBISECT_SESSION" env DUMPBISECT_SESSION="$S" "$DB_BIN" bisect bad
has "$out" "next: L5 (auto: good" "bad final -> midpoint L5"
expect 2 "start twice" "$DB_BIN" bisect start "$D/ref" "$D/target" --session "$S"
has "$err" "bisect reset" "start twice"
expect 0 "good 5" "$DB_BIN" bisect good --session "$S"
has "$out" "next: L8 (auto: bad" "good L5 -> L8"
expect 0 "undo" "$DB_BIN" bisect undo --session "$S"
has "$out" "next: L5" "undo goes back to L5"
for v in good bad good; do
	expect 0 "verdict $v" "$DB_BIN" bisect "$v" --session "$S" --format json
done
[ "$(js next_layer)" = 7 ] || fail "after L5 good, L8 bad, L6 good: next $(js next_layer), want 7"
expect 0 "bad 7" "$DB_BIN" bisect bad --session "$S" --format json
[ "$(js done)" = true ] || fail "not done after L7 bad"
[ "$(js first_bad_layer)" = 7 ] || fail "first bad $(js first_bad_layer), want 7"
expect 2 "judge when done" "$DB_BIN" bisect good --session "$S"
has "$err" "nothing left to judge" "judge when done"
expect 2 "a layer that is no candidate" "$DB_BIN" bisect good 99 --session "$S"
expect 2 "not a layer" "$DB_BIN" bisect good x7 --session "$S"

# the session replays and every recorded verdict holds
expect 0 "replay" "$DB_BIN" replay "$S"
has "$out" "5 of 5 verdicts hold" "replay of the verb session"
has "$out" "first bad layer: then L7, now L7" "replay of the verb session"
# ... and opens in the workbench at its end (b: the bisect view)
printf 'b\n:save-display %s\nQ\n' "$DB_TMP/wb.screen" >"$DB_TMP/wb.keys"
expect 0 "workbench on the verb session" env DUMPBISECT_SCRIPT="$DB_TMP/wb.keys" \
	DUMPBISECT_WATCHDOG=30 TERM=xterm LINES=30 COLUMNS=100 "$DB_BIN" --session "$S"
grep -qF '[found] first bad layer: L7' "$DB_TMP/wb.screen" 2>/dev/null ||
	fail "the workbench does not show the verb session's result"
grep -qF 'history (5 steps)' "$DB_TMP/wb.screen" 2>/dev/null ||
	fail "the workbench does not show the verb session's 5 steps"
# log: the commands that replay it
expect 0 "log" "$DB_BIN" bisect log --session "$S"
[ "$(grep -c '^dumpbisect bisect \(good\|bad\) ' <<<"$out")" = 5 ] || fail "log: not 5 verdicts: $out"
has "$out" "dumpbisect bisect bad 7 --session" "log names L7 bad"
cp "$S" "$DB_TMP/kept.session"
PATH="$(dirname "$DB_BIN"):$PATH" bash -c "$(sed "s|--session .*\$|--session '$DB_TMP/re.session'|" <<<"$out")" >/dev/null 2>&1 ||
	fail "the log does not rerun as shell commands"
cmp <(grep -E '^ +- \{layer' "$DB_TMP/re.session" | sed 's/time: [0-9]*//') \
	<(grep -E '^ +- \{layer' "$S" | sed 's/time: [0-9]*//') >/dev/null ||
	fail "rerunning the log gives other steps"

# reset drops the verdicts, start works again
expect 0 "reset" "$DB_BIN" bisect reset --session "$S"
has "$out" "5 verdicts dropped" "reset"
expect 0 "start after reset" "$DB_BIN" bisect start "$D/ref" "$D/target" --session "$S"

# an override moves the result: L6 called bad (auto good) -> first bad L6
for v in bad good bad bad; do
	expect 0 "override $v" "$DB_BIN" bisect "$v" --session "$S" --format json
done
[ "$(js first_bad_layer)" = 6 ] || fail "override: first bad $(js first_bad_layer), want 6"
expect 1 "replay of the override" "$DB_BIN" replay "$S"
has "$out" "L6     bad  (user)" "replay shows the user verdict"

# run: the command's exit status judges (0 good, 125 skip, else bad)
expect 0 "reset" "$DB_BIN" bisect reset --session "$S"
expect 0 "run by auto" "$DB_BIN" bisect run 'test "$DUMPBISECT_AUTO" = good' --session "$S" --format json
[ "$(js first_bad_layer)" = 7 ] || fail "run: first bad $(js first_bad_layer), want 7"
expect 0 "reset" "$DB_BIN" bisect reset --session "$S"
expect 0 "run by layer" "$DB_BIN" bisect run '[ "$1" != final ] && [ "$DUMPBISECT_LAYER" -lt 3 ]' --session "$S"
has "$out" "done: first bad layer: L3" "run judged by layer number"
expect 0 "reset" "$DB_BIN" bisect reset --session "$S"
expect 0 "run skips" "$DB_BIN" bisect run '[ "$1" = 6 ] && exit 125; test "$DUMPBISECT_AUTO" = good' --session "$S"
has "$out" "L6: skip" "run: exit 125 skips"
expect 0 "reset" "$DB_BIN" bisect reset --session "$S"
expect 2 "run aborts" "$DB_BIN" bisect run 'exit 130' --session "$S"
has "$err" "exited with status 130" "run: 128+ aborts"

# a session the workbench left without a bisect takes the verbs too
printf 'Q\n' >"$DB_TMP/q.keys"
expect 0 "workbench session" env DUMPBISECT_SCRIPT="$DB_TMP/q.keys" DUMPBISECT_WATCHDOG=30 \
	TERM=xterm LINES=30 COLUMNS=100 "$DB_BIN" --session "$DB_TMP/wb.yaml" "$D/ref" "$D/target"
expect 0 "verb on a workbench session" "$DB_BIN" bisect bad --session "$DB_TMP/wb.yaml"
has "$out" "next: L5" "verb on a workbench session"
grep -q '^probe: "hidden_out"' "$DB_TMP/wb.yaml" || fail "the verb did not record the probe"

# the default session file is ./dumpbisect.session
mkdir -p "$DB_TMP/cwd"
(cd "$DB_TMP/cwd" && "$DB_BIN" bisect start "$D/ref" "$D/target" >/dev/null 2>&1) ||
	fail "start with the default session"
[ -s "$DB_TMP/cwd/dumpbisect.session" ] || fail "no ./dumpbisect.session"

# the verdict-less `bisect REF TARGET` keeps refusing bisect options
expect 2 "bisect without verb or --auto" "$DB_BIN" bisect "$D/ref" "$D/target" --band ok
finish t_bisect_verbs
