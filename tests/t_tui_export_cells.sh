#!/bin/bash
# One source for every number (issue 11 item 9): on the demo, every heatmap
# cell of the screen (:save-display), of heatmap.svg, of report.md's
# heatmap table, and its pair in metrics.json and metrics.csv show the same
# value — in the all-ranks view (merged where sharded, else the worst rank)
# and for one rank. `dumpbisect export` of the saved session agrees too.
. "$DB_SRC/tests/tui/lib.sh"
PY=$(command -v python3) || { echo "python3 is needed to parse the SVG" >&2; exit 1; }

S=$T/work/s.yaml
mkdir -p "$T/work"
tui_run 140 40 --session "$S" demo/ref demo/target <<EOF
:save-display $T/all.screen
:export $T/exp_all
:rank 1
:save-display $T/r1.screen
:export $T/exp_r1
:rank all
EOF
check "the all-ranks screen has L8 attn_out 0.8618" grep_screen all '^ L8 +✗✗ 0\.8590 +✗✗ 0\.8697 +✗✗ 0\.8618 '

# cells SCREEN DIR: compares the screen with the export in DIR; prints what differs.
cells() {
	"$PY" - "$1" "$2" <<'EOF'
import csv, json, re, sys, xml.etree.ElementTree as ET
screen_file, d = sys.argv[1], sys.argv[2]
bad = []
def fmt(v):  # the screen's cos format (ui/base/draw.c fmt_cos)
    return "nan" if v != v else ("%.3f" % v if v < 0 else "%.4f" % v)

# the screen: header "cos  COL COL ...", rows "<label>  <glyph> <value> ..."
lines = open(screen_file, encoding="utf-8").read().split("\n")
head = next(i for i, l in enumerate(lines) if l.startswith("cos "))
screen = {}
for l in lines[head + 1:]:
    m = re.match(r"^.(L\d+|final_\w+|embed[\w.]*…?[\w.]*)\s", l)
    if not m:
        if screen:
            break
        continue
    screen[m.group(1)] = re.findall(r"-?\d+\.\d{3,4}|nan", l[17:])

# the SVG: title "L8 attn_out[ rank 1]: cos 0.86181865 ...", text = cos %.6f
ns = "{http://www.w3.org/2000/svg}"
svg = {}
for g in ET.parse(d + "/heatmap.svg").getroot().iter(ns + "g"):
    title = g.find(ns + "title").text
    m = re.match(r"^(\S+)(?: (\S+))?(?: rank (\d+))?: cos (\S+)", title)
    if not m:
        continue
    label, stage, rank, cos = m.group(1), m.group(2) or m.group(1), m.group(3), float(m.group(4))
    text = float(g.find(ns + "text").text)
    if abs(text - cos) > 1e-6:
        bad.append("svg %s: text %s, title %s" % (title, text, cos))
    svg.setdefault(label, []).append((stage, None if rank is None else int(rank), cos))

# report.md's heatmap table
md = open(d + "/report.md", encoding="utf-8").read()
if "\n## Heatmap\n" not in md:
    bad.append("report.md has no heatmap table")
table = (md.split("\n## Heatmap\n", 1) + [""])[1].split("\n## ", 1)[0]
report = {}
for l in table.splitlines():
    if l.startswith("| ") and not l.startswith("| |"):
        f = [x.strip() for x in l.strip("|").split("|")]
        report[f[0]] = [x.split()[0] for x in f[1:] if x]

pairs = json.load(open(d + "/metrics.json"))["pairs"]
rows = list(csv.DictReader(open(d + "/metrics.csv")))
def find_json(layer, stage, rank):
    hit = [p for p in pairs if p["layer"] == layer and p["stage"] == stage and
           (p["rank"] == rank if rank is not None else p["rank"] is None)]
    return hit[0]["cos"] if len(hit) == 1 else None
def find_csv(layer, stage, rank):
    hit = [r for r in rows if r["layer"] == ("" if layer is None else str(layer)) and
           r["stage"] == stage and r["rank"] == ("" if rank is None else str(rank))]
    return float(hit[0]["cos"]) if len(hit) == 1 else None

n = 0
for label, cells in svg.items():
    # a long label is cut in the middle on the screen: "embed…nput_ids"
    key = next((k for k in screen if k == label or
                ("…" in k and label.startswith(k.split("…")[0]) and
                 label.endswith(k.split("…")[1]))), None)
    if key is None:
        bad.append("%s: not on the screen" % label); continue
    if [fmt(c[2]) for c in cells] != screen[key]:
        bad.append("%s: svg %s, screen %s" % (label, [fmt(c[2]) for c in cells], screen[key]))
    if [fmt(c[2]) for c in cells] != report.get(label):
        bad.append("%s: svg %s, report.md %s" % (label, [fmt(c[2]) for c in cells], report.get(label)))
    layer = int(label[1:]) if re.match(r"^L\d+$", label) else None
    for stage, rank, cos in cells:
        j, c = find_json(layer, stage, rank), find_csv(layer, stage, rank)
        if j is None or abs(j - cos) > 1e-8 or c is None or abs(c - cos) > 1e-8:
            bad.append("%s %s rank %s: svg %s, json %s, csv %s" % (label, stage, rank, cos, j, c))
        n += 1
if n < 70:
    bad.append("only %d cells compared" % n)
for b in bad[:20]:
    print("  " + b)
sys.exit(1 if bad else 0)
EOF
}
check "all ranks: screen = svg = report.md = json = csv" cells "$T/all.screen" "$T/exp_all"
check "rank 1: screen = svg = report.md = json = csv" cells "$T/r1.screen" "$T/exp_r1"
check "the svg of rank 1 says so" grep -q ', rank 1</text>' "$T/exp_r1/heatmap.svg"

# The headless export of the saved session: the view it was left in (all).
"$DB_BIN" export "$S" --out "$T/exp_cli" >/dev/null 2>"$T/export.err"
check "export: $(cat "$T/export.err")" test -s "$T/exp_cli/heatmap.svg"
check "dumpbisect export = the screen" cells "$T/all.screen" "$T/exp_cli"
finish
