#!/bin/bash
# Hostile inputs, round 2 (issue 37), the silent wrong answers:
#  - msprobe statistics: a NaN Max/Mean/Norm in the target against a finite
#    reference diverges (it read "ok, rel 0", exit 0); a pair whose statistics
#    are NaN or null on both sides is counted and said ("nothing to compare"),
#    never under "every pair is in the ok band";
#  - keys that flatten to one name (a nested dict beside a dotted key, keys cut
#    at a NUL: tests/fixtures/dupkeys, real torch.save) are each found by a key
#    of their own: the target's sign-flipped second tensor diverges;
#  - pairing: calls aligns a layer of 3,000 calls with one inserted and one
#    left out (past the 2^22 table cells it fell back to call counters:
#    ~2,980 false shape_mismatch pairs), and two findings are all it says;
#  - a batch slot is a window of an activation's token rows: a weight, or a
#    dim that is not the token rows, is a shape mismatch (tests/fixtures/slotwin,
#    real torch.save); the window is shown as a part ("⊂"), never as "≡".
# The msprobe trees are the real fixture (tests/fixtures/realdump/ms_stat_tp2,
# written by msprobe's PrecisionDebugger) edited here, and dump.json files in
# its schema.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
fresh_tmp
need_python "to edit the msprobe statistics"
R=$DB_FIXTURES/realdump

# --- msprobe statistics: NaN against a number; nothing to compare ----------
ms=$DB_TMP/ms
mkdir -p "$ms"
cp -r "$R/ms_stat_tp2/ref" "$ms/ref"
cp -r "$R/ms_stat_tp2/ref" "$ms/nan"
cp -r "$R/ms_stat_tp2/ref" "$ms/none_ref"
cp -r "$R/ms_stat_tp2/ref" "$ms/none_tgt"
"$PY" - "$ms" <<'PY' || fail "editing the msprobe statistics"
import json, sys
ms = sys.argv[1]
def edit(side, fn):
    p = f"{ms}/{side}/step0/rank0/dump.json"
    d = json.load(open(p))
    fn(d["data"])
    json.dump(d, open(p, "w"), indent=1)
def out0(data, key):
    o = data[key]["output"]
    return o[0] if isinstance(o, list) else o
l1 = "Module.model.layers.1.input_layernorm.RMSNorm.forward.0"
l2 = "Module.model.layers.2.input_layernorm.RMSNorm.forward.0"
def nan_target(data):
    t = out0(data, l1)
    t["Max"] = t["Mean"] = t["Norm"] = float("nan")
edit("nan", nan_target)
# both sides: one tensor all null, another all NaN
def nothing(data):
    for k in ("Max", "Min", "Mean", "Norm"):
        out0(data, l1)[k] = None
        out0(data, l2)[k] = float("nan")
edit("none_ref", nothing)
edit("none_tgt", nothing)
PY
expect 1 "NaN statistics in the target" "$DB_BIN" compare "$ms/ref" "$ms/nan"
has "$out" "first divergence: L1 input_layernorm.0 rank 0 pass 0: statistics only, rel inf [bug]" \
	"NaN Max/Mean/Norm against finite ones"
expect 0 "statistics NaN or null on both sides" "$DB_BIN" compare "$ms/none_ref" "$ms/none_tgt"
has "$out" "; 2 nothing to compare" "the summary counts the pairs with nothing to compare"
has "$out" "no divergence among the pairs compared; 2 pairs had nothing to compare" \
	"the verdict says so"
grep -q "every pair is in the ok band" <<<"$out" && fail "nothing to compare called ok"
has "$out" "(nothing to compare: no statistic is a number on both sides)" "the row says why"
expect 0 "nothing to compare, JSON" "$DB_BIN" compare --format json "$ms/none_ref" "$ms/none_tgt"
[ "$(grep -c '"nothing_to_compare": true' <<<"$out")" = 2 ] || fail "JSON: nothing_to_compare on the 2 pairs"

# --- keys that flatten to one name -----------------------------------------
D=$DB_FIXTURES/dupkeys
expect 1 "flattened duplicate keys" "$DB_BIN" compare "$D/ref" "$D/target"
grep -q "attn.out #1 .* scramble" <<<"$out" ||
	fail "the second attn.out (sign-flipped) is its own tensor: $(grep 'attn.out' <<<"$out")"
