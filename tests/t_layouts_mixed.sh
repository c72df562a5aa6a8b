#!/bin/bash
# Different parallel layouts on the two sides (reference TP 1, target TP 2)
# on trees written by the real upstream dumpers (tests/fixtures/realdump_mixed,
# gen.sh): replicated stages pair rank by rank with the one reference, sharded
# ones (meta dims or profile) are compared merged only, a partial sum is never
# judged alone, fused outputs are un-fused or not_comparable. Expected metrics
# come from torch float64 (expected.txt).
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
need_python "to read the CSV"
M=$DB_FIXTURES/realdump_mixed

expect 1 "v2 TP1 vs TP2" "$DB_BIN" compare "$M/v2/ref" "$M/v2/target"
has "$out" "profile sglang-v2" "v2"
has "$out" "0 ref_only, 0 target_only, 0 shape_mismatch, 0 error" "v2: every rank paired"
has "$out" "first divergence: L2 pre_mlp_residual every rank (of 2) pass 0" "v2: the bug's layer and stage"
# the column-parallel stage is merged (meta dims), never a per-rank shard
grep -E '^\S+ +0 +[0-9] +[0-9] +attn_pre_o_proj ' <<<"$out" && fail "v2: a shard judged alone"
has "$out" "all   attn_pre_o_proj" "v2: merged"

# a fault on rank 1's copy of a replicated tensor shows on rank 1 only
expect 1 "v2 one rank" "$DB_BIN" compare "$M/v2/ref" "$M/v2_rank1/target"
has "$out" "first divergence: L1 layer_input rank 1 pass 0" "one rank"
has "$out" "41 pairs: 40 ok" "one rank: everything else ok"

expect 1 "hybrid TP1 vs TP2" "$DB_BIN" compare "$M/hybrid/ref" "$M/hybrid/target"
has "$out" "0 ref_only, 0 target_only, 0 shape_mismatch, 0 error" "hybrid: every rank paired"
has "$out" "first divergence: L3 pre_mlp_residual every rank (of 2) pass 0" "hybrid: the bug's layer and stage"
# partial sums (attn_tp:partial, moe_ep:partial) are never shown per rank
grep -E '^\S+ +0 +[0-9] +[0-9] +(attn_output|moe_expert_output) ' <<<"$out" &&
	fail "hybrid: a partial sum judged alone"
# same layout on both sides: expert partials compared rank by rank
expect 1 "hybrid TP2 vs TP2" "$DB_BIN" compare "$M/hybrid/ref_tp2" "$M/hybrid/target"
has "$out" "first divergence: L3 pre_mlp_residual every rank (of 2) pass 0" "hybrid same layout"
grep -qE '^\S+ +0 +3 +1 +moe_expert_output ' <<<"$out" || fail "hybrid same layout: per-rank partials"

# same layout with a file missing on one rank: missing data, not another
# layout -- the reference's rank 1 stays ref_only, never paired with rank 0
rm -rf "$DB_TMP/miss"
cp -r "$M/hybrid/target" "$DB_TMP/miss"
rm "$DB_TMP"/miss/dump/step=0___rank=1___*name=mlp_output___*layer_id=2___*
expect 1 "missing rank file" "$DB_BIN" compare "$M/hybrid/ref_tp2" "$DB_TMP/miss"
has "$out" "1 ref_only, 0 target_only" "missing rank file: ref_only"
grep -qE '^\S+ +0 +2 +1 +mlp_output .*ref_only' <<<"$out" || fail "missing rank file: the row"

# forward hook: no metadata, the profile's shard rules (gate_up fused 1:1,
# qkv fused with unknown parts: not comparable, never the first divergence)
expect 1 "hook TP1 vs TP2" "$DB_BIN" compare "$M/hook/ref" "$M/hook/target"
# the fixture holds Pass00001 only: the hook wrote pass 0's model output
# and logits there (pass_shift puts them in pass 0); the bisect takes the
# first pass that holds layers
has "$out" "first divergence: model every rank (of 2) pass 0" "hook: pass 0's model output is pass 0's"
grep -qE '^\S+ +0 +- +[01] +(model|logits_processor) ' <<<"$out" || fail "hook: model/logits in pass 0"
grep -E '^\S+ +0 +[0-9]+ ' <<<"$out" && fail "hook: a layer's tensor in pass 0"
expect 1 "hook TP1 vs TP2 bisect" "$DB_BIN" bisect --auto "$M/hook/ref" "$M/hook/target"
has "$out" "first bad layer L1" "hook: the bug's layer"
has "$out" "stage:    self_attn.attn" "hook: the bug's stage"
expect 1 "hook TP1 vs TP2" "$DB_BIN" compare "$M/hook/ref" "$M/hook/target"
has "$out" "0 ref_only, 0 target_only, 0 shape_mismatch, 0 error, 8 not_comparable" "hook: counts"
has "$out" "all   self_attn.qkv_proj" "hook: qkv merged"
grep -E 'qkv_proj .*not_comparable: fused' <<<"$out" >/dev/null || fail "hook: qkv not comparable"
# JSON says why too: a not_comparable pair carries its reason, as the table does
json=$("$DB_BIN" compare --format json "$M/hook/ref" "$M/hook/target")
grep -qE '"stage": "self_attn\.qkv_proj".*"status": "not_comparable".*"error": null, "reason": "fused per-rank output across layouts \(1 vs 2 ranks\)' <<<"$json" ||
	fail "hook: JSON reason of the not comparable qkv_proj"

