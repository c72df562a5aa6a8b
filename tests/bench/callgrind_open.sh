#!/usr/bin/env bash
# Instruction counts of the workbench's open (db_compare_open, main thread)
# on a bench_tui.sh tree whose caches exist (a reopen), under callgrind:
# deterministic where wall times on a shared machine are not.
#   tests/bench/callgrind_open.sh BINARY [TREE]   (TREE: the 100k tree)
# Prints the total and the top functions (inclusive of nothing: self cost).
set -eu
BIN=$(realpath "$1")
W=${2:-${TMPDIR:-/tmp}/dumpbisect-bench-tui-64x61x13}
[ -d "$W/.cache" ] || { echo "$W has no caches: run bench_tui.sh on it first" >&2; exit 2; }
echo q >"$W/keys-q"
out=$(mktemp -d)
(cd "$W" && env -i PATH=/usr/bin:/bin HOME="$W" TERM=xterm-256color LANG=C.UTF-8 \
	LINES=60 COLUMNS=200 DUMPBISECT_SCRIPT="$W/keys-q" \
	valgrind --tool=callgrind --toggle-collect=db_compare_open \
	--callgrind-out-file="$out/cg.%p" "$BIN" ref target >/dev/null 2>"$out/log")
f=$(ls -S "$out"/cg.* | head -1)
callgrind_annotate "$f" 2>/dev/null | sed -n '/Ir/,$p' | head -30
echo "callgrind file: $f"
