#!/bin/bash
# Issue 37: a run killed while it writes a cache file leaves its temp file
# ("<file>.tmp.<pid>.<seq>", 55-80 MB each at 10^6 files), never renamed and,
# before, never removed. The next write of that cache file removes the temp
# files whose writer is gone; one whose pid lives (a run writing now) and
# names of another form are left alone.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
fresh_tmp
D=$DB_FIXTURES/demo
C=$XDG_CACHE_HOME/dumpbisect
expect 1 "first run" "$DB_BIN" compare "$D/ref" "$D/target"
files=$(cd "$C" && ls | grep -E '\.(cache|index|all\.snap)$')
[ "$(wc -w <<<"$files")" -ge 3 ] || fail "the metrics cache, entry caches and snapshots were not written: $(ls "$C")"
sh -c 'exit 0' &
dead=$!
wait $dead
kill -0 $dead 2>/dev/null && fail "pid $dead still lives"
for f in $files; do
	echo killed >"$C/$f.tmp.$dead.0"
	echo killed >"$C/$f.tmp.$dead.17"
	echo live >"$C/$f.tmp.$$.0"
	echo other >"$C/$f.tmp.x$dead.0"
	rm "$C/$f"      # so that this run writes it again
done
expect 1 "second run" "$DB_BIN" compare "$D/ref" "$D/target"
for f in $files; do
	[ -f "$C/$f" ] || fail "$f: not written again"
	[ ! -e "$C/$f.tmp.$dead.0" ] && [ ! -e "$C/$f.tmp.$dead.17" ] ||
		fail "$f: a killed writer's temp file is left"
	[ -f "$C/$f.tmp.$$.0" ] || fail "$f: a live writer's temp file was removed"
	[ -f "$C/$f.tmp.x$dead.0" ] || fail "$f: a name of another form was removed"
done
finish t_cache_stale_tmp
