#!/bin/bash
# The tensor view of a quantized weight (issue 27): on the DeepSeek FP8
# fixture's bug (L1 self_attn.o_proj.weight, block (1, 0)'s scale inverted)
# it shows the dequantized values (not the raw codes), the companion it was
# dequantized with, and names the block that is off; the status line says
# the pair was dequantized (f lands on it: L0's weight only drifts, and f
# goes where compare names the first divergence beyond drift). A block-scaled weight without the bug is within
# its floor and shows no block line.
. "$DB_SRC/tests/tui/lib.sh"

tui_run 120 34 quant/deepseek_fp8/ref quant/deepseek_fp8/target <<EOF
f
<Enter>
<Enter>
:save-display $T/bug.screen
q
q
<Up>
<Enter>
<Enter>
:save-display $T/fine.screen
EOF
check "the companion is listed" grep_screen bug \
	'^  target scale model\.layers\.1\.self_attn\.o_proj\.weight_scale_inv float32 \[2, 2\]$'
check "the block that is off" grep_screen bug \
	'^block \(1, 0\) is 3\.17e\+07× its neighbours: scale inverted\?$'
check "dequantized values, not codes" grep_screen bug \
	'^target +\[160, 160\] +float8_e4m3fn +-2\.522e\+06 +2\.342e\+06 '
check "the status line says dequantized" grep_screen bug 'float8_e4m3fn \(dequantized\)'
check "rows past the inverted block stand out" grep_screen bug 'last quarter 2\.3e7'
check "a fine weight: within its floor" grep_screen fine \
	'^dequantized: target fp8-block \(weight_scale_inv\): within its rounding floor$'
check "a fine weight: no block line" bash -c "! grep -q '^block (' '$T/fine.screen'"
finish
