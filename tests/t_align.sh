#!/bin/bash
# Token alignment across batching (issue 35): the reference ran the whole
# sequence in ONE pass (--prefill-all), the target generated it (a prefill,
# then one-token decode steps). Cases in realdump/cases_align.tsv (pass,
# layer, stage and token from the injected decode-only bug; rel from torch
# in float64, truth_align.py; never from dumpbisect).
#  - found from the data with no option: the header says how; the first
#    divergence names layer, stage, the target's pass and the token, its rel
#    is torch's; bisect names the same layer, stage, pass and token;
#  - the other way round (the target is the one pass) gives the same answer;
#  - without positions the input ids align it, without both the token rows;
#  - tensors that are not per token are not comparable, with the reason;
#  - null pairs: nothing diverges, and at one TP size every aligned pair is
#    bit-identical;
#  - --align passes pairs by pass name (the old answer), --align tokens
#    insists and refuses what does not add up.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
fresh_tmp
need_python "to read the JSON answers"
R=$DB_FIXTURES/realdump

check_compare() {  # FILE PASS LAYER STAGE TOKEN RANK REL
	"$PY" - "$@" <<'PY'
import json, re, sys
f, pas, layer, stage, token, rank, rel = sys.argv[1:]
d = json.load(open(f))
p = d["pairs"][d["first_divergence"]]
t = d["first_divergence_token"]
ok = (d["alignment"]["by"] == "tokens" and str(p["pass"]) == pas and p["layer"] == int(layer)
      and re.search(stage, p["stage"]) and t and t["token"] == int(token) and str(t["pass"]) == pas
      and t["row"] == 0 and t["rows"] == 1)
if rank == "merged":
    ok = ok and p["rank"] is None
elif rank != "any":
    ok = ok and p["rank"] == int(rank)
if rel != "any":
    ok = ok and abs(t["rel"] - float(rel)) <= 1e-9 * max(1.0, float(rel))
if not ok:
    print("compare:", p.get("pass"), p.get("layer"), p.get("stage"), p.get("rank"), t, d["alignment"])
sys.exit(0 if ok else 1)
PY
}

check_bisect() {  # FILE PASS LAYER STAGE TOKEN
	"$PY" - "$@" <<'PY'
import json, re, sys
f, pas, layer, stage, token = sys.argv[1:]
d = json.load(open(f))
st = d["first_bad_substage"] or d["first_bad_stage"] or ""
ok = (d["kind"] == "sudden-drop" and str(d["pass"]) == pas and d["first_bad_layer"] == int(layer)
      and (re.search(stage, st) or re.search(stage, d["first_bad_stage"] or ""))
      and d["token"] == int(token))
if not ok:
    print("bisect:", d["kind"], d["pass"], d["first_bad_layer"], st, d.get("token"))
sys.exit(0 if ok else 1)
PY
}

n=0
nn=0
while IFS=$'\t' read -r case fam pass layer stage token rank rel _; do
	case $case in '#'* | case | '') continue ;; esac
	A=$R/$case/ref
	B=$R/$case/target
	if [ "$pass" = - ]; then        # a null pair
		nn=$((nn + 1))
		expect 0 "$case: compare" "$DB_BIN" compare --no-cache "$A" "$B"
		has "$out" "aligned by token: positions: target passes 0-3 (12+1+1+1 tokens) = reference pass 0 (15)" \
			"$case: aligned"
		# pairs not compared (not per token) are named, never "every pair ok" (issue 33)
		grep -qE '^no divergence(: every pair is in the ok band| among the pairs compared: [0-9]+ ok; [0-9]+ not comparable: )' \
			<<<"$out" || fail "$case: clean: $(grep '^no divergence' <<<"$out")"
		expect 0 "$case: compare json" "$DB_BIN" compare --no-cache --format json "$A" "$B"
		printf '%s' "$out" >"$DB_TMP/n.json"
		"$PY" - "$DB_TMP/n.json" "$case" <<'PY' || fail "$case: null json"
import json, sys
d = json.load(open(sys.argv[1]))
ok = d["first_divergence"] is None and d["first_beyond_drift"] is None
oks = [q for q in d["pairs"] if q["status"] == "ok"]
ok = ok and len(oks) > 50 and all(q["severity"] == "ok" for q in oks)
# one TP size on both sides: the aligned rows are the same bits
if "tp1v2" not in sys.argv[2]:
    ok = ok and all(q["byte_equal"] == 1 for q in oks)
