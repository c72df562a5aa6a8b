#!/bin/bash
# Keys mean one thing (issue 25.5): b, s and g open the bisect, the
# sub-stages and the first row everywhere, the bisect view included, so
# "b b" never records a verdict; verdicts are on + - = (keys that mean
# nothing else), shown by ? and the bisect's own lines, and logged as the
# headless verbs log them (the user's when against the auto verdict). Browsing the
# layer curve (L, ]) never changes the bisect's probe: it says so.
. "$DB_SRC/tests/tui/lib.sh"

tui_run 100 30 --no-session demo/ref demo/target <<EOF2
b
b
:save-display $T/bb.screen
g
s
:save-display $T/s.screen
q
:save-display $T/still0.screen
-
:save-display $T/minus.screen
u
+
:save-display $T/plus.screen
EOF2
check "b in the bisect says where it is, no verdict" \
	grep_screen bb '^this is the bisect: <Enter> accepts, \+ good, - bad, = skip$'
check "b b: no step" grep_screen bb '^history \(0 steps\)$'
check "s in the bisect opens the sub-stages" grep_screen s '^ dumpbisect .* sub-stages$'
check "b b g s: still no step" grep_screen still0 '^history \(0 steps\)$'
# logged as the headless verbs log it: a verdict the user typed is the
# user's, also when it agrees with the auto one (issue 34)
check "- records bad (as the auto verdict: still the user's)" grep_screen minus '^  1  final +bad +user '
check "+ against the auto verdict is the user's" grep_screen plus '^  1  final +good +user '
check "the bisect names its verdict keys" grep_screen minus '^  <Enter> accepts  \+ good  - bad  = skip  u undo  x reset$'

tui_run 100 40 --no-session demo/ref demo/target <<EOF2
?
:save-display $T/help1.screen
<PgDown>
:save-display $T/help2.screen
<PgDown>
:save-display $T/help3.screen
EOF2
cat "$T"/help[123].screen >"$T/help.screen"
check "? lists + for good" grep_screen help '^  \+ +bisect-good '
check "? lists - for bad" grep_screen help '^  - +bisect-bad '
check "? lists = for skip" grep_screen help '^  = +bisect-skip '
check "? lists b once, for the bisect view" test "$(grep -cE '^  b ' "$T/help.screen")" -eq 1

# the curve: ] browses, the bisect keeps its probe
tui_run 100 30 --no-session demo/ref demo/target <<EOF2
L
]
:save-display $T/curve.screen
b
:save-display $T/probe.screen
EOF2
check "] says the bisect's probe stays" \
	grep_screen curve "^the bisect's probe stays hidden_out \(:probe [a-z_]+ makes this one it\)$"
check "the bisect still probes hidden_out" grep_screen probe '^Layer bisect  probe hidden_out '
finish
