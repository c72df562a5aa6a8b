#!/bin/bash
# Drill-down views on the demo dumps: sub-stages of L7 attn_out on rank 1
# (the culprit attn.o_proj highlighted), its ranks (rank 1 bad alone), the
# tensor view (stats, top |diff| with coordinates, per-row sparkline), the
# layer curve of hidden_out, and the help screen.
. "$DB_SRC/tests/tui/lib.sh"

tui_run 100 30 demo/ref demo/target <<EOF
f
<Enter>
:save-display $T/stages.screen
a
:save-display $T/ranks.screen
q
<Enter>
:save-display $T/tensor.screen
H
L
:save-display $T/curve.screen
]
:save-display $T/curve_probe.screen
H
?
:save-display $T/help.screen
<PgDown>
:save-display $T/help_page2.screen
<PgDown>
:save-display $T/help_page3.screen
EOF
tui_expect stages
tui_expect ranks
tui_expect tensor
tui_expect curve
tui_expect curve_probe
tui_expect help
tui_expect help_page2
tui_expect help_page3
check "the culprit sub-stage is highlighted" grep_screen stages '^▸ +5 +attn\.o_proj'
check "the first drop line names it" \
	grep_screen stages 'first drop > 0\.001 or leaving ok: L7 attn\.o_proj rank 1'
check "rank 1 stands out" grep_screen ranks '^▸ +1 .*bad alone'
check "rank 0 is ok" grep_screen ranks '^ +0 +1\.000000 .* ok'
check "top |diff| has coordinates" \
	grep_screen tensor '^1 +53 +\[0, 53\] +1\.8492 +-1\.8492 +3\.6984'
check "per-row sparkline" grep_screen tensor '^rows +[▁▂▃▄▅▆▇█]{10}$'
check "curve draws braille" grep_screen curve '[⠉⠒⠤⣀]'
check "curve has the band lines" grep_screen curve '0\.9999 │┄.* ok$'
check "] changes the probe" grep_screen curve_probe '^Layer curve of hidden_in '
check "help lists keys, names and texts" grep_screen help '^  <Up> k +move-up +Move the cursor up'
check "help lists transpose with its key" grep_screen help_page2 '^  t +transpose +Transpose'
check "help lists the commands" grep_screen help_page3 ':save-display FILE'
finish
