#!/bin/bash
# Heatmap on the demo dumps (12 layers, 2 TP ranks, sign flip in L7
# attn.o_proj on rank 1): first screen, cursor and status line, metric
# toggle and cycle, jump to the first divergence (switches to rank 1),
# transpose, scrolling in a small terminal.
. "$DB_SRC/tests/tui/lib.sh"

tui_run 100 30 demo/ref demo/target <<EOF
:save-display $T/heatmap_start.screen
<Down><Down><Right><Right>
:save-display $T/heatmap_cursor.screen
c
:save-display $T/heatmap_rel.screen
CC
:save-display $T/heatmap_maxabs.screen
C
f
:save-display $T/heatmap_first.screen
t
:save-display $T/heatmap_transposed.screen
EOF
tui_expect heatmap_start
tui_expect heatmap_cursor
tui_expect heatmap_rel
tui_expect heatmap_maxabs
tui_expect heatmap_first
tui_expect heatmap_transposed
# Facts the snapshots must show, checked on their own so a reviewer sees why.
check "the triage line names L7 attn.o_proj on rank 1" \
	grep_screen heatmap_start 'first divergence L7 attn.o_proj rank 1'
check "f moves to rank 1 and the L7 attn_out cell" \
	grep_screen heatmap_first '^L7 attn_out rank 1 '
check "c shows rel" grep_screen heatmap_rel '^rel '
check "C C after rel reaches max_abs" grep_screen heatmap_maxabs 'metric max_abs'
check "the status line has every metric" \
	grep_screen heatmap_first 'cos 0\.86.*rel .*rel_l2 .*rel_diff .*max_abs .*mean_abs'

# 60x15, the smallest size: rows and columns scroll with the cursor.
tui_run 60 15 demo/ref demo/target <<EOF
G<End>
:save-display $T/heatmap_scrolled.screen
gg<Home>
<PgDown>
:save-display $T/heatmap_pgdown.screen
EOF
tui_expect heatmap_scrolled
tui_expect heatmap_pgdown
check "G<End> shows the last row" grep_screen heatmap_scrolled '^ final_logits'
finish
