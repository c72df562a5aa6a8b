#!/bin/bash
# After a rescan nothing old stays on screen (issue 26 item 3):
# - a pair rewritten in place (the same number of pairs, so only the pairs'
#   generation tells the rescan apart) loses its old hint: the sign_flip
#   fixture's L1 attn_out, fixed in the target while the workbench watches,
#   shows its new numbers without "sign_flip" beside them, on the status
#   line and in the stages view's rows;
# - "rescan: ... nothing to compare" (the target emptied) goes as soon as a
#   rescan finds the tree whole again, without a key.
# "@wait-file" holds the script while the test changes the trees.
. "$DB_SRC/tests/tui/lib.sh"
H=$DB_FIXTURES/hints/sign_flip
cp -r "$H/ref" "$H/target" "$T/"
D=$T/target/sglang_dump_1700000000.0
F=forward_pass_id=0___rank=0___name=attn_out___dump_index=3___layer_id=1.pt

wait_file() {
	local i
	for ((i = 0; i < 200; i++)); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	echo "FAIL: $1 never appeared" >&2
	FAILS=$((FAILS + 1))
	return 1
}

cat >"$T/script" <<EOF
f
:save-display $T/before.screen
s
:save-display $T/before_stages.screen
<Escape>
@wait-file $T/go1
:save-display $T/after.screen
s
:save-display $T/after_stages.screen
<Escape>
@wait-file $T/go2
:save-display $T/empty.screen
@wait-file $T/go3
:save-display $T/whole.screen
EOF
(cd "$T" && env -i PATH=/usr/bin:/bin HOME="$T/home" TZ=UTC TERM=xterm-256color \
	LANG=C.UTF-8 LINES=30 COLUMNS=120 DUMPBISECT_SCRIPT="$T/script" DUMPBISECT_WATCHDOG=30 \
	"$DB_BIN" --no-cache ref target) >"$T/stdout" 2>"$T/stderr" &
pid=$!
if wait_file "$T/before_stages.screen"; then
	# the target's L1 attn_out fixed, in place: the same pairs, new numbers
	cat "$T/ref/sglang_dump_1700000000.0/$F" >"$D/$F"
	touch "$T/go1"
fi
if wait_file "$T/after_stages.screen"; then
	mkdir "$T/away"
	mv "$D"/*.pt "$T/away/"
	touch "$T/go2"
fi
if wait_file "$T/empty.screen"; then
	mv "$T/away"/*.pt "$D/"
	touch "$T/go3"
fi
wait "$pid"
rc=$?
check "the workbench exits 0 (stderr: $(cat "$T/stderr"))" test "$rc" = 0

check "before: the hint is sign_flip" grep_screen before 'sign_flip'
check "before: the stages view lists sign_flip" grep_screen before_stages 'sign_flip'
check "after: no old sign_flip hint" sh -c "! grep -q sign_flip '$T/after.screen'"
check "after: no old sign_flip in the stages view" sh -c "! grep -q sign_flip '$T/after_stages.screen'"
check "empty: the failed rescan is said" grep_screen empty 'nothing to compare'
check "whole: the failed rescan's message is gone" sh -c "! grep -q 'nothing to compare' '$T/whole.screen'"
check "whole: the rescan says so" grep_screen whole "^trees changed: 7 pairs\$"
finish
