#!/bin/bash
# Ascend msprobe trees (tests/fixtures/realdump/ms_*, written by msprobe's own
# PrecisionDebugger with one injected bug; truth in cases_msprobe.tsv, from the bug):
#  - the built-in msprobe profile is detected on dump.json and places every call, API
#    calls included (construct.json), in its layer and module;
#  - pairs are measured on statistics alone and say so (JSON statistics_only, md5_equal
#    in md5 mode); no pair is an error;
#  - bisect names the bug's layer, its module (or an API call inside it) and the ranks;
#    compare's headline is in the bug's layer;
#  - calls are aligned by order, name and shape inside each layer (pairing: calls): a
#    call only one run makes (an added (1 + w), GELU for SiLU, a missing add) is one
#    finding in its place (compare text, JSON "finding", bisect's calls), never a
#    shifted pairing elsewhere;
#  - a truncated dump.json, or one with a tensor of an unexpected shape, gives one error
#    naming the file (and the JSON path); the rest of the tree loads.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
fresh_tmp
need_python "to check the JSON answers"
R=$DB_FIXTURES/realdump
T=$R/cases_msprobe.tsv
[ -f "$T" ] || { echo "no $T"; exit 1; }
n=0
while IFS=$'\t' read -r case task layer module ranks headline _; do
	case $case in '#'* | case | '') continue ;; esac
	o=$DB_TMP/$case
	ls_out=$("$DB_BIN" ls "$R/$case/ref" 2>&1)
	has "$ls_out" "profile msprobe" "$case: profile"
	has "$ls_out" "mlp.act_fn.Functional.silu" "$case: API call placed in its module"
	"$DB_BIN" compare "$R/$case/ref" "$R/$case/target" >"$o.compare.txt" 2>&1
	"$DB_BIN" compare "$R/$case/ref" "$R/$case/target" --format json >"$o.compare.json" 2>/dev/null
	"$DB_BIN" bisect "$R/$case/ref" "$R/$case/target" --auto --format json >"$o.bisect.json" 2>/dev/null
	grep -q "^first divergence: L$headline " "$o.compare.txt" ||
		fail "$case: headline not in layer $headline: $(grep '^first divergence' "$o.compare.txt")"
	grep -q "stats-only" "$o.compare.txt" || fail "$case: the table does not say stats-only"
	"$PY" - "$o" "$task" "$layer" "$module" "$ranks" "$case" <<'PY' || fail "$case: checks above"
import json, re, sys
o, task, layer, module, ranks, case = sys.argv[1:]
c = json.load(open(o + ".compare.json"))
b = json.load(open(o + ".bisect.json"))
bad = []
pairs = c["pairs"]
ok = [p for p in pairs if p["status"] == "ok"]
# tensor task: the calls whose tensors are kept (dump_tensor_data/, gen.sh MS_KEEP) are
# measured on them, the others on statistics
if not ok or (task != "tensor" and not all(p.get("statistics_only") for p in ok)):
    bad.append("a measured pair is not marked statistics_only")
if any(p["status"] == "error" for p in pairs):
    bad.append("error pairs: %s" % [p["error"] for p in pairs if p["status"] == "error"][:2])
if task == "md5" and not all(p.get("md5_equal") is not None for p in ok):
    bad.append("md5 task: a pair without md5_equal")
if task != "md5" and any(p.get("md5_equal") is not None for p in ok):
    bad.append("md5_equal without md5 in the dump")
if b.get("first_bad_layer") != int(layer):
    bad.append("bisect layer %s, want %s" % (b.get("first_bad_layer"), layer))
cul = [s for s in (b.get("first_bad_stage"), b.get("first_bad_substage")) if s]
if not any(re.search(module, s) for s in cul):
    bad.append("bisect culprit %s does not match %s" % (cul, module))
if ranks == "all":
    if not b.get("all_ranks_bad") and b.get("bad_ranks"):
        bad.append("bad ranks %s, want all" % b.get("bad_ranks"))
