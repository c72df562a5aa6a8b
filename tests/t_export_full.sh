#!/usr/bin/env bash
# export on a full disk (issue 26 item 13), with the LD_PRELOAD shim
# tests/fault_inject.c: a report exported once, then exported again against
# another target (other numbers in every file) while the disk fills up at
# each of the four files (its fflush or fsync failing with ENOSPC):
# exit 2, the message names the file being written and the errno text, and
# the previous export is whole - all four files exactly as they were, not a
# new report.md beside old metrics - with no temp file left. Exported
# without faults, all four are new and carry one generation stamp
# (report.md, heatmap.svg, metrics.json).
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
fresh_tmp
cc=${CC:-cc}
command -v "$cc" >/dev/null || { echo "skip: no C compiler for the shim"; exit 0; }
shim=$DB_TMP/fault_inject.so
"$cc" -shared -fPIC -o "$shim" "$DB_SRC/tests/fault_inject.c" -ldl || exit 1
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
T=$DB_FIXTURES/bisect/signflip_tp2
cd "$DB_TMP" || exit 1
"$DB_BIN" bisect --auto --session s.yaml "$T/ref" "$T/target" >/dev/null 2>&1
[ -s s.yaml ] || fail "no session"
expect 0 "the first export" "$DB_BIN" export s.yaml --out rep
cp -r rep rep.old
# exported against another target, every file changes
expect 0 "another export elsewhere" "$DB_BIN" export s.yaml --target "$T/ref" --out other
for f in report.md heatmap.svg metrics.json metrics.csv; do
	cmp -s "rep.old/$f" "other/$f" && fail "the second export's $f is not new"
done

names=(heatmap.svg metrics.json metrics.csv report.md)   # the order they are written
for spec in fflush:0 fflush:1 fflush:2 fflush:3 fsync:0 fsync:1 fsync:2 fsync:3; do
	out=$(LD_PRELOAD=$shim DB_FAULT=$spec DB_FAULT_ERRNO=28 timeout 60 \
		"$DB_BIN" export s.yaml --target "$T/ref" --out rep 2>err)
	rc=$?
	[ $rc = 2 ] || { fail "$spec: exit $rc, want 2: $(cat err)"; continue; }
	grep -q "fault_inject: ${spec%%:*} failed" err || fail "$spec: the fault was never reached"
	grep -qE "rep/(report\.md|heatmap\.svg|metrics\.json|metrics\.csv): .*No space left on device" err ||
		fail "$spec: the message does not name the file: $(grep -v fault_inject err)"
	case $spec in fflush:*|fsync:*)
		n=${spec#*:}
		grep -q "rep/${names[$n]}: " err || fail "$spec: not '${names[$n]}' named: $(grep -v fault_inject err)" ;;
	esac
	for f in "${names[@]}"; do
		cmp -s "rep.old/$f" "rep/$f" || fail "$spec: $f is not the previous export's (a mix)"
	done
	left=$(ls rep | grep '\.tmp\.')
	[ -z "$left" ] || fail "$spec: temp files left: $left"
done

# without faults: four new files, one generation
expect 0 "export again" "$DB_BIN" export s.yaml --target "$T/ref" --out rep
g=$(sed -n 's/^_Export generation \([^:]*\):.*/\1/p' rep/report.md)
[ -n "$g" ] || fail "report.md has no generation stamp"
grep -qF "<!-- dumpbisect export generation $g -->" rep/heatmap.svg || fail "heatmap.svg is not of generation $g"
grep -qF "{\"export_generation\": \"$g\", " rep/metrics.json || fail "metrics.json is not of generation $g"
g0=$(sed -n 's/^_Export generation \([^:]*\):.*/\1/p' rep.old/report.md)
[ "$g" != "$g0" ] || fail "two exports share generation $g"
for f in metrics.csv; do cmp -s "other/$f" "rep/$f" || fail "$f is not the new export's"; done
finish t_export_full
