#!/bin/bash
# kill -9 a process that saves a session over and over, at many points,
# and check the file always holds one whole generation (old or new), never
# a torn mix. The saver is test_session's DB_SESSION_SAVE_LOOP mode; it
# prints "saved N" after each save, so we kill after a varying number of
# saves without sleeping: the kill lands wherever the next save is.
set -u
BIN="$(dirname "$DB_TMP")/test_session"
[ -x "$BIN" ] || { echo "missing $BIN"; exit 1; }
rm -rf "$DB_TMP"
mkdir -p "$DB_TMP"
f="$DB_TMP/session.yaml"
fail=0
last=-1
for round in $(seq 1 40); do
	coproc SAVER { DB_SESSION_SAVE_LOOP="$f" exec "$BIN"; }
	pid=$SAVER_PID
	want=$(( (round * 7) % 5 + 1 ))
	n=0
	while [ $n -lt $want ] && read -r line <&"${SAVER[0]}"; do
		n=$((n + 1))
	done
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	if [ $n -lt $want ]; then
		echo "round $round: the saver stopped early"
		fail=1
		break
	fi
	gen=$(DB_SESSION_CHECK="$f" "$BIN") || { echo "round $round: torn file"; cat "$f" | head -5; fail=1; break; }
	# at least the generations it announced (the file may already hold the next)
	if [ "$gen" -lt $((want - 1)) ]; then
		echo "round $round: file holds generation $gen, saver announced $((want - 1))"
		fail=1
	fi
	last=$gen
done
# kill -9 leaves temp files beside it (never the target itself); a later
# save still works and they never shadow the session
ls "$DB_TMP" | grep -v '^session.yaml$' | grep -qv '^session.yaml.tmp.' && { echo "unexpected files:"; ls "$DB_TMP"; fail=1; }
echo "40 kills, last generation seen $last"
exit $fail
