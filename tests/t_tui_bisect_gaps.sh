#!/bin/bash
# Layers never dumped, in the workbench: its bisect says exactly what
# `bisect --auto` says ("inconclusive: one of L7..L11 (L7–L10 not dumped)"),
# never a first bad layer L11 (issue 11 item 8). Bisect options given to
# the workbench, or to `bisect` without --auto, are refused, not dropped.
. "$DB_SRC/tests/tui/lib.sh"

# A copy of the demo (sign flip in L7) with layers 7..10 removed on both
# sides: L6 is good, L11 bad, nothing in between.
G=$T/gaps
mkdir -p "$G"
cp -r "$DB_FIXTURES/demo/ref" "$DB_FIXTURES/demo/target" "$G/"
for l in 7 8 9 10; do
	find "$G" -name "*___layer_id=$l.pt" -delete
done
check "the gap tree has no L7..L10" bash -c "! find '$G' -name '*layer_id=[789].pt' | grep -q ."

cli=$("$DB_BIN" bisect "$G/ref" "$G/target" --auto 2>/dev/null | head -1)
check "the CLI is honest: $cli" test "$cli" = "inconclusive: one of L7..L11 (L7–L10 not dumped)"

# The same walk in the workbench: Enter accepts, = skips a layer that is
# not dumped (Enter refuses it: it has no auto verdict).
tui_run 100 30 "$G/ref" "$G/target" <<EOF
b
<Enter>
<Enter>
<Enter>
:save-display $T/gap_refused.screen
=
=
=
<Enter>
=
<Enter>
:save-display $T/gap_done.screen
EOF
check "Enter on a layer not dumped is refused" \
	grep_screen gap_refused '^L8 has no auto verdict \(not dumped\): \+ good, - bad, = skip$'
check "the workbench says what the CLI says" grep -qxF -- "$cli" "$T/gap_done.screen"
check "the state names the layers not dumped" \
	grep_screen gap_done '^\[only-skipped\] one of L7\.\.L11 \(L7–L10 not dumped\)$'
check "never a first bad layer L11" bash -c "! grep -q 'first bad layer' '$T/gap_done.screen'"
check "kind inconclusive" grep_screen gap_done '^kind inconclusive'
check "the strip's skip glyph is not drift's ~" grep_screen gap_done '^ +· · · · · ✓ ✓ ∅ ∅ ∅ ∅  ✗  ✗$'
check "no culprit to show: Enter is not offered" grep_screen gap_done '^u undo  x reset  w note$'

# refused(WANT ARGS...): exit 2 at once, stderr names WANT, nothing opened.
refused() {
	local want=$1 rc=0
	shift
	(cd "$DB_FIXTURES" && env -i PATH=/usr/bin:/bin HOME="$T/home" TERM=xterm LANG=C.UTF-8 \
		timeout 20 "$DB_BIN" "$@") </dev/null >"$T/ref.out" 2>"$T/ref.err" || rc=$?
	[ "$rc" -eq 2 ] && grep -qF -- "$want" "$T/ref.err" && [ ! -s "$T/ref.out" ] || {
		echo "  exit $rc, stderr: $(cat "$T/ref.err")" >&2
		return 1
	}
}
check "workbench --run: refused, pointing to bisect --auto" refused \
	"dumpbisect: --run is an option of the headless bisect (dumpbisect bisect REF TARGET --auto --run CMD)" \
	demo/ref demo/target --run 'true {layer}'
check "workbench --layers=N: refused" refused \
	"dumpbisect: --layers is an option of the headless bisect (dumpbisect bisect REF TARGET --auto --layers N)" \
	demo/ref demo/target --layers=12
check "bisect --run without --auto: refused, not dropped" refused \
	"dumpbisect bisect: --run works with --auto only (the headless bisect)" \
	bisect demo/ref demo/target --run 'true {layer}'
check "bisect --layers without --auto: refused" refused \
	"dumpbisect bisect: --layers works with --auto only" bisect demo/ref demo/target --layers 12
check "bisect --auto --run still runs" bash -c "cd '$DB_FIXTURES' && '$DB_BIN' bisect demo/ref demo/target \
	--auto --run true >/dev/null 2>&1; test \$? -eq 1"
# Accumulated drift: the search ends on a layer but no layer stands out;
# the state line must not call it found.
tui_run 100 30 bisect/drift/ref bisect/drift/target <<EOF
b
<Enter><Enter><Enter><Enter><Enter>
:save-display $T/drift_done.screen
EOF
check "drift: the analysis says no layer stands out" grep_screen drift_done '^accumulated drift: no single layer stands out'
check "drift: the state agrees" \
	grep_screen drift_done '^\[drift\] no single layer stands out; the band is crossed at L4$'
check "drift: never [found]" bash -c "! grep -q '^\[found\]' '$T/drift_done.screen'"

# --session naming a file that does not exist, no trees: the session is
# what is missing, not REF
TUI_WANT_RC=2 tui_run 100 30 --session "$T/nosuch.session" </dev/null
check "missing session named" grep -q "nosuch.session: no such session file" "$T/stderr"
check "REF not blamed" bash -c "! grep -q 'REF is missing' '$T/stderr'"

# A layout without passes: the heatmap header says "-", not "[]".
tui_run 100 30 layouts/generic_st/ref layouts/generic_st/target <<EOF
:save-display $T/nopass.screen
EOF
check "no passes: pass -" grep_screen nopass '^phase -  pass -  rank '
finish
