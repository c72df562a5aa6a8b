#!/bin/bash
# The workbench on the prompt alone vs the batch whose attention leaks
# (tests/fixtures/batch): the heatmap header names the batch slot beside
# the first divergence, and the pair status of a cell names it too.
. "$DB_SRC/tests/tui/lib.sh"
tui_run 120 30 --no-cache batch/ref batch/leak <<EOF
:save-display $T/slot.screen
<Down><Down>
i
:save-display $T/slot_tensor.screen
EOF
check "header: first divergence and the slot" \
	grep_screen slot '^▸ first divergence L1 attn_out rank 0 bug .*  batch slot: target dim 0 \[5:10\]$'
check "pair status: the slot, as the hint" grep_screen slot '^✓ ok  hint batch slot: target dim 0 \[5:10\]  cos 1\.000000'
check "tensor view: compared on the slot" grep_screen slot_tensor '^batch slot: target dim 0 \[5:10\]: top \|diff\| and rows on it$'
check "tensor view: top |diff| of the slot" grep_screen slot_tensor '^1 +54 +\[3, 6\] '
check "tensor view: error per row over the 5 rows" grep_screen slot_tensor 'error per row \(dim 0, rel_l2\), 5 rows'

# by hand: another prompt's tokens
tui_run 160 30 --no-cache --slot target:0:10:5 batch/ref batch/target <<EOF
:save-display $T/slot_hand.screen
EOF
check "--slot: the workbench measures the slot given" \
	grep_screen slot_hand 'batch slot: target dim 0 \[10:15\]'
check "--slot: another prompt, other tokens" grep_screen slot_hand 'first divergence embed\.input_ids'
finish