# what is not per token is said, never a divergence
nc = [q for q in d["pairs"] if q["status"] == "not_comparable"]
ok = ok and nc and all("not per token" in (q.get("reason") or "") for q in nc)
sys.exit(0 if ok else 1)
PY
		expect 0 "$case: bisect" "$DB_BIN" bisect --no-cache --auto --format json "$A" "$B"
		grep -q '"kind": "none"' <<<"$out" || fail "$case: bisect says none: ${out:0:200}"
		continue
	fi
	n=$((n + 1))
	expect 1 "$case: compare" "$DB_BIN" compare --no-cache "$A" "$B"
	grep -qE "^aligned by token: positions: target passes 0-[0-9]+ \(12(\+1)+ tokens\) = reference pass 0 \([0-9]+\)$" \
		<<<"$out" || fail "$case: header: $(grep -i align <<<"$out" | head -2)"
	grep -qE "^  first bad token: $token of the aligned sequence \(target pass $pass, its row 0 of 1; " \
		<<<"$out" || fail "$case: token line: $(grep 'first bad token' <<<"$out")"
	expect 1 "$case: compare json" "$DB_BIN" compare --no-cache --format json "$A" "$B"
	printf '%s' "$out" >"$DB_TMP/c.json"
	check_compare "$DB_TMP/c.json" "$pass" "$layer" "$stage" "$token" "$rank" "$rel" ||
		fail "$case: compare json"
	expect 1 "$case: bisect" "$DB_BIN" bisect --no-cache --auto --format json "$A" "$B"
	printf '%s' "$out" >"$DB_TMP/b.json"
	check_bisect "$DB_TMP/b.json" "$pass" "$layer" "$stage" "$token" || fail "$case: bisect json"

	# the other way round: the target is the one pass, the reference's passes
	# are lined up on it (pairs keep the reference's pass)
	expect 1 "$case: reversed" "$DB_BIN" compare --no-cache --format json "$B" "$A"
	printf '%s' "$out" >"$DB_TMP/r.json"
	check_compare "$DB_TMP/r.json" "$pass" "$layer" "$stage" "$token" "$rank" any ||
		fail "$case: reversed json"
	grep -q '"whole": "target"' "$DB_TMP/r.json" || fail "$case: reversed: the target is the whole"

	# not hard-coded on positions: the input ids, then the token rows alone
	rm -rf "$DB_TMP/np"
	mkdir -p "$DB_TMP/np"
	cp -rL "$A" "$DB_TMP/np/a"
	cp -rL "$B" "$DB_TMP/np/b"
	if [ "$fam" = v2 ]; then
		find "$DB_TMP/np" -name '*name=positions___*' -delete
		expect 1 "$case: no positions" "$DB_BIN" compare --no-cache "$DB_TMP/np/a" "$DB_TMP/np/b"
		has "$out" "aligned by token: input_ids: target passes" "$case: by input ids"
		grep -qE "^  first bad token: $token of the aligned sequence" <<<"$out" ||
			fail "$case: no positions: token"
		find "$DB_TMP/np" -name '*name=input_ids___*' -delete
		expect 1 "$case: no ids" "$DB_BIN" compare --no-cache "$DB_TMP/np/a" "$DB_TMP/np/b"
		has "$out" "aligned by token: token rows: target passes" "$case: by token rows"
		grep -qE "^  first bad token: $token of the aligned sequence" <<<"$out" ||
			fail "$case: no ids: token"
	fi

	# what is not per token is listed with the reason, never a divergence
	expect 1 "$case: compare table" "$DB_BIN" compare --no-cache "$A" "$B"
	grep -qE "not_comparable: not per token \(\[1\] in every pass\): the whole pass holds it after token [0-9]+, this pass after token 11" \
		<<<"$out" || fail "$case: seq_lens not per token"

	# --align passes: pass with pass by name, as before
	expect 1 "$case: --align passes" "$DB_BIN" compare --no-cache --align passes --format json "$A" "$B"
	grep -q '"alignment": {"by": "passes"' <<<"$out" || fail "$case: --align passes"
	# --align tokens insists: the reference against itself adds up to nothing
	expect 2 "$case: --align tokens refused" "$DB_BIN" compare --no-cache --align tokens "$A" "$A"
	has "$err" "--align tokens: no side's passes add up to one pass of the other side" \
		"$case: --align tokens says why"
