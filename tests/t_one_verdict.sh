#!/bin/bash
# One verdict everywhere (issue 33): compare (text and JSON), bisect (JSON),
# export (report.md) and the workbench (scripted keys: f, the headline and the
# status line) are run on the same trees and must name the same phase, pass,
# layer, stage and ranks with the same word. Trees (truth in the realdump
# cases files, from the bug, not from dumpbisect):
#   v33_hook_tp2     softmax_scale L6 self_attn.attn, TP 2, every rank (gen.sh)
#   steps_v1_tp1v2   decode_pos L6 from decode step 3: pass 3 drifts, pass 4 is
#                    worse; the headline's pass is its divergence's (pass 3)
#   noise_hook       rope_base L1 against a TP 2 noise run: "beyond noise"
#                    everywhere, never a band's word beside it
#   v33_alone_batch  the prompt alone vs a batch of 4 whose L7 o_proj splits K for
#                    every slot: "bits differ" everywhere, never the band's "ok"
#   v33_alone_slot0  the same with split_k in slot 0 only (L6 down_proj)
# Then the ways in: two files, two rank folders and the trees agree; a
# truncated file is an error of that file under its real stages, the other
# rank still compared, nothing called a layout change; pairs not compared are
# never "every pair ok"; slots are judged bitwise in the workbench and compared
# rank x slot on a TP 2 tree; a tree of statistics only opens on rel; msprobe step
# folders name their ranks; a forced phase says only what was checked.
. "$DB_SRC/tests/tui/lib.sh"
PY=${PY:-python3}
R=realdump
H=$R/v33_hook_tp2

