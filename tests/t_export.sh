#!/bin/bash
# export: a session of the demo fixture (bisected, one mark, two notes)
# becomes report.md (seed 000's outline with the real numbers), heatmap.svg
# (well-formed, a cell per pair, band colours, the mark outlined),
# metrics.json (the same pairs as `compare --format json`) and metrics.csv
# (the same as `compare --format csv`). Errors: corrupt session, unwritable
# output directory.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
fresh_tmp
need_python "to check JSON/SVG"

F=$DB_FIXTURES/demo
S=$DB_TMP/work/s.yaml
mkdir -p "$DB_TMP/work/notes"
"$DB_BIN" bisect "$F/ref" "$F/target" --auto --session "$S" >/dev/null
[ $? -eq 1 ] || fail "bisect: exit status"
# a mark (as the TUI writes it) and notes beside the session
sed -i 's/^marks: \[\]$/marks:\n- {phase: "", pass: "0", layer: 7, stage: attn_out, rank: 1, status: confirmed, text: "o_proj shard negated | rank 1", time: 1700000000}/' "$S"
grep -q 'status: confirmed' "$S" || fail "could not add the mark"
printf '# 01 — First look\n\nbody\n' >"$DB_TMP/work/notes/01_first_look.md"
printf '# 02 — Layer 7\n' >"$DB_TMP/work/notes/02_layer_7.md"
printf 'junk\n' >"$DB_TMP/work/notes/scratch.txt"

out=$("$DB_BIN" export "$S")
[ $? -eq 0 ] || fail "export: exit status ($out)"
R=$DB_TMP/work/report
for f in report.md heatmap.svg metrics.json metrics.csv; do
	[ -s "$R/$f" ] || fail "missing $R/$f"
	echo "$out" | grep -qx "$R/$f" || fail "export did not list $f"
done
ls "$R" | grep -q '\.tmp\.' && fail "temp files left in $R"

# report.md: the outline, in order, with the numbers
md=$R/report.md
want="## Summary ## Divergence point ## Severity ## Bisect log ## Marks ## Notes ## Heatmap ## Files "
got=$(grep '^## ' "$md" | tr '\n' ' ')
[ "$got" = "$want" ] || fail "report sections: $got"
grep -q '^first bad layer L7: hidden_out cos 1 -> 0.85899, rel 0.667\.$' "$md" || fail "report summary"
# the session recorded the auto-detected profile: not "given with --profile"
grep -q '^- profile: sglang-v1 (sglang-v1: recorded in the session)$' "$md" || fail "report profile: $(grep '^- profile' "$md")"
grep -q '^| - | 0 | L7 | `attn.o_proj` | 1 | `sglang_dump_1700000000.0/forward_pass_id=0___rank=1___name=attn.o_proj' "$md" \
	|| fail "report divergence point: $(grep -A3 '^## Divergence' "$md")"
grep -q '^Bad ranks: 1 (the others are good)\.$' "$md" || fail "report bad ranks"
grep -q '^rel_diff = 2: severe — completely wrong computation\. cos = -1\.00000000' "$md" || fail "report severity"
# a sign flip: cos -1, rel and the error it leaves 2, SQNR -20 log10(2) = -6.0 dB
grep -qE '^\| \*\*`attn\.o_proj`\*\* \| -1\.00000000 \| 2 \| scramble \| [0-9.e+-]+ \| 2 \| [0-9.e+-]+ \| -6\.0 \| \*\*introduces\*\* \(culprit\) \|$' "$md" \
	|| fail "report walk: $(grep 'attn.o_proj`\*\*' "$md")"
grep -q '^| 5 | L7 | bad | auto | 0.85898995 | 0.6665 | bug |$' "$md" || fail "report bisect log"
grep -q '^| - | 0 | L7 | `attn_out` | 1 | confirmed | o_proj shard negated \\| rank 1 |$' "$md" || fail "report marks"
grep -q "^- \[01_first_look.md\](\.\./notes/01_first_look.md) — First look$" "$md" || fail "report notes: $(grep 01_first "$md")"
# every link in report.md opens a file, from where report.md is
"$PY" - "$md" <<'EOF' || fail "report.md has links that do not resolve"
import os, re, sys, urllib.parse
md = sys.argv[1]
links = re.findall(r'\]\(([^)]+)\)', open(md, encoding="utf-8").read())
assert len(links) >= 3, links
bad = [l for l in links if not os.path.isfile(os.path.join(os.path.dirname(md), urllib.parse.unquote(l)))]
assert not bad, bad
EOF
grep -q "02_layer_7.md" "$md" || fail "report notes: 02"
grep -q "scratch.txt" "$md" && fail "report lists a non-note"

