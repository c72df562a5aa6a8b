#!/bin/bash
# The workbench on msprobe trees (statistics only, calls one side makes):
#  - ms_stat_tp2 (softmax_scale L2): the sub-stage view starts on the first stage that
#    leaves ok (no cos: a stats-only pair never counts as a drop), shows "stats" for
#    cos, and its status line says "statistics only" with the four rel diffs;
#  - its tensor view puts the dump's Max/Min/Mean/Norm side by side (the numbers
#    msprobe wrote in dump.json) with their rel diffs, and says why there is nothing
#    element-wise;
#  - ms_md5_tp1 (norm_offset L3 adds (1 + w)): the call only the target makes says so
#    in the sub-stage view's status line, and its md5 CRC-32 is shown;
#  - the Python frame that made a call (stack.json) in the tensor view and in the
#    bisect's walk, per side when they differ.
. "$DB_SRC/tests/tui/lib.sh"

tui_run 120 24 realdump/ms_stat_tp2/ref realdump/ms_stat_tp2/target <<EOF
f
<Enter>
:save-display $T/stages.screen
<Enter>
:save-display $T/tensor.screen
EOF
check "the first stage leaving ok, not the first stats-only row" grep_screen stages \
	'^▸ first drop > 0\.001 or leaving ok: L2 self_attn\.attn\.Tensor\.__mul__ rank 0$'
check "stats instead of cos" grep_screen stages \
	'^▸   21  self_attn\.attn\.Tensor\.__mul__ +\[2, 12, 12\] stats +7\.5e-1 +✗✗ bug$'
check "status line: statistics only" grep_screen stages \
	'^✗✗ bug  statistics only  rel 7\.5e-1 \(Max 5\.8e-1 Min 7\.5e-1 Mean 5\.6e-2 Norm 7\.5e-1\)$'
check "the tensor view says statistics only" grep_screen tensor \
	'^statistics only: the dump holds these numbers for this tensor, not its values$'
# dump.json (rank 0, layer 2 attn's Tensor.__mul__): Max 2.5486, Min -3.2755, Norm 17.084
check "ref statistics as msprobe wrote them" grep_screen tensor \
	'^ref +2\.5486 +-3\.2755 +-0\.075189 +17\.084 +-$'
check "target statistics" grep_screen tensor '^target +0\.63715 +-0\.81887 +-0\.018797 +4\.2711 +-$'
check "why nothing element-wise" grep_screen tensor \
	'^No element-wise view \(largest differences, rows\): a side holds statistics only'

tui_run 160 24 realdump/ms_md5_tp1/ref realdump/ms_md5_tp1/target <<EOF
f
<Enter>
:save-display $T/call.screen
<Enter>
:save-display $T/md5.screen
EOF
check "the call only the target makes" grep_screen call \
	'^target calls post_attention_layernorm\.Tensor\.__radd__, which the reference does not \(before post_attention_layernorm\.Tensor\.pow\)$'
check "its md5 beside the statistics" grep_screen md5 '^target +2\.2185 +1\.7553 +1\.9995 +16\.019 +[0-9a-f]{8}$'

# the bisect's walk of the culprit layer: the call only one side makes and the frame
# that made the culprit (stack.json: tinymodel.py line 127, RMSNorm._norm)
tui_run 170 30 realdump/ms_md5_tp1/ref realdump/ms_md5_tp1/target <<EOF
b
<Enter><Enter><Enter><Enter><Enter><Enter>
:save-display $T/walk.screen
<Enter>
:save-display $T/frame.screen
EOF
check "the walk names the call only the target makes" grep_screen walk \
	'^calls: target calls post_attention_layernorm\.Tensor\.__radd__, which the reference does not'
check "the walk: where the culprit was made" grep_screen walk \
	'^made at: [^ ]*/tinymodel\.py:127, in _norm: return x \* torch\.rsqrt'
check "the tensor view: where it was made" grep_screen frame '^made at: [^ ]*/tinymodel\.py:127, in _norm: '
tui_run 160 24 realdump/ms_md5_tp1/ref realdump/ms_md5_tp1/target <<EOF
f
<Enter>
<Enter>
:save-display $T/frame1.screen
EOF
check "a call one side makes: the frame of that side only" grep_screen frame1 '^made at: reference -$'
check "the target's frame of the extra call" grep_screen frame1 \
	'^         target    [^ ]*/tinymodel\.py:126, in _norm: w = \(1\.0 \+ self\.weight\) if self\.offset else self\.weight$'
finish
