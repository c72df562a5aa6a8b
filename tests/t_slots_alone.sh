#!/bin/bash
# Batch invariance against the prompt run alone (issue 23): --slots N REF
# TARGET, REF the prompt by itself, TARGET the same prompt N times in one
# batch after a 16-token warmup. Cases with trees = pair in
# realdump/cases_slots.tsv (pass, layer, stage and slot from the injected
# split_k bug, checked with torch by truth.py, never from dumpbisect; "ref
# pass p goes with target pass p + 1").
#  - the passes are aligned from the data: the warmup is skipped, ref pass
#    p is paired with target pass p + 1, and with the warmup removed (or
#    seq_lens and positions removed) they still align;
#  - every slot, 0 too, is judged against the alone run, bitwise: the first
#    divergence names pass, ref pass, layer, stage and slot; every other
#    slot is bit-identical to the alone run everywhere;
#  - bisect names the same pass, ref pass, layer, stage and slot;
#  - a batch that does not hold N copies is refused, saying why;
#  - without --slots, a batch out of step with the alone run (the warmup)
#    is found from the data and read as --slots N would.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
fresh_tmp
need_python "to read the JSON answers"
R=$DB_FIXTURES/realdump

check_json() {  # FILE PASS LAYER STAGE SLOT SKIPPED
	"$PY" - "$@" <<'PY'
import json, re, sys
f, pas, layer, stage, slot, skipped = sys.argv[1:]
d = json.load(open(f))
p = d["pairs"][d["first_divergence"]]
ok = (str(p["pass"]) == pas and str(p["ref_pass"]) == str(int(pas) - 1)
      and p["layer"] == int(layer) and re.search(stage, p["stage"]) and p["slot"] == int(slot)
      and p["byte_equal"] < 1 and d["judged_by"] == "slots_bitwise" and d["slots"]["alone"])
sk = [str(s["pass"]) for s in d["slots"]["passes"] if not s["used"]]
ok = ok and sk == ([skipped] if skipped != "-" else [])
# every slot of the batch, 0 included, is paired; those but the bug's are
# bit-identical to the alone run everywhere
ok = ok and sorted({q["slot"] for q in d["pairs"]}) == [0, 1, 2, 3]
ok = ok and all(q["byte_equal"] == 1 for q in d["pairs"] if q["slot"] != int(slot))
ok = ok and all(str(q["ref_pass"]) == str(int(q["pass"]) - 1) for q in d["pairs"])
if not ok:
    print(p, sk)
sys.exit(0 if ok else 1)
PY
}

n=0
while IFS=$'\t' read -r case trees nslots skipped pass layer stage slot _; do
	case $case in '#'* | case | '') continue ;; esac
	[ "$trees" = pair ] || continue
	n=$((n + 1))
	A=$R/$case/ref
	B=$R/$case/target
	expect 1 "$case: compare" "$DB_BIN" compare --no-cache --slots "$nslots" "$A" "$B"
	has "$out" "  skipped pass $skipped: seq_lens [16]: no pass of the alone run goes with it" \
		"$case: the warmup skipped"
	has "$out" "  aligned: alone pass 0 = batch pass $((skipped + 1)) (shift +1, from the data)" \
		"$case: aligned"
	grep -qE "^first divergence: L$layer [^ ]+ slot $slot pass $pass \(ref pass $((pass - 1))\): " \
		<<<"$out" || fail "$case: headline: $(grep '^first divergence' <<<"$out")"
	has "$out" "  (judged bitwise: slot $slot holds the prompt the reference ran alone" \
		"$case: judged bitwise"
	expect 1 "$case: compare json" "$DB_BIN" compare --no-cache --slots "$nslots" --format json "$A" "$B"
	printf '%s' "$out" >"$DB_TMP/c.json"
	check_json "$DB_TMP/c.json" "$pass" "$layer" "$stage" "$slot" "$skipped" ||
		fail "$case: compare json"
	expect 1 "$case: bisect" "$DB_BIN" bisect --no-cache --auto --slots "$nslots" --format json "$A" "$B"
	printf '%s' "$out" >"$DB_TMP/b.json"
	"$PY" - "$DB_TMP/b.json" "$pass" "$layer" "$stage" "$slot" <<'PY' || fail "$case: bisect json"
import json, re, sys
pas, layer, stage, slot = sys.argv[2:]
d = json.load(open(sys.argv[1]))
st = d["first_bad_substage"] or d["first_bad_stage"]
ok = (d["kind"] == "sudden-drop" and str(d["pass"]) == pas and str(d["ref_pass"]) == str(int(pas) - 1)
      and d["first_bad_layer"] == int(layer) and re.search(stage, st) and d["slot"] == int(slot)
      and d["bad_slots"] == [int(slot)])
