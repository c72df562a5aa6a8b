#!/usr/bin/env bash
# Builds the libFuzzer harnesses with clang and runs each one.
#   tests/fuzz/run.sh [SECONDS_PER_HARNESS] [HARNESS...]
# Default 8 s each (the CI smoke). Long runs: tests/fuzz/longrun.sh, or
#   FUZZ_RUNS=10000000 tests/fuzz/run.sh 0 fuzz_file
# Environment: FUZZ_RUNS (executions instead of seconds), FUZZ_MAX_LEN
# (input size cap, default 65536), FUZZ_BUILD (build dir, default
# build-fuzz), FUZZ_TAG (log name: build-fuzz/HARNESS.TAG.log).
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
fail=0
for h in "${harnesses[@]}"; do
	corpus=$b/corpus/$h; mkdir -p "$corpus"
	seeds=tests/fuzz/seeds/$h
	# seeds file: globs of files to start from; each file is copied once
	if [ -f "$seeds" ]; then
		for g in $(cat "$seeds"); do for f in $g; do [ -f "$f" ] && cp -f "$f" "$corpus/"; done; done
	fi
	args=(-max_len="${FUZZ_MAX_LEN:-65536}" -timeout=10 -rss_limit_mb=2048 -artifact_prefix=$b/crashes/$h- -print_final_stats=1)
	if [ -n "${FUZZ_RUNS:-}" ]; then args+=(-runs="$FUZZ_RUNS"); else args+=(-max_total_time="$secs"); fi
	echo "== $h" >&2
	log=$b/$h${FUZZ_TAG:+.$FUZZ_TAG}.log   # FUZZ_TAG keeps long-run logs apart
	start=$(date +%s)
	if ! $b/tests/fuzz/$h "${args[@]}" "$corpus" 2>"$log"; then
		echo "$h: FAILED, see $log and $b/crashes/" >&2; tail -30 "$log" >&2; fail=1
	fi
	echo "$h: $(( $(date +%s) - start )) s" >&2
	grep -E 'stat::number_of_executed_units|stat::peak_rss_mb' "$log" | sed "s/^/$h: /" >&2 || true
done
exit $fail
