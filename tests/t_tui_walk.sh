#!/bin/bash
# Issue 22 (the walk in the views and the report): in the bisect's culprit
# layer the sub-stage view and report.md show the core's intra-layer walk:
# every stage's error in and out, amplification, SQNR and role, the stage
# that could not be compared in its place with its reason, and "at or
# before". Truth from the bug (tests/fixtures/realdump/cases_steps.tsv):
# steps_hy_hook_tp1v2, decode_pos in L7 self_attn.rotary_emb from pass 3;
# ref TP1 vs target TP2, so the fused qkv_proj before it cannot be compared.
. "$DB_SRC/tests/tui/lib.sh"
H=realdump/steps_hy_hook_tp1v2

# b, five accepted verdicts (final, L3, L5, L6, L7), Enter: the culprit's
# cell on the heatmap, s: its layer's walk
tui_run 140 30 $H/ref $H/target <<EOF
b
<Enter>
<Enter>
<Enter>
<Enter>
<Enter>
<Enter>
s
:save-display $T/walk.screen
EOF
tui_expect walk
check "the walk of L7" grep_screen walk '^Intra-layer walk of L7 '
check "the culprit introduces, at or before qkv_proj" grep_screen walk \
	'^▸ culprit self_attn\.rotary_emb\.0 introduces; at or before it: self_attn\.qkv_proj could not be compared$'
check "qkv_proj in its place (before the culprit) with its reason" grep_screen walk \
	'^  3   self_attn\.qkv_proj +not comparable: fused per-rank output across layouts'
check "the culprit row: error in tiny, out large, introduces" grep_screen walk \
	'^▸ 4   self_attn\.rotary_emb\.0 +0\.97[0-9]+ .* introduces$'
check "a later stage inherits" grep_screen walk '^ +6   self_attn\.attn .* inherits$'

# report.md of the same bisect, headless
S=$T/s.yaml
(cd "$DB_FIXTURES" && "$DB_BIN" bisect $H/ref $H/target --auto --session "$S" >/dev/null 2>&1) || true
"$DB_BIN" export "$S" --out "$T/report" >/dev/null 2>"$T/export.err" || cat "$T/export.err" >&2
M=$T/report/report.md
check "report: the walk table with its columns" grep -qF \
	'| sub-stage | cos | rel | band | error in | error out | amplification | SQNR dB | role |' "$M"
check "report: qkv_proj not comparable with its reason" grep -qE \
	'^\| `self_attn\.qkv_proj` \| - \| - \| - \| - \| - \| - \| - \| not comparable: `fused per-rank output' "$M"
check "report: the culprit introduces" grep -qE \
	'^\| \*\*`self_attn\.rotary_emb\.0`\*\* \| 0\.97[0-9]+ \| .* \| \*\*introduces\*\* \(culprit\) \|$' "$M"
check "report: at or before" grep -qx \
	'The culprit is at or before self_attn.rotary_emb.0: self_attn.qkv_proj before it could not be compared.' "$M"
check "report: qkv_proj comes right before the culprit" \
	test "$(grep -m1 -A1 'not comparable: `fused' "$M" | tail -1 | cut -c1-30)" = '| **`self_attn.rotary_emb.0`**'
finish