elif sorted(b.get("bad_ranks") or []) != sorted(int(r) for r in ranks.split(",")):
    bad.append("bad ranks %s, want %s" % (b.get("bad_ranks"), ranks))
# one-sided calls: only in the bug's layer (a call the buggy code adds), never a
# cascade of shifted pairs
one = [p for p in pairs if p["status"] in ("ref_only", "target_only")]
if any(p["layer"] != int(layer) for p in one) or len(one) > 2 * max(1, len({p["rank"] for p in pairs})):
    bad.append("one-sided pairs away from the bug: %s" % [(p["layer"], p["stage"]) for p in one][:6])
for m in bad:
    print("  %s: %s" % (case, m))
sys.exit(1 if bad else 0)
PY
	n=$((n + 1))
done <"$T"
[ $n -ge 3 ] || fail "only $n cases ran"

# calls only one run makes (pairing: calls): ms_md5_tp1's norm_offset adds (1 + w)
# in L3's post_attention_layernorm: one finding in its place, nothing shifted
o=$DB_TMP/ms_md5_tp1
has "$(cat "$o.compare.txt")" "pass 0 L3: target calls post_attention_layernorm.Tensor.__radd__, which the reference does not" \
	"norm_offset: the extra call as a finding"
"$PY" - "$o" <<'PY' || fail "ms_md5_tp1: the extra call's finding in JSON"
import json, sys
c = json.load(open(sys.argv[1] + ".compare.json"))
b = json.load(open(sys.argv[1] + ".bisect.json"))
one = [p for p in c["pairs"] if p["status"] == "target_only"]
assert len(one) == 1 and "__radd__, which the reference does not" in one[0].get("finding", ""), one
assert "__radd__" in (b.get("first_bad_calls") or ""), b.get("first_bad_calls")
# the frame that made the culprit, as msprobe's stack.json has it (RMSNorm._norm)
fr = b.get("first_bad_frame") or {}
assert (fr.get("ref") or "").endswith("tinymodel.py:127, in _norm: return x * torch.rsqrt("
                                      "x.pow(2).mean(-1, keepdim=True) + self.eps) * w"), fr
assert fr.get("target") == fr.get("ref"), fr
assert not [p for p in c["pairs"] if p["status"] == "shape_mismatch"]
PY
# a target that calls GELU where the reference calls SiLU (L5) and drops an add
# (L6 input_layernorm's residual): msprobe's own names, edited in a copy
A=$DB_TMP/calls
cp -r "$R/ms_md5_tp1/ref" "$A.ref"
cp -r "$R/ms_md5_tp1/ref" "$A.target"
"$PY" - "$A.target/step0/proc0" <<'PY'
import json, sys
d = sys.argv[1]
dump = json.load(open(d + "/dump.json"))
cons = json.load(open(d + "/construct.json"))
data = {}
silu = [k for k in dump["data"] if k.startswith("Functional.silu.")][5]
add = next(k for k in dump["data"] if k.startswith("Tensor.__add__.") and
           (cons.get(k) or "").startswith("Module.model.layers.6.input_layernorm."))
for k, v in dump["data"].items():
    if k == add:
        continue
    if k == silu:
        cons["Functional.gelu.0.forward"] = cons.pop(k)
        k = "Functional.gelu.0.forward"
    data[k] = v
dump["data"] = data
json.dump(dump, open(d + "/dump.json", "w"))
json.dump(cons, open(d + "/construct.json", "w"))
PY
out=$("$DB_BIN" compare "$A.ref" "$A.target" 2>&1)
has "$out" "pass 0 L5: target calls mlp.act_fn.Functional.gelu where the reference calls mlp.act_fn.Functional.silu (before mlp.act_fn.Tensor.__mul__)" \
	"GELU for SiLU as a finding"
has "$out" "pass 0 L6: target does not call input_layernorm.Tensor.__add__ (the reference does, before input_layernorm.Tensor.pow)" \
	"a missing add as a finding"
