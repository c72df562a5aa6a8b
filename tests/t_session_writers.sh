#!/bin/bash
# Two writers on one session (issue 26 item 11): no verdict is ever lost.
# - `bisect bad` and `bisect skip 3` started together, 10 rounds: both exit
#   0 and both verdicts are in the session (the verbs take the session lock
#   from load to save, so they take turns);
# - `bisect run`, whose CMD records a verdict of its own with a verb on the
#   same session: the run's save merges it in, the run goes on from there;
# - the workbench open on the session while the CLI judges: its next save
#   and its quit keep the CLI's verdict (merged, and it says so).
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
fresh_tmp
D=$DB_FIXTURES/demo
S=$DB_TMP/s.yaml
verdicts() { "$DB_BIN" bisect log --session "$S" | grep '^dumpbisect bisect \(good\|bad\|skip\) ' |
	sed 's/ --session.*//; s/^dumpbisect bisect //' | sort | tr '\n' ,; }

expect 0 "start" "$DB_BIN" bisect start "$D/ref" "$D/target" --session "$S"
lost=0
for round in $(seq 10); do
	"$DB_BIN" bisect reset --session "$S" >/dev/null 2>&1 || fail "round $round: reset"
	"$DB_BIN" bisect bad --session "$S" >/dev/null 2>"$DB_TMP/e1" &
	p1=$!
	"$DB_BIN" bisect skip 3 --session "$S" >/dev/null 2>"$DB_TMP/e2" &
	p2=$!
	wait $p1 || fail "round $round: bisect bad exited $?: $(cat "$DB_TMP/e1")"
	wait $p2 || fail "round $round: bisect skip 3 exited $?: $(cat "$DB_TMP/e2")"
	[ "$(verdicts)" = "bad final,skip 3," ] || lost=$((lost + 1))
done
[ $lost = 0 ] || fail "two verbs at once: a verdict lost in $lost of 10 rounds"

# bisect run: a second writer during the run (CMD itself records skip 2
# when asked about L5, then says good); the run's save merges it
expect 0 "reset" "$DB_BIN" bisect reset --session "$S"
cmd="[ \"\$1\" = 5 ] && '$DB_BIN' bisect skip 2 --session '$S' >/dev/null; test \"\$DUMPBISECT_AUTO\" = good"
expect 0 "run with a second writer" "$DB_BIN" bisect run "$cmd" --session "$S" --format json
has "$err" "merged with them" "run says it merged"
v=$(verdicts)
has "$v" "skip 2," "the verb's verdict during the run is kept"
has "$v" "good 5," "the run's verdict on L5 is kept"
has "$out" '"first_bad_layer": 7' "the run still ends on L7"

# the workbench: open on the session, the CLI judges while it waits, then
# it accepts the proposed verdict (a save) and quits (another save)
expect 0 "reset" "$DB_BIN" bisect reset --session "$S"
cat >"$DB_TMP/keys" <<KEYS
b
:save-display $DB_TMP/ready.screen
@wait-file $DB_TMP/go
<Enter>
:save-display $DB_TMP/after.screen
q
KEYS
env DUMPBISECT_SCRIPT="$DB_TMP/keys" DUMPBISECT_WATCHDOG=30 TERM=xterm LINES=30 COLUMNS=100 \
	"$DB_BIN" --session "$S" >/dev/null 2>"$DB_TMP/tui.err" &
pid=$!
for ((i = 0; i < 300; i++)); do [ -e "$DB_TMP/ready.screen" ] && break; sleep 0.1; done
[ -e "$DB_TMP/ready.screen" ] || fail "the workbench never got ready"
expect 0 "CLI verdict while the workbench is open" "$DB_BIN" bisect skip 3 --session "$S"
touch "$DB_TMP/go"
wait $pid || fail "the workbench exited $?: $(cat "$DB_TMP/tui.err")"
grep -q "merged with verdicts another dumpbisect saved" "$DB_TMP/after.screen" 2>/dev/null ||
	fail "the workbench does not say it merged"
[ "$(verdicts)" = "bad final,skip 3," ] ||
	fail "after the workbench quit: verdicts $(verdicts), want the CLI's skip 3 and its bad final"

# quitting alone (no verdict in the workbench) keeps a CLI verdict too
expect 0 "reset" "$DB_BIN" bisect reset --session "$S"
rm -f "$DB_TMP/go" "$DB_TMP/ready.screen"
printf ':save-display %s/ready.screen\n@wait-file %s/go\nq\n' "$DB_TMP" "$DB_TMP" >"$DB_TMP/keys"
env DUMPBISECT_SCRIPT="$DB_TMP/keys" DUMPBISECT_WATCHDOG=30 TERM=xterm LINES=30 COLUMNS=100 \
	"$DB_BIN" --session "$S" >/dev/null 2>"$DB_TMP/tui.err" &
pid=$!
for ((i = 0; i < 300; i++)); do [ -e "$DB_TMP/ready.screen" ] && break; sleep 0.1; done
expect 0 "CLI verdict" "$DB_BIN" bisect bad --session "$S"
touch "$DB_TMP/go"
wait $pid || fail "the workbench exited $?: $(cat "$DB_TMP/tui.err")"
[ "$(verdicts)" = "bad final," ] || fail "quitting the workbench erased the CLI verdict: $(verdicts)"
finish t_session_writers
