#!/bin/bash
# Several samples in ONE trainer micro-batch (issue 35): the engine ran each
# request alone (a prefill, then one-token decode steps), the trainer packed
# every sample into one THD micro-batch (cu_seqlens, padding to TP x 8 as a
# sample of its own). Trees by the real Miles / SGLang dumpers through
# realdump/packed.py (gen.sh); cases in realdump/cases_packed.tsv (place and
# token from the bug, rel from torch in float64, truth_packed.py).
#  - each request is matched to its sample's rows by input_ids at a
#    cu_seqlens start: the header says which rows, the padding and the last
#    response token (never run by the engine) are compared with nothing;
#  - compare names the bug's layer, name, engine pass and micro-batch row
#    (first divergence beyond drift: bf16 drifts everywhere), its rel is
#    torch's; bisect names the same pass, layer, name and token;
#  - no bug: nothing beyond drift, bisect finds nothing.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
fresh_tmp
need_python "to read the JSON answers"
R=$DB_FIXTURES/realdump
F='^(?!pre_mlp_layernorm_output$)'

n=0
while IFS=$'\t' read -r case pass layer stage token rank rel _; do
	case $case in '#'* | case | '') continue ;; esac
	T=$R/$case/target
	n=$((n + 1))
	if [ "$pass" = - ]; then
		expect 1 "$case: compare (bf16 drift)" "$DB_BIN" compare --no-cache --filter "$F" "$T/engines" "$T/fwd_only"
		has "$out" "aligned by token: input_ids and cu_seqlens, by request: reference passes 0-1 (13 tokens) = target pass 0 rows 0-12; reference passes 2-3 (13 tokens) = target pass 0 rows 14-26 (28 rows, the rest compared with nothing)" \
			"$case: both requests in the one micro-batch"
		grep -q '^first divergence beyond drift' <<<"$out" && fail "$case: something beyond drift"
		expect 0 "$case: bisect" "$DB_BIN" bisect --no-cache --auto --filter "$F" --format json "$T/engines" "$T/fwd_only"
		grep -q '"kind": "none"' <<<"$out" || fail "$case: bisect says none: ${out:0:200}"
		continue
	fi
	expect 1 "$case: compare" "$DB_BIN" compare --no-cache --filter "$F" "$T/engines" "$T/fwd_only"
	has "$out" "aligned by token: input_ids and cu_seqlens, by request: reference passes 0-1 (13 tokens) = target pass 0 rows 0-12; reference passes 2-4 (14 tokens) = target pass 0 rows 14-27 (32 rows, the rest compared with nothing)" \
		"$case: requests matched to the samples"
	grep -qE "^  first bad token beyond drift: $token of the aligned sequence \(reference pass $pass, its row [0-9]+ of [0-9]+; the target's pass 0 holds (it at row|them at rows) [0-9-]+ of 32\)" \
		<<<"$out" || fail "$case: token line: $(grep 'first bad token' <<<"$out")"
	expect 1 "$case: compare json" "$DB_BIN" compare --no-cache --filter "$F" --format json "$T/engines" "$T/fwd_only"
	printf '%s' "$out" >"$DB_TMP/c.json"
	expect 1 "$case: bisect" "$DB_BIN" bisect --no-cache --auto --filter "$F" --format json "$T/engines" "$T/fwd_only"
	printf '%s' "$out" >"$DB_TMP/b.json"
	"$PY" - "$DB_TMP/c.json" "$DB_TMP/b.json" "$case" "$pass" "$layer" "$stage" "$token" "$rank" "$rel" <<'PY' || fail "$case: compare and bisect json"
import json, sys
cf, bf, case, pas, layer, stage, token, rank, rel = sys.argv[1:]
c, b = json.load(open(cf)), json.load(open(bf))
p, t = c["pairs"][c["first_beyond_drift"]], c["first_beyond_drift_token"]
want = (pas, int(layer), stage, int(token))
got_c = (str(p["pass"]), p["layer"], p["stage"], t["token"])
got_b = (str(b["pass"]), b["first_bad_layer"], b["first_bad_substage"] or b["first_bad_stage"],
         b["token"])
ok = got_c == want and got_b == want and b["kind"] == "sudden-drop"
ok = ok and p["rank"] == int(rank) and abs(p["rel"] - float(rel)) <= 1e-12
ok = ok and c["alignment"]["by"] == "tokens" and c["alignment"]["whole"] == "target"
# what only the trainer dumps is listed, never a divergence
cu = [q for q in c["pairs"] if q["stage"].startswith("cu_seqlens")]
ok = ok and cu and all(q["status"] == "not_comparable" for q in cu)
if not ok:
    print(case, "compare", got_c, p["rank"], p["rel"], "bisect", got_b, b["kind"], "want", want)
sys.exit(0 if ok else 1)
PY
done <"$R/cases_packed.tsv"
[ $n -ge 3 ] || fail "only $n cases"

