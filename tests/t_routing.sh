#!/bin/bash
# Routed expert ids are compared exactly (issue 17): a real hybrid MoE tree
# whose layer-2 router has a bias (bugs.py router_bias); the counts of tokens
# that chose other experts are torch's (sorted top-k rows compared, int32).
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
need_python "for the JSON checks"
F=$DB_FIXTURES/realdump/hy_v2all_tp1_router

expect 1 "router bias" "$DB_BIN" compare "$F/ref" "$F/target"
# pass, layer -> tokens rerouted / tokens (torch: 5/12 6/12 5/12 4/12 4/12 4/12 at
# step 0, layers 2..7; 1/1 at step 1, layers 2, 6, 7; 0 elsewhere)
for want in "0 2 5 12" "0 3 6 12" "0 4 5 12" "0 5 4 12" "0 6 4 12" "0 7 4 12" \
	"1 2 1 1" "1 5 0 1" "1 6 1 1"; do
	read -r pass layer n t <<<"$want"
	band=bug; [ "$n" = 0 ] && band=ok
	grep -Eq "^\S+ +$pass +$layer +0 +mlp\.topk\.1 .* $band \($n of $t tokens chose other experts\)" <<<"$out" ||
		fail "pass $pass L$layer: want $band ($n of $t tokens chose other experts)"
done
# the weights and logits beside the ids are measured as usual, not counted
grep -q 'mlp\.topk\.0 .*tokens chose' <<<"$out" && fail "topk weights counted as ids"

expect 1 "router bias json" "$DB_BIN" compare --format json "$F/ref" "$F/target"
printf '%s' "$out" >"$DB_TMP/routing.json"
"$PY" - "$DB_TMP/routing.json" <<'PY' || fail "json: routing field"
import json, sys
j = json.load(open(sys.argv[1]))
r = [p for p in j["pairs"] if p["stage"] == "mlp.topk.1" and p["layer"] == 3 and p["pass"] == 0]
assert len(r) == 1 and r[0]["routing"] == {"tokens": 12, "rerouted": 6, "k": 2}, r
assert all("routing" not in p for p in j["pairs"] if p["stage"] != "mlp.topk.1")
PY
# the culprit is the router itself, the first thing after it moves
expect 1 "router bias bisect" "$DB_BIN" bisect "$F/ref" "$F/target" --auto
has "$out" "first bad layer L2" "router bias bisect"
finish t_routing
