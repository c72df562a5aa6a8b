#!/bin/bash
# Words a newcomer reads (issue 25.6): the bisect says in sentences when a
# layer is bad, where the search stands and why it starts at the last
# layer; the layer curve names every band; the help screen says it
# scrolls; bisect --help says what the default probe really is.
. "$DB_SRC/tests/tui/lib.sh"

tui_run 80 24 --no-session demo/ref demo/target <<EOF2
b
:save-display $T/bisect.screen
<Enter>
:save-display $T/bisect1.screen
q
L
:save-display $T/curve.screen
q
?
:save-display $T/help.screen
EOF2
check "when a layer is bad, in words" grep_screen bisect '^a layer is bad when its probe leaves the ok band$'
check "why the last layer first" \
	grep_screen bisect '^\[bound\] checking the last layer, final, first: the search needs a bad end$'
check "where the search stands, before any step" \
	grep_screen bisect '^good up to the input, no bad layer seen yet; 13 layers to test '
check "where the search stands, after one" grep_screen bisect1 '^good up to the input, bad from final; '
check "no 'band:ok', 'range:' or 'bad ?'" bash -c "! grep -Eq 'band:ok|^range:|bad \\?' '$T/bisect.screen' '$T/bisect1.screen'"
check "the curve names every band" \
	test "$(grep -c '  bands top down: ok, drift, algo, bug, scramble$' "$T/curve.screen")" -eq 2
check "the help says it scrolls" grep_screen help '^ lines 1-[0-9]+ of [0-9]+: it scrolls '

"$DB_BIN" bisect --help >"$T/bisect_help" 2>&1
check "bisect --help does not promise hidden_out" bash -c "! grep -q hidden_out '$T/bisect_help'"
check "bisect --help says what the default probe is" grep -q "probe candidates" "$T/bisect_help"
finish
