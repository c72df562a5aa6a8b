#!/bin/bash
# Execution order comes from the dumps: on a real SGLang forward-hook tree
# (tests/fixtures/realdump_order, see its gen.sh) whose module names no
# stage_order lists, each layer's pairs follow the hook dict's order (fused
# add-RMSNorm tuples .0/.1 where the norm ran), and bisect's intra-layer walk
# names the norm with the injected bug, not the mlp stage after it.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
need_python "to read JSON"
R=$DB_FIXTURES/realdump_order

expect 1 "compare json" "$DB_BIN" compare --no-cache --format json "$R/ref" "$R/target"
printf '%s' "$out" >"$DB_TMP/cmp.json"
got=$("$PY" - "$DB_TMP/cmp.json" <<'PY'
import json, sys
seen = []
for p in json.load(open(sys.argv[1]))["pairs"]:
    if p["layer"] == 3 and p["stage"] not in seen:
        seen.append(p["stage"])
print(" ".join(seen))
PY
)
want="input_layernorm.0 input_layernorm.1 self_attn.qkv_proj self_attn.rotary_emb.0 \
self_attn.rotary_emb.1 self_attn.attn self_attn.o_proj post_attention_layernorm.0 \
post_attention_layernorm.1 mlp.shared_expert.gate_up_proj mlp.shared_expert.act_fn \
mlp.shared_expert.down_proj mlp.shared_expert_gate mlp.gate mlp.topk.0 mlp.topk.1 \
mlp.topk.2 mlp.experts"
[ "$got" = "$want" ] || fail "layer 3 order: got '$got'"

# layer 2 (linear attention): its own stages, same rule
got=$("$PY" - "$DB_TMP/cmp.json" <<'PY'
import json, sys
seen = []
for p in json.load(open(sys.argv[1]))["pairs"]:
    if p["layer"] == 2 and p["stage"] not in seen:
        seen.append(p["stage"])
print(" ".join(seen[:8]))
PY
)
want="input_layernorm.0 input_layernorm.1 linear_attn.in_proj_qkvz linear_attn.in_proj_ba \
linear_attn.attn linear_attn.norm linear_attn.out_proj post_attention_layernorm.0"
[ "$got" = "$want" ] || fail "layer 2 order: got '$got'"

# the probe exists in the MoE layers only (2, 3): the bug is in layer 3's
# post_attention_layernorm, its normed output (.0) the first to leave the band
expect 1 "bisect" "$DB_BIN" bisect --no-cache --auto --stage mlp.experts --format json \
	"$R/ref" "$R/target"
printf '%s' "$out" >"$DB_TMP/bisect.json"
got=$("$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["first_bad_layer"], d["first_bad_stage"])' \
	"$DB_TMP/bisect.json")
[ "$got" = "3 post_attention_layernorm.0" ] || fail "bisect culprit: got '$got'"

# without --stage the probe is each layer's last stage in execution order
expect 1 "bisect, found probe" "$DB_BIN" bisect --no-cache --auto --format json "$R/ref" "$R/target"
printf '%s' "$out" >"$DB_TMP/bisect2.json"
got=$("$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["first_bad_layer"], d["first_bad_stage"])' \
	"$DB_TMP/bisect2.json")
[ "$got" = "3 post_attention_layernorm.0" ] || fail "bisect culprit, found probe: got '$got'"

expect 1 "bisect table" "$DB_BIN" bisect --no-cache --auto --stage mlp.experts "$R/ref" "$R/target"
walk=$(sed -n '/^intra-layer walk/,/^$/{/^intra/d;p}' <<<"$out" | awk 'NF > 1 {print ($1 == ">" ? $2 : $1)}' | tr '\n' ' ')
case "$walk" in
"input_layernorm.0 input_layernorm.1 self_attn.qkv_proj "*" self_attn.o_proj post_attention_layernorm.0 post_attention_layernorm.1 mlp.shared_expert.gate_up_proj "*" mlp.experts ")
	;;
*) fail "walk order: $walk" ;;
esac
has "$out" "> post_attention_layernorm.0" "walk culprit"

finish t_order
