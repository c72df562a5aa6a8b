#!/bin/bash
# Drift or bug, judged against the run's own noise (issue 23), on the real
# upstream trees of tests/fixtures/realdump (cases_null.tsv, cases_noise.tsv:
# the expected layer / stage / phase come from the injected bug, checked with
# torch by truth.py, never from dumpbisect).
#  - null runs (two correct runs, TP 1 vs TP 2): no pair beyond drift, a
#    bisect that finds nothing; Miles' fused per-rank linear_fc1 weight is
#    un-fused (bitwise equal), never concatenated into a false bug;
#  - --noise: compare's headline and JSON, and bisect, at the bug; the
#    floors and ratios in the JSON; the session keeps the noise tree;
#  - without a noise tree, the bit-identical regime names the first pair
#    that is not bit-identical.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
fresh_tmp
need_python "to read the JSON answers"
R=$DB_FIXTURES/realdump

# --- null runs -------------------------------------------------------------
n=0
while IFS=$'\t' read -r case _; do
	case $case in '#'* | case | '') continue ;; esac
	n=$((n + 1))
	"$DB_BIN" compare --no-cache --format json "$R/$case/ref" "$R/$case/target" >"$DB_TMP/$case.json"
	"$PY" - "$DB_TMP/$case.json" "$case" <<'PY' || fail "null $case: a pair beyond drift"
import json, sys
d = json.load(open(sys.argv[1]))
bad = [p for p in d["pairs"] if p["status"] == "ok" and p["severity"] not in ("ok", "drift")]
bad += [p for p in d["pairs"] if p["status"] not in ("ok", "not_comparable")]
for p in bad[:3]:
    print(sys.argv[2], p["phase"], p["layer"], p["stage"], p["status"], p["severity"], p["cos"])
sys.exit(1 if bad or d["first_beyond_drift"] is not None else 0)
PY
	expect 0 "null $case: bisect" "$DB_BIN" bisect --no-cache --auto "$R/$case/ref" "$R/$case/target"
	has "$out" "nothing went wrong, nothing to bisect" "null $case: bisect finds nothing"
done <"$R/cases_null.tsv"
[ $n -ge 6 ] || fail "only $n null cases"

# the fused weight: TP 2's [g0; u0; g1; u1] regrouped is TP 1's [g; u], bitwise
"$DB_BIN" compare --no-cache "$R/null_miles/ref" "$R/null_miles/target" >"$DB_TMP/nm.txt"
grep -qE '^\. +fwd_bwd\.param 0 +0 +all +mlp\.linear_fc1\.weight +\[256, 64\] +1\.00000000 +0\.0000e\+00 +== +ok' \
	"$DB_TMP/nm.txt" || fail "null_miles: linear_fc1.weight merged bitwise: $(grep linear_fc1.weight "$DB_TMP/nm.txt")"
grep -qE '^\. +fwd_bwd\.param 0 +- +all +embedding\.word_embeddings\.weight .* == +ok' "$DB_TMP/nm.txt" ||
	fail "null_miles: vocab-parallel embedding concatenated bitwise"

# --- noise runs --------------------------------------------------------------
while IFS=$'\t' read -r case phase pass layer stage _; do
	case $case in '#'* | case | '') continue ;; esac
	# --follow-links: noise_miles_engine links other fixtures' engines in
	T=("$R/$case/ref" "$R/$case/target" --noise "$R/$case/noise" --follow-links)
	"$DB_BIN" compare --no-cache --format json "${T[@]}" >"$DB_TMP/$case.json"
	"$PY" - "$DB_TMP/$case.json" "$phase" "$pass" "$layer" "$stage" <<'PY' || fail "noise $case: compare"
import json, re, sys
d = json.load(open(sys.argv[1]))
phase, pas, layer, stage = sys.argv[2:6]
fd = d["first_divergence"]
assert d["judged_by"] == "noise", d["judged_by"]
p = d["pairs"][fd]
ok = (p["layer"] == int(layer) and re.search(stage, p["stage"]) and str(p["pass"]) == pas
      and (phase == "-" or re.match(phase, p["phase"])) and (d["first_divergent_phase"] or None) == (p["phase"] or None))