# surfaces CASE WANT ARGS...: every surface of one comparison; WANT is
# "layer stage pass ranks word" (ranks: all or a list like 1)
surfaces() {
	local case=$1 want=$2
	shift 2
	local d=$T/$case
	mkdir -p "$d"
	(cd "$DB_FIXTURES" && "$DB_BIN" compare --no-cache "$@" >"$d/compare.txt" 2>"$d/err"
	 "$DB_BIN" compare --no-cache --format json "$@" >"$d/compare.json" 2>>"$d/err"
	 "$DB_BIN" bisect --no-cache --auto --format json "$@" >"$d/bisect.json" 2>>"$d/err"
	 "$DB_BIN" bisect --no-cache --auto --session "$d/s.yaml" "$@" >/dev/null 2>>"$d/err"
	 "$DB_BIN" export --no-cache --out "$d/out" "$d/s.yaml" >/dev/null 2>>"$d/err") || true
	tui_run 170 30 --no-cache "$@" <<EOF
f
:save-display $d/tui.screen
EOF
	check "$case: every surface names $want" "$PY" - "$d" "$want" <<'PY'
import json, re, sys
d, want = sys.argv[1], sys.argv[2].split(" ", 4)
bad = []
def same(what, got):
    w = {"layer": want[0], "stage": want[1], "pass": want[2], "ranks": want[3], "word": want[4]}
    for k, v in got.items():
        if str(v) != w[k]:
            bad.append("%s: %s %r, want %r" % (what, k, v, w[k]))
def ranks_of(words):
    return "all" if re.search(r"every rank|merged ranks", words) else \
        ",".join(re.findall(r"rank (\d+)", words))
# compare, text: the headline and the pass line above it
txt = open(d + "/compare.txt").read()
m = re.search(r"^first divergence: L(\d+) (\S+) (.*?) pass (\S+)(?: phase \S+)?: .*?\[([^\]]+)\]", txt, re.M)
if not m:
    bad.append("compare: no headline")
else:
    same("compare", {"layer": m[1], "stage": m[2], "pass": m[4], "ranks": ranks_of(m[3]), "word": m[5]})
    fp = re.search(r"^first diverging pass: (\S+)", txt, re.M)
    if fp and fp[1] != m[4]:
        bad.append("compare: first diverging pass %s above a headline in pass %s" % (fp[1], m[4]))
for line in txt.splitlines():     # the table's rows (the summary counts both)
    if " drift" in line and "beyond noise" in line and " pairs: " not in line:
        bad.append("compare: drift and beyond noise in one row: " + line)
# compare, JSON
j = json.load(open(d + "/compare.json"))
p = j["pairs"][j["first_divergence"]]
same("compare json", {"layer": p["layer"], "stage": p["stage"], "pass": p["pass"], "word": p["word"]})
if j.get("first_diverging_pass") and str(j["first_diverging_pass"]["pass"]) != str(p["pass"]):
    bad.append("compare json: first_diverging_pass %r, its divergence in pass %r" % (j["first_diverging_pass"], p["pass"]))
if any(q.get("noise") == "beyond" and q["word"] != "beyond noise" for q in j["pairs"]):
    bad.append("compare json: a pair beyond noise worded otherwise")
# bisect
b = json.load(open(d + "/bisect.json"))
cul = [w for w in b["walk"] if w["culprit"]]
same("bisect", {"layer": b["first_bad_layer"], "stage": cul[0]["stage"] if cul else None,
                "pass": b["pass"], "word": cul[0]["word"] if cul else None,
                "ranks": "all" if b["all_ranks_bad"] and len(b["bad_ranks"]) != 1
                else ",".join(map(str, b["bad_ranks"]))})
# export: report.md's divergence point and its word
rep = open(d + "/out/report.md").read()
m = re.search(r"^\| [^|]+ \| (\S+) \| L(\d+) \| `([^`]+)` \| ([^|]+) \|", rep, re.M)
w = re.search(r"(?:band|verdict) \*\*([^*]+)\*\*", rep)
if not m or not w:
    bad.append("report.md: no divergence point or word")
else:
    rk = m[4].strip()
    same("report", {"layer": m[2], "stage": m[3], "pass": m[1], "word": w[1],
                    "ranks": "all" if rk == "merged" or "every rank" in rk else rk.split(":")[0]})
# the workbench: f, the headline, the pass selector, the status line
scr = open(d + "/tui.screen").read().splitlines()
hp = next((re.search(r"pass \[(\S+)\]", l) for l in scr if re.search(r"pass \[\S+\]", l)), None)
hl = next((l for l in scr if l.startswith("▸ first divergence ")), "")
m = re.match(r"▸ first divergence L(\d+) (\S+) (.*?) (ok|drift|algo|bug|scramble|within noise|beyond noise|bits differ) ", hl)
if not m or not hp:
    bad.append("workbench: no headline / pass: %r" % hl)
else:
    same("workbench", {"layer": m[1], "stage": m[2], "pass": hp[1], "ranks": ranks_of(m[3]), "word": m[4]})
st = [l for l in scr if re.match(r"^(✗✗|✗|~|‼|✓|≢) ", l)]
if not st or want[4] not in st[-1]:
    bad.append("workbench: the status line after f does not say %r: %r" % (want[4], st[-1:]))
print("\n".join(bad)) if bad else None
sys.exit(1 if bad else 0)
PY
}

surfaces hook "6 self_attn.attn 0 all bug" $H/ref $H/target
surfaces steps "6 attn_pre_o_proj 3 all drift" $R/steps_v1_tp1v2/ref $R/steps_v1_tp1v2/target
surfaces noise "1 self_attn.rotary_emb.0 0 all beyond noise" --noise $R/noise_hook/noise \
	$R/noise_hook/ref $R/noise_hook/target
