#!/bin/bash
# Labels that tell names apart (issue 25.3), at 80x24 on real dumper trees:
# cut names keep their end (a middle ellipsis), so no two row labels and no
# two column headers read the same; the cursor's column header stays in its
# column; the first-divergence headline keeps its numbers; the sub-stage
# list keeps its band column; a filter never cuts the metric's name.
. "$DB_SRC/tests/tui/lib.sh"
export XDG_CACHE_HOME=$T/cache
R=realdump

# distinct SCREEN: every row label and every column header of the heatmap
# on the screen is different from the others, and none is blank.
distinct() {
	python3 - "$T/$1.screen" <<'PY'
import sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
head = next(i for i, l in enumerate(lines) if l.startswith("cos "))
cols = lines[head][17:].replace("▸", "").replace("◂", "").split()
rows = []
for l in lines[head + 1:]:
    lab = l[1:16].strip()
    if not lab or l.startswith(("✓ ok", ". ok")):
        break
    rows.append(lab)
bad = [x for x in set(cols) if cols.count(x) > 1] + [x for x in set(rows) if rows.count(x) > 1]
if bad or len(rows) < 5 or len(cols) < 4:
    sys.exit("the same label twice: %s (rows %s, cols %s)" % (bad, rows, cols))
PY
}

# Miles at TP2: the trainer's cu_seqlens_q / cu_seqlens_kv columns; the
# engine's two *_logits rows
tui_run 80 24 --no-session $R/miles_tp2/ref $R/miles_tp2/target <<EOF2
:phase fwd_only
:save-display $T/miles.screen
:phase inference
:save-display $T/miles_inf.screen
/self_attn|mlp|post_attention_layernorm|input_layernorm<Enter>
:save-display $T/miles_filter.screen
EOF2
check "miles: labels distinct" distinct miles
check "miles: the cu_seqlens columns differ" grep_screen miles '^cos +cu_…ens_q cu_…ns_kv '
check "miles, inference: labels distinct" distinct miles_inf
check "miles: the two *_logits rows differ" grep_screen miles_inf '^ logit…n_logits '
check "miles: a long filter leaves the metric's name whole" \
	grep_screen miles_filter '  metric cos  filter /self_…_layernorm$'

# hook dumps: self_attn.* columns that share their start; the cursor on one
tui_run 80 24 --no-session $R/hook_tp1/ref $R/hook_tp1/target <<EOF2
:goto L3 model.layers.3.self_attn.attn
:save-display $T/hook.screen
f
<Enter>
:save-display $T/hook_sub.screen
EOF2
check "hook: labels distinct, the cursor's column too" distinct hook
check "hook: the sub-stage list keeps its band column" grep_screen hook_sub ' ✗✗ bug$'
check "hook: the sub-stage list has its band header" grep_screen hook_sub '^ +# +stage .* band$'

# a TP2 tree whose first divergence has a long name: the numbers stay
tui_run 80 24 --no-session $R/v2all_tp2/ref $R/v2all_tp2/target <<EOF2
:save-display $T/v2all.screen
EOF2
check "the headline keeps its numbers" grep_screen v2all '^▸ first.* L4 .* cos 0\.4383 rel 1\.6e0 '
finish