ok = ok and p["noise"] == "beyond" and p["noise_ratio"] > d["noise_k"]
# every pair before it is within noise (or has no floor and stays in the ok band)
for q in d["pairs"][:fd]:
    if q["status"] == "ok" and q["noise"] == "beyond":
        ok = False
print(p["phase"], p["pass"], p["layer"], p["stage"], p["noise_floor"], p["noise_ratio"])
sys.exit(0 if ok else 1)
PY
	expect 1 "noise $case: bisect" "$DB_BIN" bisect --no-cache --auto --format json "${T[@]}"
	# the pass too: every pass diverges in these cases, so the first is named
	"$PY" -c '
import json, re, sys
d = json.loads(sys.argv[1])
phase, pas, layer, stage = sys.argv[2:6]
st = d["first_bad_substage"] or d["first_bad_stage"] or ""
ok = (d["first_bad_layer"] == int(layer) and str(d["pass"]) == pas and re.search(stage, st)
      and (phase == "-" or re.match(phase, d["phase"])))
sys.exit(0 if ok else 1)' "$out" "$phase" "$pass" "$layer" "$stage" ||
		fail "noise $case: bisect, want pass $pass L$layer $stage: ${out:0:300}"
done <"$R/cases_noise.tsv"

# SGLang's attention and MLP modules across layouts (the engine at TP 1 vs TP 2): the
# rotary embedding's q / k, the attention output and the activation concat over the
# ranks' heads / columns, gate_up_proj un-fuses [gate_r; up_r]; without a bug they are
# the same tensors up to reduction order (never beyond drift); qkv_proj's q:k:v split
# is not recorded: not comparable, and says what would make it so
E=$R/noise_miles_engine
# its ref/ and noise/ link another fixture's engines in: --follow-links
"$DB_BIN" compare --no-cache --follow-links --format json "$E/ref" "$E/noise" >"$DB_TMP/me.json"
"$PY" - "$DB_TMP/me.json" <<'PY' || fail "noise_miles_engine: SGLang's modules merged across layouts"
import json, re, sys
d = json.load(open(sys.argv[1]))
ok = True
for st in ("self_attn.rotary_emb", "self_attn.rotary_emb.1", "self_attn.attn", "mlp.act_fn",
           "mlp.gate_up_proj"):
    ps = [p for p in d["pairs"] if p["stage"] == st and p["layer"] is not None]
    if not ps or any(p["rank"] is not None or p["status"] != "ok"
                     or p["severity"] not in ("ok", "drift") for p in ps):
        print(st, [(p["rank"], p["status"], p["severity"]) for p in ps[:3]])
        ok = False
qk = [p for p in d["pairs"] if p["stage"] == "self_attn.qkv_proj"]
if not qk or any(p["status"] != "not_comparable" or p["rank"] is not None for p in qk):
    print("qkv_proj", [(p["rank"], p["status"]) for p in qk[:2]])
    ok = False
sys.exit(0 if ok else 1)
PY
expect 1 "noise_miles_engine: ref vs noise" "$DB_BIN" compare --no-cache --follow-links "$E/ref" "$E/noise"
grep -qE '^[^ ]+ +inference 0 +1 +all +self_attn\.qkv_proj .*not_comparable: fused per-rank output across layouts \(1 vs 2 ranks\).*give the shard rule its parts' \
	<<<"$out" || fail "noise_miles_engine: qkv_proj says why it is not comparable"

# Miles without the noise run: the inference phase only drifts (bf16, TP 1 vs 2),
# so the headline is the fwd_only phase bad beyond drift, as bisect picks it
# (one rule for "first", issue 33); with the noise run, the same phase
expect 1 "miles without noise" "$DB_BIN" compare --no-cache "$R/noise_miles/ref" "$R/noise_miles/target"
has "$out" "first divergent phase: fwd_only" "miles without noise"
expect 1 "miles with noise" "$DB_BIN" compare --no-cache "$R/noise_miles/ref" "$R/noise_miles/target" \
	--noise "$R/noise_miles/noise"
