#!/bin/bash
# One datum, one verdict in the workbench (issue 25 item 6): the routed
# expert ids that mode all dumps twice (TopK's output mlp.topk.1, the
# experts' input mlp.experts.inputs.1.1) read the same band and the same
# count of tokens that chose other experts, in the sub-stages and the
# status line (counts from torch: realdump/cases_routing.tsv). Step 1, L6:
# the ids' bits differ (order) but no token moved, so both are ok.
. "$DB_SRC/tests/tui/lib.sh"

tui_run 110 30 --no-session realdump/hy_v2all_tp1_ids/ref realdump/hy_v2all_tp1_ids/target <<EOF2
<Down>
<Right>
<Enter>
<Down>
<Down>
:save-display $T/p0_topk.screen
<Down>
<Down>
<Down>
<Down>
:save-display $T/p0_experts.screen
q
p
<Enter>
<Down>
<Down>
:save-display $T/routing_stages.screen
<Down>
<Down>
<Down>
<Down>
:save-display $T/p1_experts.screen
EOF2
tui_expect routing_stages
for s in topk experts; do
	check "pass 0 L6, $s: bug, 6 of 12 tokens" \
		grep_screen "p0_$s" '^✗✗ bug \(6 of 12 tokens chose other experts\)  cos 0\.829389 '
done
check "pass 0: the two rows" test "$(grep -cE '^ +[37] +mlp\.(topk\.1|experts\.inputs\.1\.1) +\[12, 2\] +0\.829389 .* ✗✗ bug$' \
	"$T/p0_topk.screen")" -eq 2
check "pass 1 L6: both rows ok" test "$(grep -cE '^ +[37] +mlp\.(topk\.1|experts\.inputs\.1\.1) +\[1, 2\] +0\.689655 .* ✓ ok$' \
	"$T/routing_stages.screen")" -eq 2
check "pass 1 L6, topk: ok, 0 of 1" grep_screen routing_stages '^L6 mlp\.topk\.1 rank 0 pass 1 '
check "pass 1 L6, topk status" grep_screen routing_stages '^✓ ok \(0 of 1 tokens chose other experts\)  cos 0\.689655 '
check "pass 1 L6, experts' input" grep_screen p1_experts '^L6 mlp\.experts\.inputs\.1\.1 rank 0 pass 1 '
check "pass 1 L6, experts' input status" grep_screen p1_experts '^✓ ok \(0 of 1 tokens chose other experts\)  cos 0\.689655 '
finish
