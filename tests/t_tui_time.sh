#!/bin/bash
# Issue 22 (the time view, T): passes against layers, each cell the worst
# of that pass and layer; <Enter> selects the pass and returns to its
# heatmap. Expected passes and layers from the injected bugs
# (tests/fixtures/realdump/cases_steps.tsv, cases.tsv), not from our output.
. "$DB_SRC/tests/tui/lib.sh"
R=realdump

# steps_v2_tp1: decode_pos L4 from decode step 2 (layers 3-5 dumped)
tui_run 100 20 $R/steps_v2_tp1/ref $R/steps_v2_tp1/target <<EOF
T
:save-display $T/time.screen
g
<Enter>
:save-display $T/time_enter.screen
EOF
tui_expect time
check "passes 0 and 1 clean at every layer" grep_screen time '^0 +(✓  ){4} ok$'
check "pass 1 too" grep_screen time '^1 +(✓  ){4} ok$'
check "pass 2: L3 ok, L4 bad (algo or worse)" grep_screen time '^2 +✓  ✓  (✗ |✗✗|‼ ) .* from L4$'
check "pass 3: bad from L4 as well" grep_screen time '^3 +✓  ✓  (✗ |✗✗|‼ ) .* from L4$'
check "Enter on pass 0 opens its heatmap" grep_screen time_enter '^phase -  pass \[0\] 1/4 '
check "the heatmap is on top again" grep_screen time_enter ' heatmap$'

# miles_tp2: softmax_scale L1 on the Megatron side: inference fine,
# fwd_only bad from L1 ("prefill fine, decode bad" is one look)
tui_run 140 20 $R/miles_tp2/ref $R/miles_tp2/target <<EOF
T
:save-display $T/miles_time.screen
EOF
check "miles: inference has no bad layer" grep_screen miles_time '^inference 0 .* (ok|drift)$'
check "miles: fwd_only bad from L1" grep_screen miles_time '^fwd_only 0 .* from L1$'

# A thousand passes (tests/fixtures/gen_passes.py, stdlib): the bug from
# pass 997 at layer 1. Scrolling one row at a time to the last pass ends
# within the scripted mode's watchdog (no timing assertion).
G=$T/passes
python3 "$DB_SRC/tests/fixtures/gen_passes.py" "$G" 1000 3 997 1
{
	echo T
	for _ in $(seq 999); do echo j; done
	echo ":save-display $T/many.screen"
	echo "<Enter>"
	echo ":save-display $T/many_enter.screen"
} >"$T/many.keys"
tui_run 100 20 --profile "$G/passes.yaml" "$G/ref" "$G/target" <"$T/many.keys"
check "1000 passes listed" grep_screen many '\(1000 passes;'
check "pass 996 clean" grep_screen many '^996 +✓  ✓  ✓   ok$'
check "the last pass, bad from L1" grep_screen many '^999 +✓  ‼  ‼   scramble from L1$'
check "Enter opens pass 999" grep_screen many_enter '^phase -  pass \[999\] 1000/1000 '
finish
