#!/bin/bash
# The TUI in a real pseudo-terminal (tmux): it draws the heatmap and quits
# on q.
. "$DB_SRC/tests/tui/lib.sh"
. "$DB_SRC/tests/tui/tmux.sh"

tmux_start "cd '$DB_FIXTURES' && env HOME='$T/home' LANG=C.UTF-8 TZ=UTC '$DB_BIN' demo/ref demo/target; echo \$? >'$T/exit'"

if wait_for "the heatmap" heatmap_drawn; then
	check "title bar" grep -q 'dumpbisect  demo/ref ⇄ demo/target' "$T/pane.txt"
	tmux -S "$SOCK" send-keys -t tui q
	if wait_for "exit after q" test -s "$T/exit"; then
		check "exit code 0 after q" grep -qx 0 "$T/exit"
	fi
fi
finish
