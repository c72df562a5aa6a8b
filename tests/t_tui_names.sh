#!/bin/bash
# The workbench on hostile names (tests/fixtures/names, and a tree path with
# control bytes made here): every string it draws (title paths, column
# stage names, the first-divergence line, the info lines, sub-stage rows)
# goes through db_esc first, so the screen shows \x1b, \u202e, \xff, never
# curses' ^[ glyphs or a raw control, and the widths are those of the
# escaped text (the title bar still ends at the last column).
. "$DB_SRC/tests/tui/lib.sh"

# A tree whose own path holds ESC, BEL, U+202E and an invalid byte.
R=$T/$'ref\e]0;PWNED\a\xe2\x80\xae\xff'
mkdir -p "$R" "$T/target"
cp "$DB_FIXTURES"/names/ref/* "$R/"
cp "$DB_FIXTURES"/names/target/* "$T/target/"

mkdir -p "$T/work"
# (a tree path that is not UTF-8 is kept in the session tagged !bytes, %XX
# escaped: before, YAML could not write it and the workbench exited 1)
tui_run 120 30 --session "$T/work/session.yaml" "$R" "$T/target" <<EOF
:save-display $T/names_start.screen
f
:save-display $T/names_first.screen
s
:save-display $T/names_sub.screen
w
a&b|c<Enter>
:save-display $T/names_note.screen
EOF

# safe_screen NAME: valid UTF-8 with no raw control or bidi character and
# no curses ^X glyph of one.
safe_screen() {
	python3 - "$T/$1.screen" <<'PY'
import re, sys
b = open(sys.argv[1], "rb").read()
b.decode("utf-8")
m = re.search(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\x8e\x8f\xa8-\xae]|\xe2\x81[\xa6-\xa9]|\^\[", b)
if m:
    sys.exit("raw %r at %d" % (m.group(), m.start()))
PY
}
for s in names_start names_first names_sub names_note; do
	check "$s: nothing raw on the screen" safe_screen "$s"
done
check "the session keeps the path's bytes" grep -qF 'ref: !bytes "'"$T"'/ref\e]0;PWNED\a%E2%80%AE%FF"' "$T/work/session.yaml"
replayed() { "$DB_BIN" replay "$T/work/session.yaml" 2>&1 | grep -qF 'ref\x1b]0;PWNED\x07\u202e\xff'; }
check "the session replays on that path" replayed
check "title: the tree path escaped" grep_screen names_start 'ref\\x1b\]0;PWNED\\x07\\u202e\\xff'
check "title: width measured after escaping (the view name where the 120-column layout puts it, as in every screen)" \
	python3 -c 'import sys; l = open(sys.argv[1], encoding="utf-8").readline().rstrip("\n"); sys.exit(len(l) != 118 or not l.endswith("heatmap"))' "$T/names_start.screen"
# (cut in the middle, never inside an escape: its end, whole)
check "columns: stage names escaped" grep_screen names_start '…D\\x07 '
check "columns: bidi isolates escaped" grep_screen names_start '…\\u2068 '
check "first-divergence line escaped" grep_screen names_start '^▸ first divergence L0 <script>alert\(1\)</script>\\x1b\[31m  shape_mismatch'
check "info line: the key escaped" grep_screen names_first '^L0 <script>alert\(1\)</script>\\x1b\[31m  ref \[4, 8\]'
check "sub-stage rows escaped" grep_screen names_sub '^▸   1   <script>alert\(1\)</script>\\x1b\[31m \[4, 8\]'
# The note (Markdown): names in code spans, the title as escaped prose.
N=$(ls "$T"/work/notes/*.md 2>/dev/null | head -1)
check "a note was written" test -f "$N"
note_safe() {
	python3 - "$N" <<'PY'
import re, sys
b = open(sys.argv[1], "rb").read()
b.decode("utf-8")
sys.exit(bool(re.search(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\x8e\x8f\xa8-\xae]|\xe2\x81[\xa6-\xa9]", b)))
PY
}
check "note: bytes safe" note_safe
check "note: the stage as a code span" grep -qF 'stage `<script>alert(1)</script>\x1b[31m`' "$N"
check "note: the sub-stage row as a code span" grep -qF '| `<script>alert(1)</script>\x1b[31m` |' "$N"
check "note: no HTML outside code spans" bash -c "! sed 's/\`[^\`]*\`//g' '$N' | grep -q '<script>'"
check "note: the title as escaped prose" grep -qF '# 01 — a&amp;b\|c' "$N"
check "note: the tree path as a code span, escaped" grep -qF 'ref\x1b]0;PWNED\x07\u202e\xff` (reference)' "$N"

# The status line: a message quoting a path with ESC, BEL and U+202E (the
# session's folder, where the note goes).
W=$T/$'w\e]0;x\a\xe2\x80\xae'
mkdir -p "$W"
tui_run 120 30 --session "$W/session.yaml" names/ref names/target <<EOF
f
w
t<Enter>
:save-display $T/names_msg.screen
EOF
check "names_msg: nothing raw on the screen" safe_screen names_msg
check "status line: the path escaped" grep_screen names_msg '^wrote note 01: .*/w\\x1b\]0;x\\x07\\u202e/notes/01_t\.md'
finish