has "$out" "first divergent phase: fwd_only" "miles with noise"
grep -qE '^first divergence: L1 self_attention\.core_attention \(merged ranks\) pass 0 phase fwd_only: .*\[beyond noise\] x' \
	<<<"$out" || fail "miles with noise: headline: $(grep '^first' <<<"$out")"
grep -qE '^noise +.*noise_miles/noise \([0-9]+ floors; beyond noise: rel > 4 x max\(floor, 1e-06\)\)$' <<<"$out" ||
	fail "miles with noise: the noise line"

# the session keeps the noise tree; replay uses it
S=$DB_TMP/s.yaml
expect 1 "bisect --session --noise" "$DB_BIN" bisect --no-cache --auto --session "$S" \
	"$R/noise_miles/ref" "$R/noise_miles/target" --noise "$R/noise_miles/noise"
grep -qxF "noise: \"$(cd "$R/noise_miles/noise" && pwd -P)\"" "$S" || fail "the session keeps the noise tree: $(cat "$S")"
expect 0 "replay with the session's noise" "$DB_BIN" replay --no-cache "$S"

# report.md and the SVG say what the verdicts were judged by: the noise run (its path,
# k, the floor), the bit-identical regime, the bands
expect 0 "export with the session's noise" "$DB_BIN" export --no-cache --out "$DB_TMP/rep" "$S"
NP=$(cd "$R/noise_miles/noise" && pwd -P)
grep -qF -- "- verdicts judged by: the noise run $NP: a pair diverges when its rel is beyond 4 x max(floor, 1e-06)" \
	"$DB_TMP/rep/report.md" || fail "report.md: judged by the noise run: $(grep judged "$DB_TMP/rep/report.md")"
grep -qE '^Against the noise run: \*\*beyond noise x[0-9.e+]+ \(floor [0-9.e+-]+\)\*\*\.$' "$DB_TMP/rep/report.md" ||
	fail "report.md: the divergence point's noise verdict"
grep -qF ">verdicts judged by: the noise run $NP: a pair diverges" "$DB_TMP/rep/heatmap.svg" ||
	fail "heatmap.svg: judged by the noise run"
expect 1 "bisect --session, the regime" "$DB_BIN" bisect --no-cache --auto --session "$DB_TMP/r.yaml" \
	"$R/v2_tp2/ref" "$R/v2_tp2/target"
expect 0 "export, the regime" "$DB_BIN" export --no-cache --out "$DB_TMP/rep2" "$DB_TMP/r.yaml"
grep -qF -- "- verdicts judged by: the bit-identical regime: every pair before the first divergence" \
	"$DB_TMP/rep2/report.md" || fail "report.md: judged in the bit-identical regime"
grep -qF ">verdicts judged by: the bit-identical regime" "$DB_TMP/rep2/heatmap.svg" ||
	fail "heatmap.svg: the bit-identical regime"

# a noise tree that is not there is an input error
expect 2 "--noise missing" "$DB_BIN" compare --no-cache "$R/noise_v2/ref" "$R/noise_v2/target" \
	--noise "$DB_TMP/nowhere"
has "$err" "--noise $DB_TMP/nowhere" "--noise missing"

# --- the bit-identical regime ---------------------------------------------------
# v2_tp2: the same layout on both sides, norm_offset-free layers 0-1 bit-identical
expect 1 "bit-identical regime" "$DB_BIN" compare --no-cache "$R/v2_tp2/ref" "$R/v2_tp2/target"
grep -qA1 '^first divergence: L2 ' <<<"$out" || fail "regime: first divergence at L2"
has "$out" "  (bit-identical regime: every pair before it is bit-identical" "regime"
expect 1 "regime json" "$DB_BIN" compare --no-cache --format json "$R/v2_tp2/ref" "$R/v2_tp2/target"
has "$out" '"judged_by": "bit_identical"' "regime json"
# across layouts there is no regime
expect 1 "no regime across layouts" "$DB_BIN" compare --no-cache --format json "$R/noise_miles/ref" \
	"$R/noise_miles/target"
has "$out" '"judged_by": "bands"' "no regime across layouts"

finish t_noise
