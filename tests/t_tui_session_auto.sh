#!/bin/bash
# Without --session the workbench keeps its work in the trees' automatic
# session ($XDG_STATE_HOME/dumpbisect/sessions/NAME-HASH/session.yaml,
# default ~/.local/state): a mark and a bisect step made in one run are
# there in the next (the trees named another way: absolute paths key it),
# the bottom line says where; --no-session keeps nothing and q warns
# before the work ends; a session file that does not parse is never reset.
. "$DB_SRC/tests/tui/lib.sh"

ST=$T/home/.local/state/dumpbisect/sessions
sessions() { find "$1" -name session.yaml 2>/dev/null | wc -l; }

# run 1: looking only writes nothing; a mark and a bisect step are kept
tui_run 80 24 demo/ref demo/target <<EOF2
:save-display $T/look.screen
q
EOF2
check "looking writes no session" test "$(sessions "$ST")" -eq 0
tui_run 80 24 demo/ref demo/target <<EOF2
:goto L3 attn_out
:mark confirmed kept across runs
:save-display $T/marked.screen
:view bisect
<Enter>
:save-display $T/step.screen
q
q
EOF2
check "the mark says where it is kept" grep_screen marked \
	'^marked L3 attn_out \(all ranks\) confirmed; kept in ~/\.local/.*session\.yaml$'
check "one automatic session" test "$(sessions "$ST")" -eq 1
S=$(find "$ST" -name session.yaml | head -1)
check "the mark is in it" grep -q 'kept across runs' "$S"
check "the bisect step is in it" grep -Eq '^ *- \{?layer: ' "$S"
case $S in */demo-ref-*/session.yaml) ;; *) echo "FAIL: session named $S" >&2; FAILS=$((FAILS + 1)) ;; esac

# run 2: the same trees by absolute path reopen it: the mark on its cell,
# the bisect's step in its history
tui_run 80 24 "$DB_FIXTURES/demo/ref" "$DB_FIXTURES/demo/target" <<EOF2
:save-display $T/reopened.screen
:goto L3 attn_out
:save-display $T/cell.screen
:view bisect
:save-display $T/bisect.screen
q
q
EOF2
check "the bottom line says it was reopened" grep_screen reopened \
	"^reopened these trees' session ~/\.local/state/.*session\.yaml$"
check "the mark is back on its cell" grep_screen cell '^ L3 .*◆'
check "the bisect's step is back" grep_screen bisect '^history \(1 step\)'
check "still one session" test "$(sessions "$ST")" -eq 1

# --no-session: nothing written; q with a mark warns once, q again quits
TUI_ENV="XDG_STATE_HOME=$T/state2" tui_run 80 24 --no-session demo/ref demo/target <<EOF2
:mark lost on purpose
q
:save-display $T/warned.screen
q
EOF2
check "q warns that the mark ends" grep_screen warned \
	'^the bisect and marks end here \(no session\): q again quits'
check "--no-session writes nothing" test "$(sessions "$T/state2")" -eq 0
# XDG_STATE_HOME is where the automatic session goes
TUI_ENV="XDG_STATE_HOME=$T/state2" tui_run 80 24 demo/ref demo/target <<EOF2
:mark here
q
EOF2
check "XDG_STATE_HOME holds it" test "$(sessions "$T/state2/dumpbisect/sessions")" -eq 1
TUI_WANT_RC=2 tui_run 80 24 --no-session --session "$T/x.yaml" demo/ref demo/target </dev/null
check "--session with --no-session is a usage error" grep -q 'give one' "$T/stderr"

# a session file that does not parse: said, not used, never rewritten
printf 'dumpbisect_session: [\n' >"$S"
cp "$S" "$T/corrupt"
tui_run 80 24 demo/ref demo/target <<EOF2
:save-display $T/corrupt.screen
:mark not kept
q
q
EOF2
check "a corrupt session is said" grep_screen corrupt "^these trees' session not reopened \(kept as it is\)"
check "a corrupt session is not rewritten" cmp -s "$S" "$T/corrupt"
finish
