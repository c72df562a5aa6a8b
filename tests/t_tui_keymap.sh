#!/bin/bash
# Keymap file ($HOME/.config/dumpbisect/keys here): good lines rebind, a
# bad line is reported with its line number and the defaults stay.
. "$DB_SRC/tests/tui/lib.sh"

mkdir -p "$T/home/.config/dumpbisect"
cat >"$T/home/.config/dumpbisect/keys" <<'EOF'
# my keys
bind x transpose
bind T no-such-action
unbind c
bind <F5> FIRST_DIVERGENCE
EOF

tui_run 180 60 demo/ref demo/target <<EOF
:save-display $T/keymap_start.screen
x
:save-display $T/keymap_x.screen
t
c
:save-display $T/keymap_c.screen
<F5>
:save-display $T/keymap_f5.screen
?
:save-display $T/keymap_help.screen
EOF
check "bad line reported with its number" \
	grep_screen keymap_start "/dumpbisect/keys:3: unknown action 'no-such-action' \(defaults kept\)$"
check "bind x transpose" grep_screen keymap_x '^stage\\cos '
check "the default t still transposes back" grep_screen keymap_c '^cos +hidden_in'
check "unbind c: c does nothing" grep_screen keymap_c '^c is not bound \(\? lists the keys\)$'
check "metric stays cos" grep_screen keymap_c 'metric cos'
check "<F5> jumps to the first divergence" grep_screen keymap_f5 '^L7 attn_out rank 1 '
check "help shows the new binding" grep_screen keymap_help '^  f <F5> +first-divergence'
check "help shows c unbound" grep_screen keymap_help '^  \(unbound\) +metric-toggle'

# A keymap that cannot be read at all is an error on screen, not a crash.
rm "$T/home/.config/dumpbisect/keys"
mkdir "$T/home/.config/dumpbisect/keys"
tui_run 180 30 demo/ref demo/target <<EOF
:save-display $T/keymap_dir.screen
EOF
check "unreadable keymap reported" grep_screen keymap_dir 'dumpbisect/keys'
finish
