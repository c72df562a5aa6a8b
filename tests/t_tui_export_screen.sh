#!/bin/bash
# The workbench's export reads what the screen shows (issue 21): exported
# from the bisect view once the bisect is done, report.md's summary is the
# view's own analysis line; after the rank keys (r r: rank 1) the exported
# heatmap is the screen's rank-1 heatmap. (test_export.c shows the files
# take the grid they are given as it is.)
. "$DB_SRC/tests/tui/lib.sh"

tui_run 100 30 demo/ref demo/target <<EOF
b
<Enter><Enter><Enter><Enter><Enter>
:save-display $T/done.screen
:export $T/exp_bisect
q
r
r
:save-display $T/rank1.screen
:export $T/exp_r1
EOF
SUM=$(grep -E '^first bad layer L7: ' "$T/done.screen" || true)
check "the bisect view shows its analysis" test -n "$SUM"
check "report.md's summary is the screen's ($SUM)" grep -qxF -- "$SUM." "$T/exp_bisect/report.md"
check "report.md's bisect log has the five steps" grep -q '^| 5 | L7 | bad ' "$T/exp_bisect/report.md"
check "the screen shows rank 1" grep_screen rank1 'rank \[1\] of 2'
check "report.md's heatmap is rank 1's" grep -qx 'cos and band per cell, rank 1\.' "$T/exp_r1/report.md"
check "heatmap.svg is rank 1's" grep -q ', rank 1</text>' "$T/exp_r1/heatmap.svg"
finish
