#!/usr/bin/env bash
# Whole-tree compare on trees of many small files (issue 24): `dumpbisect
# compare REF TARGET --no-cache` against `cat` of every file, in one run,
# on a warm page cache (the files are hard links to a few small real torch
# files, tests/bench/make_link_tree.sh; 36 % of the pairs diverge, as past
# a real run's first divergence, so root-cause hints are asked for them).
# Each repetition times cat, then each binary, back to back; the load is
# printed beside every figure. Reports, does not judge (goals: <= 2x cat at
# 100k files, <= 3x at 1m).
#   usage: [BENCH_SIZE=100k|1m] tests/bench/bench_compare_files.sh [dumpbisect [base-dumpbisect]]
# BENCH_SIZE   [100k]  100k: 64 ranks x 61 layers x 13 stages x ref/target
#                      = 101,504 files; 1m: the same x 8 passes = 812,032
# BENCH_REPS   [3]     repetitions (each one cat and one run per binary)
# BENCH_FORMAT [json]  compare's --format (json asks every diverging
#                      pair's hint; text too)
# BENCH_DIR    [/tmp/bench-cmp-SIZE] the tree (made once, kept)
# A second binary (e.g. main's) is timed in the same repetitions, so the
# before/after ratio comes from one machine state.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin=$(realpath "${1:-$repo/build-rel/dumpbisect}")
base=${2:+$(realpath "$2")}
size=${BENCH_SIZE:-100k}
case $size in
100k) passes=1 ;;
1m) passes=8 ;;
*) echo "BENCH_SIZE: 100k or 1m" >&2; exit 2 ;;
esac
dir=${BENCH_DIR:-/tmp/bench-cmp-$size}
reps=${BENCH_REPS:-3}
fmt=${BENCH_FORMAT:-json}
bash "$here/make_link_tree.sh" "$dir" "$passes" 64 61 13 39
nfiles=$(find "$dir/ref" "$dir/target" -type f | wc -l)
echo "tree: $dir, $nfiles files; $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
cd "$dir"
tf=$(mktemp)
trap 'rm -f "$tf"' EXIT
# measure LABEL CMD...: one line: wall, user, sys, peak RSS, load before
measure() {
	local label=$1 l rc=0
	shift
	l=$(cut -d' ' -f1 /proc/loadavg)
	/usr/bin/time -f '%e %U %S %M' -o "$tf" "$@" > /dev/null 2>&1 || rc=$?
	[ "$rc" -le 1 ] || { echo "$label: exit $rc"; return 1; }
	read -r e u s m < <(tail -n 1 "$tf")
	printf '%-22s %8.2f s  user %6.2f  sys %6.2f  peak RSS %7.1f MiB  load %s\n' \
		"$label" "$e" "$u" "$s" "$(echo "$m / 1024" | bc -l)" "$l"
	last=$e
}
for ((r = 1; r <= reps; r++)); do
	echo "repetition $r:"
	measure "cat" sh -c 'find ref target -type f -print0 | xargs -0 cat > /dev/null'
	c=$last
	measure "compare" "$bin" compare ref target --no-cache --format "$fmt"
	printf '%-22s %8.2fx cat\n' "  compare / cat" "$(echo "$last / $c" | bc -l)"
	if [ -n "$base" ]; then
		measure "compare (base)" "$base" compare ref target --no-cache --format "$fmt"
		printf '%-22s %8.2fx cat\n' "  base / cat" "$(echo "$last / $c" | bc -l)"
	fi
done