if not ok:
    print(d["kind"], d["pass"], d["ref_pass"], d["first_bad_layer"], st, d.get("slot"))
sys.exit(0 if ok else 1)
PY

	# the session keeps --slots and both trees; the report says how it judged
	expect 1 "$case: bisect --session" "$DB_BIN" bisect --no-cache --auto --slots "$nslots" \
		--session "$DB_TMP/s.yaml" "$A" "$B"
	expect 0 "$case: export" "$DB_BIN" export --no-cache --out "$DB_TMP/rep" "$DB_TMP/s.yaml"
	grep -qF -- "- verdicts judged by: slots, bitwise: each of the $nslots slots of the target's batch against the reference run of the prompt alone" \
		"$DB_TMP/rep/report.md" || fail "$case: report.md: judged by"
	grep -qF ">verdicts judged by: slots, bitwise" "$DB_TMP/rep/heatmap.svg" || fail "$case: svg: judged by"

	# not hard-coded: without the warmup the passes align with no shift
	rm -rf "$DB_TMP/nw"
	mkdir -p "$DB_TMP/nw"
	cp -rL "$B" "$DB_TMP/nw/t"
	find "$DB_TMP/nw/t" -name "step=${skipped}___*" -delete
	expect 1 "$case: no warmup" "$DB_BIN" compare --no-cache --slots "$nslots" "$A" "$DB_TMP/nw/t"
	has "$out" "  aligned: alone pass 0 = batch pass $((skipped + 1)) (shift +0, from the data)" \
		"$case: no warmup: aligned"
	grep -qE "^first divergence: L$layer [^ ]+ slot $slot pass $pass \(ref pass $((pass - 1))\): " \
		<<<"$out" || fail "$case: no warmup: headline"
	# nothing dumped names the sequences: the token rows align them
	rm -rf "$DB_TMP/bare"
	mkdir -p "$DB_TMP/bare"
	cp -rL "$A" "$DB_TMP/bare/a"
	cp -rL "$B" "$DB_TMP/bare/b"
	find "$DB_TMP/bare" \( -name '*name=seq_lens*' -o -name '*name=positions*' \) -delete
	expect 1 "$case: token rows" "$DB_BIN" compare --no-cache --slots "$nslots" "$DB_TMP/bare/a" "$DB_TMP/bare/b"
	has "$out" "  skipped pass $skipped: 16 token rows: no pass of the alone run goes with it" \
		"$case: token rows: the warmup skipped"
	grep -qE "^first divergence: L$layer [^ ]+ slot $slot pass $pass \(ref pass $((pass - 1))\): " \
		<<<"$out" || fail "$case: token rows: headline"

	# the batch does not hold 3 copies: refused, saying why
	expect 2 "$case: --slots 3" "$DB_BIN" compare --no-cache --slots 3 "$A" "$B"
	has "$err" "--slots 3: no pass of the target holds 3 copies of a pass of the reference" \
		"$case: --slots 3 refused"

	# no --slots: the warmup puts the passes out of step and the batch holds
	# the alone run's prompt N times: found from the data, said, and the
	# same place (before: pass 0 met the warmup, "input ids differ")
	expect 1 "$case: no --slots" "$DB_BIN" compare --no-cache "$A" "$B"
	has "$out" "slots   $nslots in the target's batch, each against the reference (the prompt run alone), judged bitwise; slot k is shown as rank k (found from the data" \
		"$case: no --slots: the slots found"
	grep -qE "^first divergence: L$layer [^ ]+ slot $slot pass $pass \(ref pass $((pass - 1))\): .*\[bits differ\]" \
		<<<"$out" || fail "$case: no --slots: headline: $(grep '^first divergence' <<<"$out")"
	expect 1 "$case: no --slots, json" "$DB_BIN" compare --no-cache --format json "$A" "$B"
	printf '%s' "$out" >"$DB_TMP/c.json"
	check_json "$DB_TMP/c.json" "$pass" "$layer" "$stage" "$slot" "$skipped" ||
		fail "$case: no --slots: compare json"
	grep -q '"found": true' "$DB_TMP/c.json" || fail "$case: no --slots: json slots.found"
	expect 1 "$case: no --slots, bisect" "$DB_BIN" bisect --no-cache --auto "$A" "$B"
	grep -qE "^first bad layer L$layer" <<<"$out" || fail "$case: no --slots: bisect: $(head -1 <<<"$out")"
done <"$R/cases_slots.tsv"
[ $n -ge 1 ] || fail "no pair slot case"

finish t_slots_alone
