#!/bin/bash
# man/dumpbisect.1 and man/dumpbisect-profile.5 render without warnings;
# the KEYS section of dumpbisect.1 is exactly `dumpbisect --keys-man` (so
# the page cannot drift from the action table); every ":command" the page
# documents exists in ui/cmdline.c and the other way round; and every example
# command line ("$ dumpbisect ... # exit N" in an .EX block) runs against
# the bundled fixtures with the exit status the page states.
# DB_UPDATE_MAN=1 rewrites the generated KEYS section from the binary.
set -u
: "${DB_BIN:?}" "${DB_SRC:?}" "${DB_FIXTURES:?}" "${DB_TMP:?}"
PAGE=$DB_SRC/man/dumpbisect.1
rm -rf "$DB_TMP"
mkdir -p "$DB_TMP"
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

BEGIN='.\" BEGIN GENERATED KEYS (dumpbisect --keys-man)'
END='.\" END GENERATED KEYS'

# --- generated key section -----------------------------------------------
"$DB_BIN" --keys-man >"$DB_TMP/keys.want" || fail "--keys-man exited $?"
[ -s "$DB_TMP/keys.want" ] || fail "--keys-man printed nothing"
if [ "${DB_UPDATE_MAN:-0}" = 1 ]; then
	B="$BEGIN" E="$END" awk -v f="$DB_TMP/keys.want" '
		BEGIN { b = ENVIRON["B"]; e = ENVIRON["E"] }
		$0 == b { print; while ((getline l < f) > 0) print l; skip = 1; next }
		$0 == e { skip = 0 }
		!skip' "$PAGE" >"$DB_TMP/page.new" && cat "$DB_TMP/page.new" >"$PAGE"
fi
grep -qxF "$BEGIN" "$PAGE" || fail "no BEGIN GENERATED KEYS marker"
grep -qxF "$END" "$PAGE" || fail "no END GENERATED KEYS marker"
B="$BEGIN" E="$END" awk 'BEGIN { b = ENVIRON["B"]; e = ENVIRON["E"] }
	$0 == e { on = 0 } on; $0 == b { on = 1 }' "$PAGE" >"$DB_TMP/keys.got"
diff -u "$DB_TMP/keys.want" "$DB_TMP/keys.got" >&2 ||
	fail "KEYS section differs from dumpbisect --keys-man (DB_UPDATE_MAN=1 rewrites it)"
# facts a reader relies on, checked on their own
grep -q 'action \\fBnote\\-new\\fR' "$DB_TMP/keys.got" || fail "no note-new action in KEYS"
grep -q '^\.SS Bisect$' "$DB_TMP/keys.got" || fail "no Bisect key list"

# --- the :commands -------------------------------------------------------
# documented: ".BI :name" / ".BR :name" / ".B :name" lines of the Command
# line subsection; present: the {"name", ...} rows of the command table.
sed -n '/^\.SS Command line$/,/^\.SS /p' "$PAGE" |
	grep -oE ':[a-z]([a-z]|\\-)*' | sed 's/\\-/-/g; s/^://' | sort -u >"$DB_TMP/cmds.doc"
grep -o '^	{"[a-z-]*", "[^"]*", "' "$DB_SRC/ui/cmdline.c" |
	sed 's/^	{"\([a-z-]*\)".*/\1/' | sort -u >"$DB_TMP/cmds.src"
[ -s "$DB_TMP/cmds.src" ] || fail "no :commands found in ui/cmdline.c"
diff -u "$DB_TMP/cmds.src" "$DB_TMP/cmds.doc" >&2 ||
	fail ":commands in the page differ from ui/cmdline.c (above: source vs page)"

# --- options -------------------------------------------------------------
# Every option a command's --help lists is documented in that command's
# OPTIONS subsection, and in the SYNOPSIS.
# One usage for the workbench, however it is asked for.
[ "$("$DB_BIN" --help 2>&1)" = "$("$DB_BIN" --no-mouse --help 2>&1)" ] ||
	fail "dumpbisect --help and dumpbisect --no-mouse --help differ"
for c in workbench compare ls schema bisect replay export; do
	if [ "$c" = workbench ]; then
		help=$("$DB_BIN" --help 2>&1)
		ss='Workbench (no command)'
	else
		help=$("$DB_BIN" "$c" --help 2>&1)
		ss=$c
	fi
	opts=$(printf '%s\n' "$help" | grep -oE -- '--[a-z][a-z-]+' | sort -u)
	[ -n "$opts" ] || fail "no options in the --help of $c"
	sect=$(awk -v s=".SS $ss" '$0 == s { on = 1; next } on && /^\.S[SH] / { exit } on' "$PAGE" |
		sed 's/\\-/-/g')
	[ -n "$sect" ] || fail "no OPTIONS subsection '.SS $ss'"
	syn=$(sed -n '/^\.SH SYNOPSIS/,/^\.SH DESCRIPTION/p' "$PAGE" | sed 's/\\-/-/g')
	for o in $opts; do
		printf '%s\n' "$sect" | grep -qE -- "(^|[ \"]|\\\\fP)$o( |\"|\$)" ||
			fail "$c --help lists $o; OPTIONS/$ss does not"
		printf '%s\n' "$syn" | grep -qE -- "(^|[ \"]|\\\\fP)$o( |\"|\$)" ||
			fail "$c --help lists $o; SYNOPSIS does not"
	done
