#!/bin/bash
# Bisect, notes, marks, export and the session from the TUI on the demo
# dumps: Enter accepts five auto verdicts down to "first bad layer L7"
# with attn.o_proj and rank 1 named; a note gets real numbers; a mark
# shows on the heatmap and lands in the session; the session resumes.
. "$DB_SRC/tests/tui/lib.sh"

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
check "bad rank named" grep_screen bisect_done '^bad ranks 1$'
check "note written" grep_screen bisect_note 'wrote note 01: .*/work/notes/01_sign_flip_in_o_proj\.md'
N=$T/work/notes/01_sign_flip_in_o_proj.md
check "note has the five sections" bash -c "grep -c '^## \(Hypothesis\|Experiment\|Data\|Conclusion\|Next step\)$' '$N' | grep -qx 5"
check "note data has the bisect history with real numbers" grep -q '^| 5 | L7 | bad | auto | 0\.858989' "$N"
check "note data has the probe of L7" grep -q '^| hidden_out | 0\.858989' "$N"
check "Enter shows the culprit: L7 attn_out on rank 1 (the all-ranks view shows the worst)" \
	grep_screen bisect_culprit '^L7 attn_out rank 1 \(worst of 2 ranks\) '
check "the culprit keeps the all-ranks view" grep_screen bisect_culprit 'rank \[all\] of 2'
check "mark confirmed" grep_screen bisect_mark '^marked L7 attn_out rank 1 confirmed$'
check "mark drawn on the heatmap" grep_screen bisect_mark '^▸L7 +◆ ✓  1\.0000 ✓  1\.0000▸✗✗ 0\.8623'
check "notes view lists it" grep_screen notes '^ 01  # 01 — Sign flip in o_proj|^ 01  .*Sign flip in o_proj'
check "export done" grep_screen export '^exported report\.md, heatmap\.svg, metrics\.json, metrics\.csv to '
for f in report.md heatmap.svg metrics.json metrics.csv; do
	check "export wrote $f" test -s "$T/work/dumpbisect-export/$f"
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
check "range after 3 steps" grep_screen replay_3 '^range: good L5 \.\. bad L8 '
check "replay at step 0: nothing known" grep_screen replay_0 '^range: good input \.\. bad \? '
check "back to live after the last step" grep_screen replay_live '^\[found\] first bad layer: L7'
check "live: no replay banner" bash -c "! grep -q 'replay: step' '$T/replay_live.screen'"

# An unwritable notes dir is an error on the bottom line, not a crash.
tui_run 100 30 --notes /proc/no_such_dir demo/ref demo/target <<EOF
:note first look
:save-display $T/note_fail.screen
EOF
check "unwritable notes dir reported" grep_screen note_fail '^note not written: '
finish
