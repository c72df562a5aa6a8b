#!/bin/bash
# Issue 37's quadratic cases at n and 10 x n (not a test): the numbers in
# RESULTS.md ("Issue 37"). Each tree is made once under WORK.
#   usage: tests/bench/bench_hostile37.sh BIN [WORK]   (BIN: a dumpbisect)
#   rows    N tensors named transformer.h.<i> (no layer): the workbench's
#           first frame (DUMPBISECT_TIMING), a script of one key, q
#   passes  N clean passes x 2 layers (SGLang v1 names, hard links to one
#           demo file): bisect --auto, whose pass triage probes every pass
#   names   N stage names of one unkeyed db_hash64 (16 bytes, printable;
#           made by a C search, ~1 CPU-minute for 40k): compare
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$(realpath "$1")
W=${2:-${TMPDIR:-/tmp}/dumpbisect-bench-37}
mkdir -p "$W"
t() { /usr/bin/time -f "%e s wall, %U s user" "$@" 2>&1 >/dev/null | tail -1; }

rows() {        # rows N DIR
	[ -f "$2/.done" ] && return
	python3 - "$1" "$2" <<'PY'
import json, struct, sys, os
n, out = int(sys.argv[1]), sys.argv[2]
for side in ("ref", "target"):
    os.makedirs(f"{out}/{side}", exist_ok=True)
    hdr, data = {}, bytearray()
    for i in range(n):
        hdr[f"transformer.h.{i}"] = {"dtype": "F32", "shape": [2], "data_offsets": [len(data), len(data) + 8]}
        data += struct.pack("<2f", 1.0 + i, 2.0)
    h = json.dumps(hdr).encode(); h += b" " * ((8 - len(h) % 8) % 8)
    open(f"{out}/{side}/model.safetensors", "wb").write(struct.pack("<Q", len(h)) + h + data)
PY
	touch "$2/.done"
}

passes() {      # passes N DIR
	[ -f "$2/.done" ] && return
	rm -rf "$2"
	mkdir -p "$2/ref/sglang_dump_1.0" "$2/target/sglang_dump_2.0"
	cp "$(ls "$SRC"/tests/fixtures/demo/ref/*/forward_pass_id=0___rank=0___name=hidden_in___dump_index=*___layer_id=0.pt)" "$2/src.pt"
	perl -e '
	my ($w, $p) = @ARGV;
	for my $d ("ref/sglang_dump_1.0", "target/sglang_dump_2.0") {
		my ($i, $n, $s) = (0, 0, "");
		for my $pp (0 .. $p - 1) { for my $l (0, 1) {
			if ($n++ % 30000 == 0) { $s = "$w/src$n.pt"; system("cp", "$w/src.pt", $s) == 0 or die; }
			link($s, sprintf("%s/%s/forward_pass_id=%d___rank=0___name=hidden_in___dump_index=%d___layer_id=%d.pt",
			                 $w, $d, $pp, $i++, $l)) or die "$!";
		} }
	}' "$2" "$1"
	touch "$2/.done"
}

names() {       # names N DIR: N names of one db_hash64 (DB_HASH_SEED)
	[ -f "$2/.done" ] && return
	mkdir -p "$2"
	cat >"$W/collide.c" <<'C'
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
static uint64_t step(uint64_t h, uint64_t w)
{
	h = (h ^ w) * 0x100000001b3ull * 0x2127599bf4325c37ull;
	return h ^ (h >> 29);
}
static int ok(uint64_t w)      /* letters and digits only */
{
	for (int i = 0; i < 8; i++) {
		unsigned c = (w >> (8 * i)) & 0xff;
		if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'))
			return 0;
	}
	return 1;
}
int main(int argc, char **argv)
{
	long n = atol(argv[1]), got = 0;
	uint64_t h0 = 0x9e3779b97f4a7c15ull ^ (uint64_t)16 * 0xff51afd7ed558ccdull;
	uint64_t s1 = step(h0, 0x6161616161616161ull), a2 = 0x6262626262626262ull;
	for (uint64_t k = 0; got < n && argc; k++) {
		uint64_t w1 = 0, x = k;
		for (int i = 0; i < 8; i++, x /= 26)
			w1 |= (uint64_t)('a' + x % 26) << (8 * i);
		uint64_t w2 = a2 ^ s1 ^ step(h0, w1);
		if (!ok(w2))
			continue;
		fwrite(&w1, 8, 1, stdout);
		fwrite(&w2, 8, 1, stdout);
		putchar('\n');
		got++;
	}
	return 0;
}
C
	cc -O2 -o "$W/collide" "$W/collide.c"
	"$W/collide" "$1" >"$2/names.txt"
	python3 - "$2" <<'PY'
import json, struct, sys, os
out = sys.argv[1]
names = open(f"{out}/names.txt").read().split("\n")[:-1]
for side in ("ref", "target"):
    os.makedirs(f"{out}/{side}", exist_ok=True)
    hdr, data = {}, bytearray()
    for i, nm in enumerate(names):
        hdr[nm] = {"dtype": "F32", "shape": [2], "data_offsets": [len(data), len(data) + 8]}
        data += struct.pack("<2f", 1.0 + i, 2.0)
    h = json.dumps(hdr).encode(); h += b" " * ((8 - len(h) % 8) % 8)
    open(f"{out}/{side}/model.safetensors", "wb").write(struct.pack("<Q", len(h)) + h + data)
PY
	touch "$2/.done"
}

echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs; $BIN"
for n in 20000 200000; do
	rows "$n" "$W/rows$n"
	echo q >"$W/keys"
	rm -rf "$W/home" "$W/timing"
	mkdir -p "$W/home"
	(cd "$W/rows$n" && env -i PATH=/usr/bin:/bin HOME="$W/home" TERM=xterm-256color LANG=C.UTF-8 \
		LINES=60 COLUMNS=200 DUMPBISECT_SCRIPT="$W/keys" DUMPBISECT_WATCHDOG=900 \
		DUMPBISECT_TIMING="$W/timing" "$BIN" ref target >/dev/null)
	echo "rows $n: $(grep -E '^(open_ms|first_frame_ms)' "$W/timing" | tr '\n' ' ')"
done
for n in 2000 20000; do
	passes "$n" "$W/passes$n"
	XDG_CACHE_HOME="$W/cache" "$BIN" compare "$W/passes$n/ref" "$W/passes$n/target" >/dev/null || true
	echo "passes $n: compare $(XDG_CACHE_HOME="$W/cache" t "$BIN" compare "$W/passes$n/ref" "$W/passes$n/target"); bisect --auto $(XDG_CACHE_HOME="$W/cache" t "$BIN" bisect "$W/passes$n/ref" "$W/passes$n/target" --auto)"
done
for n in 4000 40000; do
	names "$n" "$W/names$n"
	rm -rf "$W/cache"
	echo "names $n: compare $(XDG_CACHE_HOME="$W/cache" t "$BIN" compare "$W/names$n/ref" "$W/names$n/target")"
done
