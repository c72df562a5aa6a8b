#!/usr/bin/env bash
# The long runs behind issue 6: each harness until FUZZ_RUNS executions
# (default 10 million), one at a time, at the lowest CPU priority, so it
# can run in the background on a shared machine:
#   nohup tests/fuzz/longrun.sh [HARNESS...] &
# One line per harness is appended to build-fuzz/longrun.txt:
#   HARNESS  EXECS  SECONDS  ok|FAILED
# Logs: build-fuzz/HARNESS.long.log; crashes: build-fuzz/crashes/.
# A build that fails (someone's half-written file) is retried a few times.
set -uo pipefail
cd "$(dirname "$0")/../.."
runs=${FUZZ_RUNS:-10000000}
hs=("$@")
[ ${#hs[@]} -gt 0 ] || hs=(fuzz_zip fuzz_pickle fuzz_npy fuzz_safetensors fuzz_file
                          fuzz_session fuzz_profile fuzz_keys)
for h in "${hs[@]}"; do
	start=$(date +%s)
	outcome=FAILED
	for try in 1 2 3 4 5; do
		rm -f "build-fuzz/$h.long.log"
		if FUZZ_TAG=long FUZZ_RUNS=$runs FUZZ_MAX_LEN=${FUZZ_MAX_LEN:-16384} nice -n 19 tests/fuzz/run.sh 0 "$h" >/dev/null 2>&1; then
			outcome=ok
			break
		fi
		[ -f "build-fuzz/$h.long.log" ] && break     # it ran: a real finding
		sleep 120                                    # the build failed: retry
	done
	execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "build-fuzz/$h.long.log" 2>/dev/null |
		grep -o '[0-9]*$')
	printf '%-18s %10s %6d s  %s\n' "$h" "${execs:-?}" $(( $(date +%s) - start )) "$outcome" \
		>>build-fuzz/longrun.txt
done
