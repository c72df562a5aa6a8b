#!/bin/bash
# The intra-layer walk (issue 22, points 4-5): every stage with the error it receives
# and leaves, amplification and SQNR; the culprit is the stage that introduces the
# error; a stage that could not be compared is shown in its place with its reason and
# the culprit after it is "at or before" it. Real trees, truth from the bug
# (tests/fixtures/realdump cases*.tsv): steps_hy_hook_tp1v2 (decode_pos in
# self_attn.rotary_emb of L7; ref TP1 vs target TP2, so the fused qkv_proj before it
# cannot be compared), miles_tp1 (norm_offset in post_attention_layernorm of L2).
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
fresh_tmp
need_python "to read the JSON"
R=$DB_FIXTURES/realdump

H=$R/steps_hy_hook_tp1v2
expect 1 "bisect json" "$DB_BIN" bisect "$H/ref" "$H/target" --auto --format json
"$PY" - "$out" <<'PY' || fail "walk JSON (above)"
import json, math, re, sys
j = json.loads(sys.argv[1])
w = j.get("walk") or []
bad = []
names = [r["stage"] for r in w]
cul = [i for i, r in enumerate(w) if r["culprit"]]
if len(cul) != 1:
    bad.append("culprits %r" % cul)
else:
    k = cul[0]
    c = w[k]
    if not re.search(r"(^|[._])self_attn\.rotary_emb(\.[01])?$", c["stage"]) or c["role"] != "introduces":
        bad.append("culprit %s %s" % (c["stage"], c["role"]))
    # the fused qkv_proj is in its place (right before), with a reason
    nc = w[k - 1] if k else {}
    if nc.get("stage") != "self_attn.qkv_proj" or nc.get("role") != "not comparable" or not nc.get("reason"):
        bad.append("before the culprit: %r" % nc)
    if j.get("first_bad_at_or_before") != "self_attn.qkv_proj" or j.get("first_bad_role") != "introduces":
        bad.append("at_or_before %r role %r" % (j.get("first_bad_at_or_before"), j.get("first_bad_role")))
    # nothing before it is bad
    for r in w[:k]:
        if r["role"] not in ("ok", "not comparable"):
            bad.append("before the culprit %s is %s" % (r["stage"], r["role"]))
# the numbers agree with each other: amplification = out / in, SQNR = -20 log10(out)
for r in w:
    if r["role"] == "not comparable":
        continue
    ei, eo = r["err_in"], r["err_out"]
    if ei and eo is not None and abs(r["amplification"] - eo / ei) > 1e-9 * max(1, eo / ei):
        bad.append("%s amplification %r, out/in %r" % (r["stage"], r["amplification"], eo / ei))
    if eo and abs(r["sqnr_db"] - (-20 * math.log10(eo))) > 1e-9:
        bad.append("%s sqnr %r" % (r["stage"], r["sqnr_db"]))
print("\n".join(bad)) if bad else None
sys.exit(1 if bad else 0)
PY
expect 1 "bisect text" "$DB_BIN" bisect "$H/ref" "$H/target" --auto
has "$out" "    self_attn.qkv_proj               not comparable: fused per-rank output" "not comparable row"
has "$out" "the culprit is at or before self_attn.rotary_emb.0: self_attn.qkv_proj before it could not be compared" "at or before"
has "$out" "  role:     introduces; at or before it, not comparable: self_attn.qkv_proj" "role line"

# a tuple's members share the module's input; the next module inherits
M=$R/miles_tp1
expect 1 "miles_tp1" "$DB_BIN" bisect "$M/ref" "$M/target" --auto --format json
"$PY" - "$out" <<'PY' || fail "miles_tp1 walk (above)"
import json, sys
j = json.loads(sys.argv[1])
roles = {r["stage"]: r["role"] for r in j["walk"]}
want = {"post_attention_layernorm": "introduces", "mlp.gate_up_proj": "inherits"}
bad = ["%s: %r, want %r" % (k, roles.get(k), v) for k, v in want.items() if roles.get(k) != v]
if [r["stage"] for r in j["walk"] if r["culprit"]] != ["post_attention_layernorm"]:
    bad.append("culprit %r" % [r["stage"] for r in j["walk"] if r["culprit"]])
print("\n".join(bad)) if bad else None
sys.exit(1 if bad else 0)
PY

# the amplification factor is a profile key (thresholds: amplify), > 1
cat >"$DB_TMP/p.yaml" <<'Y'
name: amp
files: '\.pt$'
path: '^(?<stage>.*)\.pt$'
thresholds: {amplify: 0.5}
Y
expect 2 "amplify <= 1" "$DB_BIN" compare -p "$DB_TMP/p.yaml" "$M/ref" "$M/target"
has "$err" "amplify must be > 1" "amplify check"
finish t_walk
