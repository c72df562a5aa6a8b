#!/usr/bin/env bash
# Issue 26 item 5 through the binary: pickle bombs cost milliseconds.
# - 40 x DUP + TUPLE2 over an empty list (2^40 paths; `ls` never ended)
#   and over a tensor (a million entries, GBs): `ls` under a CPU limit;
# - a data.pkl inflating to 300 MiB (from 300 KB): refused by the 256 MiB
#   pickle cap before it is inflated; DUMPBISECT_PICKLE_MAX raises the cap;
# - per process: 16 files, each a 200 MiB pickle, listed by several threads
#   at once fit in 350 MB of address space (ulimit -v), because pickles
#   being parsed share one budget (before: one 200 MiB buffer per thread,
#   "out of memory inflating"). Skipped under AddressSanitizer, which
#   reserves terabytes of address space.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
fresh_tmp
need_python "to write the pickles"
"$PY" - "$DB_TMP" <<'PY'
import os, sys, zipfile
root = sys.argv[1]
def pt(path, pkl, recs=(), deflate=False):
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(zipfile.ZipInfo("a/data.pkl"), pkl,
                   compress_type=zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED)
        for name, data in recs:
            z.writestr(zipfile.ZipInfo("a/data/" + name), data)
def g(mod, name): return b"c" + mod + b"\n" + name + b"\n"
def s(x): return b"\x8c" + bytes([len(x)]) + x
tensor = (g(b"torch._utils", b"_rebuild_tensor_v2") + b"((" + s(b"storage") + g(b"torch", b"FloatStorage")
          + s(b"0") + s(b"cpu") + b"K\x01tQK\x00K\x01\x85K\x01\x85\x89"
          + g(b"collections", b"OrderedDict") + b")RtR")
pt(root + "/dup40.pt", b"\x80\x02]" + b"2\x86" * 40 + b".")
pt(root + "/dup40_tensor.pt", b"\x80\x02" + tensor + b"2\x86" * 40 + b".", [("0", b"\0\0\x80\x3f")])
def big(path, size):
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        with z.open("a/data.pkl", "w", force_zip64=True) as f:
            f.write(b"\x80\x02")
            left, chunk = size - 2, b"N" * (1 << 24)
            while left:
                k = min(left, len(chunk))
                f.write(chunk[:k])
                left -= k
big(root + "/big300m.pt", 300 << 20)
os.makedirs(root + "/many")
big(root + "/many/f00.pt", 200 << 20)
PY
for i in $(seq 1 15); do cp "$DB_TMP/many/f00.pt" "$DB_TMP/many/f$(printf %02d "$i").pt"; done

# shared containers: the walk visits each once
(ulimit -t 20; "$DB_BIN" ls "$DB_TMP/dup40.pt") >"$DB_TMP/out" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "dup40: exit $rc (137/152: over the CPU limit): $(head -c 300 "$DB_TMP/out")"
has "$(cat "$DB_TMP/out")" "(pt_zip, 0 tensors)" "dup40: no tensor"
(ulimit -t 20; vlimit 1000000; "$DB_BIN" ls "$DB_TMP/dup40_tensor.pt") >"$DB_TMP/out" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "dup40_tensor: exit $rc: $(head -c 300 "$DB_TMP/out")"
has "$(cat "$DB_TMP/out")" "(pt_zip, 2 tensors)" "dup40_tensor: the tensor under its two keys"

# the pickle cap, checked on the declared size: nothing inflated
(ulimit -t 10; "$DB_BIN" ls "$DB_TMP/big300m.pt") >"$DB_TMP/out" 2>&1
rc=$?
out=$(cat "$DB_TMP/out")
[ $rc -eq 2 ] || fail "big300m: exit $rc, want 2: $out"
has "$out" "big300m.pt: entry 'a/data.pkl': byte " "big300m: names file, entry, offset"
has "$out" "pickle of 300 MiB exceeds the 256 MiB cap on pickles (DUMPBISECT_PICKLE_MAX raises it)" \
	"big300m: the cap"
expect 2 "big300m with a raised cap" env DUMPBISECT_PICKLE_MAX=400M "$DB_BIN" ls "$DB_TMP/big300m.pt"
has "$err" "stack deeper than" "big300m with a raised cap: inflated and run"

# per process: one budget for the pickles parsed at once
if ldd "$DB_BIN" 2>/dev/null | grep -q libasan; then
	echo "skip: the address-space limit under AddressSanitizer"
else
	(vlimit 350000; MALLOC_ARENA_MAX=1 "$DB_BIN" ls "$DB_TMP/many") >"$DB_TMP/out" 2>&1
	out=$(cat "$DB_TMP/out")
	grep -q "out of memory" <<<"$out" && fail "many: out of memory under 350 MB: $(grep -m2 'memory' <<<"$out")"
	[ "$(grep -c 'stack deeper than' <<<"$out")" = 16 ] || fail "many: want 16 files run to the stack cap: ${out:0:600}"
fi
finish t_pickle_bombs
