#!/bin/bash
# The terminal is given back on every exit path (issue 6), in a real
# pseudo-terminal (tmux). After each run the shell in the pane records the
# exit status and `stty -a`: canonical mode and echo must be back, and the
# alternate screen left (the heatmap gone from the pane).
#  - Ctrl-C while idle: the normal exit (view state saved), status 130
#  - Ctrl-\ (SIGQUIT): 131, as it asks for a core dump
#  - SIGHUP from outside: status 129
#  - SIGTERM and SIGSEGV inside a worker thread (tests/worker_signal.c,
#    an LD_PRELOAD shim): 143; and a report on stderr, then death by
#    SIGSEGV (139; under ASan, ASan's own report and status 1)
#  - Ctrl-C inside $EDITOR belongs to the editor: the workbench stays
. "$DB_SRC/tests/tui/lib.sh"
. "$DB_SRC/tests/tui/tmux.sh"

cc=${CC:-cc}
command -v "$cc" >/dev/null || { echo "skip: no C compiler for the shim"; exit 0; }
"$cc" -shared -fPIC -o "$T/worker_signal.so" "$DB_SRC/tests/worker_signal.c" -ldl

# run NAME ENV...: the workbench on the demo trees in the pane, under a
# shell that survives Ctrl-C (a trap, not an ignore, so the child gets
# the default), recording $T/NAME.{exit,stty,err,pid}.
run() {
	local name=$1
	shift
	cat >"$T/$name.sh" <<EOS
trap : INT
ulimit -c 0
cd '$DB_FIXTURES'
rm -rf '$T/home'
bash -c 'echo \$\$ >"$T/$name.pid"; exec env HOME="$T/home" LANG=C.UTF-8 TZ=UTC $* "$DB_BIN" --session "$T/$name.session" demo/ref demo/target' 2>'$T/$name.err'
echo \$? >'$T/$name.exit'
stty -a >'$T/$name.stty'
exec sleep 600
EOS
	tmux_start "bash '$T/$name.sh'"
}

# gave_back NAME WANT_STATUS...: the run ended with one of the statuses and
# left the terminal as it found it.
gave_back() {
	local name=$1 st
	shift
	wait_for "$name: the exit" test -s "$T/$name.stty" || return 0     # counted
	st=$(cat "$T/$name.exit")
	case " $* " in
	*" $st "*) ;;
	*) echo "FAIL: $name: exit status $st, want $*; stderr:" >&2
	   cat "$T/$name.err" >&2
	   FAILS=$((FAILS + 1)) ;;
	esac
	check "$name: canonical mode back" grep -Eq '(^| )icanon( |$)' "$T/$name.stty"
	check "$name: echo back" grep -Eq '(^| )echo( |$)' "$T/$name.stty"
	pane_has '' || true
	check "$name: alternate screen left" bash -c "! grep -q '✓ ok  ~ drift' '$T/pane.txt'"
}

# 1. Ctrl-C while idle, after a change of metric: the normal exit path
#    saves the view state in the session.
run int
if wait_for "int: the heatmap" heatmap_drawn; then
	tmux -S "$SOCK" send-keys -t tui c
	wait_for "int: the metric switched" pane_has 'metric rel' &&
		tmux -S "$SOCK" send-keys -t tui C-c
	gave_back int 130
	check "int: the view state was saved" grep -q 'metric: "rel"' "$T/int.session"
fi

# 2. Ctrl-\ (SIGQUIT): the terminal first, then the core dump it asks for.
run quit
if wait_for "quit: the heatmap" heatmap_drawn; then
	tmux -S "$SOCK" send-keys -t tui 'C-\'
	gave_back quit 131
fi

# 3. SIGHUP from outside (the terminal closed).
run hup
if wait_for "hup: the heatmap" heatmap_drawn; then
	kill -HUP "$(cat "$T/hup.pid")"
	gave_back hup 129
fi

# 4. SIGTERM in a worker thread: forwarded to the loop, the normal exit.
run term DB_WORKER_SIGNAL=15 LD_PRELOAD="$T/worker_signal.so" ASAN_OPTIONS=verify_asan_link_order=0
gave_back term 143

# 5. SIGSEGV in a worker thread: the terminal first, then the crash.
run segv DB_WORKER_SIGNAL=11 LD_PRELOAD="$T/worker_signal.so" ASAN_OPTIONS=verify_asan_link_order=0
gave_back segv 139 1
check "segv: reported as an internal error in a worker thread" \
	grep -q '^dumpbisect: internal error: SIGSEGV (segmentation fault) in a worker thread\.$' "$T/segv.err"

# 6. Ctrl-C inside the editor opened for a new note ends the editor only.
cat >"$T/editor" <<EOS
#!/bin/sh
touch '$T/editor.started'
exec sleep 600
EOS
chmod +x "$T/editor"
run edit EDITOR="$T/editor"
if wait_for "edit: the heatmap" heatmap_drawn; then
	tmux -S "$SOCK" send-keys -t tui w
	tmux -S "$SOCK" send-keys -t tui -l 'hypothesis'
	tmux -S "$SOCK" send-keys -t tui Enter
	if wait_for "edit: the editor" test -e "$T/editor.started"; then
		tmux -S "$SOCK" send-keys -t tui C-c
		wait_for "edit: the heatmap again" heatmap_drawn
		check "edit: still running" test ! -e "$T/edit.exit"
		tmux -S "$SOCK" send-keys -t tui q
		gave_back edit 0
	fi
fi
finish
