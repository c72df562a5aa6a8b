#!/bin/bash
# Issue 34: session files written by the release before it (format 1,
# tests/fixtures/session_v1/README.md says how they were made) open in this
# one and are migrated:
# - passes.session: a bisect that found L2 on pass 3 kept in 'earlier', a
#   one-step bisect of pass 0 current, a mark of no pass. The mark is placed
#   on pass 3 (the bisect that found its layer), drawn there and not on
#   pass 0; the export lists pass 3's bisect first and the mark's pass; b on
#   pass 3 resumes the found bisect; the file saved is format 2.
# - auto_session.yaml + a/notes/01_rotary_looks_off.md: a session-less
#   workbench's session listing a note it wrote into ./notes of folder a.
#   Opened from folder a, the note moves beside the session (a link stays in
#   a/notes); opened from folder b it is there, and exported.
. "$DB_SRC/tests/tui/lib.sh"
V1=$DB_FIXTURES/session_v1
S=$T/passes.session
sed "s|@FIXTURES@|$DB_FIXTURES|" "$V1/passes.session" >"$S"
R=realdump/steps_hook_tp2

# headless: export migrates in memory (the file is left as it is)
"$DB_BIN" export "$S" --out "$T/rep" >/dev/null
MD=$T/rep/report.md
check "the old file is still format 1 (export does not rewrite it)" grep -qx 'dumpbisect_session: 1' "$S"
check "v1 mark placed on pass 3" grep -qx \
	'| - | 3 | L2 | `self_attn.rotary_emb.0` | all | confirmed | rotary on decode step 3 |' "$MD"
check "v1 export centres on the found bisect" grep -q '^first bad layer L2' "$MD"
check "v1 export: pass 3's log first, then pass 0's" python3 - "$MD" <<'PY'
import sys
log = open(sys.argv[1]).read().split("## Bisect log", 1)[1].split("## Marks", 1)[0]
assert 0 <= log.find("### pass 3") < log.find("### pass 0"), log
PY
check "metrics.json carries the mark's place" python3 - "$T/rep/metrics.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["marks"]
assert m == [{"phase": "", "pass": "3", "layer": 2, "stage": "self_attn.rotary_emb.0",
              "rank": "all", "status": "confirmed", "text": "rotary on decode step 3",
              "time": m[0]["time"]}], m
PY

# the workbench: the mark on pass 3 only; b on pass 3 resumes its bisect
tui_run 100 30 --session "$S" <<EOF
:goto L2 self_attn.rotary_emb.0
:save-display $T/v1_pass0.screen
:pass 3
:goto L2 self_attn.rotary_emb.0
:save-display $T/v1_pass3.screen
b
:save-display $T/v1_b3.screen
q
q
EOF
check "opens on pass 0 (the session's)" grep_screen v1_pass0 '^phase -  pass \[0\] 1/4'
check "pass 0: no mark drawn" bash -c "! grep -q '◆' '$T/v1_pass0.screen'"
check "pass 3: the mark on L2" grep_screen v1_pass3 '^◆?.?L2 .*◆'
check "b on pass 3 resumes the found bisect" grep_screen v1_b3 \
	'^back to the bisect on pass 3 \(4 steps\); the one on pass 0 is kept$'
check "found L2" grep_screen v1_b3 '^\[found\] first bad layer: L2$'
check "saved as format 2" grep -qx 'dumpbisect_session: 2' "$S"
check "the mark keeps its pass" python3 - "$S" <<'PY'
import sys
t = open(sys.argv[1]).read()
marks = t.split("\nmarks:\n", 1)[1].split("\nnotes:", 1)[0]
assert 'pass: "3"' in marks and 'layer: 2' in marks, marks
PY

# the session-less workbench's old session: the note found from anywhere
export XDG_STATE_HOME=$T/state
mkdir -p "$T/a" "$T/b"
run_in() {      # run_in DIR < keys: the workbench without --session in DIR
	local dir=$1
	cat >"$T/script"
	(cd "$dir" && env -i PATH=/usr/bin:/bin HOME="$T/home" TZ=UTC TERM=xterm-256color \
		LANG=C.UTF-8 LINES=30 COLUMNS=100 XDG_STATE_HOME="$XDG_STATE_HOME" \
		DUMPBISECT_SCRIPT="$T/script" DUMPBISECT_WATCHDOG=30 \
		"$DB_BIN" "$DB_FIXTURES/$R/ref" "$DB_FIXTURES/$R/target") >"$T/stdout" 2>"$T/stderr" ||
		{ echo "FAIL: workbench in $dir" >&2; cat "$T/stderr" >&2; FAILS=$((FAILS + 1)); }
}
# where this checkout's trees keep their automatic session: made by a mark
run_in "$T/b" <<EOF
:mark made to find the folder
q
EOF
AS=$(find "$T/state" -name session.yaml | head -1)
check "an automatic session was made" test -n "$AS"
sed "s|@FIXTURES@|$DB_FIXTURES|" "$V1/auto_session.yaml" >"$AS"
cp -r "$V1/a/notes" "$T/a/"
cp "$T/a/notes/01_rotary_looks_off.md" "$T/note.orig"
# from folder b first: not found from there, said, nothing lost
run_in "$T/b" <<EOF
:save-display $T/auto_b0.screen
q
EOF
check "from b: the old note is said not found from here" grep_screen auto_b0 \
	'1 note the session lists not found from here'
check "from b: the note is still in a" test -f "$T/a/notes/01_rotary_looks_off.md"
# from folder a: moved beside the session, a link left
run_in "$T/a" <<EOF
:save-display $T/auto_a.screen
q
EOF
ND=$(dirname "$AS")/notes
check "from a: said moved" grep_screen auto_a 'moved 1 note beside the session'
check "the note is beside the session now" cmp -s "$ND/01_rotary_looks_off.md" "$T/note.orig"
check "a link stays in a/notes" test -L "$T/a/notes/01_rotary_looks_off.md"
check "the link reads the note" cmp -s "$T/a/notes/01_rotary_looks_off.md" "$T/note.orig"
check "the session lists it by its new path" grep -qF "\"$ND/01_rotary_looks_off.md\"" "$AS"
# from folder b: found, listed and exported
run_in "$T/b" <<EOF
:view notes
:save-display $T/auto_b_notes.screen
q
:export
q
EOF
check "from b: the notes view lists it" grep_screen auto_b_notes '01.*rotary looks off'
check "from b: exported into b's report" grep -q '^- \[01_rotary_looks_off\.md\](.*) — rotary looks off$' \
	"$T/b/report/report.md"
finish
