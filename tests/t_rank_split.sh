#!/bin/bash
# Ranks across layouts (issue 22): reference TP1 vs target TP2, the culprit
# compared merged; each target shard is judged against its slice of the
# reference, so bisect names the bad ranks instead of "not separable".
# Truth from the bugs (tests/fixtures/realdump cases.tsv, cases_steps.tsv):
# v1_tp1v2 softmax_scale L6 and steps_hy_hook_tp1v2 decode_pos L7 act on
# every rank (attention heads split across both). The partial sums stay not
# separable (tests/test_rank_split.c).
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
fresh_tmp
need_python "to read the JSON"
R=$DB_FIXTURES/realdump

for c in v1_tp1v2:6 steps_hy_hook_tp1v2:7; do
	d=${c%%:*} layer=${c##*:}
	expect 1 "$d bisect json" "$DB_BIN" bisect "$R/$d/ref" "$R/$d/target" --auto --format json
	"$PY" - "$out" "$layer" <<'PY' || fail "$d ranks (above)"
import json, sys
j = json.loads(sys.argv[1])
want = {"first_bad_layer": int(sys.argv[2]), "bad_ranks": [0, 1], "all_ranks_bad": True,
        "ranks_separable": True, "ranks_sliced": True, "ranks_why": None}
bad = ["%s: %r, want %r" % (k, j.get(k), v) for k, v in want.items() if j.get(k) != v]
print("\n".join(bad)) if bad else None
sys.exit(1 if bad else 0)
PY
	expect 1 "$d bisect text" "$DB_BIN" bisect "$R/$d/ref" "$R/$d/target" --auto
	has "$out" "  bad ranks: 0 1 (every rank; each shard against its slice of the other side)" \
		"$d: the ranks named"
done
finish t_rank_split
