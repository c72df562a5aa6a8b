#!/bin/bash
# The TUI in a real pseudo-terminal (tmux): it draws the heatmap and quits
# on q. Polls capture-pane in a bounded loop (0.05 s steps, 10 s at most).
. "$DB_SRC/tests/tui/lib.sh"

if ! command -v tmux >/dev/null; then
	echo "tmux not installed: skipped"
	exit 0
fi
SOCK=$T/tmux.sock
cleanup() { tmux -S "$SOCK" kill-server 2>/dev/null || true; }
trap cleanup EXIT

# wait_for WHAT COMMAND...: poll until COMMAND succeeds, at most 200 times.
wait_for() {
	local what=$1 i
	shift
	for i in $(seq 200); do
		if "$@"; then
			return 0
		fi
		sleep 0.05
	done
	echo "FAIL: timed out waiting for $what; the pane was:" >&2
	cat "$T/pane.txt" >&2 2>/dev/null || echo "(no capture: tmux not running)" >&2
	FAILS=$((FAILS + 1))
	return 1
}

pane_has() {
	tmux -S "$SOCK" capture-pane -p -t tui >"$T/pane.txt" 2>/dev/null &&
		grep -q -- "$1" "$T/pane.txt"
}

tmux -S "$SOCK" -f /dev/null new-session -d -s tui -x 100 -y 30 \
	"cd '$DB_FIXTURES' && env HOME='$T/home' LANG=C.UTF-8 TZ=UTC '$DB_BIN' demo/ref demo/target; echo \$? >'$T/exit'"

# The whole frame, not its first line: tmux may be captured mid-frame.
heatmap_drawn() {
	pane_has 'first divergence L7 attn.o_proj rank 1' &&
		grep -Eq '^▸L7 .*✗✗ 0\.8966' "$T/pane.txt" && grep -q '✓ ok  ~ drift' "$T/pane.txt"
}

if wait_for "the heatmap" heatmap_drawn; then
	check "title bar" grep -q 'dumpbisect  demo/ref ⇄ demo/target' "$T/pane.txt"
	tmux -S "$SOCK" send-keys -t tui q
	if wait_for "exit after q" test -s "$T/exit"; then
		check "exit code 0 after q" grep -qx 0 "$T/exit"
	fi
fi
if [ "$FAILS" -ne 0 ] && [ -f "$T/pane.txt" ]; then
	echo "last capture of the pane:" >&2
	cat "$T/pane.txt" >&2
fi
finish
