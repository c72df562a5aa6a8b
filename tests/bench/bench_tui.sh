#!/bin/bash
# TUI benchmark (not a test): first frame on a 10,240-file tree (SGLang v1
# names, 128 layers x 40 stages x ref/target) and keypress -> redraw
# latency at 200x60, from the binary's own timings (DUMPBISECT_TIMING).
# Goals (issues 3, 5): first frame < 150 ms, key -> redraw < 10 ms, and a
# reopen shows every metric (from the metrics cache) < 100 ms. Run 1
# starts with no caches (cold: every file parsed, every pair computed);
# runs 2 and 3 reopen the same tree (warm).
#   usage: tests/bench/bench_tui.sh [path/to/dumpbisect] [work dir]
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$(realpath "${1:-$SRC/build/dumpbisect}")   # the runs cd elsewhere
W=${2:-${TMPDIR:-/tmp}/dumpbisect-bench-tui}
LAYERS=128
STAGES=40

# The tree: every file a hard link to one small real torch file from the
# demo dumps (ref and target sides differ), named as SGLang's dumper does.
demo_ref=$(ls "$SRC"/tests/fixtures/demo/ref/*/forward_pass_id=0___rank=0___name=hidden_in___dump_index=*___layer_id=0.pt)
demo_tgt=$(ls "$SRC"/tests/fixtures/demo/target/*/forward_pass_id=0___rank=0___name=hidden_in___dump_index=*___layer_id=0.pt)
if [ ! -f "$W/.done" ]; then
	rm -rf "$W"
	mkdir -p "$W/ref/sglang_dump_1.0" "$W/target/sglang_dump_2.0"
	for side in ref target; do
		src=$demo_ref
		[ "$side" = target ] && src=$demo_tgt
		d=$W/$side/$(ls "$W/$side")
		i=0
		for ((l = 0; l < LAYERS; l++)); do
			for ((s = 0; s < STAGES; s++)); do
				ln "$src" "$d/forward_pass_id=0___rank=0___name=stage$(printf %02d $s)___dump_index=${i}___layer_id=$l.pt"
				i=$((i + 1))
			done
		done
	done
	touch "$W/.done"
fi
nfiles=$(find "$W/ref" "$W/target" -name '*.pt' | wc -l)

# Keys: moves, pages, metric and transpose toggles, view round trips.
{
	for ((k = 0; k < 40; k++)); do echo '<Down>'; done
	for ((k = 0; k < 30; k++)); do echo '<Right>'; done
	for ((k = 0; k < 10; k++)); do echo '<PgDown>'; echo '<PgUp>'; done
	for ((k = 0; k < 10; k++)); do echo 'c'; echo 't'; done
	for ((k = 0; k < 10; k++)); do echo 'G'; echo 'g'; echo '<End>'; echo '<Home>'; done
	for ((k = 0; k < 5; k++)); do echo '<Enter>'; echo 'q'; echo 'L'; echo 'q'; done
} >"$W/keys"

run() {
	rm -f "$W/timing"
	(cd "$W" && env -i PATH=/usr/bin:/bin HOME="$W" TERM=xterm-256color LANG=C.UTF-8 \
		LINES=60 COLUMNS=200 DUMPBISECT_SCRIPT="$W/keys" DUMPBISECT_WATCHDOG=120 \
		DUMPBISECT_TIMING="$W/timing" /usr/bin/time -f '%U %S' -o "$W/cpu" "$BIN" ref target)
}
rm -rf "$W/.cache"      # run 1 is cold: no entry, index or metrics cache

echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
echo "tree: $nfiles files, $LAYERS layers x $STAGES stages; screen 200x60"
for pass in 1 2 3; do
	run
	get() { awk -v k="$1" '$1 == k { print $2 }' "$W/timing"; }
	awk '$1 == "key" { print $3 }' "$W/timing" | sort -n >"$W/keys_ms"
	awk '$1 == "key" { print $4 }' "$W/timing" | sort -n >"$W/keys_cpu"
	n=$(wc -l <"$W/keys_ms")
	pct() { sed -n "$(( (n * $2 + 99) / 100 ))p" "$1"; }
	printf 'run %d (%s): open %s ms, first frame %s ms, all metrics %s ms; process CPU %s s user + %s s sys (all keys included)\n' \
		"$pass" "$([ "$pass" = 1 ] && echo cold || echo warm)" "$(get open_ms)" \
		"$(get first_frame_ms)" "$(get scan_done_ms)" $(tail -1 "$W/cpu")
	printf '       %d keys -> redraw: wall median %s ms, p95 %s ms, max %s ms; CPU median %s ms, p95 %s ms, max %s ms\n' \
		"$n" "$(pct "$W/keys_ms" 50)" "$(pct "$W/keys_ms" 95)" "$(tail -1 "$W/keys_ms")" \
		"$(pct "$W/keys_cpu" 50)" "$(pct "$W/keys_cpu" 95)" "$(tail -1 "$W/keys_cpu")"
done
