#!/bin/bash
# Long work on the workbench's UI thread yields to `q` (issue 37): the pass
# triage (at open, and in `b`'s bisect) probes every pass, and at 10k passes
# Ctrl-C took 6.3 s to act. Now it draws its progress and `q` stops it. In a
# script the next key is read in order, not in time: the triage asks at
# every pass, so a `q` waiting there stops it at its first pass.
. "$DB_SRC/tests/tui/lib.sh"

# 40 clean passes x 2 layers (SGLang v1 names), every file a hard link to
# one real torch file of the demo fixture
P=$T/passes
mkdir -p "$P/ref/sglang_dump_1.0" "$P/target/sglang_dump_2.0"
src=$(ls "$DB_FIXTURES"/demo/ref/*/forward_pass_id=0___rank=0___name=hidden_in___dump_index=*___layer_id=0.pt)
cp "$src" "$P/src.pt"
for side in ref/sglang_dump_1.0 target/sglang_dump_2.0; do
	i=0
	for p in $(seq 0 39); do
		for l in 0 1; do
			ln "$P/src.pt" "$P/$side/forward_pass_id=${p}___rank=0___name=hidden_in___dump_index=${i}___layer_id=${l}.pt"
			i=$((i + 1))
		done
	done
done

# q during the triage at open: the triage stops, the workbench stays
tui_run 120 30 "$P/ref" "$P/target" <<EOF
q
:save-display $T/stopped.screen
b
q
:save-display $T/bisect_stopped.screen
f
:save-display $T/triaged.screen
EOF
check "q stopped the triage at open, not the workbench" \
	grep_screen stopped '^pass triage stopped at pass 0 \(1 of 40\); the pass shown is the profile.s \(f triages again\)'
check "q stopped the triage of b's bisect" \
	grep_screen bisect_stopped 'bisect: pass triage stopped at pass 0 \(1 of 1\)'
check "f triages again, to the end" \
	grep_screen triaged 'none of the 40 passes \(0-39\) diverges'
finish
