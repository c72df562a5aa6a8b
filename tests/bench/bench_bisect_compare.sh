#!/usr/bin/env bash
# bisect against compare on one large tree (issue 35, part 5): bisect asks
# db_first_divergence (compare's rule) for its pass and culprit stage, which
# reads every pair, so it measures every pair before it asks; this times it
# against compare (which measures them on the worker pool) on
#   - "aligned": a --steps 20 generation at TP 2 against the same 32 tokens in
#     one pass (--prefill-all), a kv_write bug at L5 from decode step 7
#     (tests/fixtures/realdump/bugs.py): 21 x the one pass's pairs, each on its rows;
#   - "steps": the same target against a --steps 20 reference (pass by pass);
# both written by the real SGLang dumper (../shared/realdump), every float
# tensor's hidden dim then widened BENCH_WIDEN times (torch.Tensor.repeat:
# the same divergence, BENCH_WIDEN x the bytes). Prints each command's wall,
# user and system seconds, BENCH_REPS runs each, and the median of the wall.
# No timed assertions: this reports, it does not judge.
#
#   BENCH_WIDEN [512]  BENCH_REPS [5]  BENCH_DIR [mktemp -d]  BENCH_KEEP [0]
#   DB_BIN [<repo>/build/dumpbisect]  DB_BIN_OLD [none]: another binary timed
#   beside it (e.g. a build of main before the change)
set -eu
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
FIX=$REPO/tests/fixtures/realdump
REALDUMP=${REALDUMP:-$(dirname "$REPO")/shared/realdump}
if [ ! -d "$REALDUMP" ] && gd=$(git -C "$REPO" rev-parse --path-format=absolute --git-common-dir 2>/dev/null); then
	REALDUMP=$(dirname "$(dirname "$gd")")/shared/realdump
fi
PY=${PY:-/usr/bin/python3}
DB_BIN=${DB_BIN:-$REPO/build/dumpbisect}
WIDEN=${BENCH_WIDEN:-512}
REPS=${BENCH_REPS:-5}
DIR=${BENCH_DIR:-$(mktemp -d)}
[ "${BENCH_KEEP:-0}" = 1 ] || trap 'rm -rf "$DIR"' EXIT

if [ ! -d "$DIR/wide/steps/ref" ]; then
	export REALDUMP
	"$PY" "$REALDUMP/gen/gen.py" sglang_v2 ref "$DIR/raw/one/ref" --world 2 --steps 20 --prefill-all >/dev/null
	"$PY" "$REALDUMP/gen/gen.py" sglang_v2 ref "$DIR/raw/steps/ref" --world 2 --steps 20 >/dev/null
	"$PY" "$FIX/bugs.py" sglang_v2 target "$DIR/raw/one/target" --world 2 --steps 20 \
		--bug '{"kind":"kv_write","layer":5,"step":7}' >/dev/null
	"$PY" - "$DIR" "$WIDEN" <<'PY'
import glob, os, sys
import torch
d, k = sys.argv[1], int(sys.argv[2])
for case, side, src in (("aligned", "ref", "one/ref"), ("aligned", "target", "one/target"),
                        ("steps", "ref", "steps/ref"), ("steps", "target", "one/target")):
    for f in glob.glob(os.path.join(d, "raw", src, "*", "*.pt")):
        o = torch.load(f)
        v = o.get("value") if isinstance(o, dict) else None
        if v is not None and torch.is_floating_point(v) and v.ndim == 2:
            o["value"] = v.repeat(1, k).contiguous()
        out = os.path.join(d, "wide", case, side, os.path.basename(os.path.dirname(f)),
                           os.path.basename(f))
        os.makedirs(os.path.dirname(out), exist_ok=True)
        torch.save(o, out)
PY
fi
echo "# $(date -u +%FT%TZ)  $(nproc) CPUs  widen x$WIDEN"
for case in aligned steps; do
	W=$DIR/wide/$case
	echo "# $case: $(find "$W" -type f | wc -l) files, $(du -sh "$W" | cut -f1)"
	for what in "compare:$DB_BIN:compare" "bisect:$DB_BIN:bisect --auto" \
	            ${DB_BIN_OLD:+"bisect_old:$DB_BIN_OLD:bisect --auto"}; do
		name=${what%%:*}
		rest=${what#*:}
		bin=${rest%%:*}
		cmd=${rest#*:}
		walls=()
		for _ in $(seq "$REPS"); do
			/usr/bin/time -o "$DIR/time" -f "%e %U %S" "$bin" $cmd --no-cache --format json \
				"$W/ref" "$W/target" >/dev/null 2>&1 || true
			t=$(tail -1 "$DIR/time")
			walls+=("${t%% *}")
			printf '%s\t%s\t%s\t(load %s)\n' "$case" "$name" "$t" "$(cut -d' ' -f1 /proc/loadavg)"
		done
		printf '%s\t%s\tmedian wall %s s\n' "$case" "$name" \
			"$(printf '%s\n' "${walls[@]}" | sort -n | sed -n "$(((REPS + 1) / 2))p")"
	done
done
