#!/bin/bash
# The workbench's export (no --session): every link in report.md opens a
# file from where report.md is, the notes' too (issue 25: they said
# ./notes/..., which is not beside the report).
. "$DB_SRC/tests/tui/lib.sh"

mkdir -p "$T/out"
tui_run 80 24 --no-session --notes "$T/notes" demo/ref demo/target <<EOF2
w
first look<Enter>
w
layer 7<Enter>
:export $T/out/report
:save-display $T/exported.screen
q
EOF2
check "exported" grep_screen exported '^exported report.md'
md=$T/out/report/report.md
check "the notes are listed" test "$(grep -c '^- \[0[12]_' "$md" 2>/dev/null)" -eq 2
bad=0
n=0
while IFS= read -r link; do
	n=$((n + 1))
	[ -f "$(dirname "$md")/$link" ] || { echo "FAIL: $link does not resolve from $(dirname "$md")" >&2; bad=1; }
done < <(grep -o '](\([^)]*\))' "$md" | sed 's/^](\(.*\))$/\1/')
check "every link in report.md resolves" test "$bad" -eq 0
check "links found: $n" test "$n" -ge 3
check "the notes' links are relative" grep -q '^- \[01_first_look.md\](\.\./\.\./notes/01_first_look.md) — ' "$md"
finish
