#!/bin/bash
# "/" filter: a PCRE2 regex on stage names keeps the matching columns (a
# column also stays when one of its sub-stages matches), n / N walk the
# matching cells, a bad regex and a regex matching nothing are reported
# and leave the filter as it was, "/" + Enter clears it. A regex that hits
# the match limit (issue 26 item 8) is refused at once with the pattern and
# the name, also when a session brings it (it froze the open for 18 s).
. "$DB_SRC/tests/tui/lib.sh"

tui_run 100 24 demo/ref demo/target <<EOF
/^ffn
:save-display $T/filter_ffn.screen
nnn
:save-display $T/filter_next.screen
N
:save-display $T/filter_prev.screen
/o_proj
:save-display $T/filter_substage.screen
/(
:save-display $T/filter_bad.screen
/^((\w|\w|\w)+)+\W
:save-display $T/filter_limit.screen
/nothing_like_this
:save-display $T/filter_none.screen
/
:save-display $T/filter_cleared.screen
EOF
for s in filter_ffn filter_next filter_prev filter_substage filter_bad filter_none filter_cleared; do
	tui_expect "$s"
done
check "only ffn columns" grep_screen filter_ffn '^cos +ffn_norm_out +ffn_out *$'
# (all ranks: each cell names the rank it shows, the worst of the two)
check "n n n walks cells in reading order" grep_screen filter_next '^L1 ffn_out rank [01] \(worst of 2 ranks\) '
check "N goes back one" grep_screen filter_prev '^L1 ffn_norm_out rank [01] \(worst of 2 ranks\) '
check "a sub-stage match keeps its column" grep_screen filter_substage '^cos +attn_out *$'
check "bad regex reported" grep_screen filter_bad '^/\(: missing closing parenthesis'
check "bad regex keeps the filter" grep_screen filter_bad 'filter /o_proj'
check "no match reported" grep_screen filter_none 'no stage matches'
check "limit hit reported" grep_screen filter_limit "regex '.*' on '[a-z_]+': too much backtracking"
check "limit hit keeps the filter" grep_screen filter_limit 'filter /o_proj'
check "cleared" grep_screen filter_cleared '^cos +hidden_in +attn_norm_out +attn_out'

# a session saved with a filter that hits the limit: refused at open
tui_run 100 24 --session "$T/s.yaml" demo/ref demo/target <<EOF
/^ffn
:q
EOF
sed -i "s/^  filter: .*/  filter: '^((\\\\w|\\\\w|\\\\w)+)+\\\\W'/" "$T/s.yaml"
check "session holds the evil filter" grep -q 'filter: .*+\\W' "$T/s.yaml"
tui_run 100 24 --session "$T/s.yaml" demo/ref demo/target <<EOF
:save-display $T/filter_session.screen
EOF
check "session filter refused" grep_screen filter_session 'too much backtracking'
check "session filter: all columns" grep_screen filter_session '^cos +hidden_in +attn_norm_out +attn_out'
finish
