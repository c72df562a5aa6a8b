#!/bin/bash
# What a newcomer reads from the headless commands (issue 25):
# compare --diverging prints only the pairs that diverge (table and CSV)
# and the summary still counts every pair; the headline says "every rank"
# when every rank of the first divergent cell diverges (and the rank when
# only one does); the report says "every rank" the same way, and so do the
# per-pass lines of a tree with several passes (the ranks that differ are
# torch's: truth.py diff).
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
fresh_tmp
export XDG_CACHE_HOME=$DB_TMP/cache LC_ALL=C.UTF-8   # the glyphs below
R=$DB_FIXTURES/realdump/v2_tp2          # every rank bad at L2 attn_pre_o_proj
D=$DB_FIXTURES/demo                     # rank 1 alone scrambled at L7 attn.o_proj

# --diverging: table
"$DB_BIN" compare "$R/ref" "$R/target" >"$DB_TMP/all.txt"
[ $? -eq 1 ] || fail "compare: exit status"
"$DB_BIN" compare "$R/ref" "$R/target" --diverging >"$DB_TMP/div.txt"
[ $? -eq 1 ] || fail "compare --diverging: exit status"
grep -q ' ok$' "$DB_TMP/all.txt" || fail "the full table has ok rows (the fixture changed?)"
grep -qE '^✓ ' "$DB_TMP/div.txt" && fail "--diverging printed an ok row: $(grep -m1 '^✓ ' "$DB_TMP/div.txt")"
n_div=$(grep -cE ' (drift|algo|bug|scramble|ref_only|target_only|shape_mismatch|error|not_comparable)( |$)' "$DB_TMP/div.txt")
n_all_div=$(grep -cE '^(~|✗|‼|◁|▷|≠|‽)' "$DB_TMP/all.txt")
[ "$n_div" -ge 1 ] || fail "--diverging printed no diverging row"
[ "$(grep -cE '^(~|✗|‼|◁|▷|≠|‽)' "$DB_TMP/div.txt")" -eq "$n_all_div" ] \
	|| fail "--diverging lost diverging rows ($n_all_div in the full table)"
# the summary is the same, counting every pair
[ "$(grep -E '^[0-9]+ pairs: ' "$DB_TMP/div.txt")" = "$(grep -E '^[0-9]+ pairs: ' "$DB_TMP/all.txt")" ] \
	|| fail "--diverging changed the summary"
n_ok=$(grep -cE '^✓ ' "$DB_TMP/all.txt")
grep -qx "(--diverging: $n_ok pairs in the ok band not shown)" "$DB_TMP/div.txt" \
	|| fail "--diverging does not say how many ok pairs it left out ($n_ok)"
# CSV: only diverging rows, the header kept
"$DB_BIN" compare "$R/ref" "$R/target" --diverging --format csv >"$DB_TMP/div.csv"
head -1 "$DB_TMP/div.csv" | grep -q '^phase,pass,rank,layer,stage,' || fail "csv header"
awk -F, 'NR > 1 && $11 == "ok" && $19 == "ok"' "$DB_TMP/div.csv" | grep -q . \
	&& fail "--diverging csv has ok rows"
[ "$(($(wc -l <"$DB_TMP/div.csv") - 1))" -eq "$n_all_div" ] || fail "csv rows: $(wc -l <"$DB_TMP/div.csv")"
"$DB_BIN" compare "$R/ref" "$R/target" --diverging --format json >/dev/null 2>"$DB_TMP/err"
[ $? -eq 2 ] || fail "--diverging --format json: not a usage error"

# the headline: every rank, or the one rank
grep -q '^first divergence: L2 attn_pre_o_proj every rank (of 2) pass 0: cos ' "$DB_TMP/all.txt" \
	|| fail "headline: $(grep '^first divergence' "$DB_TMP/all.txt")"
"$DB_BIN" compare "$D/ref" "$D/target" >"$DB_TMP/demo.txt"
grep -q '^first divergence: L7 attn.o_proj rank 1 pass 0: ' "$DB_TMP/demo.txt" \
	|| fail "one bad rank: $(grep '^first divergence' "$DB_TMP/demo.txt")"

# the report: every rank
S=$DB_TMP/s.yaml
"$DB_BIN" bisect "$R/ref" "$R/target" --auto --session "$S" >/dev/null
"$DB_BIN" export "$S" --out "$DB_TMP/report" >/dev/null || fail "export"
grep -q '^Bad ranks: every rank (0 1)\.$' "$DB_TMP/report/report.md" \
	|| fail "report: $(grep '^Bad ranks' "$DB_TMP/report/report.md")"
grep -q 'the others are good' "$DB_TMP/report/report.md" && fail "report: 'the others are good' with none"
grep -qE "^\| - \| 0 \| L2 \| \`attn_pre_o_proj\` \| every rank \(of 2\): rank [01]'s tensors shown \| " \
	"$DB_TMP/report/report.md" || fail "report's divergence point: $(grep -A3 '^## Divergence point' "$DB_TMP/report/report.md")"
# the per-pass lines say it as the headline does (truth.py diff: steps_hook_tp2
# pass 3 differs first at L2 self_attn.rotary_emb.0 on ranks [0, 1];
# hy_hook_tp2_expert pass 0 at L6 mlp.experts on [0] only, pass 1 at L7
# self_attn.attn on [0, 1])
P=$DB_FIXTURES/realdump/steps_hook_tp2
"$DB_BIN" compare "$P/ref" "$P/target" >"$DB_TMP/steps.txt"
grep -qx '  pass 3: L2 self_attn.rotary_emb.0 every rank (of 2) \[bug\] (250 pairs)' "$DB_TMP/steps.txt" \
	|| fail "steps pass 3: $(grep '^  pass 3' "$DB_TMP/steps.txt")"
X=$DB_FIXTURES/realdump/hy_hook_tp2_expert
"$DB_BIN" compare "$X/ref" "$X/target" >"$DB_TMP/expert.txt"
grep -q '^  pass 0: L6 mlp.experts rank 0 \[' "$DB_TMP/expert.txt" \
	|| fail "expert pass 0 (one rank): $(grep '^  pass 0' "$DB_TMP/expert.txt")"
grep -q '^  pass 1: L7 self_attn.attn every rank (of 2) \[' "$DB_TMP/expert.txt" \
	|| fail "expert pass 1 (every rank): $(grep '^  pass 1' "$DB_TMP/expert.txt")"
grep -E '^  pass [0-9]+: .* rank [0-9] \[' "$DB_TMP/steps.txt" && fail "steps: a pass line names one rank"
need_python "to read compare's JSON"
"$DB_BIN" compare "$X/ref" "$X/target" --format json >"$DB_TMP/expert.json"
"$PY" - "$DB_TMP/expert.json" <<'PY' || fail "expert JSON: all_ranks_bad per pass"
import json, sys
ps = json.load(open(sys.argv[1]))["passes"]
got = [(p["first_divergence"]["layer"], p["first_divergence"]["all_ranks_bad"]) for p in ps]
sys.exit(0 if got == [(6, False), (7, True)] else print(got) or 1)
PY
finish t_newcomer_cli
