#!/bin/bash
# The workbench with --slots 4 on one --batch-same tree (issue 23; truth in
# realdump/cases_slots.tsv: split_k in L3 mlp.down_proj, slot 1): the slot
# selector in the rank's place, the first divergence named with its slot,
# bits off shown as such in an ok band; r picks one slot.
. "$DB_SRC/tests/tui/lib.sh"
tui_run 120 30 --no-cache --slots 4 realdump/slots_hook_down/target <<EOF
:save-display $T/all.screen
r
:save-display $T/slot1.screen
r
:save-display $T/slot2.screen
EOF
check "header: the slot selector" grep_screen all '^phase -  pass \[1\] 1/2 default first diverging  slot \[all\] of 3 '
check "header: the first divergence and its slot" \
	grep_screen all '^▸ first divergence L3 mlp\.down_proj slot 1 bits differ '
check "L4 (after the bug): bits off in the ok band" grep_screen all '^ L4 +(≢  1\.0000 ?)+$'
check "L2: bit-identical" grep_screen all '^ L2 +(✓  1\.0000 ?)+$'
check "slot 1 selected" grep_screen slot1 '  slot \[1\] of 3 '
check "slot 2 selected" grep_screen slot2 '  slot \[2\] of 3 '
check "legend: what ≢ means" grep_screen all '≢ bits differ  ▸ 1st divergence'
# (the legend line says what ≢ means; no cell of slot 2 shows it)
if grep -v '1st divergence' "$T/slot2.screen" | grep -q '≢'; then
	echo "FAIL: slot 2 shows bits off" >&2
	FAILS=$((FAILS + 1))
fi
finish
