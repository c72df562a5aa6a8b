#!/bin/bash
# Soak (issue 14): the workbench in a real pseudo-terminal (tmux) under a
# stream of random keys, terminal resizes and extra SIGWINCHs while the
# tree is still being computed (a slow-disk shim, tests/slow_mmap.c, keeps
# the scan going). Bounded: a fixed number of keys, every wait polls with a
# limit (the watchdog: a hang is a failure, not a stuck CI). It must not
# crash or hang, must still answer (redraws the heatmap at the end), and
# must quit on Q with the terminal given back (canonical mode, echo).
. "$DB_SRC/tests/tui/lib.sh"
. "$DB_SRC/tests/tui/tmux.sh"

cc=${CC:-cc}
command -v "$cc" >/dev/null || { echo "skip: no C compiler for the shim"; exit 0; }
"$cc" -shared -fPIC -o "$T/slow_mmap.so" "$DB_SRC/tests/slow_mmap.c" -ldl

SEED=${DB_SOAK_SEED:-$(date +%s)}
RANDOM=$SEED
echo "soak seed $SEED (DB_SOAK_SEED=$SEED reproduces the key stream)"

# Every key but the ones that quit (q at home, Q), prompt (: / w m) or
# write (e): views, moves, selectors, bisect verdicts, help, redraw.
keys=(Up Down Left Right PageUp PageDown g G Home End Enter Escape '?' n N C-l H s a i
      L b Tab BTab p P r R c C f t '[' ']' u x j k h l)
sizes=("100 30" "60 15" "200 50" "59 14" "80 24" "61 20" "120 40" "40 10")

cat >"$T/run.sh" <<EOF
cd '$DB_FIXTURES'
bash -c 'echo \$\$ >"$T/tui.pid"; exec env HOME="$T/home" LANG=C.UTF-8 TZ=UTC \
	LD_PRELOAD="$T/slow_mmap.so" DB_SLOW_MMAP_US=15000 ASAN_OPTIONS=verify_asan_link_order=0 \
	"$DB_BIN" --no-cache --threads 1 demo/ref demo/target' 2>'$T/err'
echo \$? >'$T/exit'
stty -a >'$T/stty'
exec sleep 600
EOF
tmux_start "bash '$T/run.sh'"
wait_for "the workbench" test -s "$T/tui.pid" || finish
pid=$(cat "$T/tui.pid")
computing() { pane_has 'computing'; }
# the heatmap of the whole scan, in whatever state the keys left it
soak_done() {
	pane_has '368 pairs, 135 diverge' && grep -q '^ dumpbisect  demo/ref ⇄ demo/target .* heatmap$' "$T/pane.txt"
}
check "the scan is still running when the soak starts" wait_for "computing" computing

n_keys=0 n_resize=0 n_winch=0
for batch in $(seq 40); do
	for k in $(seq 8); do
		tmux -S "$SOCK" send-keys -t tui "${keys[RANDOM % ${#keys[@]}]}"
		n_keys=$((n_keys + 1))
	done
	read -r w h <<<"${sizes[RANDOM % ${#sizes[@]}]}"
	tmux -S "$SOCK" resize-window -t tui -x "$w" -y "$h"
	n_resize=$((n_resize + 1))
	if [ $((batch % 3)) -eq 0 ]; then
		kill -WINCH "$pid" 2>/dev/null
		n_winch=$((n_winch + 1))
	fi
	if ! kill -0 "$pid" 2>/dev/null; then
		echo "FAIL: the workbench died after $n_keys keys (batch $batch); stderr:" >&2
		cat "$T/err" >&2
		FAILS=$((FAILS + 1))
		break
	fi
done
echo "$n_keys keys, $n_resize resizes, $n_winch extra SIGWINCH"
computing && echo "(still computing at the end of the stream)"

if kill -0 "$pid" 2>/dev/null; then
	# still answering: back to the heatmap at a known size, scan done
	tmux -S "$SOCK" resize-window -t tui -x 100 -y 30
	tmux -S "$SOCK" send-keys -t tui Escape Escape Escape Escape Escape Escape H
	check "alive and drawing after the soak" wait_for "the heatmap after the soak" soak_done
	tmux -S "$SOCK" send-keys -t tui Q
	if wait_for "the exit (watchdog)" test -s "$T/stty"; then
		check "exit status 0" grep -qx 0 "$T/exit"
		check "canonical mode back" grep -Eq '(^| )icanon( |$)' "$T/stty"
		check "echo back" grep -Eq '(^| )echo( |$)' "$T/stty"
		check "nothing on stderr" test ! -s "$T/err"
	else
		kill -9 "$pid" 2>/dev/null
	fi
fi
finish
