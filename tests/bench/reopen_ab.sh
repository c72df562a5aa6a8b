#!/usr/bin/env bash
# The workbench's reopen, two builds in turns on one bench_tui.sh tree:
# open and first frame (DUMPBISECT_TIMING), CPU, peak RSS and the load,
# one line a run. Each build keeps its caches under its own directory
# (XDG_CACHE_HOME), so builds whose snapshots differ never read or
# overwrite each other's (nor the tree's own .cache); the first open of
# each fills them and is not counted.
#   tests/bench/reopen_ab.sh BIN_A BIN_B [TREE] [RUNS]
# TREE: the 100k tree (bench_tui.sh's); /tmp/bench-1m for 812,032 files.
set -eu
A=$(realpath "$1")
B=$(realpath "$2")
W=${3:-${TMPDIR:-/tmp}/dumpbisect-bench-tui-64x61x13}
N=${4:-5}
[ -f "$W/.done" ] || { echo "$W: no bench tree (run bench_tui.sh first)" >&2; exit 2; }
C=$(mktemp -d "${TMPDIR:-/tmp}/reopen-ab.XXXXXX")
trap 'rm -rf "$C"' EXIT
echo q >"$C/keys"
run() {  # LABEL BIN CACHE
	rm -f "$C/timing"
	(cd "$W" && env -i PATH=/usr/bin:/bin HOME="$W" TERM=xterm-256color LANG=C.UTF-8 \
		XDG_CACHE_HOME="$3" LINES=60 COLUMNS=200 DUMPBISECT_SCRIPT="$C/keys" \
		DUMPBISECT_WATCHDOG=600 DUMPBISECT_TIMING="$C/timing" \
		/usr/bin/time -f '%U %S %M' -o "$C/cpu" "$2" ref target >/dev/null 2>&1)
	awk -v l="$1" -v load="$(cut -d' ' -f1 /proc/loadavg)" -v cpu="$(cat "$C/cpu")" '
		{ v[$1] = $2 }
		END { split(cpu, c, " ");
		      printf "%-2s from %-9s open %8.1f ms  first frame %8.1f ms  " \
		             "cpu %.2fu+%.2fs  rss %d MiB  load %s\n", l, v["open_from"],
		             v["open_ms"], v["first_frame_ms"], c[1], c[2], c[3] / 1024, load }' \
		"$C/timing"
}
echo "A=$A"
echo "B=$B"
echo "tree $W; filling each build's caches (not counted)"
run A "$A" "$C/a" >/dev/null
run B "$B" "$C/b" >/dev/null
for i in $(seq "$N"); do
	run A "$A" "$C/a"
	run B "$B" "$C/b"
done