"$DB_BIN" compare "$A.ref" "$A.target" --format json >"$A.json" 2>/dev/null
"$PY" - "$A.json" <<'PY' || fail "calls: the alignment shifted pairs"
import json, sys
c = json.load(open(sys.argv[1]))
one = sorted((p["layer"], p["stage"], p["status"]) for p in c["pairs"] if p["status"] not in ("ok",))
want = [(5, "mlp.act_fn.Functional.gelu", "target_only"), (5, "mlp.act_fn.Functional.silu", "ref_only"),
        (6, "input_layernorm.Tensor.__add__", "ref_only")]
assert one == want, one
# the add after the missing one (eps) pairs with its own, bit-identical
eps = [p for p in c["pairs"] if p["layer"] == 6 and p["stage"] == "input_layernorm.Tensor.__add__#1"]
assert eps and eps[0]["status"] == "ok" and eps[0]["md5_equal"] is True, eps
PY

# tensor task: dump.json's data_name leads to dump_tensor_data/<name>.pt; where both sides
# have it (ms_tensor_tp1 keeps layer 6's outputs) the pair is measured on the tensors
# (cos from torch in float64: Tensor.__rpow__ of L6's rotary_emb 0.99147524773,
# the decoder layer's hidden_out 0.99880277651), elsewhere on statistics
"$PY" - "$DB_TMP/ms_tensor_tp1.compare.json" <<'PY' || fail "tensor task: pairs of the tensors"
import json, sys
c = json.load(open(sys.argv[1]))
ok = [p for p in c["pairs"] if p["status"] == "ok"]
t = [p for p in ok if not p.get("statistics_only")]
assert t and {p["layer"] for p in t} == {6}, sorted({p["layer"] for p in t})
assert all(p.get("statistics_only") for p in ok if p["layer"] != 6)
def one(stage):
    return [p for p in t if p["stage"] == stage][0]["cos"]
assert abs(one("self_attn.rotary_emb.Tensor.__rpow__") - 0.9914752477317428) < 1e-9
assert abs(one("hidden_out") - 0.998802776514469) < 1e-9
PY
grep -q "^first divergence: L6 self_attn.rotary_emb.Tensor.__rpow__ pass 0: cos 0.99147525 " \
	"$DB_TMP/ms_tensor_tp1.compare.txt" || fail "tensor task: the headline's cos"

# "statistics only" wherever a number is shown: bisect's walk and steps, report.md,
# the SVG, the CSV
S=$DB_TMP/stat.dbsession
out=$("$DB_BIN" bisect "$R/ms_stat_tp2/ref" "$R/ms_stat_tp2/target" --auto --session "$S" 2>&1)
grep -qE '^ +> self_attn\.attn\.Tensor\.__mul__ +cos stats only +rel 0\.75 ' <<<"$out" ||
	fail "bisect walk: the culprit row does not say stats only"
grep -qE '^ +[0-9]+\. L2 +bad +\(auto\) cos stats only rel ' <<<"$out" || fail "bisect steps: no stats only"
"$DB_BIN" export "$S" --out "$DB_TMP/rep" >/dev/null 2>&1 || fail "export failed"
has "$(cat "$DB_TMP/rep/report.md")" "**Statistics only**: the dump holds Max, Min, Mean and Norm" \
	"report.md Severity"
has "$(cat "$DB_TMP/rep/report.md")" '| **`self_attn.attn.Tensor.__mul__`** | stats only | 0.75 | bug |' \
	"report.md walk row"
has "$(cat "$DB_TMP/rep/heatmap.svg")" "stats: statistics only" "SVG caption"
"$PY" - "$DB_TMP/rep/metrics.csv" <<'PY' || fail "CSV statistics_only column"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ok = [r for r in rows if r["status"] == "ok"]
assert ok and all(r["statistics_only"] == "1" for r in ok), ok[:1]
assert all(r["statistics_only"] == "" for r in rows if r["status"] != "ok")
PY

