# Shared by the tests that need a real pseudo-terminal (tmux); sourced after
# lib.sh. Waits poll capture-pane in bounded loops (0.05 s steps, 10 s at
# most): a terminal has no "frame done" event to wait on.
if ! command -v tmux >/dev/null; then
	echo "tmux not installed: skipped"
	exit 0
fi
SOCK=
N_SOCK=0
tmux_stop() { [ -z "$SOCK" ] || tmux -S "$SOCK" kill-server 2>/dev/null || true; }
tmux_cleanup() {
	local s
	for s in "$T"/tmux.*.sock; do
		if [ -S "$s" ]; then
			tmux -S "$s" kill-server 2>/dev/null || true
		fi
	done
}
trap tmux_cleanup EXIT

# tmux_start CMD: a 100x30 session "tui" running CMD, on a server of its
# own (a new socket: a server still shutting down cannot be reused).
tmux_start() {
	tmux_stop
	N_SOCK=$((N_SOCK + 1))
	SOCK=$T/tmux.$N_SOCK.sock
	rm -f "$T/pane.txt"
	tmux -S "$SOCK" -f /dev/null new-session -d -s tui -x 100 -y 30 "$1"
}

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

# pane_has TEXT: the pane, captured into $T/pane.txt, holds TEXT.
pane_has() {
	tmux -S "$SOCK" capture-pane -p -t tui >"$T/pane.txt" 2>/dev/null &&
		grep -q -- "$1" "$T/pane.txt"
}

# The heatmap of demo/ref vs demo/target, whole (tmux may be captured mid-frame).
heatmap_drawn() {
	pane_has 'first divergence L7 attn.o_proj rank 1' &&
		grep -Eq '^▸L7 .*✗✗ 0\.8966' "$T/pane.txt" && grep -q '✓ ok  ~ drift' "$T/pane.txt"
}
