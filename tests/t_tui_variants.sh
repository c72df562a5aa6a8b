#!/bin/bash
# Workbench with variants (dumpbisect REF T1 T2 T3): the heatmap header
# names the shown variant, v / V cycle them, X shows the probe per layer
# and variant with the variants that are ok where another is bad, Enter
# there shows that variant, and a note written from it carries the table.
# Variants from sglang_v1's torch dumps (bug from L2 on): the target, the
# reference itself, and the reference with the target's L3 files.
. "$DB_SRC/tests/tui/lib.sh"
S=$DB_FIXTURES/layouts/sglang_v1
V=$T/v3
mkdir -p "$V/sglang_dump_1700000100.0"
cp "$S"/ref/sglang_dump_1700000000.0/*.pt "$V/sglang_dump_1700000100.0/"
cp "$S"/target/sglang_dump_1700000100.0/*layer_id=3.pt "$V/sglang_dump_1700000100.0/"

tui_run 100 30 --notes "$T/notes" layouts/sglang_v1/ref layouts/sglang_v1/target \
	layouts/sglang_v1/ref "$V" <<EOF
:save-display $T/v_start.screen
v
:save-display $T/v_second.screen
V
X
:save-display $T/v_table.screen
w
which variant fixes which layer<Enter>
<Right><Right><Down><Down><Down>
<Enter>
:save-display $T/v_third.screen
:export $T/exp
:save-display $T/v_export.screen
:variant 2
:save-display $T/v_cmd.screen
:variant 4
:save-display $T/v_cmd_bad.screen
EOF
check "header names variant 1 of 3" grep_screen v_start 'rank \[all\] of 2  variant \[1\] of 3'
check "variant 1 diverges at L2" grep_screen v_start 'first(:| divergence) L2 attn\.o_proj every rank \(of 2\) '
check "v shows variant 2: the reference, no divergence" grep_screen v_second 'variant \[2\] of 3'
check "variant 2 is clean" grep_screen v_second 'no divergence: every pair is in the ok band'
check "the table names each variant" grep_screen v_table "^ 3 $V\$"
check "L1: every variant ok, none named" grep_screen v_table '^L1 +✓  1\.0000 ✓  1\.0000 ✓  1\.0000 *$'
check "L2: variants 2 and 3 fix it" grep_screen v_table '^L2 +✗✗ 0\.[0-9]+ ✓  1\.0000 ✓  1\.0000  2 3$'
check "L3: only variant 2 fixes it" grep_screen v_table '^L3 +✗✗ 0\.[0-9]+ ✓  1\.0000 ✗✗ 0\.[0-9]+  2$'
check "Enter on variant 3 at L3 shows variant 3" grep_screen v_third 'variant \[3\] of 3'
check "variant 3 first diverges at L3" grep_screen v_third 'first divergence L3 '
N=$(ls "$T"/notes/*.md 2>/dev/null | head -1)
check "a note was written" test -n "$N"
check "the note has the table row of L2" grep -qE '^\| L2 \| 0\.[0-9]+ bug \| 1\.000000 ok \| 1\.000000 ok \| 2 3 \|$' "$N"
check "the note names variant 3's tree" grep -qF -- "- variant 3: \`$V\`" "$N"
check "the export names variants.md" grep_screen v_export 'metrics\.csv, variants\.md to '
check "variants.md has the L3 row" grep -qE '^\| L3 \| 0\.891180 bug \| 1\.000000 ok \| 0\.891180 bug \| 2 \|$' "$T/exp/variants.md"
check "the export's metrics are the shown variant's (3)" grep -qF "$V" "$T/exp/report.md"
check ":variant 2 shows variant 2" grep_screen v_cmd 'variant \[2\] of 3'
check ":variant 4 is refused" grep_screen v_cmd_bad 'variant 4: 1 \.\. 3'
finish
