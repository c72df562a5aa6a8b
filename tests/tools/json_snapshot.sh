#!/usr/bin/env bash
# Writes the JSON that `compare`, `bisect --auto` and `export` give on every
# fixture tree into OUTDIR, one file per (tree, command), so that two builds
# can be held against each other byte for byte (see same_json.sh).
#   tests/tools/json_snapshot.sh BINARY OUTDIR
# Every tree pair under tests/fixtures (a folder holding ref/ and target/) and
# every one-folder tree (onedir/) is taken.  Exit status and stderr are kept
# beside the JSON: a change in either is a change in behaviour too.
set -uo pipefail
bin=$(realpath "$1"); out=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export HOME=$work/home XDG_CACHE_HOME=$work/cache XDG_STATE_HOME=$work/state \
	XDG_CONFIG_HOME=$work/config LC_ALL=C.UTF-8 TZ=UTC
cd "$root"
run() {  # NAME CMD...: stdout to NAME.json, "exit N" + stderr to NAME.err
	local name=$1; shift
	"$@" >"$out/$name.tmp" 2>"$out/$name.err.tmp"
	{ echo "exit $?"; sed "s#$work#WORK#g" "$out/$name.err.tmp"; } >"$out/$name.err"
	sed "s#$work#WORK#g" "$out/$name.tmp" >"$out/$name.json"
	rm -f "$out/$name.err.tmp" "$out/$name.tmp"
}
{ find tests/fixtures -type d -name ref -printf '%h\n'; find tests/fixtures -type d -name onedir; } |
	sort | while read -r t; do
	if [ "$(basename "$t")" = onedir ]; then sides=("$t"); else
		[ -d "$t/target" ] || continue; sides=("$t/ref" "$t/target"); fi
	n=$(echo "$t" | tr / _)
	run "$n.compare" "$bin" compare --no-cache -j1 --format json "${sides[@]}"
	run "$n.bisect" "$bin" bisect --no-cache -j1 --auto --format json "${sides[@]}"
	rm -rf "$work/s"; mkdir -p "$work/s"
	"$bin" bisect --no-cache -j1 --auto --session "$work/s/s.yaml" "${sides[@]}" >/dev/null 2>&1
	run "$n.export" "$bin" export --no-cache -j1 "$work/s/s.yaml" --out "$work/s/report"
	for f in metrics.json metrics.csv report.md heatmap.svg; do
		# the export's generation stamp (time + random) differs run to run
		[ -f "$work/s/report/$f" ] && sed -E "s#$work#WORK#g; s#[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}#GENERATION#g" \
			"$work/s/report/$f" >"$out/$n.export.$f"
	done
done
echo "json_snapshot: $(ls "$out" | wc -l) files in $out"
