#!/bin/bash
# compare --watch: a target tree being written (sglang_v1's torch dumps,
# bug from L2 on, copied in layer by layer). The summary is printed again
# as files arrive; a file still being written (a .pt cut short: its zip
# directory is missing) is "still being written", never an error, and is
# read once complete; a file that stays broken is an error once it is old
# enough; --timeout ends the watch, Ctrl-C too; the inotify watcher and the
# poll fallback (DUMPBISECT_WATCH=poll) both see the files.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
S=$L/sglang_v1
SRC=$S/target/sglang_dump_1700000100.0

# wait_for FILE REGEX DESC: poll (bounded, 20 s) until FILE has a line
# matching REGEX.
wait_for() {
	local i
	for ((i = 0; i < 200; i++)); do
		grep -qE -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	fail "$3: no line /$2/ in $(cat "$1")"
	return 1
}

start_tree() {
	rm -rf "$DB_TMP/t" && mkdir -p "$DB_TMP/t/d"
	cp "$SRC"/*.pt "$DB_TMP/t/d/"
	rm "$DB_TMP"/t/d/*layer_id=[23].pt
}

for how in inotify poll; do
	start_tree
	O=$DB_TMP/watch_$how.out
	rm -f "$O"      # wait_for must not read a previous run's
	DUMPBISECT_WATCH=$how "$DB_BIN" compare --no-cache --watch --timeout 60 \
		"$S/ref" "$DB_TMP/t" >"$O" 2>"$DB_TMP/watch.err" &
	pid=$!
	wait_for "$O" '^watch 1: 248 pairs: 128 ok, 8 diverge, 112 missing, 0 error; first divergence L2 hidden_in every rank \(of 2\) pass 0: ref_only$' "$how: first summary"
	head -1 "$O" | grep -qF "($how)" || fail "$how: the first line names the watcher: $(head -1 "$O")"
	# a .pt cut short (as while torch.save writes it)
	f=$(ls "$SRC"/*layer_id=2.pt | head -1)
	head -c 300 "$f" >"$DB_TMP/t/d/${f##*/}"
	wait_for "$O" '1 file still being written' "$how: partial file"
	grep -E '^watch [0-9]' "$O" | grep -vqE ' 0 error' && fail "$how: a partial file reported as an error"
	# the layer completes, and the next
	cp "$SRC"/*layer_id=[23].pt "$DB_TMP/t/d/"
	wait_for "$O" '^watch [0-9]+: 256 pairs: 154 ok, 102 diverge, 0 missing, 0 error; first divergence L2 attn\.o_proj every rank \(of 2\) pass 0 \[bug\]$' \
		"$how: complete tree"
	kill -INT "$pid"
	wait "$pid"
	rc=$?
	[ "$rc" = 1 ] || fail "$how: Ctrl-C exit $rc, want 1 (the last summary diverges)"
	grep -qE 'error' "$DB_TMP/watch.err" && fail "$how: stderr: $(cat "$DB_TMP/watch.err")"
done

# a file that stays broken becomes an error once older than the window
start_tree
O=$DB_TMP/watch_bad.out
rm -f "$O"
"$DB_BIN" compare --no-cache --watch --timeout 60 "$S/ref" "$DB_TMP/t" >"$O" &
pid=$!
wait_for "$O" '^watch 1: ' "broken: first summary"
f=$(ls "$SRC"/*layer_id=3.pt | head -1)
head -c 300 "$f" >"$DB_TMP/t/d/${f##*/}"
wait_for "$O" '1 file still being written' "broken: still being written first"
wait_for "$O" ', [1-9][0-9]* error' "broken: an error once old"
kill -INT "$pid"
wait "$pid"

# an empty target: wait for its first files
rm -rf "$DB_TMP/t" && mkdir -p "$DB_TMP/t"
O=$DB_TMP/watch_empty.out
rm -f "$O"
"$DB_BIN" compare --no-cache --watch --timeout 60 "$S/ref" "$DB_TMP/t" >"$O" &
pid=$!
wait_for "$O" '^waiting: .*no tensors in the target' "empty: waiting"
mkdir -p "$DB_TMP/t/d"
cp "$SRC"/*.pt "$DB_TMP/t/d/"
wait_for "$O" '^watch [0-9]+: 256 pairs: 154 ok, 102 diverge' "empty: files arrived"
kill -INT "$pid"
wait "$pid"
[ $? = 1 ] || fail "empty: exit status"

# --timeout ends it by itself; json: one object per summary
expect 1 "timeout" "$DB_BIN" compare --no-cache --watch --timeout 0.3 --format json "$S/ref" "$S/target"
[ "$(grep -c '^{"round": ' <<<"$out")" = 1 ] || fail "timeout: one summary: $out"
has "$out" '"first_divergence": "L2 attn.o_proj every rank (of 2) pass 0"' "json summary"
has "$out" '"pairs": 256, "ok": 154, "diverge": 102, "missing": 0, "error": 0, "settling": 0' "json counts"
expect 0 "timeout, clean" "$DB_BIN" compare --no-cache --watch --timeout 0.3 "$S/ref" "$S/ref"
has "$out" "watch 1: 256 pairs: 256 ok, 0 diverge, 0 missing, 0 error; no divergence" "clean watch"
expect 2 "timeout alone" "$DB_BIN" compare --timeout 3 "$S/ref" "$S/target"
has "$err" "--timeout goes with --watch" "timeout alone"
expect 2 "watch csv" "$DB_BIN" compare --watch --format csv "$S/ref" "$S/target"
finish t_watch
