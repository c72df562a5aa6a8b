#!/bin/bash
# Finding the step (issue 22): a decode-only bug leaves the prefill and the first
# decode steps bit-identical and breaks step k. On the real decode-step trees
# (tests/fixtures/realdump/steps_*, truth in cases_steps.tsv: from the bug and torch,
# float64 bitwise) bisect must start at the first pass that diverges and say why in
# text and JSON; --pass still overrides and then says it looked at one pass only;
# compare prints one line per pass and the first diverging pass (text and JSON);
# a null tree (two correct runs) is "nothing bad" over all its passes.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
fresh_tmp
need_python "to read the JSON"
R=$DB_FIXTURES/realdump
S=$R/steps_v2_tp1     # decode_pos L4 from decode step 2: step=0,1 bit-identical

# bisect: the pass, and why (passes 0-1 bit-identical per truth.py)
expect 1 "bisect steps_v2_tp1" "$DB_BIN" bisect "$S/ref" "$S/target" --auto
has "$out" "first bad layer L4" "bisect text"
has "$out" "  pass:     2 (passes 0-1 bit-identical at L5 mlp_output; pass 2 is the first that diverges)" "bisect pass line"
expect 1 "bisect json" "$DB_BIN" bisect "$S/ref" "$S/target" --auto --format json
"$PY" - "$out" <<'PY' || fail "bisect JSON (above)"
import json, sys
j = json.loads(sys.argv[1])
want = {"pass": 2, "phase": None, "first_bad_layer": 4, "first_bad_substage": "attn_pre_o_proj"}
bad = ["%s: %r, want %r" % (k, j.get(k, "<absent>"), v) for k, v in want.items() if j.get(k, "<absent>") != v]
if "pass 2 is the first that diverges" not in (j.get("pass_why") or ""):
    bad.append("pass_why %r" % j.get("pass_why"))
print("\n".join(bad)) if bad else None
sys.exit(1 if bad else 0)
PY

# --pass overrides; a "nothing bad" over one of several passes says so
expect 0 "bisect --pass 0" "$DB_BIN" bisect "$S/ref" "$S/target" --auto --pass 0
has "$out" "nothing bad in pass 0 (of 4 passes; --pass chose it)" "--pass 0 summary"
has "$out" "pass 0 as given (--pass, or the session's)" "--pass 0 why"
expect 1 "bisect --pass 3" "$DB_BIN" bisect "$S/ref" "$S/target" --auto --pass 3 --format json
"$PY" -c 'import json,sys; j=json.loads(sys.argv[1]); sys.exit(not (j["pass"] == 3 and j["first_bad_layer"] == 4))' "$out" ||
	fail "--pass 3: $out"

# a null tree: two correct runs (TP1 vs TP2) over 4 passes
N=$R/null_steps_v2
expect 0 "bisect null_steps_v2" "$DB_BIN" bisect "$N/ref" "$N/target" --auto
has "$out" "nothing bad in pass 0 (of 4 passes, none diverges)" "null summary"

# compare: one line per pass, then the first diverging pass
expect 1 "compare steps_v2_tp1" "$DB_BIN" compare "$S/ref" "$S/target"
has "$out" "  pass 0: bit-identical (22 pairs)" "compare pass 0"
has "$out" "  pass 1: bit-identical (22 pairs)" "compare pass 1"
has "$out" "  pass 2: L4 attn_pre_o_proj rank 0 [" "compare pass 2"
has "$out" "first diverging pass: 2 (the 2 before it bit-identical)" "compare first pass"
expect 1 "compare json" "$DB_BIN" compare "$S/ref" "$S/target" --format json
"$PY" - "$out" <<'PY' || fail "compare JSON (above)"
import json, sys
j = json.loads(sys.argv[1])
ps = j.get("passes") or []
bad = []
if [p["pass"] for p in ps] != [0, 1, 2, 3]:
    bad.append("passes %r" % [p.get("pass") for p in ps])
elif [p["bit_identical"] for p in ps] != [True, True, False, False]:
    bad.append("bit_identical %r" % [p["bit_identical"] for p in ps])
elif ps[2]["first_divergence"]["layer"] != 4 or j["pairs"][ps[2]["first_divergence"]["pair"]]["stage"] != "attn_pre_o_proj":
    bad.append("pass 2 first divergence %r" % ps[2]["first_divergence"])
if j.get("first_diverging_pass") != {"phase": None, "pass": 2}:
    bad.append("first_diverging_pass %r" % j.get("first_diverging_pass"))
print("\n".join(bad)) if bad else None
sys.exit(1 if bad else 0)
PY
# ref TP1 vs target TP2: pass 3 only drifts, yet passes 1-2 stayed ok
V=$R/steps_v1_tp1v2
expect 1 "compare steps_v1_tp1v2" "$DB_BIN" compare "$V/ref" "$V/target"
has "$out" "first diverging pass: 3" "tp1v2 first pass"
# one pass: no per-pass lines
expect 1 "compare demo" "$DB_BIN" compare "$DB_FIXTURES/demo/ref" "$DB_FIXTURES/demo/target"
grep -q "^passes (first divergence" <<<"$out" && fail "one-pass tree printed per-pass lines"
finish t_steps
