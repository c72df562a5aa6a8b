#!/bin/bash
# kill -9 a process that saves a session over and over, at many points,
# then `bisect --run` itself (below),
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
# fewer rounds under the sanitizer (each start costs ~0.5 s there); the
# plain build kills at the full spread
K1=40 K2=50
ldd "$BIN" 2>/dev/null | grep -q libasan && K1=12 K2=16
last=-1
for round in $(seq 1 $K1); do
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
# save still works, they never shadow the session, and it removes them
ls "$DB_TMP" | grep -v '^session.yaml$' | grep -qv '^session.yaml.tmp.' && { echo "unexpected files:"; ls "$DB_TMP"; fail=1; }
left=$(ls "$DB_TMP" | grep -c '^session.yaml.tmp.')
echo "$K1 kills, last generation seen $last, $left temp files left by them"
: >"$DB_TMP/other.yaml.tmp.AbC123"      # another file's: not ours to remove
DB_SESSION_SAVES=1 DB_SESSION_SAVE_LOOP="$f" "$BIN" >/dev/null || { echo "the save after the kills failed"; fail=1; }
n=$(ls "$DB_TMP" | grep -c '^session.yaml.tmp.')
[ "$n" = 0 ] || { echo "$n temp files still there after the next save"; fail=1; }
[ -e "$DB_TMP/other.yaml.tmp.AbC123" ] || { echo "the next save removed another file's temp file"; fail=1; }
rm -f "$DB_TMP/other.yaml.tmp.AbC123"

# The real thing: `bisect --run`, SIGKILLed at varying points over 50
# runs. The --run command says which layer it was asked for, then waits for
# the test to let it go (no sleeps: the test decides where the kill lands):
# before any dump (opening, first save), while the command runs, or just
# after it was let go (while it copies, the tree is rescanned, the step is
# saved). The session file is always absent (killed before the first save)
# or complete: replay parses it (exit 0 or 1, never 2), and resuming it
# finishes the bisect.
: "${DB_BIN:?}" "${DB_FIXTURES:?}"
B=$DB_FIXTURES/bisect/signflip_tp2
export XDG_CACHE_HOME=$DB_TMP/cache
kills=0 complete=0 absent=0
for round in $(seq 1 $K2); do
	rm -rf "$DB_TMP/run$((round - 2))"     # its orphan commands are long done
	R=$DB_TMP/run$round
	mkdir -p "$R/stash"
	cp -r "$B/ref" "$B/target" "$R/"
	D=$(echo "$R"/target/sglang_dump_*)
	for l in 8 9 10 11 12 13 14 15; do mv "$D"/*layer_id=$l.pt "$R/stash/"; done
	mkfifo "$R/out" "$R/go"
	# <> opens the fifo without waiting for a writer, before saying the
	# layer: a "go" written after that line is never lost
	cmd="exec 3<>'$R/go'; echo L{layer}; read go <&3; cp '$R'/stash/*layer_id={layer}.pt '$D/'"
	"$DB_BIN" bisect "$R/ref" "$R/target" --auto --layers 16 --session "$R/s.yaml" \
		--format json --run "$cmd" 2>"$R/out" >/dev/null &   # --run's output goes to stderr
	pid=$!
	exec {out}<"$R/out"
	want=$((round % 4))             # killed at the want-th command (0: at once)
	mode=$((round / 4 % 2))         # 0: while it waits, 1: just after it was let go
	n=0
	while [ $n -lt $want ] && read -r line <&$out; do
		[ "${line#L}" = "$line" ] && continue
		n=$((n + 1))
		[ $n -lt $want ] || [ $mode -eq 1 ] && echo go 1<>"$R/go"
	done
	kill -9 "$pid" 2>/dev/null && kills=$((kills + 1))
	wait "$pid" 2>/dev/null
	exec {out}<&-
	echo go 1<>"$R/go"              # an orphan command still waiting ends now
	if [ ! -e "$R/s.yaml" ]; then
		absent=$((absent + 1))
		continue
	fi
	rc=0
	"$DB_BIN" replay "$R/s.yaml" >/dev/null 2>"$R/err" || rc=$?
	if [ $rc -ge 2 ]; then
		echo "round $round: session not complete (replay exit $rc): $(cat "$R/err")"
		head -5 "$R/s.yaml"
		fail=1
		break
	fi
	complete=$((complete + 1))
	# every fifth round: the killed session resumes to the end
	if [ $((round % 5)) -eq 0 ]; then
		rc=0
		"$DB_BIN" bisect --auto --session "$R/s.yaml" --run "cp '$R'/stash/*layer_id={layer}.pt '$D/'" \
			>"$R/res" 2>"$R/err" || rc=$?
		[ $rc -eq 1 ] && grep -q "^first bad layer" "$R/res" ||
			{ echo "round $round: resume failed ($rc): $(cat "$R/res" "$R/err")"; fail=1; break; }
	fi
done
[ $kills -ge $K2 ] || { echo "only $kills SIGKILLs landed"; fail=1; }
[ $complete -ge $((K2 / 2)) ] || { echo "only $complete rounds had a session to check"; fail=1; }
echo "bisect --run: $kills SIGKILLs, $complete sessions complete, $absent before the first save"
exit $fail