# TP 1, three samples in one micro-batch (cu_seqlens [0, 14, 28, 43, 48]), pack_leak at L3,
# layers 2-3 dumped: compare names L3 attn_pre_o_proj beyond the bf16 drift of L2 (rel
# 1.0939490445859872, torch float64: truth_packed.py pack_miles_tp1 attn_pre_o_proj 3 2 14
# 14 0); bisect judges the layers by the same rule (db_first_beyond_drift_of): the drift
# of L2 is not bad (it said "inconclusive: one of L0..L2"), L3 is
T=$R/pack_miles_tp1/target
expect 1 "tp1: compare" "$DB_BIN" compare --no-cache --filter "$F" "$T/engines" "$T/fwd_only"
has "$out" "reference passes 4-6 (14 tokens) = target pass 0 rows 28-41 (48 rows, the rest compared with nothing)" \
	"tp1: the third request in the one micro-batch"
expect 1 "tp1: compare json" "$DB_BIN" compare --no-cache --filter "$F" --format json "$T/engines" "$T/fwd_only"
printf '%s' "$out" >"$DB_TMP/c.json"
expect 1 "tp1: bisect" "$DB_BIN" bisect --no-cache --auto --filter "$F" --format json "$T/engines" "$T/fwd_only"
printf '%s' "$out" >"$DB_TMP/b.json"
"$PY" - "$DB_TMP/c.json" "$DB_TMP/b.json" <<'PY' || fail "tp1: bisect as compare"
import json, sys
c, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
p, t = c["pairs"][c["first_beyond_drift"]], c["first_beyond_drift_token"]
want = ("2", 3, "attn_pre_o_proj", 14)
got_c = (str(p["pass"]), p["layer"], p["stage"], t["token"])
got_b = (str(b["pass"]), b["first_bad_layer"], b["first_bad_substage"] or b["first_bad_stage"],
         b["token"])
ok = got_c == want and got_b == want and b["kind"] == "sudden-drop"
ok = ok and abs(p["rel"] - 1.0939490445859872) <= 1e-12
if not ok:
    print("compare", got_c, p["rel"], "bisect", got_b, b["kind"])
sys.exit(0 if ok else 1)
PY

# without cu_seqlens (a dump that left them out) the requests follow each other in the
# micro-batch: the second is found after the first's rows (and the token the engine never
# ran), not at row 0
rm -rf "$DB_TMP/nocu"
cp -rL "$R/pack_miles_trn/target" "$DB_TMP/nocu"
find "$DB_TMP/nocu" -name '*name=cu_seqlens_*' -delete
expect 1 "no cu_seqlens: compare" "$DB_BIN" compare --no-cache --filter "$F" "$DB_TMP/nocu/engines" "$DB_TMP/nocu/fwd_only"
has "$out" "aligned by token: input_ids, by request: reference passes 0-1 (13 tokens) = target pass 0 rows 0-12; reference passes 2-4 (14 tokens) = target pass 0 rows 14-27 (32 rows, the rest compared with nothing)" \
	"no cu_seqlens: the second request after the first"
grep -qE "^  first bad token beyond drift: 14 of the aligned sequence" <<<"$out" ||
	fail "no cu_seqlens: token"
# the token inside the first-divergence objects (compare JSON: each pass's first_divergence
# and first_beyond_drift carry token, target_pass and target_row; first_divergence_token
# is kept and carries the target's place too). The target is the one pass here (the
# micro-batch: its row is the token) ...
T=$R/pack_miles_trn/target
expect 1 "token json: packed" "$DB_BIN" compare --no-cache --filter "$F" --format json "$T/engines" "$T/fwd_only"
printf '%s' "$out" >"$DB_TMP/t.json"
# ... and the target generated the tokens (align_v2_tp1: kv_write L4 from decode step 2,
# token 13 is the target's pass 2, its row 0)
A=$R/align_v2_tp1
expect 1 "token json: steps" "$DB_BIN" compare --no-cache --format json "$A/ref" "$A/target"
printf '%s' "$out" >"$DB_TMP/s.json"
"$PY" - "$DB_TMP/t.json" "$DB_TMP/s.json" <<'PY' || fail "token inside the first-divergence objects"
import json, sys
t, s = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ok = True
p2 = [p for p in t["passes"] if str(p["pass"]) == "2"][0]
b = p2["first_beyond_drift"]
ok = ok and (b["token"], str(b["target_pass"]), b["target_row"], b["layer"]) == (14, "0", 14, 2)
ft = t["first_beyond_drift_token"]
ok = ok and (ft["token"], str(ft["target_pass"]), ft["target_row"]) == (14, "0", 14)
q2 = [p for p in s["passes"] if str(p["pass"]) == "2"][0]["first_divergence"]
ok = ok and (q2["token"], str(q2["target_pass"]), q2["target_row"], q2["layer"]) == (13, "2", 0, 4)
st = s["first_divergence_token"]
ok = ok and (st["token"], str(st["target_pass"]), st["target_row"]) == (13, "2", 0)
# a pass that does not diverge has no object; one that does always says its token
ok = ok and all(p["first_divergence"] is None or "token" in p["first_divergence"] for p in s["passes"])
if not ok:
    print(b, ft, q2, st)
sys.exit(0 if ok else 1)
PY
finish t_align_packed
