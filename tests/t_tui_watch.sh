#!/bin/bash
# The workbench watches its trees: files written while it is open are
# indexed and their cells fill in without a key, the first-divergence line
# and an open bisect follow (a newly dumped layer becomes a candidate), and
# a file still being written (a .pt cut short) is left out, never shown as
# unreadable. The target is sglang_v1's torch dumps (bug from L2 on),
# written layer by layer while the workbench runs; "@wait-file" holds the
# script until the test has written the next files.
. "$DB_SRC/tests/tui/lib.sh"
S=$DB_FIXTURES/layouts/sglang_v1
SRC=$S/target/sglang_dump_1700000100.0
D=$T/tgt/sglang_dump_1700000100.0
mkdir -p "$D"
cp "$SRC"/*.pt "$D/"
rm "$D"/*layer_id=[23].pt

# wait_file PATH: poll (bounded, 20 s) until PATH exists.
wait_file() {
	local i
	for ((i = 0; i < 200; i++)); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	echo "FAIL: $1 never appeared" >&2
	FAILS=$((FAILS + 1))
	return 1
}

cat >"$T/script" <<EOF
:save-display $T/w_before.screen
b
<Enter><Enter>
:save-display $T/w_bisect1.screen
@wait-file $T/go1
:save-display $T/w_bisect2.screen
H
:save-display $T/w_after.screen
EOF
(cd "$DB_FIXTURES" && env -i PATH=/usr/bin:/bin HOME="$T/home" TZ=UTC TERM=xterm-256color \
	LANG=C.UTF-8 LINES=30 COLUMNS=100 DUMPBISECT_SCRIPT="$T/script" DUMPBISECT_WATCHDOG=30 \
	"$DB_BIN" --no-cache layouts/sglang_v1/ref "$T/tgt") >"$T/stdout" 2>"$T/stderr" &
pid=$!
wait_file "$T/w_bisect1.screen"
# layer 2 complete, one file of layer 3 cut short (torch.save still writing)
cp "$SRC"/*layer_id=2.pt "$D/"
f=$(ls "$SRC"/*layer_id=3.pt | head -1)
head -c 300 "$f" >"$D/${f##*/}"
touch "$T/go1"
wait "$pid"
rc=$?
check "the workbench exits 0 (stderr: $(cat "$T/stderr"))" test "$rc" = 0

check "before: the L2 row has no target" grep_screen w_before '^.L2 +.?◁  no tgt'
check "bisect then: L2 is not dumped" grep_screen w_bisect1 'next L2: not dumped on both sides yet'
check "bisect then: it says the layer shows once written" grep_screen w_bisect1 "it shows here once written \(the trees are watched\)"
check "bisect now: L2 is probed, bad" grep_screen w_bisect2 'next L2: cos 0\.907335 .*auto verdict: bad'
check "after: the L2 row is there, diverging" grep_screen w_after '^.L2 .*✗'
check "after: the first divergence is L2 attn.o_proj" grep_screen w_after 'first(:| divergence) L2 attn\.o_proj every rank \(of 2\) '
check "the cut file is still being written" grep_screen w_bisect2 '1 file\(s\) still being written'
check "after: no unreadable cell" sh -c "! grep -qE '^.L3 .*!' '$T/w_after.screen'"
finish
