#!/bin/bash
# compare --watch waits, never exits, when there is nothing to compare for
# a while (issue 26 item 2): the target's folder emptied and refilled, its
# folder removed and made again, a one-file target rewritten in place (cut
# short while written). Each time it prints "waiting: ..." once, then the
# summary again when the tree is whole; the exit status is the last
# summary's (1: sglang_v1 diverges; 0: the one-file target agrees), and 2
# only when --timeout comes while there is still nothing to compare.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
S=$L/sglang_v1
SRC=$S/target/sglang_dump_1700000100.0
fresh_tmp

# wait_for FILE REGEX DESC: poll (bounded, 20 s) until FILE has a line
# matching REGEX; n_lines FILE REGEX: how many lines match.
wait_for() {
	local i
	for ((i = 0; i < 200; i++)); do
		grep -qE -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	fail "$3: no line /$2/ in $(cat "$1")"
	return 1
}
n_lines() { grep -cE -- "$2" "$1" 2>/dev/null; }
SUM='^watch [0-9]+: 256 pairs: 154 ok, 102 diverge, 0 missing, 0 error; first divergence L2 attn\.o_proj every rank \(of 2\) pass 0 \[bug\]$'
WAIT='^waiting: .*nothing to compare$'

T=$DB_TMP/t
mkdir -p "$T"
cp -r "$S/target/." "$T/"
O=$DB_TMP/refill.out
"$DB_BIN" compare --no-cache --watch --timeout 60 "$S/ref" "$T" >"$O" 2>"$DB_TMP/refill.err" &
pid=$!
wait_for "$O" "$SUM" "the first summary"
# emptied ...
mkdir "$DB_TMP/away"
mv "$T"/sglang_dump_1700000100.0/*.pt "$DB_TMP/away/"
wait_for "$O" "$WAIT" "emptied: it waits"
kill -0 "$pid" 2>/dev/null || fail "emptied: the watch ended"
# ... and refilled
mv "$DB_TMP/away"/*.pt "$T/sglang_dump_1700000100.0/"
for ((i = 0; i < 200; i++)); do [ "$(n_lines "$O" "$SUM")" -ge 2 ] && break; sleep 0.1; done
[ "$(n_lines "$O" "$SUM")" -ge 2 ] || fail "refilled: no summary again: $(cat "$O")"
# the folder removed and made again: a new directory to watch
rm -rf "$T"
wait_for "$O" "^waiting: .*cannot open" "folder removed: it waits"
mkdir -p "$T"
cp -r "$S/target/." "$T/"
for ((i = 0; i < 200; i++)); do [ "$(n_lines "$O" "$SUM")" -ge 3 ] && break; sleep 0.1; done
[ "$(n_lines "$O" "$SUM")" -ge 3 ] || fail "folder made again: no summary again: $(cat "$O")"
kill -INT "$pid"
wait "$pid"
rc=$?
[ "$rc" = 1 ] || fail "refill: Ctrl-C exit $rc, want 1 (the last summary diverges)"
[ -s "$DB_TMP/refill.err" ] && fail "refill: stderr: $(cat "$DB_TMP/refill.err")"
[ "$(n_lines "$O" "^waiting: ")" = 2 ] || fail "not one waiting line per time without tensors: $(cat "$O")"

# a one-file target rewritten in place, cut short while written
f=$(ls "$SRC"/*.pt | head -1)
cp "$f" "$DB_TMP/r.pt"
cp "$f" "$DB_TMP/t.pt"
O=$DB_TMP/file.out
"$DB_BIN" compare --no-cache --watch --timeout 60 "$DB_TMP/r.pt" "$DB_TMP/t.pt" >"$O" 2>"$DB_TMP/file.err" &
pid=$!
ONE='^watch [0-9]+: 1 pairs: 1 ok, 0 diverge, 0 missing, 0 error; no divergence$'
wait_for "$O" "$ONE" "one file: the first summary"
head -c 300 "$f" >"$DB_TMP/t.pt"
wait_for "$O" "$WAIT" "one file cut short: it waits"
kill -0 "$pid" 2>/dev/null || fail "one file cut short: the watch ended"
cat "$f" >"$DB_TMP/t.pt"
for ((i = 0; i < 200; i++)); do [ "$(n_lines "$O" "$ONE")" -ge 2 ] && break; sleep 0.1; done
[ "$(n_lines "$O" "$ONE")" -ge 2 ] || fail "one file written whole: no summary again: $(cat "$O")"
kill -INT "$pid"
wait "$pid"
rc=$?
[ "$rc" = 0 ] || fail "one file: Ctrl-C exit $rc, want 0 (it agrees again)"

# still nothing to compare at --timeout: exit 2, saying why
rm -rf "$T" && mkdir -p "$T/d"
cp "$SRC"/*.pt "$T/d/"
O=$DB_TMP/tmo.out
"$DB_BIN" compare --no-cache --watch --timeout 4 "$S/ref" "$T" >"$O" 2>"$DB_TMP/tmo.err" &
pid=$!
wait_for "$O" "$SUM" "timeout: the first summary"
rm "$T"/d/*.pt
wait "$pid"
rc=$?
[ "$rc" = 2 ] || fail "nothing to compare at --timeout: exit $rc, want 2"
grep -q "nothing to compare" "$DB_TMP/tmo.err" || fail "timeout: stderr does not say why: $(cat "$DB_TMP/tmo.err")"
finish t_watch_refill