grep -q "mlp #1 .* scramble" <<<"$out" ||
	fail "the second key cut at a NUL is its own tensor: $(grep 'mlp' <<<"$out")"
grep -q "attn.out  .* ok$" <<<"$out" || fail "the first attn.out is still ok"
# the metrics cache keeps each apart: a second run reads the same
expect 1 "flattened duplicate keys, from the cache" "$DB_BIN" compare "$D/ref" "$D/target"
grep -q "attn.out #1 .* scramble" <<<"$out" || fail "from the cache: the second attn.out"

# --- pairing: calls, 3,000 calls in one layer, one inserted -----------------
mc=$DB_TMP/calls
"$PY" - "$R/ms_stat_tp2/ref/step0/rank0/dump.json" "$mc" <<'PY' || fail "making the 3,000-call trees"
import json, os, sys
head = {k: v for k, v in json.load(open(sys.argv[1])).items() if k != "data"}
out = sys.argv[2]
layer = "Module.model.layers.0.mlp.LlamaMLP.forward.0"
def stat(shape, v):
    return {"type": "torch.Tensor", "dtype": "torch.float32", "shape": shape,
            "Max": v + 1.0, "Min": v - 1.0, "Mean": v, "Norm": abs(v) + 2.0,
            "requires_grad": False}
def tree(side, calls):
    d = f"{out}/{side}/step0/rank0"
    os.makedirs(d, exist_ok=True)
    data, cons = {}, {"Module.model.LlamaModel.forward.0": None,
                      "Module.model.layers.0.LlamaDecoderLayer.forward.0": "Module.model.LlamaModel.forward.0",
                      layer: "Module.model.layers.0.LlamaDecoderLayer.forward.0"}
    data[layer] = {"input_args": [stat([4, 8], 0.5)], "input_kwargs": {}, "output": [stat([4, 8], 0.25)]}
    n = {}
    for api, shape, v in calls:
        k = n.get(api, 0)
        n[api] = k + 1
        name = f"Tensor.{api}.{k}.forward"
        data[name] = {"input_args": [stat(shape, v)], "input_kwargs": {}, "output": [stat(shape, v)]}
        cons[name] = layer
    json.dump(dict(head, data=data), open(f"{d}/dump.json", "w"), indent=1)
    json.dump(cons, open(f"{d}/construct.json", "w"), indent=1)
calls = [("__add__", [i % 7 + 1, 8], float(i)) for i in range(3000)]
tree("ref", calls)
# one call inserted near the start, one left out near the end: the part
# between differs, 2,980 x 2,980 calls (past the 2^22 cells of a table)
tree("target", calls[:10] + [("__add__", [9, 8], 5.0)] + calls[10:2990] + calls[2991:])
PY
expect 1 "3,000 calls, one inserted" "$DB_BIN" compare "$mc/ref" "$mc/target"
sm=$(grep -o "[0-9]* shape_mismatch" <<<"$out" | head -1)
[ "$sm" = "0 shape_mismatch" ] || fail "an insert among 3,000 calls: $sm (the calls were not aligned)"
has "$out" "; 1 ref_only, 1 target_only" "one call only the target makes, one only the ref"
has "$out" "calls only one side makes" "the insert is one finding"
grep -q "not aligned" <<<"$out" && fail "3,000 calls said not aligned"

# --- batch slots: token-row windows of activations only ---------------------
S=$DB_FIXTURES/slotwin
expect 1 "parts that are not batch slots" "$DB_BIN" compare "$S/ref" "$S/target"
for st in mlp.down_proj.weight mlp.up_proj.weight attn.ctx; do
	grep -q "$st .* shape_mismatch" <<<"$out" || fail "$st is no batch slot: $(grep "$st" <<<"$out")"
done
# (LC_ALL=C: "<=" for "⊂", "==" for "≡")
grep -q "hidden .* <= .*ok (compared on a part: 10 of the ref's 12 rows along dim 0; the other 2 are in no pair)" <<<"$out" ||
	fail "the token-row window shown as a part: $(grep hidden <<<"$out")"
grep -q "==" <<<"$out" && fail "a part shown as equality (==)"
out=$(LC_ALL=C.UTF-8 "$DB_BIN" compare "$S/ref" "$S/target" 2>&1)
grep -q "hidden .*⊂ .*ok" <<<"$out" || fail "⊂ in UTF-8: $(grep hidden <<<"$out")"

finish t_hostile37
