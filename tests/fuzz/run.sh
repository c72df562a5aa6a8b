#!/usr/bin/env bash
# Builds the libFuzzer harnesses with clang and runs each one.
#   tests/fuzz/run.sh [SECONDS_PER_HARNESS] [HARNESS...]
# Default 8 s each (the CI smoke). Long runs: tests/fuzz/longrun.sh, or
#   FUZZ_RUNS=10000000 tests/fuzz/run.sh 0 fuzz_file
# Environment: FUZZ_RUNS (executions instead of seconds), FUZZ_MAX_LEN
# (input size cap, default 65536), FUZZ_BUILD (build dir, default
# build-fuzz), FUZZ_TAG (log name: build-fuzz/HARNESS.TAG.log), FUZZ_JOBS
# (harnesses run at once, default one per core).
# Seed corpora come from the committed fixtures (tests/fuzz/seeds/HARNESS);
# crashes land in build-fuzz/crashes/ and make the script fail.
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-8}; shift || true
b=${FUZZ_BUILD:-build-fuzz}   # build dir (separate ones let a smoke run beside a long run)
# FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION (the OSS-Fuzz convention) shrinks
# caps that only cost time, e.g. the npz inflate budget (src/read/npz.c).
CC=clang cmake -S . -B $b -DDB_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DCMAKE_C_FLAGS=-DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION >/dev/null
# only the harnesses (and the core they link), not the unit tests
targets=$(cd tests/fuzz && ls fuzz_*.c | sed 's/\.c$//')
cmake --build $b -j"$(nproc)" --target $targets >/dev/null
mkdir -p $b/crashes
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=($(cd $b/tests/fuzz && ls fuzz_* | grep -v '\.' ))
# one harness: its corpus from the seeds, then the run; its report on stderr
# once it is done (the harnesses run side by side, FUZZ_JOBS at a time,
# default one per core: the CI smoke is their number x secs / cores)
one() {
	local h=$1 corpus=$b/corpus/$1 seeds=tests/fuzz/seeds/$1 g f
	mkdir -p "$corpus"
	# seeds file: globs of files to start from; each file is copied once
	if [ -f "$seeds" ]; then
		for g in $(cat "$seeds"); do for f in $g; do [ -f "$f" ] && cp -f "$f" "$corpus/"; done; done
	fi
	local args=(-max_len="${FUZZ_MAX_LEN:-65536}" -timeout=10 -rss_limit_mb=2048 -artifact_prefix=$b/crashes/$h- -print_final_stats=1)
	if [ -n "${FUZZ_RUNS:-}" ]; then args+=(-runs="$FUZZ_RUNS"); else args+=(-max_total_time="$secs"); fi
	local log=$b/$h${FUZZ_TAG:+.$FUZZ_TAG}.log   # FUZZ_TAG keeps long-run logs apart
	local start rc=0
	start=$(date +%s)
	$b/tests/fuzz/$h "${args[@]}" "$corpus" 2>"$log" || rc=1
	{
		echo "== $h: $(( $(date +%s) - start )) s"
		if [ $rc -ne 0 ]; then echo "$h: FAILED, see $log and $b/crashes/"; tail -30 "$log"; fi
		grep -E 'stat::number_of_executed_units|stat::peak_rss_mb' "$log" | sed "s/^/$h: /" || true
	} >&2
	return $rc
}
fail=0
jobs=${FUZZ_JOBS:-$(nproc)}
running=0
for h in "${harnesses[@]}"; do
	if [ "$running" -ge "$jobs" ]; then
		wait -n || fail=1
		running=$((running - 1))
	fi
	one "$h" &
	running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
	wait -n || fail=1
	running=$((running - 1))
done
exit $fail
