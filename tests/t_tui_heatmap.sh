#!/bin/bash
# Heatmap on the demo dumps (12 layers, 2 TP ranks, sign flip in L7
# attn.o_proj on rank 1): first screen, cursor and status line, metric
# toggle and cycle, jump to the first divergence (the all-ranks view
# shows rank 1 there), transpose, scrolling in a small terminal; r / R
# cycle all -> 0 -> 1 -> all, and all ranks again is the screen it left.
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
t
:save-display $T/rank_before.screen
r
:save-display $T/rank_0.screen
r
:save-display $T/rank_1.screen
r
:save-display $T/rank_all.screen
R
:save-display $T/rank_back.screen
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
check "all ranks by default" grep_screen heatmap_start 'rank \[all\] of 2 \(merged where sharded, else worst\)'
check "the default view shows L7 bad (rank 1's attn_out, the worst)" \
	grep_screen heatmap_start '^▸L7 +✓  1\.0000 +✓  1\.0000 *▸✗✗ 0\.8623'
check "f moves to the L7 attn_out cell, which shows rank 1" \
	grep_screen heatmap_first '^L7 attn_out rank 1 \(worst of 2 ranks\) '
check "f stays in the all-ranks view" grep_screen heatmap_first 'rank \[all\] of 2'
check "r: rank 0" grep_screen rank_0 'rank \[0\] of 2  metric'
check "rank 0 alone: L7 attn_out looks fine" grep_screen rank_0 '^L7 attn_out rank 0 pass 0 '
check "rank 0 alone: L7 attn_out is ok" grep_screen rank_0 '^✓ ok  cos 1\.000000 '
check "r r: rank 1" grep_screen rank_1 'rank \[1\] of 2  metric'
check "r r r: back to all" grep_screen rank_all 'rank \[all\] of 2'
# a rank's headline adds its own first divergence ("here"); back to all
# ranks it is first_div again, taken from what the rank keys keep (issue
# 24: no pass over the pairs), and the screen is the one r left
check "rank 0 alone: the headline names its own first divergence" \
	grep_screen rank_0 '^▸ first divergence L7 attn\.o_proj rank 1 \(here: L7 '
# (the last line is t's message before r, the help after)
check "r r r: the screen before r, byte for byte but the last line" \
	cmp -s <(sed '$d' "$T/rank_before.screen") <(sed '$d' "$T/rank_all.screen")
check "R from all: the last rank" grep_screen rank_back 'rank \[1\] of 2  metric'
check "c shows rel" grep_screen heatmap_rel '^rel '
check "C C after rel reaches max_abs" grep_screen heatmap_maxabs 'metric max_abs'
check "the status line has every metric" \
	grep_screen heatmap_first 'cos 0\.86.*bytes= 0\.0%.*rel .*rel_l2 .*rel_diff .*max_abs '
check "a bit-identical pair says so, apart from cos 1" \
	grep_screen heatmap_start '^✓ ok  cos 1\.000000  bytes= ≡ '

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

# TP=2 hook dumps with a sharded stage (self_attn.attn): the all-ranks view
# shows its merged pair, replicated stages their worst rank; columns in the
# profile's stage_order (self_attn before mlp).
tui_run 160 24 layouts/fwd_hook/ref layouts/fwd_hook/target <<EOF
:goto L3 self_attn.attn
:save-display $T/merged_cell.screen
:goto L2 self_attn.o_proj
:save-display $T/worst_cell.screen
EOF
check "all ranks: a sharded stage's cell is its merged pair" \
	grep_screen merged_cell '^L3 self_attn\.attn \(merged\) .*merged from 2\+2 shards'
check "all ranks: a replicated stage's cell names its worst rank" \
	grep_screen worst_cell '^L2 self_attn\.o_proj rank 0 \(worst of 2 ranks\) '
check "columns in execution order" \
	grep_screen merged_cell '^cos +inpu…ernorm self…q_proj self…k_proj self…v_proj self…n\.attn self…o_proj post…ernorm mlp\.…e_proj .* hidden_out$'
# names cut in the middle tell the self_attn.* columns apart; the cursor's
# column keeps to its own room (its full name is on the status line)
check "the cursor's column does not cover its neighbours" \
	grep_screen merged_cell '^cos .* self…v_proj self…n\.attn self…o_proj '
check "the cursor's stage in full on the status line" grep_screen merged_cell '^L3 self_attn\.attn '

finish
