#!/usr/bin/env bash
# Issue 26 item 1: a dump file that shrinks while it is read is an error for
# that file, not the death of the process (SIGBUS, exit 135, no message).
# The shrink is made deterministic by an LD_PRELOAD shim
# (tests/shrink_after_map.c) that truncates a chosen file right after its
# n-th mmap, before anything reads it:
# - compare, the worker's mapping (the 2nd: the index's open is the 1st):
#   that pair says "file changed while read" with the path and byte, the
#   other file's pair is still computed; run three times;
# - compare, the index's mapping, truncated to 0 while it is parsed: that
#   file's entry is the error, the rest is compared;
# - ls --stats reading the values: exit 2 with the message.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
fresh_tmp
need_python "to write the safetensors files"
cc=${CC:-cc}
command -v "$cc" >/dev/null || { echo "skip: no C compiler for the shim"; exit 0; }
"$cc" -shared -fPIC -o "$DB_TMP/shrink.so" "$DB_SRC/tests/shrink_after_map.c" -ldl || exit 1
"$PY" - "$DB_TMP" <<'PY'
import json, os, struct, sys
d = sys.argv[1]
def st(path, key, n, v):
    h = json.dumps({key: {"dtype": "F32", "shape": [n], "data_offsets": [0, 4 * n]}}).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + struct.pack("<f", v) * n)
for side in ("ref", "target"):
    os.makedirs(d + "/" + side)
    st(d + "/%s/big.safetensors" % side, "layers.0.w", 1 << 20, 1.0)      # 4 MiB: mapped
    st(d + "/%s/other.safetensors" % side, "layers.1.w", 1 << 16, 2.0)
PY
cp -r "$DB_TMP/target" "$DB_TMP/target.orig"
# ASan: the shim goes before the runtime
shrink() { # shrink NTH TO CMD...: with the shim on target/big.safetensors
	local nth=$1 to=$2
	shift 2
	rm -rf "$DB_TMP/target" "$DB_TMP/cache"
	cp -r "$DB_TMP/target.orig" "$DB_TMP/target"
	LD_PRELOAD="$DB_TMP/shrink.so" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
		DB_SHRINK_PATH=target/big.safetensors DB_SHRINK_NTH=$nth DB_SHRINK_TO=$to \
		DUMPBISECT_READ=mmap timeout 60 "$@" >"$DB_TMP/out" 2>"$DB_TMP/err"
}

for run in 1 2 3; do
	shrink 2 1000000 "$DB_BIN" compare --no-cache -j 1 --format json "$DB_TMP/ref" "$DB_TMP/target"
	rc=$?
	[ $rc -le 1 ] || fail "worker map, run $run: exit $rc (135: SIGBUS): $(head -c 300 "$DB_TMP/err")"
	"$PY" - "$DB_TMP/out" <<'PY' || fail "worker map, run $run: $(head -c 600 "$DB_TMP/out")"
import json, re, sys
d = {p["ref_name"]: p for p in json.load(open(sys.argv[1]))["pairs"]}
e = d["big.safetensors:layers.0.w"]["error"] or ""
assert re.search(r"target/big\.safetensors: byte \d+: file changed while read", e), e
assert d["other.safetensors:layers.1.w"]["status"] == "ok", d["other.safetensors:layers.1.w"]
PY
done

shrink 1 0 "$DB_BIN" compare --no-cache -j 1 --format json "$DB_TMP/ref" "$DB_TMP/target"
rc=$?
[ $rc -le 1 ] || fail "index map: exit $rc (135: SIGBUS): $(head -c 300 "$DB_TMP/err")"
grep -q 'target/big.safetensors: byte 0: file changed while read' "$DB_TMP/out" ||
	fail "index map: no error for the file: $(head -c 600 "$DB_TMP/out")"
grep -q '"ref_name": "other.safetensors:layers.1.w".*"status": "ok"' "$DB_TMP/out" ||
	fail "index map: the other file not compared: $(head -c 600 "$DB_TMP/out")"

shrink 1 4096 "$DB_BIN" ls --stats "$DB_TMP/target/big.safetensors"
rc=$?
[ $rc -eq 2 ] || fail "ls --stats: exit $rc, want 2 (135: SIGBUS)"
grep -q "big.safetensors: entry 'layers.0.w': byte [0-9]*: file changed while read" "$DB_TMP/err" ||
	fail "ls --stats: $(cat "$DB_TMP/err")"
finish t_shrink
