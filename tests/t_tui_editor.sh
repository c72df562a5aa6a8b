#!/bin/bash
# $EDITOR runs as git runs it (sh -c '<EDITOR> "$@"' <EDITOR> FILE), so an
# editor with quoted arguments gets them whole and the note as the last
# one; an editor that fails is said on the bottom line and the note is not
# called written (its template stays: notes are never removed).
. "$DB_SRC/tests/tui/lib.sh"

cat >"$T/ed.sh" <<'EOS'
#!/bin/sh
# records its arguments, one a line, and edits the note
for a in "$@"; do printf '%s\n' "$a"; done >"$(dirname "$0")/ed.args"
printf 'edited\n' >>"$2"
EOS
chmod +x "$T/ed.sh"

TUI_ENV="EDITOR=false" tui_run 80 24 --no-session --notes "$T/notes" demo/ref demo/target <<EOF2
w
first look<Enter>
:save-display $T/failed.screen
q
EOF2
check "a failing editor is said, the note not called written" grep_screen failed \
	'^note 01 left as its template \(\$EDITOR exited with status 1\): .*look\.md$'
check "no 'wrote note' after a failing editor" bash -c "! grep -q 'wrote note' '$T/failed.screen'"
check "the template stays" test -f "$T/notes/01_first_look.md"

printf 'w\nsecond look<Enter>\n:save-display %s/edited.screen\nq\n' "$T" >"$T/script2"
# TUI_ENV splits on blanks: this editor's value has some, so env gets it whole
(cd "$DB_FIXTURES" && env -i PATH=/usr/bin:/bin HOME="$T/home" TZ=UTC TERM=xterm-256color \
	LANG=C.UTF-8 LINES=24 COLUMNS=80 DUMPBISECT_SCRIPT="$T/script2" DUMPBISECT_WATCHDOG=30 \
	EDITOR="$T/ed.sh 'two words'" "$DB_BIN" --no-session --notes "$T/notes" demo/ref demo/target) \
	>/dev/null 2>"$T/stderr2" || { echo "FAIL: exit $?: $(cat "$T/stderr2")" >&2; FAILS=$((FAILS + 1)); }
check "a working editor: the note is written" grep_screen edited '^wrote note 02: '
check "the quoted argument arrives whole" test "$(sed -n 1p "$T/ed.args" 2>/dev/null)" = "two words"
check "the note is the last argument" test "$(sed -n 2p "$T/ed.args" 2>/dev/null)" = "$T/notes/02_second_look.md"
check "the editor edited the note" grep -q '^edited$' "$T/notes/02_second_look.md"

# the notes view's <Enter> on a note: a failing editor is said too
TUI_ENV="EDITOR=false" tui_run 80 24 --no-session --notes "$T/notes" demo/ref demo/target <<EOF2
o
<Enter>
:save-display $T/open_failed.screen
q
q
EOF2
check "opening a note with a failing editor is said" grep_screen open_failed \
	'^\$EDITOR exited with status 1: .*02_second_look\.md is as it was'
finish