done <"$R/cases_align.tsv"
[ $n -ge 4 ] || fail "only $n bug cases"
[ $nn -ge 2 ] || fail "only $nn null cases"

# The engine against the trainer of ONE Miles run (--patched: both dump the same explicit
# names; TP 2, sequence parallel): compare TREE/engines TREE/fwd_only. Requests (a 12-token
# prefill and a decode step each) are matched to the trainer's packed micro-batches by
# input_ids; the trainer's [t/tp, 1, h] shards are joined and squeezed against the
# engine's [t, h]; the trainer's last response token and THD padding are compared with
# nothing; tensors only the trainer dumps (cu_seqlens_q/kv) are listed, never a
# divergence. pre_mlp_layernorm_output means another tensor in each framework (TE fuses
# the pre-MLP norm into linear_fc1): --filter drops it. align_miles_tp2: softmax_scale
# at L2 in the trainer only; rel from torch in float64 (the row of token 1: softmax over
# one key does not see the scale, so token 0 is right).
F='^(?!pre_mlp_layernorm_output$)'
M=$R/align_miles_tp2/target
expect 1 "miles: compare" "$DB_BIN" compare --no-cache --filter "$F" "$M/engines" "$M/fwd_only"
has "$out" "aligned by token: input_ids and cu_seqlens, by request: reference passes 0-1 (13 tokens) = target pass 0 (16 rows, the rest compared with nothing); reference passes 2-3 (13 tokens) = target pass 1 (16 rows, the rest compared with nothing)" \
	"miles: requests matched"
expect 1 "miles: compare json" "$DB_BIN" compare --no-cache --filter "$F" --format json "$M/engines" "$M/fwd_only"
printf '%s' "$out" >"$DB_TMP/m.json"
"$PY" - "$DB_TMP/m.json" <<'PY' || fail "miles: compare json"
import json, sys
d = json.load(open(sys.argv[1]))
p = d["pairs"][d["first_beyond_drift"]]
t = d["first_beyond_drift_token"]
ok = p["layer"] == 2 and p["stage"] == "attn_pre_o_proj" and str(p["pass"]) == "0"
ok = ok and abs(p["rel"] - 0.3528645833333333) < 1e-12
ok = ok and t["token"] == 1 and abs(t["rel"] - 0.28174603174603174) < 1e-12
# every layer before L2 only drifts (bf16, two frameworks)
ok = ok and all(q["severity"] in ("ok", "drift") for q in d["pairs"]
                if q["status"] == "ok" and q["layer"] is not None and q["layer"] < 2)
# the joined sequence-parallel shards against the engine, squeezed
lin = [q for q in d["pairs"] if q["stage"] == "layer_input" and q["merged"] and q["status"] == "ok"]
ok = ok and lin and all(q["shape"] == [12, 64] or q["shape"] == [1, 64] for q in lin)
# what only the trainer dumps is listed, never a divergence
cu = [q for q in d["pairs"] if q["stage"].startswith("cu_seqlens")]
ok = ok and cu and all(q["status"] == "not_comparable" and "only the target has it" in q["reason"]
                       for q in cu)
ok = ok and not any(q["stage"] == "pre_mlp_layernorm_output" for q in d["pairs"])
if not ok:
    print(p["layer"], p["stage"], p["rel"], t)
sys.exit(0 if ok else 1)
PY
expect 1 "miles: bisect" "$DB_BIN" bisect --no-cache --auto --filter "$F" --format json "$M/engines" "$M/fwd_only"
printf '%s' "$out" >"$DB_TMP/mb.json"
check_bisect "$DB_TMP/mb.json" 0 2 '^attn_pre_o_proj$' 1 || fail "miles: bisect json"
# without the filter the name whose meaning differs is what diverges first
expect 1 "miles: unfiltered" "$DB_BIN" compare --no-cache --format json "$M/engines" "$M/fwd_only"
grep -q '"stage": "pre_mlp_layernorm_output"' <<<"$out" || fail "miles: unfiltered has the norm"
# no bug: nothing beyond drift, bisect finds nothing
N=$R/align_miles_null/target
expect 1 "miles null: compare (bf16 drift)" "$DB_BIN" compare --no-cache --filter "$F" --format json "$N/engines" "$N/fwd_only"
grep -q '"first_beyond_drift": null' <<<"$out" || fail "miles null: beyond drift"
expect 0 "miles null: bisect" "$DB_BIN" bisect --no-cache --auto --filter "$F" --format json "$N/engines" "$N/fwd_only"
grep -q '"kind": "none"' <<<"$out" || fail "miles null: bisect none"