# the prompt run alone against it inside a batch of 4, no --slots: the batch slot
# the tool finds is judged bitwise once the first layer (L5 here) is bit-identical
# (torch.equal, v33_alone_batch in gen.sh: L5-L6 equal in all 4 slots, L7 o_proj not)
surfaces alone "7 self_attn.o_proj 0 0 bits differ" $R/v33_alone_batch/ref $R/v33_alone_batch/target
# the bug in ONE slot, slot 0, the block the prompt matches first: L6 down_proj
# (torch.equal: slots 1-3 equal to the prompt alone everywhere, slot 0 from L6
# mlp.down_proj on); the slot is chosen for the pass, not pair by pair
surfaces slot0 "6 mlp.down_proj 0 0 bits differ" $R/v33_alone_slot0/ref $R/v33_alone_slot0/target
# the bug in the last slot of a batch of 3 (slot 2, L5 o_proj; torch: slots 0-1 equal,
# slot 2 max |diff| 5.96e-7): measured on slot 2's rows, and every surface names them
S2=$R/v33_alone_slot2
surfaces slot2 "5 self_attn.o_proj 0 0 bits differ" $S2/ref $S2/target
check "slot2: compare's row names slot 2's rows" \
	grep -qE '^[^ ]+ +0 +5 +0 +self_attn\.o_proj .* bits differ  hint batch slot: target dim 0 \[24:36\]$' "$T/slot2/compare.txt"
check "slot2: the workbench headline names them too" \
	grep -qE '^▸ first divergence L5 self_attn\.o_proj .*batch slot: target dim 0 \[24:36\]' "$T/slot2/tui.screen"
tui_run 130 30 --no-cache $S2/ref $S2/target <<EOF
f
s
:save-display $T/slot2s.screen
EOF
check "slot2: the cell's sub-stages: bits off, not a ✓ ok" bash -c \
	'grep -qE "^▸ first whose bits differ \(judged bitwise\): L5 self_attn\.o_proj " "$1" &&
	 grep -qE "^▸ +1 +self_attn\.o_proj .* ≢ bits differ " "$1"' _ "$T/slot2s.screen"
check "alone: the heatmap's L7 row shows bits off (≢), L6 ✓" bash -c \
	'grep -qE "^(▸| )L7 .*≢" "$1" && grep -qE "^ L6( +✓  1\.0000)+$" "$1"' _ "$T/alone/tui.screen"
out=$( (cd "$DB_FIXTURES" && "$DB_BIN" bisect --no-cache --auto $R/v33_alone_slot0/ref \
	$R/v33_alone_slot0/target 2>&1) || true)
check "slot0: bisect's text names L6 and its culprit, bits differ" bash -c \
	'grep -q "^first bad layer L6: " <<<"$1" && grep -qE "^  > mlp\.down_proj .* bits differ .* introduces$" <<<"$1"' _ "$out"
check "slot0: bisect's steps word L5 and L6 bitwise" bash -c \
	'grep -qE "^ +[0-9]+\. L5 +good +\(auto\) .* bit-identical$" <<<"$1" &&
	 grep -qE "^ +[0-9]+\. L6 +bad +\(auto\) .* bits differ$" <<<"$1"' _ "$out"
check "slot0: the block with the bug is named (slot 0's rows)" \
	grep -qF "  hint:     batch slot: target dim 0 [0:12]" <<<"$out"

# the ways in: trees, rank folders, files (each file's folder names its rank and pass)
headline() { # ARGS...: compare's headline, the profile line first
	(cd "$DB_FIXTURES" && "$DB_BIN" compare --no-cache "$@" 2>&1 | grep -E '^(profile|first divergence:)')
}
bisected() { (cd "$DB_FIXTURES" && "$DB_BIN" bisect --no-cache --auto "$@" 2>&1 | head -1); }
for r in 0 1; do
	F=TP${r}_PP0_Rank${r}_pid0
	for w in "$F" "$F/Pass00000.pt"; do
		out=$(headline "$H/ref/$w" "$H/target/$w")
		check "$w: the hook profile, named by the folder around it" \
			grep -qE "^profile sglang-hook \(.*named with the folder around it: $F/\)" <<<"$out"
		check "$w: the trees' place, rank $r" \
			grep -qE "^first divergence: L6 self_attn\.attn rank $r pass 0: .*\[bug\]$" <<<"$out"
		check "$w: bisect agrees" grep -qE "^first bad layer L6: " <<<"$(bisected "$H/ref/$w" "$H/target/$w")"
	done
done

