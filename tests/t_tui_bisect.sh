#!/bin/bash
# Bisect, notes, marks, export and the session from the TUI on the demo
# dumps: Enter accepts five auto verdicts down to "first bad layer L7"
# with attn.o_proj and rank 1 named; a note gets real numbers; a mark
# shows on the heatmap and lands in the session; the session resumes.
. "$DB_SRC/tests/tui/lib.sh"

# fits NAME REGEX: the screen line matching REGEX is at most 100 columns.
fits() {
	local line
	line=$(grep -E -- "$2" "$T/$1.screen" | head -1)
	[ -n "$line" ] && [ "$(printf '%s' "$line" | wc -m)" -le 100 ]
}

S=$T/work/session.yaml
mkdir -p "$T/work"
tui_run 100 30 --session "$S" demo/ref demo/target <<EOF
b
:save-display $T/bisect_start.screen
<Enter>
:save-display $T/bisect_step1.screen
<Enter><Enter><Enter><Enter>
:save-display $T/bisect_done.screen
w
Sign flip in o_proj<Enter>
:save-display $T/bisect_note.screen
<Enter>
:save-display $T/bisect_culprit.screen
m
confirmed sign flip on rank 1<Enter>
:save-display $T/bisect_mark.screen
:rank 1
o
:save-display $T/notes.screen
q
e
:save-display $T/export.screen
EOF
tui_expect bisect_start
tui_expect bisect_step1
tui_expect bisect_done
check "starts at the bad bound (final)" grep_screen bisect_start '^next final: '
check "first step recorded" grep_screen bisect_step1 '^  1  final  bad   auto '
check "found L7" grep_screen bisect_done '^\[found\] first bad layer: L7'
check "sudden drop named" grep_screen bisect_done '^kind sudden-drop +first bad layer L7'
check "sub-stage named" grep_screen bisect_done 'first bad sub-stage attn\.o_proj'
check "bad rank named" grep_screen bisect_done '^bad ranks 1 \(the other ranks are good\)$'
# The notes are not under the current directory (the fixtures): the path
# is absolute, its middle elided when the line is too narrow for it (the
# build dir may be anywhere), the file name always whole.
check "note written" grep_screen bisect_note '^wrote note 01: /.*notes/01_sign_flip_in_o_proj\.md$'
check "note message fits the line" fits bisect_note '^wrote note'
N=$T/work/notes/01_sign_flip_in_o_proj.md
check "note has the five sections" bash -c "grep -c '^## \(Hypothesis\|Experiment\|Data\|Conclusion\|Next step\)$' '$N' | grep -qx 5"
check "note data has the bisect history with real numbers" grep -q '^| 5 | L7 | bad | auto | 0\.858989' "$N"
check "note data has the probe of L7" grep -q '^| `hidden_out` | 0\.858989' "$N"
check "Enter shows the culprit: L7 attn_out on rank 1 (the all-ranks view shows the worst)" \
	grep_screen bisect_culprit '^L7 attn_out rank 1 \(worst of 2 ranks\) '
check "the culprit keeps the all-ranks view" grep_screen bisect_culprit 'rank \[all\] of 2'
check "mark confirmed, at rank all kept as all" grep_screen bisect_mark '^marked L7 attn_out \(all ranks\) confirmed$'
check "mark drawn on the heatmap, on its cell under the first divergence" grep_screen bisect_mark '^▸L7 +◆ ✓  1\.0000 +✓  1\.0000 *◆✗✗ 0\.8623'
check "notes view lists it, its number once" grep_screen notes '^ 01  Sign flip in o_proj +01_sign_flip_in_o_proj\.md$'
check "export done" grep_screen export '^exported report\.md, heatmap\.svg, metrics\.json, metrics\.csv to '
for f in report.md heatmap.svg metrics.json metrics.csv; do
	check "export wrote $f" test -s "$T/work/report/$f"
done
check "session has the steps" grep -q 'verdict: bad' "$S"
check "session has the mark" grep -q 'confirmed' "$S"
check "session lists the note" grep -q '01_sign_flip_in_o_proj.md' "$S"

