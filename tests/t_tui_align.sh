#!/bin/bash
# The workbench on a run generated step by step against the same tokens in
# one pass (issue 35, realdump/align_v2_tp1: kv_write L4 from decode step 2):
# it opens on the target's first diverging pass, the headline names the
# aligned rows of the first divergence, and the tensor view draws the error
# per token over the whole aligned sequence (16 tokens), each from the pass
# that holds it: identical up to token 12, off from token 13 on.
. "$DB_SRC/tests/tui/lib.sh"
tui_run 150 32 --no-cache --no-session realdump/align_v2_tp1/ref realdump/align_v2_tp1/target <<EOF
:save-display $T/head.screen
f
i
:save-display $T/tensor.screen
EOF
check "opened on the target's first diverging pass" \
	grep_screen head '^phase -  pass \[2\] 3/5 first diverging'
check "headline: the first divergence and its aligned rows" \
	grep_screen head '^▸ first divergence L4 attn_pre_o_proj rank 0 drift .*aligned by token: ref rows \[13:14\] of its one pass \(dim 0\)$'
check "tensor view: compared on the pass's rows of the one pass" \
	grep_screen tensor '^aligned by token: ref rows \[13:14\] of its one pass \(dim 0\): top \|diff\| and rows on it$'
check "tensor view: the curve over the 16 aligned tokens, off from token 13" \
	grep_screen tensor '^error per token \(aligned sequence, rel_l2\), 16 tokens: this pass 13\.\.13, worst token 15 \(.*\)  first off: token 13$'
check "tensor view: flat up to token 12" grep_screen tensor '^rows     ▁▁▁▁▁▁▁▁▁▁▁▁▁'
finish