# hybrid MoE through the hook: the profile's sum rules (mlp.experts, the
# shared expert's down_proj) -- a rank's partial alone is never shown
expect 1 "hook hybrid TP1 vs TP2" "$DB_BIN" compare "$M/hook_hybrid/ref" "$M/hook_hybrid/target"
# the norm's own output, where it ran (execution order from the dict)
expect 1 "hook hybrid bisect" "$DB_BIN" bisect --auto "$M/hook_hybrid/ref" "$M/hook_hybrid/target"
has "$out" "first bad layer L3" "hook hybrid: the bug's layer"
has "$out" "stage:    post_attention_layernorm.0" "hook hybrid: the bug's stage"
expect 1 "hook hybrid TP1 vs TP2" "$DB_BIN" compare "$M/hook_hybrid/ref" "$M/hook_hybrid/target"
has "$out" "0 ref_only, 0 target_only, 0 shape_mismatch, 0 error" "hook hybrid: every rank paired"
grep -E '^\S+ +1 +[0-9] +[0-9] +(mlp\.experts|mlp\.shared_expert\.down_proj) ' <<<"$out" &&
	fail "hook hybrid: a partial sum judged alone"

# a user profile giving qkv_proj's parts (q:k:v = 2:1:1 for this model's
# 4 query / 2 KV heads) un-fuses it
"$PY" - "$DB_SRC/profiles/sglang-hook.yaml" "$DB_TMP/hook_qkv.yaml" <<'PY'
import sys
s = open(sys.argv[1]).read().replace("name: sglang-hook", "name: hook-qkv", 1)
old = "{stage: '^self_attn\\.qkv_proj$', dim: -1, how: fused}"
assert old in s, "sglang-hook.yaml no longer declares qkv_proj fused"
s = s.replace(old, old[:-1] + ", parts: [2, 1, 1]}")
open(sys.argv[2], "w").write(s)
PY
expect 1 "hook qkv parts" "$DB_BIN" compare -p "$DB_TMP/hook_qkv.yaml" "$M/hook/ref" "$M/hook/target"
grep -q ' 0 shape_mismatch, 0 error$' <<<"$out" || fail "hook qkv parts: something left not comparable"
"$DB_BIN" compare --format csv -p "$DB_TMP/hook_qkv.yaml" "$M/hook/ref" "$M/hook/target" \
	>"$DB_TMP/hook_qkv.csv"

# Miles / Megatron sequence parallel: no dims, meta sp_size 2; token slices
# are merged on dim 0, never left target_only or judged alone
expect 1 "miles SP" "$DB_BIN" compare "$M/miles/ref" "$M/miles/target"
has "$out" "0 ref_only, 0 target_only, 0 shape_mismatch, 0 error" "miles: every rank paired"
has "$out" "all   inputs.hidden_states" "miles: merged"
# the norm sits inside linear_fc1 (Megatron's fused [gate_r; up_r], which
# the built-in profile un-fuses 1:1): the stage a TP 1 run finds
has "$out" "first divergence: L2 mlp.linear_fc1 (merged ranks)" "miles: the bug's layer and stage"
# without that rule the fused output is not comparable, never the first
# divergence: the next comparable stage is
"$PY" - "$DB_SRC/profiles/sglang-v2.yaml" "$DB_TMP/miles.yaml" <<'PY'
import sys
s = open(sys.argv[1]).read().replace("name: sglang-v2", "name: miles-nofc1", 1)
old = "  - {stage: '(^|\\.)linear_fc1$', dim: -1, how: fused, parts: [1, 1]}\n"
assert old in s, "sglang-v2.yaml no longer un-fuses linear_fc1"
open(sys.argv[2], "w").write(s.replace(old, ""))
PY
expect 1 "miles SP, no fc1 rule" "$DB_BIN" compare -p "$DB_TMP/miles.yaml" "$M/miles/ref" "$M/miles/target"
has "$out" "first divergence: L2 mlp.linear_fc2 (merged ranks)" "miles without the rule: next comparable stage"

# metrics of merged, summed, un-fused and per-rank pairs against torch
for tree in v2:v2/ref:v2/target v2_rank1:v2/ref:v2_rank1/target hybrid:hybrid/ref:hybrid/target \
	hybrid_tp2:hybrid/ref_tp2:hybrid/target hook:hook/ref:hook/target \
	hook_hybrid:hook_hybrid/ref:hook_hybrid/target miles:miles/ref:miles/target; do
	IFS=: read -r name r t <<<"$tree"
	"$DB_BIN" compare --format csv "$M/$r" "$M/$t" >"$DB_TMP/$name.csv"
done
"$PY" - "$M/expected.txt" "$DB_TMP" <<'PY' || fail "metrics against torch"
import csv, sys
bad = 0
rows = {}
for line in open(sys.argv[1]):
    tree, layer, rank, stage, cos, rel = line.strip().split(",")
    cos, rel = float(cos), float(rel)
    if tree == "partial_alone":  # what a partial alone would have said: bad
        if cos > 0.9 and rel < 0.3:
            print(f"partial alone L{layer}: cos {cos} would not have shown"); bad += 1
        continue
    if tree not in rows:
        rows[tree] = list(csv.DictReader(open(f"{sys.argv[2]}/{tree}.csv")))
    want_rank = "" if rank == "all" else rank
    got = [r for r in rows[tree] if r["layer"] == layer and r["rank"] == want_rank
           and r["stage"] == stage]
    if len(got) != 1:
        print(f"{tree} L{layer} rank {rank} {stage}: {len(got)} rows"); bad += 1
        continue
    g = got[0]
    if abs(float(g["cos"]) - cos) > 1e-9 or abs(float(g["rel"]) - rel) > 1e-9 * max(rel, 1e-6):
        print(f"{tree} L{layer} rank {rank} {stage}: cos {g['cos']} rel {g['rel']}, "
              f"torch {cos} {rel}"); bad += 1
sys.exit(1 if bad else 0)
PY

[ "$fails" = 0 ] || exit 1
echo "ok"