# a half-written file: a copy of the tree with rank 1's Pass00000.pt cut in half
cp -r "$DB_FIXTURES/$H" "$T/cut"
f=$T/cut/target/TP1_PP0_Rank1_pid0/Pass00000.pt
truncate -s $(($(stat -c %s "$f") / 2)) "$f"
"$DB_BIN" compare --no-cache --format json "$T/cut/ref" "$T/cut/target" >"$T/cut.json" || true
check "a truncated file: an error of that file under its real stages; rank 0 compared" \
	"$PY" - "$T/cut.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
ps = j["pairs"]
errs = [p for p in ps if p["status"] == "error"]
bad = []
# rank 1's pairs, and the merged tensors rank 1's shard is part of
if not errs or any(p["rank"] not in (1, None) or p["pass"] != 0 for p in errs):
    bad.append("errors: %r" % [(p["rank"], p["pass"], p["stage"]) for p in errs][:5])
if any("TP1_PP0_Rank1_pid0/Pass00000.pt" not in p["error"] for p in errs):
    bad.append("an error that does not name the truncated file")
if any(p["stage"] == "hidden_out" for p in errs):
    bad.append("an error under a stage the tree does not have (hidden_out)")
if not any(p["stage"] == "self_attn.attn" and p["layer"] == 6 for p in errs):
    bad.append("no error named L6 self_attn.attn")
if not all(p["target_name"].startswith("TP1_PP0_Rank1_pid0/Pass00000.pt:") for p in errs if p["rank"] == 1):
    bad.append("an error not named by the file and its entry")
lay = [p for p in ps if p["status"] in ("not_comparable", "shape_mismatch")]
if lay:
    bad.append("%d pairs called a layout change: %r" % (len(lay), (lay[0]["stage"], lay[0].get("reason"))))
r0 = [p for p in ps if p["rank"] == 0 and p["layer"] == 6 and p["stage"] == "self_attn.attn" and p["pass"] == 0]
if not r0 or r0[0]["status"] != "ok" or r0[0]["word"] != "bug":
    bad.append("rank 0's L6 self_attn.attn not compared: %r" % r0[:1])
print("\n".join(bad)) if bad else None
sys.exit(1 if bad else 0)
PY

# pairs not compared are never "ok": a null run TP 1 vs TP 2 with fused per-rank qkv
N=$R/null_hook
out=$( (cd "$DB_FIXTURES" && "$DB_BIN" compare --no-cache "$N/ref" "$N/target") || true)
check "null: no 'every pair' beside pairs not compared" \
	grep -qE '^no divergence among the pairs compared: [0-9]+ ok; [0-9]+ not comparable: fused per-rank output across layouts \(1 vs 2 ranks\) \([0-9]+, e\.g\. L0 ' <<<"$out"
check "null: never 'every pair is in the ok band'" bash -c '! grep -q "every pair is in the ok band" <<<"$1"' _ "$out"
(cd "$DB_FIXTURES" && "$DB_BIN" compare --no-cache --format json "$N/ref" "$N/target" >"$T/null.json") || true
check "null JSON: what was compared, each reason counted" "$PY" - "$T/null.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
c = j["compared"]
nc = [p for p in j["pairs"] if p["status"] == "not_comparable"]
ok = c["not_comparable"] == len(nc) > 0 and sum(r["pairs"] for r in c["reasons"]) == len(nc) \
    and all(p.get("reason") for p in nc) and j["no_divergence"].startswith("no divergence among the pairs compared")
sys.exit(0 if ok else 1)
PY

# slots: bitwise is the verdict in the workbench too (the ranks view of the cell)
tui_run 130 30 --no-cache --slots 4 realdump/slots_hook_down/target <<EOF
f
a
:save-display $T/slots.screen
EOF
check "slots view: the bad slot is bad, not ok" grep_screen slots '^▸ 1 of 3 slots bad: '
check "slots view: its row says bits differ" grep_screen slots '^▸ +1 .* bits differ +◀ bad alone$'
check "slots view: the others bit-identical" grep_screen slots '^ +2 .* ✓ bit-identical$'

