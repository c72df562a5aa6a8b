#!/bin/bash
# Issue 22 point 1: the workbench opens on the pass the bisect's triage
# names (decode-step trees: prefill and the first decode steps
# bit-identical, the bug from step S on) and says why; `f` switches phase,
# pass and rank to the first divergence there; the bisect view bisects that
# pass. Expected passes, layers and stages from the injected bugs
# (tests/fixtures/realdump/cases_steps.tsv, cases.tsv), not from our output.
. "$DB_SRC/tests/tui/lib.sh"
R=realdump

# steps_v2_tp1: decode_pos L4 from decode step 2 (step=2), culprit attn_pre_o_proj
tui_run 120 30 $R/steps_v2_tp1/ref $R/steps_v2_tp1/target <<EOF
:save-display $T/steps_open.screen
P
P
:save-display $T/steps_moved.screen
f
:save-display $T/steps_f.screen
b
:save-display $T/steps_bisect.screen
EOF
tui_expect steps_open
check "opens on pass 2 (3 of 4), marked" grep_screen steps_open '^phase -  pass \[2\] 3/4 first diverging '
check "says which pass and why" grep_screen steps_open \
	'^opened on pass 2: passes 0-1 bit-identical at L5 mlp_output; pass 2 is the first that diverges$'
check "the first divergence is L4 attn_pre_o_proj" grep_screen steps_open \
	'first divergence L4 attn_pre_o_proj rank 0 '
check "P P leaves pass 2: pass 0 shows nothing bad" grep_screen steps_moved '^phase -  pass \[0\] 1/4 default '
tui_expect steps_f
check "f goes back to pass 2" grep_screen steps_f '^phase -  pass \[2\] 3/4 first diverging '
check "f lands on L4 attn_output (attn_pre_o_proj's cell)" grep_screen steps_f '^L4 attn_output rank 0 pass 2 '
check "f says why" grep_screen steps_f '^first divergence in pass 2: passes 0-1 bit-identical'
check "the bisect bisects pass 2 and says why" grep_screen steps_bisect \
	'^pass: passes 0-1 bit-identical at L5 mlp_output; pass 2 is the first that diverges$'

# steps_hook_tp2: TP2, decode_pos L2 from the last pass (Pass00003), both ranks
tui_run 120 30 $R/steps_hook_tp2/ref $R/steps_hook_tp2/target <<EOF
:save-display $T/hook_open.screen
f
:save-display $T/hook_f.screen
EOF
check "hook: opens on pass 3, the last" grep_screen hook_open '^phase -  pass \[3\] 4/4 first diverging '
check "hook: f lands on L2 self_attn.rotary_emb" grep_screen hook_f '^L2 self_attn\.rotary_emb\.[01] rank [01] '

# miles_tp2: softmax_scale L1 on the Megatron side: the inference phase (the
# first) is fine, fwd_only diverges; the workbench opens there, f stays
tui_run 140 30 $R/miles_tp2/ref $R/miles_tp2/target <<EOF
:save-display $T/miles_open.screen
<Tab>
<Tab>
<Tab>
:save-display $T/miles_moved.screen
f
:save-display $T/miles_f.screen
EOF
check "miles: opens on fwd_only" grep_screen miles_open '^phase  inference \[fwd_only\] '
check "miles: <Tab> x3 goes to inference" grep_screen miles_moved '^phase \[inference\] '
check "miles: f switches the phase back" grep_screen miles_f '^phase  inference \[fwd_only\] '
check "miles: f lands on L1 self_attention" grep_screen miles_f '^L1 self_attention rank [01] fwd_only pass 0 '
# Point 3: a session's bisect (pass 3, headless) is re-aimed when the user
# chooses another pass: P then b begins a new bisect on pass 2, and says so;
# the earlier one stays in the session ('earlier'); x after p goes back to
# pass 3 and resumes its bisect (issue 34: one bisect per pass).
S=$T/reaim.yaml
(cd "$DB_FIXTURES" && "$DB_BIN" bisect $R/steps_v2_tp1/ref $R/steps_v2_tp1/target --auto \
	--session "$S" --pass 3 >/dev/null 2>&1) || true
tui_run 120 30 --session "$S" <<EOF
:save-display $T/reaim_open.screen
P
b
:save-display $T/reaim_b.screen
p
x
:save-display $T/reaim_x.screen
EOF
check "a session opens on its bisect's pass" grep_screen reaim_open '^phase -  pass \[3\] 4/4 '
check "b on pass 2 bisects pass 2" grep_screen reaim_b '^Layer bisect  probe .* pass 2$'
check "and says the earlier one is kept" grep_screen reaim_b \
	"^new bisect on pass 2; the one on pass 3 is kept \(b on pass 3 resumes it\)$"
check "x after p re-aims at pass 3" grep_screen reaim_x '^Layer bisect  probe .* pass 3$'
check "and resumes its bisect (issue 34)" grep_screen reaim_x '^back to the bisect on pass 3 \(5 steps\)$'
check "the bisect on pass 3 (5 steps) is the session's again" grep -qx 'pass: "3"' "$S"
check "its steps are kept" test "$(grep -c 'verdict:' "$S")" -ge 5
finish
