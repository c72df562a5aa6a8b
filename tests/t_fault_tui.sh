#!/bin/bash
# A full disk while the TUI bisects (every rename fails, via the LD_PRELOAD
# shim tests/fault_inject.c): each save says "session not saved: FILE:
# rename ...: No space left on device" on the status line, the in-memory
# session stays usable (the bisect keeps going), and the file on disk keeps
# its last good version, with no temp file left behind.
. "$DB_SRC/tests/tui/lib.sh"

cc=${CC:-cc}
command -v "$cc" >/dev/null || { echo "skip: no C compiler for the shim"; exit 0; }
"$cc" -shared -fPIC -o "$T/fault_inject.so" "$DB_SRC/tests/fault_inject.c" -ldl
FAULT="LD_PRELOAD=$T/fault_inject.so DB_FAULT=rename:0 ASAN_OPTIONS=verify_asan_link_order=0"
S=$T/work/session.yaml
mkdir -p "$T/work"
steps() { grep -c 'verdict: ' "$S" 2>/dev/null || true; }

# 1. The disk is full from the start: nothing is ever written, work goes on.
TUI_ENV="$FAULT" tui_run 250 30 --session "$S" demo/ref demo/target <<EOF   # wide: the whole message
b
<Enter>
:save-display $T/full1.screen
<Enter>
:save-display $T/full2.screen
EOF
check "a failed save is reported with the file, the call and the errno text" \
	grep_screen full1 "^session not saved: $S: rename .*No space left on d"
check "the bisect goes on after the failed save" grep_screen full2 '^history \(2 steps\)'
check "the second failed save is reported too" grep_screen full2 '^session not saved: '
check "no session file appeared" test ! -e "$S"
check "no temp file left" bash -c "! ls '$T/work' | grep -q '\.tmp\.'"

# 2. Two steps saved normally, then the disk fills: the file keeps them.
tui_run 100 30 --session "$S" demo/ref demo/target <<EOF
b
<Enter><Enter>
EOF
check "two steps saved" test "$(steps)" -eq 2
cp "$S" "$T/saved.yaml"
TUI_ENV="$FAULT" tui_run 100 30 --session "$S" <<EOF
b
<Enter><Enter>
:save-display $T/full3.screen
EOF
check "the resumed session went on to 4 steps in memory" grep_screen full3 '^history \(4 steps\)'
check "the save failure is shown" grep_screen full3 '^session not saved: '
check "the file is still the last good version" cmp -s "$S" "$T/saved.yaml"
check "no temp file left" bash -c "! ls '$T/work' | grep -q '\.tmp\.'"
finish