# --slots on a tree of two ranks: slots compared within each rank, rank x slot
# (v33_slots_v2_tp2, truth from torch.equal: slot 2 of both ranks at L4 attn_output)
S=$R/v33_slots_v2_tp2/target
out=$( (cd "$DB_FIXTURES" && "$DB_BIN" compare --no-cache --slots 4 "$S" 2>&1) || true)
check "slots over ranks: compared, not refused" \
	grep -qE '^first divergence: L4 attn_output rank 0 slot 2 pass 1: .*\[bits differ\]$' <<<"$out"
check "slots over ranks: the table's rank/slot column" grep -qE '^≢ +1 +4 +1/2 +attn_output ' <<<"$out"
out=$( (cd "$DB_FIXTURES" && "$DB_BIN" bisect --no-cache --auto --slots 4 "$S" 2>&1) || true)
check "slots over ranks: bisect names rank and slot" \
	grep -qF "  bad slots: rank 0 slot 2, rank 1 slot 2 (the other slots are good)" <<<"$out"

# --slots on ONE rank folder: named with the folders around it (compare/lift.c),
# it reads as the whole tree restricted to that rank (truth as above, cases_slots.tsv)
out=$( (cd "$DB_FIXTURES" && "$DB_BIN" compare --no-cache --slots 4 \
	$R/slots_hook_down/target/TP0_PP0_Rank0_pid0 2>&1) || true)
check "slots on a hook rank folder: lifted to the hook profile" \
	grep -qE '^profile sglang-hook .*named with the folder around it: TP0_PP0_Rank0_pid0/\)$' <<<"$out"
check "slots on a hook rank folder: the tree's first divergence" \
	grep -qE '^first divergence: L3 mlp\.down_proj slot 1 pass 1: .*\[bits differ\]$' <<<"$out"
mkdir -p "$T/v2r1/dump_20260101_000000_000000"
cp "$DB_FIXTURES"/$S/dump_20260101_000000_000000/*___rank=1___* "$T/v2r1/dump_20260101_000000_000000/"
out=$("$DB_BIN" compare --no-cache --slots 4 "$T/v2r1/dump_20260101_000000_000000" 2>&1 || true)
check "slots on a v2 rank-1 folder: rank 1's slot 2 at L4 attn_output" \
	grep -qE '^first divergence: L4 attn_output slot 2 pass 1: .*\[bits differ\]$' <<<"$out"

# a tree of statistics only opens on the metric it has (rel), not cos (nan)
tui_run 130 24 --no-cache realdump/ms_stat_tp2/ref realdump/ms_stat_tp2/target <<EOF
:save-display $T/stats.screen
EOF
check "statistics only: the heatmap opens on rel" grep_screen stats '  metric rel$'
check "statistics only: no nan cell" bash -c '! grep -q " nan" "$1"' _ "$T/stats.screen"

# msprobe: a step folder is named by its enclosing folders; bisect names the ranks
out=$( (cd "$DB_FIXTURES" && "$DB_BIN" bisect --no-cache --auto $R/ms_stat_tp2/ref/step0 \
	$R/ms_stat_tp2/target/step0 2>&1) || true)
check "msprobe step folders: the first bad layer and its ranks" \
	bash -c 'grep -q "^first bad layer L2: " <<<"$1" && grep -qE "^  bad ranks: 0 1 \(every rank" <<<"$1"' _ "$out"

# a forced phase says only what was checked
out=$( (cd "$DB_FIXTURES" && "$DB_BIN" bisect --no-cache --auto --phase fwd_bwd.grad \
	$R/miles_grad_tp1/ref $R/miles_grad_tp1/target 2>&1 | head -1) || true)
check "--phase fwd_bwd.grad: the forward phases were not checked" \
	grep -qF "only this phase was checked (--phase): the forward phases were not" <<<"$out"
check "--phase fwd_bwd.grad: never 'the forward phases are good'" \
	bash -c '! grep -q "forward phases are good" <<<"$1"' _ "$out"
finish