# kept in the session: bisect records --align, export and replay read it back
A=$R/align_v2_tp1/ref
B=$R/align_v2_tp1/target
expect 1 "session: bisect" "$DB_BIN" bisect --no-cache --auto --session "$DB_TMP/s.yaml" "$A" "$B"
expect 0 "session: export" "$DB_BIN" export --no-cache --out "$DB_TMP/rep" "$DB_TMP/s.yaml"
grep -qF -- "- aligned by token: positions: target passes 0-4 (12+1+1+1+1 tokens) = reference pass 0 (16); the culprit's first bad token: 13" \
	"$DB_TMP/rep/report.md" || fail "report.md: aligned by token"
expect 0 "session --align passes: bisect" "$DB_BIN" bisect --no-cache --auto --align passes \
	--session "$DB_TMP/p.yaml" "$A" "$B"
grep -qx 'align: "passes"' "$DB_TMP/p.yaml" || fail "the session keeps --align passes"
expect 0 "session --align passes: export" "$DB_BIN" export --no-cache --out "$DB_TMP/prep" "$DB_TMP/p.yaml"
grep -q '"alignment": {"by": "passes"' "$DB_TMP/prep/metrics.json" ||
	fail "export reads --align passes back from the session"

# bisect names what compare names (one rule for "first"): pass, layer, stage, token.
# align_fade_v2_tp1: a KV write at L6 from decode step 4 (token 12+4-1 = 15) whose error
# is ok again at L7 in pass 4, so the last layer's probe alone picked pass 5;
# align_miles_eng: an engine-only norm_offset at L1 in bf16, where compare names the
# first divergence beyond drift (L1 mlp_output, token 0) and the walk named the drift
# before it (attn_pre_o_proj)
same_place() {  # CASE COMPARE.json BISECT.json WHICH PASS LAYER STAGE TOKEN
	"$PY" - "$@" <<'PY'
import json, sys
case, cf, bf, which, pas, layer, stage, token = sys.argv[1:]
c, b = json.load(open(cf)), json.load(open(bf))
k, tk = c[which], c[which + "_token"]
p = c["pairs"][k]
got_c = (str(p["pass"]), p["layer"], p["stage"], tk["token"])
got_b = (str(b["pass"]), b["first_bad_layer"], b["first_bad_substage"] or b["first_bad_stage"],
         b["token"])
want = (pas, int(layer), stage, int(token))
if got_c != want or got_b != want:
    print(case, "compare", got_c, "bisect", got_b, "want", want)
    sys.exit(1)
PY
}
D=$R/align_fade_v2_tp1
expect 1 "fade: compare" "$DB_BIN" compare --no-cache --format json "$D/ref" "$D/target"
printf '%s' "$out" >"$DB_TMP/fc.json"
expect 1 "fade: bisect" "$DB_BIN" bisect --no-cache --auto --format json "$D/ref" "$D/target"
printf '%s' "$out" >"$DB_TMP/fb.json"
same_place fade "$DB_TMP/fc.json" "$DB_TMP/fb.json" first_divergence 4 6 attn_pre_o_proj 15 || fail "fade: bisect as compare"
expect 1 "fade: bisect text" "$DB_BIN" bisect --no-cache --auto "$D/ref" "$D/target"
has "$out" "ok again at L7 in this pass: the search ends at L6, the first divergence" "fade: says why"
D=$R/align_miles_eng/target
expect 1 "miles eng: compare" "$DB_BIN" compare --no-cache --filter "$F" --format json "$D/engines" "$D/fwd_only"
printf '%s' "$out" >"$DB_TMP/ec.json"
expect 1 "miles eng: bisect" "$DB_BIN" bisect --no-cache --auto --filter "$F" --format json "$D/engines" "$D/fwd_only"
printf '%s' "$out" >"$DB_TMP/eb.json"
same_place "miles eng" "$DB_TMP/ec.json" "$DB_TMP/eb.json" first_beyond_drift 0 1 mlp_output 0 || fail "miles eng: bisect as compare"

expect 2 "--align bad" "$DB_BIN" compare --no-cache --align sideways "$R/align_v2_tp1/ref" "$R/align_v2_tp1/target"
has "$err" "--align must be auto, tokens or passes, not 'sideways'" "--align bad value"

finish t_align
