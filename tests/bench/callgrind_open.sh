#!/usr/bin/env bash
# Instruction counts of the workbench's open (db_compare_open, main thread)
# on a bench_tui.sh tree whose caches exist (a reopen), under callgrind:
# deterministic where wall times on a shared machine are not.
#   tests/bench/callgrind_open.sh BINARY [TREE]   (TREE: the 100k tree)
# BENCH_CACHE=DIR: the caches under DIR (XDG_CACHE_HOME) instead of
# TREE/.cache, so that two builds whose snapshots differ do not overwrite
# each other's; the first run there fills them (run it twice).
# Prints the total and the top functions (inclusive of nothing: self cost).
set -eu
BIN=$(realpath "$1")
W=${2:-${TMPDIR:-/tmp}/dumpbisect-bench-tui-64x61x13}
C=${BENCH_CACHE:-$W/.cache}
[ -d "$C" ] || { echo "$W has no caches: run bench_tui.sh on it first" >&2; exit 2; }
echo q >"$W/keys-q"
out=$(mktemp -d)
(cd "$W" && env -i PATH=/usr/bin:/bin HOME="$W" TERM=xterm-256color LANG=C.UTF-8 XDG_CACHE_HOME="$C" \
	LINES=60 COLUMNS=200 DUMPBISECT_SCRIPT="$W/keys-q" DUMPBISECT_WATCHDOG=900 \
	valgrind --tool=callgrind --toggle-collect=db_compare_open \
	--callgrind-out-file="$out/cg.%p" "$BIN" ref target >/dev/null 2>"$out/log")
f=$(ls -S "$out"/cg.* | head -1)
callgrind_annotate "$f" 2>/dev/null | sed -n '/Ir/,$p' | head -30
echo "callgrind file: $f"