# bad input: one dump.json truncated, one with a shape that is not a list; the rest loads
B=$DB_TMP/bad
cp -r "$R/ms_stat_tp2/ref" "$B"
f1=$B/step0/rank1/dump.json
head -c 20000 "$f1" >"$f1.t" && mv "$f1.t" "$f1"
f0=$B/step0/rank0/dump.json
"$PY" - "$f0" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
# the first tensor shape of the first Module call's output: not a list
i = t.index('"Module.model.embed_tokens.Embedding.forward.0"')
j = t.index('"output"', i)
k = t.index('"shape": [', j)
t = t[:k] + '"shape": "12x64", "_was": [' + t[k + 10:]
open(sys.argv[1], "w").write(t)
PY
out=$("$DB_BIN" ls "$B" 2>&1)
has "$out" "step0/rank1/dump.json" "truncated file named"
has "$out" "truncated or not JSON" "truncated file said so"
has "$out" 'Embedding.forward.0"].output' "bad shape: JSON path named"
grep -q "ranks    0 " <<<"$out" || fail "rank 0 did not load beside the bad call: $out"
# a dump.json over the cap on JSON indexes (DUMPBISECT_JSON_MAX) is refused by name;
# the others load (rank 1's written compactly: 403 KB -> under 300 KB)
C=$DB_TMP/cap
cp -r "$R/ms_stat_tp2/ref" "$C"
"$PY" -c 'import json, sys; p = sys.argv[1]; json.dump(json.load(open(p)), open(p, "w"))' \
	"$C/step0/rank1/dump.json"
[ "$(stat -c %s "$C/step0/rank1/dump.json")" -lt 307200 ] || fail "cap: rank 1 not under 300K"
out=$(DUMPBISECT_JSON_MAX=300K XDG_CACHE_HOME="$DB_TMP/cache" "$DB_BIN" ls "$C" 2>&1)
has "$out" "step0/rank0/dump.json: msprobe dump.json of 393.7 KiB exceeds the 300 KiB cap on JSON dump indexes (DUMPBISECT_JSON_MAX raises it)" \
	"too large: the file named"
grep -q "rank1/dump.json: msprobe dump.json" <<<"$out" && fail "cap: rank 1 refused too"
grep -qE "^ranks +0 1, 1 [0-9]{3}$" <<<"$out" || fail "cap: rank 1 did not load: $out"
# the metrics cache knows the tensor files a dump.json names: the target's
# rotary_emb Tensor.__rpow__ .pt replaced by the reference's (dump.json untouched)
# is measured again (cos 1, bytes equal), never served the cached 0.99147525
M=$DB_TMP/pt_cache
cp -r "$R/ms_tensor_tp1" "$M"
stage=self_attn.rotary_emb.Tensor.__rpow__
cos_of() {
	XDG_CACHE_HOME="$DB_TMP/mcache" "$DB_BIN" compare --format json "$M/ref" "$M/target" |
		"$PY" -c 'import json, sys; print([p for p in json.load(sys.stdin)["pairs"] if p["stage"] == sys.argv[1] and not p.get("statistics_only")][0]["cos"])' "$stage"
}
c1=$(cos_of) || fail "pt cache: first compare"
c2=$(cos_of) || fail "pt cache: cached compare"
[ "$c1" = "$c2" ] && [ "${c1:0:10}" = 0.99147524 ] || fail "pt cache: before the edit: $c1 / $c2"
d=step0/proc0/dump_tensor_data/Tensor.__rpow__.6.forward.output.0.pt
cp "$M/ref/$d" "$M/target/$d"
c3=$(cos_of) || fail "pt cache: compare after the edit"
"$PY" -c "import sys; sys.exit(float(sys.argv[1]) != 1.0)" "$c3" || fail "pt cache: a rewritten .pt was served from the cache (cos $c3)"
finish t_msprobe
