#!/bin/bash
# Issue 22 point 6, the workbench half: ranks across layouts (reference TP1,
# target TP2). The culprit, compared merged, is a sub-stage of a rank's
# cell: f then <Enter>, a, s and i open the merged culprit, not rank 0 of
# the cell's own stage; the ranks view judges each target shard against its
# slice of the reference and names the bad ranks; a partial sum stays "not
# separable" and says why. Truth (tests/fixtures/realdump/cases.tsv,
# cases_steps.tsv): v1_tp1v2 softmax_scale L6, first dumped point
# attn_pre_o_proj, every rank; steps_hy_hook_tp1v2 mlp.experts is a partial
# sum. The per-rank numbers are torch's in float64 (tests/tui/ranks_split.screen):
#   r = ref attn_pre_o_proj L6 pass 1 [12, 64]; t_k = target rank k [12, 32]
#   cos(r[:, 32k:32k+32], t_k): rank 0 0.964012, rank 1 0.971277
#   max |diff|: 8.35e-01, 6.42e-01
# ranks_v2_tp1v2 (gen.sh: kv_head_shard L3 on rank 1 only, layer 3 dumped) names
# rank 1 alone; torch, pass 0: cos 1.000000 (rank 0), 0.143522 (rank 1), max |diff|
# of rank 1 3.43 at [0, 33] of the whole ([0, 1] of its slice [32, 64)).
. "$DB_SRC/tests/tui/lib.sh"
R=realdump/v1_tp1v2

tui_run 120 30 $R/ref $R/target <<EOF
f
:save-display $T/f.screen
<Enter>
:save-display $T/enter.screen
a
:save-display $T/enter_a.screen
<Esc>
<Esc>
a
:save-display $T/ranks_split.screen
<Esc>
s
:save-display $T/s.screen
<Esc>
i
:save-display $T/tensor.screen
EOF
check "f: the status line is the merged culprit" grep_screen f '^L6 attn_pre_o_proj \(merged\) pass 1 '
check "<Enter>: the rank's cell lists the merged sub-stage first" grep_screen enter \
	'^▸   1   attn_pre_o_proj .* ✗✗ bug$'
check "<Enter>: and its own stage after it" grep_screen enter '^    2   attn_output '
check "<Enter>: the culprit is the merged pair" grep_screen enter \
	'^▸ first drop > 0\.001 or leaving ok: L6 attn_pre_o_proj \(merged\)$'
check "<Enter> a: the ranks of the merged culprit" grep_screen enter_a '^Ranks of L6 attn_pre_o_proj$'
check "<Enter> a: the bad ranks named" grep_screen enter_a '^bad ranks: 0 1 \(every rank'
tui_expect ranks_split
check "a: rank 0 against its slice" grep_screen ranks_split '^▸   0 +0\.964012 .* \[0, 32\)$'
check "a: rank 1 against its slice" grep_screen ranks_split '^▸   1 +0\.971277 .* \[32, 64\)$'
check "s: the merged culprit and its cell's stage" grep_screen s '^    2   attn_output '
check "i: says merged and from which shards" grep_screen tensor \
	"^merged tensor: the target's 2 shards \(ranks 0 1\) concatenated along dim 1, against the reference's whole$"
check "i: the worst shard against its slice" grep_screen tensor \
	'^showing rank 0, the worst shard, against its slice \[0, 32\) of the whole'
check "i: compared element-wise on the slice" grep_screen tensor '^1 +200 +\[6, 8\] '

# one bad rank of two: rank 1 alone, its slice is the second half
A=realdump/ranks_v2_tp1v2
tui_run 120 24 $A/ref $A/target <<EOF
f
<Enter>
a
:save-display $T/ranks_alone.screen
<Esc>
i
:save-display $T/alone_tensor.screen
EOF
tui_expect ranks_alone
check "one rank: named alone" grep_screen ranks_alone '^▸ bad ranks: 1 \(1 of 2: a shard-specific problem\)$'
check "one rank: rank 0's slice is ok" grep_screen ranks_alone '^    0 +1\.000000 .* ✓ ok +\[0, 32\)$'
check "one rank: rank 1's slice is bad" grep_screen ranks_alone '^▸   1 +0\.143522 .*3\.4e0 .* ✗✗ bug +\[32, 64\)$'
check "one rank: the tensor view shows rank 1's shard" grep_screen alone_tensor \
	'^showing rank 1, the worst shard, against its slice \[32, 64\) of the whole'
check "one rank: coordinates in the whole" grep_screen alone_tensor '^1 +1 +\[0, 33\] +-1\.3667 +2\.0654 '

# a partial sum (mlp.experts, every rank holds a part of each element)
S=realdump/steps_hy_hook_tp1v2
tui_run 140 34 $S/ref $S/target <<EOF
/mlp\.experts$
<Enter>
n
a
:save-display $T/sum.screen
<Esc>
i
:save-display $T/sum_tensor.screen
EOF
check "partial sum: the merged pair" grep_screen sum '^Ranks of L2 mlp\.experts$'
check "partial sum: not separable, and why" grep_screen sum \
	"^not separable: partial sums: every rank holds a part of each element"
check "partial sum: no rank rows" test "$(grep -Ec '^.   [0-9] ' "$T/sum.screen")" -eq 0
check "partial sum: the tensor view says why" grep_screen sum_tensor \
	'^merged tensor, ranks not separable: partial sums: '
check "partial sum: nothing element-wise" grep_screen sum_tensor \
	'^the two sides cannot be compared element-wise$'
finish
