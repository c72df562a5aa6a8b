#!/bin/bash
# Root-cause hints (issue 13 part 4) on the torch-made cases of
# tests/fixtures/gen_hints.py: compare --format json must give every pair
# the hint expected.json states (kind and fields; the scale factor as torch
# computes Σxy/Σxx in float64) and null on every other pair — the clean
# and the noisy (bf16, 2 % noise, 1 % scale drift) cases have none at all.
# The table names the hint on the pair's line; export's report.md too.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
fresh_tmp
need_python "to compare JSON"
H=$DB_FIXTURES/hints
for c in scale sign_flip rows_permuted shift transposed partial_sum partial_sum_tp1v2 zeros nan_origin \
	inputs_differ clean noisy; do
	[ -d "$H/$c" ] || { fail "no fixture $c"; continue; }
	"$DB_BIN" compare "$H/$c/ref" "$H/$c/target" --format json >"$DB_TMP/$c.json" 2>"$DB_TMP/err"
	rc=$?
	want=1
	# partial_sum_tp1v2: per-rank partials against one full tensor are a
	# layout, not a bug (nothing after them diverges): not comparable
	[ "$c" = clean ] || [ "$c" = partial_sum_tp1v2 ] && want=0
	[ "$rc" = "$want" ] || fail "$c: compare exit $rc, want $want: $(head -3 "$DB_TMP/err")"
	msg=$("$PY" - "$H/$c/expected.json" "$DB_TMP/$c.json" <<'PYEOF'
import json, sys
exp = json.load(open(sys.argv[1]))
got = json.load(open(sys.argv[2]))
bad = []
by = {}
for p in got["pairs"]:
    if p["merged"]:
        continue
    by[(p["layer"], p["stage"], p["rank"] or 0)] = p
hints = 0
for e in exp["pairs"]:
    p = by.get((e["layer"], e["stage"], e["rank"]))
    if p is None:
        bad.append("no pair %r" % ((e["layer"], e["stage"], e["rank"]),))
        continue
    if "hint" not in p:
        bad.append("pair without a hint key")
        continue
    h, w = p["hint"], e["hint"]
    where = "L%s %s rank %s" % (e["layer"], e["stage"], e["rank"])
    if "status" in e and p["status"] != e["status"]:
        bad.append("%s: status %s, want %s" % (where, p["status"], e["status"]))
    if w is None:
        if h is not None:
            bad.append("%s: a false hint %r" % (where, h))
        continue
    hints += 1
    if h is None or set(h) != set(w):
        bad.append("%s: hint %r, want %r" % (where, h, w))
        continue
    for k, v in w.items():
        if isinstance(v, float):
            if abs(h[k] - v) > 1e-9 * max(1, abs(v)):
                bad.append("%s: %s %r, torch says %r" % (where, k, h[k], v))
        elif h[k] != v:
            bad.append("%s: %s %r, want %r" % (where, k, h[k], v))
# every pair of the tree is in expected.json: no hint anywhere else
if len(by) != len(exp["pairs"]):
    bad.append("%d pairs, expected.json lists %d" % (len(by), len(exp["pairs"])))
print("; ".join(bad))
PYEOF
)
	[ -z "$msg" ] || fail "$c: $msg"
done

# a real bf16-vs-fp32 run (tests/fixtures/bisect/drift, every layer drifts):
# not one hint
expect 1 "drift" "$DB_BIN" compare "$DB_FIXTURES/bisect/drift/ref" \
	"$DB_FIXTURES/bisect/drift/target" --format json
n=$(grep -o '"hint": {' <<<"$out" | wc -l)
[ "$n" = 0 ] || fail "bisect/drift: $n false hints"
grep -q '"severity": "drift"' <<<"$out" || fail "bisect/drift does not drift"

# the table names the hint on the pair's line
expect 1 "table" "$DB_BIN" compare "$H/scale/ref" "$H/scale/target"
has "$out" "hint scale: target" "table line of the scaled pair"
expect 1 "table, shift" "$DB_BIN" compare "$H/shift/ref" "$H/shift/target"
grep -E '^.*1 +0 +attn_out .*hint shift: .*by 1\)$' <<<"$out" >/dev/null ||
	fail "table: no shift hint on L1 attn_out: $(grep hint <<<"$out")"
expect 1 "table, noisy" "$DB_BIN" compare "$H/noisy/ref" "$H/noisy/target"
grep -q "drift" <<<"$out" || fail "the noisy case does not drift (it should test drift)"
! grep -q "  hint " <<<"$out" || fail "noisy: a hint on drift: $(grep "  hint " <<<"$out")"
# CSV: the kind in the last column
expect 1 "csv" "$DB_BIN" compare "$H/zeros/ref" "$H/zeros/target" --format csv
[ "$(grep -c ',zeros$' <<<"$out")" = 1 ] || fail "csv: not one pair ending in ,zeros"
[ "$(head -1 <<<"$out" | awk -F, '{print $NF}')" = hint ] || fail "csv: no hint column"

# report.md (export) names the hint at the divergence point and lists it
W=$DB_TMP/work
mkdir -p "$W"
expect 0 "session for the export" "$DB_BIN" bisect start "$H/transposed/ref" \
	"$H/transposed/target" --session "$W/s.yaml"
expect 0 "export" "$DB_BIN" export "$W/s.yaml" --out "$W/report"
has "$(cat "$W/report/report.md")" "Hint: **transposed: target ≈ ref.permute(1, 0)**." "report.md"
has "$(cat "$W/report/report.md")" "| - | 0 | L1 | \`attn_out\` | 0 | transposed: target ≈ ref.permute(1, 0) |" \
	"report.md hint table"
grep -q '"hint": {"kind": "transposed", "perm": \[1, 0\]}' "$W/report/metrics.json" ||
	fail "metrics.json has no transposed hint"

# a note written in the workbench on the first divergence carries the hint
printf 'f\nw\nScaled attn<Enter>\nQ\n' >"$W/keys"
(cd "$W" && env DUMPBISECT_SCRIPT="$W/keys" DUMPBISECT_WATCHDOG=30 TERM=xterm LINES=30 \
	COLUMNS=100 "$DB_BIN" --session "$W/n.yaml" "$H/scale/ref" "$H/scale/target" \
	</dev/null >/dev/null 2>"$W/err") || fail "workbench: $(head -3 "$W/err")"
note=$(cat "$W"/notes/01_scaled_attn.md 2>/dev/null)
[ -n "$note" ] || fail "the workbench wrote no note"
has "$note" "- hint on \`attn_out\` rank 0: **scale: target ≈ 1.999 × ref**" "the note's Data"

# bisect names the culprit's hint (text and JSON): the demo's sign flip
expect 1 "bisect" env LANG=C.UTF-8 LC_ALL=C.UTF-8 "$DB_BIN" bisect "$DB_FIXTURES/demo/ref" \
	"$DB_FIXTURES/demo/target" --auto
has "$out" "  hint:     sign_flip: target ≈ -ref" "bisect text"
expect 1 "bisect json" "$DB_BIN" bisect "$DB_FIXTURES/demo/ref" "$DB_FIXTURES/demo/target" \
	--auto --format json
has "$out" '"first_bad_hint": {"kind": "sign_flip", "factor": -0.9999999' "bisect json"
finish t_hints