# heatmap.svg: well-formed; band colours; the mark outlined; numbers
"$PY" - "$R/heatmap.svg" <<'EOF' || fail "heatmap.svg"
import sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == ns + "svg", root.tag
cells = {}
for g in root.iter(ns + "g"):
    title = g.find(ns + "title").text
    rect = g.find(ns + "rect")
    cells[title.split(":")[0]] = (rect.get("fill"), rect.get("stroke"), title)
ok, bug = "#2e7d32", "#c62828"
assert cells["L6 hidden_out rank 0"][0] == ok or cells.get("L6 hidden_out rank 1", ("",))[0] == ok, cells.keys()
l7 = [v for k, v in cells.items() if k.startswith("L7 attn_out")]
assert l7 and l7[0][0] == bug and l7[0][1] == "#1565c0", l7
assert "confirmed: o_proj shard negated" in l7[0][2], l7
assert "cos 0.86232925" in l7[0][2], l7
assert sum(1 for v in cells.values() if v[0] == bug) >= 20
assert any(k.startswith("final_logits") for k in cells), cells.keys()
EOF

# metrics: the same pairs as compare prints
"$DB_BIN" compare "$F/ref" "$F/target" --profile sglang-v1 --format json >"$DB_TMP/cmp.json"
"$PY" - "$DB_TMP/cmp.json" "$R/metrics.json" <<'EOF' || fail "metrics.json differs from compare --format json"
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert a["pairs"] == b["pairs"], "pairs differ"
assert len(b["pairs"]) > 100
assert a["first_divergence"] == b["first_divergence"]
EOF
"$DB_BIN" compare "$F/ref" "$F/target" --profile sglang-v1 --format csv >"$DB_TMP/cmp.csv"
cmp -s "$DB_TMP/cmp.csv" "$R/metrics.csv" || fail "metrics.csv differs from compare --format csv"

# --out, and a second export replaces the files whole
"$DB_BIN" export "$S" --out "$DB_TMP/out2" >/dev/null || fail "export --out"
[ -s "$DB_TMP/out2/report.md" ] || fail "export --out: no report"
cmp -s "$DB_TMP/out2/metrics.csv" "$R/metrics.csv" || fail "export --out: different metrics"

# errors
printf 'dumpbisect_session: 1\nlayers: {a: 1}\n' >"$DB_TMP/bad.yaml"
"$DB_BIN" export "$DB_TMP/bad.yaml" >/dev/null 2>"$DB_TMP/e1"
[ $? -eq 2 ] || fail "corrupt session: want exit 2"
grep -q "bad.yaml:2:9: 'layers' must be a list" "$DB_TMP/e1" || fail "corrupt session: $(cat "$DB_TMP/e1")"
"$DB_BIN" export "$S" --out /proc/dumpbisect_export >/dev/null 2>"$DB_TMP/e2"
[ $? -eq 2 ] || fail "unwritable --out: want exit 2"
grep -q "/proc/dumpbisect_export: cannot create the export directory" "$DB_TMP/e2" || fail "unwritable: $(cat "$DB_TMP/e2")"
"$DB_BIN" export >/dev/null 2>&1
[ $? -eq 2 ] || fail "no session: want exit 2"

# accumulated drift: the report gives the analysis' verdict, never "found"
D=$DB_FIXTURES/bisect/drift
"$DB_BIN" bisect "$D/ref" "$D/target" --auto --session "$DB_TMP/drift.session" >/dev/null 2>&1
"$DB_BIN" export "$DB_TMP/drift.session" --out "$DB_TMP/drift_report" >/dev/null 2>&1 ||
	fail "drift: export failed"
R=$(cat "$DB_TMP/drift_report/report.md" 2>/dev/null)
has "$R" "Verdict: **accumulated-drift** — accumulated drift: no single layer stands out" "drift report"
grep -q 'Bisect state: \*\*found\*\*' <<<"$R" && fail "drift report says found"

finish t_export
