#!/bin/bash
# Hostile inputs, round 2 (issue 37), the silent wrong answers:
#  - msprobe statistics: a NaN Max/Mean/Norm in the target against a finite
#    reference diverges (it read "ok, rel 0", exit 0); a pair whose statistics
#    are NaN or null on both sides is counted and said ("nothing to compare"),
#    never under "every pair is in the ok band";
# The trees are the real msprobe fixture (tests/fixtures/realdump/ms_stat_tp2,
# written by msprobe's PrecisionDebugger) with its statistics edited here.
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

finish t_hostile37
