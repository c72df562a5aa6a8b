#!/bin/bash
# A rescan in the workbench's bisect (<C-r>) that finds new layers makes
# them candidates (issue 11 item 8): the demo with L9..L11 not dumped yet
# bisects over L0..L8 and final; once they are dumped, <C-r> adds them and
# the steps stay. In a real terminal (tmux): the files appear between two
# keys, which a key script cannot do. --no-watch: the watcher would add the
# files on its own, racing <C-r> (and its message) under load.
. "$DB_SRC/tests/tui/lib.sh"
. "$DB_SRC/tests/tui/tmux.sh"

G=$T/grow
mkdir -p "$G"
cp -r "$DB_FIXTURES/demo/ref" "$DB_FIXTURES/demo/target" "$G/"
find "$G" \( -name '*___layer_id=9.pt' -o -name '*___layer_id=1[01].pt' \) -delete

tmux_start "cd '$G' && env HOME='$T/home' LANG=C.UTF-8 TZ=UTC '$DB_BIN' --no-watch ref target; echo \$? >'$T/exit'"
strip_before() { pane_has '^layers  0 1 2 3 4 5 6 7 8 fin$' && pane_has '^next final: '; }
strip_after() { pane_has '^layers  0 1 2 3 4 5 6 7 8 9 10 11 fin$' && pane_has '^history (1 step)$'; }
if wait_for "the workbench" pane_has 'pairs'; then
	tmux -S "$SOCK" send-keys -t tui b
	if wait_for "the bisect over L0..L8 and final" strip_before; then
		tmux -S "$SOCK" send-keys -t tui Enter
		wait_for "the first step" pane_has '^history (1 step)$'
		# the missing layers get dumped, then <C-r>
		cp -r "$DB_FIXTURES/demo/ref" "$DB_FIXTURES/demo/target" "$G/"
		tmux -S "$SOCK" send-keys -t tui C-r
		if wait_for "L9..L11 as candidates after <C-r>" strip_after; then
			check "the rescan is reported" grep -q 'rescanned: ' "$T/pane.txt"
			check "the step is kept" grep -q '^  1  final  bad ' "$T/pane.txt"
		fi
	fi
	tmux -S "$SOCK" send-keys -t tui Q
	wait_for "exit after Q" test -s "$T/exit" && check "exit 0" grep -qx 0 "$T/exit"
fi
finish
