#!/bin/bash
# Slot invariance in one tree (issue 23, the seed's Phase 8): compare,
# bisect and the workbench with --slots N on the real --batch-same 4 trees
# of tests/fixtures/realdump (cases_slots.tsv: pass, layer, stage and slot
# come from the injected split_k bug, checked with torch by truth.py, never
# from dumpbisect).
#  - the warmup pass (seq_lens [16]) is skipped and the output says so;
#  - the first divergence names the pass, layer, stage and slot (text and
#    JSON "slot"); bisect's JSON carries "pass" and "slot";
#  - the clean tree: every slot bit-identical, exit 0;
#  - nothing dumped names the sequences: ATOM's pick_prefill_call rule;
#  - the session keeps --slots.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
fresh_tmp
need_python "to read the JSON answers"
R=$DB_FIXTURES/realdump

n=0
while IFS=$'\t' read -r case trees nslots skipped pass layer stage slot _; do
	case $case in '#'* | case | '') continue ;; esac
	[ "$trees" = one ] || continue
	n=$((n + 1))
	T=$R/$case/target
	if [ "$pass" = - ]; then
		expect 0 "$case: compare" "$DB_BIN" compare --no-cache --slots "$nslots" "$T"
		has "$out" "no divergence: every slot is bit-identical to slot 0" "$case: clean"
		expect 0 "$case: bisect" "$DB_BIN" bisect --no-cache --auto --slots "$nslots" "$T"
		has "$out" "nothing went wrong, nothing to bisect" "$case: bisect finds nothing"
		continue
	fi
	expect 1 "$case: compare" "$DB_BIN" compare --no-cache --slots "$nslots" "$T"
	has "$out" "  skipped pass $skipped: seq_lens [16]: 1 sequence, not $nslots" "$case: warmup skipped"
	grep -qE "^first divergence: L$layer [^ ]+ slot $slot pass $pass: " <<<"$out" ||
		fail "$case: headline: $(grep '^first divergence' <<<"$out")"
	has "$out" "  (judged bitwise: slot $slot holds the prompt of slot 0" "$case: judged bitwise"
	expect 1 "$case: compare json" "$DB_BIN" compare --no-cache --slots "$nslots" --format json "$T"
	printf '%s' "$out" >"$DB_TMP/c.json"
	"$PY" - "$DB_TMP/c.json" "$pass" "$layer" "$stage" "$slot" "$skipped" <<'PY' || fail "$case: compare json"
import json, re, sys
pas, layer, stage, slot, skipped = sys.argv[2:]
d = json.load(open(sys.argv[1]))
p = d["pairs"][d["first_divergence"]]
ok = (str(p["pass"]) == pas and p["layer"] == int(layer) and re.search(stage, p["stage"])
      and p["slot"] == int(slot) and p["byte_equal"] < 1 and d["judged_by"] == "slots_bitwise")
sk = [s for s in d["slots"]["passes"] if not s["used"]]
ok = ok and [str(s["pass"]) for s in sk] == [skipped] and d["slots"]["n"] == 4
# the slots other than the bug's stay bit-identical everywhere
ok = ok and all(q["byte_equal"] == 1 for q in d["pairs"] if q["slot"] != int(slot))
if not ok:
    print(p, sk)
sys.exit(0 if ok else 1)
PY
	expect 1 "$case: bisect" "$DB_BIN" bisect --no-cache --auto --slots "$nslots" --format json "$T"
	printf '%s' "$out" >"$DB_TMP/b.json"
	"$PY" - "$DB_TMP/b.json" "$pass" "$layer" "$stage" "$slot" <<'PY' || fail "$case: bisect json"
import json, re, sys
pas, layer, stage, slot = sys.argv[2:]
d = json.load(open(sys.argv[1]))
st = d["first_bad_substage"] or d["first_bad_stage"]
ok = (d["kind"] == "sudden-drop" and str(d["pass"]) == pas and d["first_bad_layer"] == int(layer)
      and re.search(stage, st) and d["slot"] == int(slot) and d["bad_slots"] == [int(slot)])
if not ok:
    print(d["kind"], d["pass"], d["first_bad_layer"], st, d.get("slot"))
sys.exit(0 if ok else 1)
PY
done <"$R/cases_slots.tsv"
[ $n -ge 3 ] || fail "only $n one-tree slot cases"

# nothing dumped names the sequences: ATOM's pick_prefill_call (48 rows, not
# a power of two, beats the 16-row warmup; the 4-row decode is row k)
mkdir -p "$DB_TMP/bare"
cp -rL "$R/slots_v2_oproj/target" "$DB_TMP/bare/t"
find "$DB_TMP/bare/t" \( -name '*name=seq_lens*' -o -name '*name=positions*' \) -delete
expect 1 "pick_prefill_call" "$DB_BIN" compare --no-cache --slots 4 "$DB_TMP/bare/t"
has "$out" "  skipped pass 0: 16 token rows: not the batch (ATOM's pick_prefill_call chose pass 1)" \
	"pick_prefill_call: the warmup skipped"
has "$out" "  pass 2: 4 token rows: a decode of 4 sequences (row k)" "pick_prefill_call: decode"
grep -qE '^first divergence: L4 attn_output slot 2 pass 1: ' <<<"$out" || fail "pick_prefill_call: headline"
# positions only (v1 dumps no seq_lens): a sequence starts where the position does not grow
expect 1 "positions" "$DB_BIN" compare --no-cache --slots 4 --filter '^(?!.*seq_lens)' "$R/slots_hook_down/target"
has "$out" "  pass 2: positions [12, 12, 12, 12]: 4 equal sequences" "positions: decode"
grep -qE '^first divergence: L3 mlp\.down_proj slot 1 pass 1: ' <<<"$out" || fail "positions: headline"

# the session keeps --slots; replay reads it
S=$DB_TMP/s.yaml
expect 1 "bisect --session --slots" "$DB_BIN" bisect --no-cache --auto --slots 4 --session "$S" \
	"$R/slots_v2_oproj/target"
grep -qxF 'slots: "4"' "$S" || fail "the session keeps --slots: $(cat "$S")"
expect 0 "replay with the session's slots" "$DB_BIN" replay --no-cache "$S"

# usage: 2 or more slots; a tree that is no batch says why (two trees:
# t_slots_alone.sh)
expect 2 "--slots 1" "$DB_BIN" compare --slots 1 "$R/slots_v2_oproj/target"
expect 2 "--slots on no batch" "$DB_BIN" compare --no-cache --slots 4 "$R/slots_v2_alone/ref"
has "$err" "no pass of the tree is a batch of 4 equal prompts; pass 0: seq_lens [12]: 1 sequence, not 4" \
	"--slots on no batch"

finish t_slots
