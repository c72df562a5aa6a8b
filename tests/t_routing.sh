#!/bin/bash
# Routed expert ids are compared exactly (issue 17): a real hybrid MoE tree
# whose layer-2 router has a bias (bugs.py router_bias); the counts of tokens
# that chose other experts are torch's (sorted top-k rows compared, int32).
# One datum, one verdict (issue 25 item 6): where a tree holds the same ids
# twice (mode all: TopK's output and the experts' input), both are judged
# exactly, in the table and the JSON (cases_routing.tsv, from truth.py).
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
# the same ids twice: every copy gets torch's count and one verdict
R=$DB_FIXTURES/realdump
expect 1 "ids twice" "$DB_BIN" compare "$R/hy_v2all_tp1_ids/ref" "$R/hy_v2all_tp1_ids/target"
printf '%s\n' "$out" >"$DB_TMP/ids.txt"
expect 1 "ids twice json" "$DB_BIN" compare --format json "$R/hy_v2all_tp1_ids/ref" "$R/hy_v2all_tp1_ids/target"
printf '%s' "$out" >"$DB_TMP/ids.json"
n=0
while IFS=$'\t' read -r case pass rank layer stages tokens moved bits; do
	[ "$case" = hy_v2all_tp1_ids ] || continue
	band=bug; [ "$moved" = 0 ] && band=ok
	for st in ${stages//,/ }; do
		n=$((n + 1))
		grep -Eq "^\S+ +$pass +$layer +$rank +${st//./\\.} .* $band \($moved of $tokens tokens chose other experts\)$" \
			"$DB_TMP/ids.txt" || fail "pass $pass L$layer $st: want $band ($moved of $tokens), got: $(
			grep -E "^\S+ +$pass +$layer +$rank +${st//./\\.} " "$DB_TMP/ids.txt")"
	done
	"$PY" - "$DB_TMP/ids.json" "$pass" "$rank" "$layer" "$stages" "$tokens" "$moved" <<'PY' ||
import json, sys
j = json.load(open(sys.argv[1]))
ps, rk, ly, tok, mv = (int(x) for x in (sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[6], sys.argv[7]))
for st in sys.argv[5].split(","):
    r = [p for p in j["pairs"] if (p["pass"], p["rank"], p["layer"], p["stage"]) == (ps, rk, ly, st)]
    want = ("bug" if mv else "ok", {"tokens": tok, "rerouted": mv, "k": 2})
    got = [(p["severity"], p.get("routing")) for p in r]
    if got != [want]:
        sys.exit(f"{st}: {got} != {[want]}")
PY
		fail "json pass $pass L$layer ($stages)"
done <"$R/cases_routing.tsv"
[ "$n" -ge 8 ] || fail "cases_routing.tsv: $n rows of hy_v2all_tp1_ids"
# the weights and logits handed to the experts are floats, measured as usual
grep -q 'mlp\.experts\.inputs\.1\.[02] .*tokens chose' "$DB_TMP/ids.txt" && fail "experts' weights counted as ids"
finish t_routing