done

# --- rendering -----------------------------------------------------------
for p in "$PAGE" "$DB_SRC/man/dumpbisect-profile.5"; do
	w=$(LC_ALL=C.UTF-8 groff -man -ww -Tutf8 "$p" 2>&1 >/dev/null)
	[ -z "$w" ] || fail "groff warnings in ${p##*/}: $w"
	if command -v mandoc >/dev/null; then
		# The generated key lines are the help texts, one per line; their
		# length is the action table's business, not a page defect.
		lo=$(grep -nxF "$BEGIN" "$p" | cut -d: -f1)
		hi=$(grep -nxF "$END" "$p" | cut -d: -f1)
		w=$(mandoc -Tlint "$p" 2>&1 | awk -F: -v lo="${lo:-0}" -v hi="${hi:-0}" '
			!($3 > lo && $3 < hi && /STYLE: input text line longer than 80 bytes/)')
		[ -z "$w" ] || fail "mandoc -Tlint ${p##*/}: $w"
	fi
done
# Rendered text a user copies must be plain ASCII dashes and quotes.
LC_ALL=C.UTF-8 MANWIDTH=200 groff -man -Tutf8 -rLL=200n "$PAGE" 2>/dev/null |
	sed 's/.\x08//g' >"$DB_TMP/page.txt"
grep -q -- 'dumpbisect compare tests/fixtures/demo/ref tests/fixtures/demo/target --filter' \
	"$DB_TMP/page.txt" || fail "rendered examples do not read as typed commands"

# --- examples ------------------------------------------------------------
# roff escapes back to text (the same set the profile page test undoes).
# Each "$ dumpbisect" line of an .EX block is a command; the lines after it
# up to the next "$ " line are its output as the page prints it: each of
# them (but blank lines and lines with "...", which elide) must be a line of
# the real output, trailing blanks aside.
awk -v dir="$DB_TMP" '
	$0 == ".\\\" not-run" { skip = 1; next }
	$0 == ".EX" { inex = 1; next }
	$0 == ".EE" { inex = 0; skip = 0; cmd = 0; next }
	!inex || skip { next }
	{
		gsub(/\\\(aq/, "\047"); gsub(/\\\(dq/, "\""); gsub(/\\\(ha/, "^")
		gsub(/\\\(ti/, "~"); gsub(/\\-/, "-"); gsub(/\\&/, ""); gsub(/\\e/, "\\")
		gsub(/\\\(en/, "–")
	}
	/^\$ dumpbisect / { n++; cmd = 1; print substr($0, 3) > (dir "/examples")
		printf "" > (dir "/ex" n ".expect"); next }
	/^\$ / { cmd = 0; next }
	cmd && $0 != "" && !/\.\.\./ { sub(/[ \t]+$/, ""); print > (dir "/ex" n ".expect") }
' "$PAGE"
n=$(wc -l <"$DB_TMP/examples")
[ "$n" -ge 12 ] || fail "only $n example commands extracted"

# Run from a scratch copy of the repository's layout (tests/ is a link), so
# the relative paths of the page work and sessions, reports and notes land
# in the scratch dir. The TUI examples quit at once in scripted mode.
W=$DB_TMP/work
mkdir -p "$W/home/.config" "$W/bin"
ln -s "$DB_SRC/tests" "$W/tests"
ln -s "$DB_BIN" "$W/bin/dumpbisect"
printf 'Q\n' >"$DB_TMP/quit.keys"
i=0
n_out=0
while IFS= read -r cmd; do
	i=$((i + 1))
	want=$(printf '%s\n' "$cmd" | sed -n 's/.*# exit \([0-9]\)$/\1/p')
	if [ -z "$want" ]; then
		fail "example $i has no '# exit N': $cmd"
		continue
	fi
	(cd "$W" && env -i PATH="$W/bin:/usr/bin:/bin" HOME="$W/home" TZ=UTC \
		LANG=C.UTF-8 TERM=xterm LINES=30 COLUMNS=100 \
		DUMPBISECT_SCRIPT="$DB_TMP/quit.keys" DUMPBISECT_WATCHDOG=30 \
		bash -c "$cmd" >"$DB_TMP/ex$i.out" 2>"$DB_TMP/ex$i.err" </dev/null)
	rc=$?
	if [ "$rc" != "$want" ]; then
		fail "example $i exited $rc, the page says $want: $cmd"
		head -5 "$DB_TMP/ex$i.err" >&2
	fi
	sed 's/[ \t]*$//' "$DB_TMP/ex$i.out" >"$DB_TMP/ex$i.trim"
	while IFS= read -r line; do
		n_out=$((n_out + 1))
		grep -qxF -- "$line" "$DB_TMP/ex$i.trim" ||
			fail "example $i does not print this line the page shows: '$line'"
	done <"$DB_TMP/ex$i.expect"
done <"$DB_TMP/examples"
[ "$n_out" -ge 25 ] || fail "only $n_out output lines of the examples checked"

# What the examples claim to produce.
[ -s "$W/demo.session" ] || fail "the bisect example wrote no demo.session"
for f in report.md heatmap.svg metrics.json metrics.csv; do
	[ -s "$W/report/$f" ] || fail "the export example wrote no report/$f"
done
[ "$(head -1 "$W/o_proj.csv" 2>/dev/null | cut -d, -f1-5)" = "phase,pass,rank,layer,stage" ] ||
	fail "o_proj.csv has no CSV header"
[ "$(grep -c ',attn.o_proj,' "$W/o_proj.csv" 2>/dev/null)" = 24 ] ||
	fail "o_proj.csv does not hold the 24 attn.o_proj pairs"
grep -q '"kind": *"sudden-drop"' "$W/bisect.json" 2>/dev/null ||
	fail "bisect.json is not the JSON the example promises"

# The output excerpts printed in the page are real: each line must occur
# in the output of the command above it.
check_out() { # EXAMPLE_NUMBER FIXED_STRING
	grep -qF -- "$2" "$DB_TMP/ex$1.out" || fail "example $1 output lacks: $2"
}
ex_of() { # the number of the example whose command contains $1
	grep -nF -- "$1" "$DB_TMP/examples" | head -1 | cut -d: -f1
}
e=$(ex_of 'ls tests/fixtures/demo/ref')
check_out "$e" 'files   344 parsed (0 refused) + 0 unparsed + 0 not dump-named = 344 files; 0 skipped'
e=$(ex_of 'schema tests/fixtures/demo/ref')
check_out "$e" '368 pairs checked: 0 ref-only, 0 target-only, 0 shape, 0 dtype, 0 unreadable'
e=$(ex_of 'compare tests/fixtures/demo/ref tests/fixtures/demo/target  ')
check_out "$e" 'first divergence: L7 attn.o_proj rank 1 pass 0: cos -1.00000000 rel 2.0000e+00 [scramble]'
check_out "$e" '368 pairs: 233 ok, 2 drift, 22 algo, 110 bug, 1 scramble'
e=$(ex_of '--auto --session demo.session')
check_out "$e" 'first bad layer L7: hidden_out cos 1 -> 0.85899, rel 0.667'
check_out "$e" '  substage: attn.o_proj'
check_out "$e" '   3. L8     bad  (auto) cos 0.86650918 rel 0.57 bug'
e=$(ex_of 'sparse/target --auto --layers 16')
check_out "$e" 'inconclusive: one of L9..L12 (L9–L11 not dumped)'
e=$(ex_of 'replay demo.session ')
check_out "$e" 'first bad layer: then L7, now L7'
e=$(ex_of 'replay demo.session --target')
check_out "$e" 'first bad layer: then L7, now none (no-bad) (moved)'
check_out "$e" '2 of 5 verdicts hold'

# Example 6 is keys in the workbench: f <Enter> w TITLE must write the note
# the page names, with the sub-stage table in its Data section.
grep -qF '.B notes/01_sign_flip_in_attn_o_proj.md' "$PAGE" ||
	fail "the page no longer names the note this test checks"
printf 'f\n<Enter>\nw\nsign flip in attn.o_proj<Enter>\nQ\n' >"$DB_TMP/note.keys"
(cd "$W" && env -i PATH="$W/bin:/usr/bin:/bin" HOME="$W/home" TZ=UTC LANG=C.UTF-8 \
	TERM=xterm LINES=30 COLUMNS=100 DUMPBISECT_SCRIPT="$DB_TMP/note.keys" \
	DUMPBISECT_WATCHDOG=30 dumpbisect --session demo.session \
	tests/fixtures/demo/ref tests/fixtures/demo/target) >/dev/null 2>"$DB_TMP/note.err" ||
	fail "the note example exited $?: $(head -3 "$DB_TMP/note.err")"
N=$W/notes/01_sign_flip_in_attn_o_proj.md
[ -f "$N" ] || fail "w did not write $N: $(ls "$W/notes" 2>&1)"
for sec in Hypothesis Experiment Data Conclusion 'Next step'; do
	grep -qx "## $sec" "$N" 2>/dev/null || fail "the note has no '## $sec' section"
done
grep -q '^| `attn.o_proj` | -1.00000000 | 2 | scramble |' "$N" 2>/dev/null ||
	fail "the note's Data has no attn.o_proj row with real numbers"

if [ "$fails" -ne 0 ]; then
	echo "$fails check(s) failed" >&2
	exit 1
fi
echo "ok: $n examples"
