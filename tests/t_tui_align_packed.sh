#!/bin/bash
# The workbench on the engine against the trainer in bf16 (issue 35), where
# every layer drifts: the headline names what compare names beyond drift and
# bisect ends on (db_first_beyond_drift_of, one rule), the drift it starts
# from after the numbers, and f lands there.
#  - realdump/pack_miles_trn: two samples in ONE packed micro-batch, the
#    trainer's attention ignores cu_seqlens at L2: L2 attn_pre_o_proj, pass 2,
#    rows 14.. of the micro-batch (the second request); the tensor view's
#    curve over the micro-batch names the same first bad token;
#  - realdump/align_miles_eng: an engine-only norm_offset at L1: L1 mlp_output.
. "$DB_SRC/tests/tui/lib.sh"
F='^(?!pre_mlp_layernorm_output$)'
P=realdump/pack_miles_trn/target
tui_run 200 32 --no-cache --no-session --filter "$F" $P/engines $P/fwd_only <<EOF
:save-display $T/pack.screen
f
:save-display $T/pack_f.screen
<Enter>
<Enter>
:save-display $T/pack_t.screen
EOF
check "packed: opened on the pass where the bug shows" \
	grep_screen pack '^phase -  pass \[2\] 3/5 first diverging'
check "packed: the headline names the bug beyond drift, the drift after it" \
	grep_screen pack '^▸ first beyond drift L2 attn_pre_o_proj every rank \(of 2\) bug  cos 0\.7856 rel 8\.8e-1  \(drift from L1 attn_pre_o_proj\)  \(f jumps\)  aligned by token: target rows \[14:26\]'
check "packed: f lands on L2 (attn_pre_o_proj's cell, attn_output)" \
	grep_screen pack_f '^L2 attn_output rank 0 pass 2 '
check "packed: the grid marks L2's cell as the first divergence" \
	grep_screen pack '^▸L2 .*▸✗✗ 0\.8283'
# the tensor view: the curve over the micro-batch's 32 rows, its first bad token compare's
# (14, the second sample's first; bf16 drift before it is not "off"), the rows no engine
# pass holds (13: the first sample's last response token, 28, the padding 29-31) flat
check "packed: the tensor view's first bad token is compare's" \
	grep_screen pack_t '^error per token \(aligned sequence, rel_l2\), 32 tokens: this pass 14\.\.25, worst token 15 .*  first off: token 14$'
check "packed: rows no engine pass holds are flat" \
	grep_screen pack_t '^rows     .{13}▁.{14}▁▁▁▁$'
E=realdump/align_miles_eng/target
tui_run 160 32 --no-cache --no-session --filter "$F" $E/engines $E/fwd_only <<EOF
:save-display $T/eng.screen
EOF
check "engine-only: the headline is compare's beyond drift, L1 mlp_output" \
	grep_screen eng '^▸ first beyond drift L1 mlp_output \(merged ranks\) bug .*\(drift from L0 mlp_output\)'
# TP 1, three samples in one micro-batch, pack_leak at L3 (realdump/pack_miles_tp1): the
# bisect view judges the layers as compare names the place (beyond the bf16 drift of L2),
# and says so
P=realdump/pack_miles_tp1/target
tui_run 200 32 --no-cache --no-session --filter "$F" $P/engines $P/fwd_only <<EOF
:save-display $T/tp1.screen
b
:save-display $T/tp1_b.screen
EOF
check "tp1: the headline names L3 beyond drift" \
	grep_screen tp1 '^▸ first beyond drift L3 attn_pre_o_proj rank 0 bug .*\(drift from L2 layer_input\)'
check "tp1: the bisect view says its predicate" \
	grep_screen tp1_b '^a layer is bad when its probe goes beyond drift \(compare names the first divergence beyond drift in this pass\)$'
check "tp1: the bisect view's pass is compare's" \
	grep_screen tp1_b '^Layer bisect  probe mlp_output  phase -  pass 2$'
finish
