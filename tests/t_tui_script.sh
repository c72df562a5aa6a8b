#!/bin/bash
# Script mode and the action table: a bad key name in a script is an error
# with its line number; --keys-man prints every action of the help screen
# (same table) as man-page text; bad trees fail before the screen is set up.
. "$DB_SRC/tests/tui/lib.sh"

# Bad key name: exit 2, "script:LINE:" on stderr.
TUI_WANT_RC=2 tui_run 100 30 demo/ref demo/target <<EOF
j
<Nope>
EOF
check "bad script key names the line" grep -q 'script:2: bad key at .<Nope>' "$T/stderr"

# The help screen and --keys-man come from the same table.
tui_run 120 100 demo/ref demo/target <<EOF
?
:save-display $T/help_all.screen
EOF
"$DB_BIN" --keys-man >"$T/keys.man"
n_help=$(grep -cE '^  .{22} [a-z]+(-[a-z]+)* +[A-Z]' "$T/help_all.screen")
n_man=$(grep -c '^\.TP$' "$T/keys.man")
check "help and --keys-man list the same number of actions ($n_help, $n_man)" \
	test "$n_help" -eq "$n_man" -a "$n_man" -gt 40
while read -r name; do
	check "--keys-man has $name" grep -q "(action \\\\fB${name//-/\\\\-}\\\\fR)" "$T/keys.man"
done < <(sed -nE 's/^  .{22} ([a-z]+(-[a-z]+)*) +[A-Z].*/\1/p' "$T/help_all.screen")
check "man text has sections" grep -q '^\.SS All views$' "$T/keys.man"
if command -v groff >/dev/null; then
	{ printf '.TH T 1\n.SH KEYS\n'; cat "$T/keys.man"; } >"$T/keys.1"
	groff -man -ww -Tutf8 "$T/keys.1" >/dev/null 2>"$T/groff.err" || true
	check "groff -ww has no warnings" test ! -s "$T/groff.err"
fi

# A missing tree: message and exit 2, terminal untouched.
TUI_WANT_RC=2 tui_run 100 30 no/such/ref demo/target </dev/null
check "missing tree reported" grep -q 'no/such/ref' "$T/stderr"
finish
