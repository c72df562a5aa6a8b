#!/bin/bash
# The workbench with --noise (issue 23) on realdump/noise_miles_engine (truth in
# cases_noise.tsv: rope_base L1 on the engine side, inference pass 0, culprit
# self_attn.rotary_emb, merged over TP 2 against TP 1): the header names the first
# pair beyond noise with its ratio and floor; C cycles to the "× noise" metric (the
# noise ratio in each cell); f goes to the cell of the first pair beyond noise, whose
# status line carries the noise verdict; :metric noise without a noise tree says why.
. "$DB_SRC/tests/tui/lib.sh"
E=realdump/noise_miles_engine     # ref/ and noise/ link other fixtures' engines in: --follow-links
tui_run 140 30 --no-cache --follow-links --noise $E/noise $E/ref $E/target <<EOF
:save-display $T/cos.screen
C
C
C
C
:save-display $T/noise.screen
f
:save-display $T/first.screen
C
:save-display $T/back.screen
EOF
check "header: the first pair beyond noise, its ratio and floor" \
	grep_screen cos '^▸ first divergence L1 self_attn\.rotary_emb \(merged ranks\) beyond noise +cos .* x[0-9.e+]+ \(floor [0-9.e+-]+\)  \(f jumps\)'
check "C: the × noise metric" grep_screen noise '  metric × noise$'
check "× noise: the corner names it" grep_screen noise '^× noise '
check "× noise: L0 in ratios, not cos" grep_screen noise '^ L0 +(✓|~) +x[0-9.]+ '
check "f: the cell of the first pair beyond noise" grep_screen first '^▸L1 .*▸✗ +x[0-9.]+ '
# the cell's own pair is rank 0's; the status line is the merged culprit's
check "f: the status line is the merged first pair" grep_screen first '^L1 self_attn\.rotary_emb \(merged\) '
check "f: its status line says beyond noise" grep_screen first '^✗✗ beyond noise x[0-9.e+]+ \(floor [0-9.e+-]+\) '
check "C again: back to cos" grep_screen back '  metric cos$'

# no noise tree: C skips the metric, :metric noise says why
tui_run 140 30 --no-cache --follow-links $E/ref $E/target <<EOF
C
C
C
C
:save-display $T/nonoise.screen
:metric noise
:save-display $T/refused.screen
EOF
check "without a noise tree C skips × noise" grep_screen nonoise '  metric cos$'
check ":metric noise refused, saying why" grep_screen refused 'metric noise: no noise tree'
finish