# Resume: the session brings back the trees, the steps and the marks.
# (The title shows the session's absolute tree paths: no snapshot here.)
check "session keeps the view state (:rank 1)" grep -q '^  rank: "1"' "$S"
tui_run 100 30 --session "$S" <<EOF
:save-display $T/resumed_heatmap.screen
b
:save-display $T/bisect_resumed.screen
EOF
check "resumed on rank 1" grep_screen resumed_heatmap 'rank \[1\] of 2'
check "resumed with the mark" grep_screen resumed_heatmap '^▸L7 +◆'
check "resumed with 5 steps" grep_screen bisect_resumed '^history \(5 steps\)$'
check "resumed at found L7" grep_screen bisect_resumed '^\[found\] first bad layer: L7'

# e on a resumed session, the bisect view never opened: the report has the
# session's bisect, and says where the profile came from
rm -rf "$T/work/report"
tui_run 100 30 --session "$S" <<EOF
e
EOF
RM=$T/work/report/report.md
check "resumed export: the bisect is in the report" grep -q 'L7' "$RM"
check "resumed export: not 'No bisect run yet'" bash -c "! grep -q 'No bisect run yet' '$RM'"
check "resumed export: the profile's why is the detection" grep -q 'profile: sglang-v1 (sglang-v1: 344 of 344 files parsed' "$RM"
check "resumed export: never 'given with --profile'" bash -c "! grep -q 'given with --profile' '$RM'"

# Replay: step back through the log and watch the range widen again.
tui_run 100 30 --session "$S" <<EOF
b
<Left><Left>
:save-display $T/replay_3.screen
<Left><Left><Left>
:save-display $T/replay_0.screen
<Right><Right><Right><Right><Right>
:save-display $T/replay_live.screen
EOF
check "replay at step 3" grep_screen replay_3 'replay: step 3 of 5'
check "range after 3 steps" grep_screen replay_3 '^good up to L5, bad from L8; '
check "replay at step 0: nothing known" grep_screen replay_0 '^good up to the input, no bad layer seen yet; '
check "back to live after the last step" grep_screen replay_live '^\[found\] first bad layer: L7'
check "live: no replay banner" bash -c "! grep -q 'replay: step' '$T/replay_live.screen'"

# A notes path far wider than the screen: its middle is elided, the file
# name stays whole and the line fits.
D=$T/$(printf 'deep_%.0s' $(seq 1 30))/notes
tui_run 100 30 --notes "$D" demo/ref demo/target <<EOF
:note far away
:save-display $T/note_long.screen
EOF
check "long note path elided in the middle" \
	grep_screen note_long '^wrote note 01: /.*….*/notes/01_far_away\.md$'
check "long note path fits 100 columns" fits note_long '^wrote note'
check "the long-path note exists" test -f "$D/01_far_away.md"

# Under the current directory the note is named relative to it.
mkdir -p "$T/here"
printf ':note close by\n:save-display %s\n' "$T/note_rel.screen" >"$T/rel.keys"
(cd "$T/here" && env -i PATH=/usr/bin:/bin HOME="$T/home" TZ=UTC TERM=xterm-256color \
	LANG=C.UTF-8 LINES=30 COLUMNS=100 DUMPBISECT_SCRIPT="$T/rel.keys" DUMPBISECT_WATCHDOG=30 \
	"$DB_BIN" --notes "$T/here/notes" "$DB_FIXTURES/demo/ref" "$DB_FIXTURES/demo/target") \
	>/dev/null 2>"$T/rel.err" || rel_rc=$?
check "relative-note run exits 0: $(cat "$T/rel.err")" test "${rel_rc:-0}" -eq 0
check "note under the cwd shown relative" \
	grep_screen note_rel '^wrote note 01: notes/01_close_by\.md$'

# An unwritable notes dir is an error on the bottom line, not a crash.
tui_run 100 30 --notes /proc/no_such_dir demo/ref demo/target <<EOF
:note first look
:save-display $T/note_fail.screen
EOF
check "unwritable notes dir reported" grep_screen note_fail '^note not written: '
# Weights do not accumulate: the profile asks for the first diverging stage.
tui_run 130 24 layouts/atom_weights <<EOF
b
:save-display $T/weights_probe.screen
EOF
check "weights: the probe is the first divergence, and says so" \
	grep_screen weights_probe '^probe: attn\.wo, the first diverging stage'
check "weights: the bisect view uses it" grep_screen weights_probe '^Layer bisect  probe attn\.wo '
finish
