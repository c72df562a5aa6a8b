#!/bin/bash
# A full disk while the TUI bisects (every rename fails, via the LD_PRELOAD
# shim tests/fault_inject.c): each save says "session not saved: FILE:
# rename: No space left on device" on the status line, the in-memory
# session stays usable (the bisect keeps going), and the file on disk keeps
# its last good version, with no temp file left behind. Notes and exports
# too, on a full disk and a read-only file system (3.).
. "$DB_SRC/tests/tui/lib.sh"

cc=${CC:-cc}
command -v "$cc" >/dev/null || { echo "skip: no C compiler for the shim"; exit 0; }
"$cc" -shared -fPIC -o "$T/fault_inject.so" "$DB_SRC/tests/fault_inject.c" -ldl
FAULT="LD_PRELOAD=$T/fault_inject.so DB_FAULT=rename:0 ASAN_OPTIONS=verify_asan_link_order=0"
S=$T/work/session.yaml
mkdir -p "$T/work"
steps() { grep -c 'verdict: ' "$S" 2>/dev/null || true; }

# 1. The disk is full from the start: nothing is ever written, work goes on.
# (a session not saved when the workbench quits: exit 1, said on stderr)
TUI_WANT_RC=1 TUI_ENV="$FAULT" tui_run 250 30 --session "$S" demo/ref demo/target <<EOF   # wide: the whole message
b
<Enter>
:save-display $T/full1.screen
<Enter>
:save-display $T/full2.screen
EOF
check "a failed save is reported with the file, the call and the errno text" \
	grep_screen full1 "^session not saved: $S: rename: No space left on d"
check "the bisect goes on after the failed save" grep_screen full2 '^history \(2 steps\)'
check "the second failed save is reported too" grep_screen full2 '^session not saved: '
check "no session file appeared" test ! -e "$S"
check "the unsaved session is said once the terminal is back" \
	grep -q "^dumpbisect: session not saved: $S: rename: No space left on device" "$T/stderr"
check "no temp file left" bash -c "! ls '$T/work' | grep -q '\.tmp\.'"
check "the metrics cache that could not be saved is said once the terminal is back" \
	grep -q "metrics cache not saved: .*No space left on device" "$T/stderr"

# 2. Two steps saved normally, then the disk fills: the file keeps them.
tui_run 100 30 --session "$S" demo/ref demo/target <<EOF
b
<Enter><Enter>
EOF
check "two steps saved" test "$(steps)" -eq 2
cp "$S" "$T/saved.yaml"
TUI_WANT_RC=1 TUI_ENV="$FAULT" tui_run 100 30 --session "$S" <<EOF
b
<Enter><Enter>
:save-display $T/full3.screen
EOF
check "the resumed session went on to 4 steps in memory" grep_screen full3 '^history \(4 steps\)'
check "the save failure is shown" grep_screen full3 '^session not saved: '
check "the file is still the last good version" cmp -s "$S" "$T/saved.yaml"
check "no temp file left" bash -c "! ls '$T/work' | grep -q '\.tmp\.'"

# 3. Notes and exports on a full disk (ENOSPC) and a read-only file system
#    (EROFS; the tests may run as root, who ignores mode bits): a clear
#    message, the earlier note and report intact, the workbench goes on.
rm -rf "$T/work/notes" "$T/work/report"
tui_run 100 30 --session "$S" <<EOF
w
first<Enter>
e
EOF
check "a first note" test -s "$T/work/notes/01_first.md"
check "a first report" test -s "$T/work/report/report.md"
cp "$T/work/notes/01_first.md" "$T/note.keep"
cp -r "$T/work/report" "$T/report.keep"
# (notes are created with open(O_EXCL), reports through mkstemp)
for f in "fsync:0 28 No space left on device" "open:0,mkstemp:0 30 Read-only file system"; do
	read -r spec eno text <<<"$f"
	TUI_WANT_RC=1 TUI_ENV="LD_PRELOAD=$T/fault_inject.so DB_FAULT=$spec DB_FAULT_ERRNO=$eno ASAN_OPTIONS=verify_asan_link_order=0" \
		tui_run 250 30 --session "$S" <<EOF
w
second<Enter>
:save-display $T/note_$eno.screen
e
:save-display $T/export_$eno.screen
j
:save-display $T/after_$eno.screen
EOF
	check "note $spec: a clear message" grep_screen "note_$eno" "$T/work/notes/02_second.md: .*$text"
	check "note $spec: no partial note left" test ! -e "$T/work/notes/02_second.md"
	check "note $spec: the earlier note intact" cmp -s "$T/note.keep" "$T/work/notes/01_first.md"
	check "export $spec: a clear message" grep_screen "export_$eno" "^export failed: $T/work/report/.*$text"
	check "export $spec: the earlier report intact" diff -r "$T/report.keep" "$T/work/report"
	check "$spec: the workbench goes on" grep_screen "after_$eno" '^embed\.embed_out rank '
	check "$spec: no temp file left" bash -c "! find '$T/work' -name '*.tmp.*' | grep -q ."
done
finish
