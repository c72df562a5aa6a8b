#!/bin/bash
# Terminal hygiene: "terminal too small" below 60x15 (at start and after a
# resize, and back), colours by default, none with NO_COLOR (the glyphs
# still carry the severity), ASCII glyphs in the C locale, wide glyphs
# clipped by display width at several widths.
. "$DB_SRC/tests/tui/lib.sh"

# Too small from the start; q still quits.
tui_run 59 20 demo/ref demo/target <<EOF
:save-display $T/too_small.screen
q
EOF
tui_expect too_small
check "too-small screen" grep_screen too_small '^terminal too small: 59x20$'

# Resize at any moment, in and out of too small.
tui_run 80 24 demo/ref demo/target <<EOF
:resize 80x14
:save-display $T/resize_small.screen
:resize 72x16
:save-display $T/resize_back.screen
EOF
tui_expect resize_small
tui_expect resize_back
check "14 lines is too small" grep_screen resize_small 'terminal too small: 80x14'
check "72x16 draws the heatmap" grep_screen resize_back '^ L0 '

# Shrink with the cursor on the last column (the heatmap scrolls), grow
# back: nothing stays scrolled off, the first column shows again.
tui_run 100 30 demo/ref demo/target <<EOF
<End>
:resize 60x30
:save-display $T/shrunk.screen
:resize 100x30
:save-display $T/grown.screen
EOF
check "shrunk: scrolled to the cursor" grep_screen shrunk '^cos +◂'
check "grown: the first column is back" grep_screen grown '^cos +hidden_in +attn_norm_out'
check "grown: not marked as scrolled" bash -c "! grep -Eq '^cos +◂' '$T/grown.screen'"

# Colours: on by default, off with NO_COLOR set non-empty.
tui_run 100 30 demo/ref demo/target <<EOF
:save-colors $T/colors_on.colors
EOF
TUI_ENV="NO_COLOR=1" tui_run 100 30 demo/ref demo/target <<EOF
:save-colors $T/colors_off.colors
:save-display $T/nocolor.screen
EOF
check "cells are coloured by default" grep -q '[a-e]' "$T/colors_on.colors"
check "NO_COLOR: no colour pair anywhere" bash -c "! grep -q '[^.]' '$T/colors_off.colors'"
# Without colour the severity must still read from the glyphs: same text.
check "NO_COLOR screen has the glyphs" grep_screen nocolor '^▸L7 .*▸✗✗ 0\.8623'
# NO_COLOR set but empty does not count.
TUI_ENV="NO_COLOR=" tui_run 100 30 demo/ref demo/target <<EOF
:save-colors $T/colors_empty.colors
EOF
check "empty NO_COLOR keeps colours" grep -q '[a-e]' "$T/colors_empty.colors"

# C locale: ASCII only.
TUI_LANG=C tui_run 100 30 demo/ref demo/target <<EOF
f
:save-display $T/ascii.screen
EOF
tui_expect ascii
check "ASCII screen is 7-bit" bash -c "! LC_ALL=C grep -q '[^ -~]' '$T/ascii.screen'"
check "ASCII bug glyph" grep_screen ascii '^\*L7 .*\*X  0\.8623'

# Widths: wide glyphs never push a line past the terminal width.
for cols in 60 61 97; do
	tui_run "$cols" 20 demo/ref demo/target <<EOF
:save-display $T/width_$cols.screen
EOF
	check "width $cols respected" test "$(wc -L <"$T/width_$cols.screen")" -le "$cols"
done
tui_expect width_61
finish
