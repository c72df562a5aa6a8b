#!/bin/bash
# Issue 12: the bytes of contiguous stored tensors reach the metrics loop
# either through the file mapping or read into per-worker buffers
# (DUMPBISECT_READ=auto|pread|mmap|populate; auto is the default). Every path
# and every thread count must give byte-identical JSON: on every fixture
# tree with a ref/ and a target/ side (bf16, fp32, strided views, npz,
# merged shards, batch slots), and on tensors big enough to span several
# chunks and read pieces, with dtypes of different sizes on the two sides.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
need_python "to write the big tensors"

# Every path and both thread counts on the big tensors (chunks and pieces
# cross there); on the ~90 fixture trees every path and every thread count
# at least once. Under the sanitizer (0.4 s a start there) one tree in
# three is compared twice: auto against one other path in turn (the whole
# 8-run matrix on each tree took 216 s of CI, then timed out under load).
FULL="auto:1 auto:3 pread:1 pread:3 mmap:1 mmap:3 populate:1 populate:3"
TREES="auto:1 auto:3 pread:3 mmap:1 populate:3"
ROTATE=""
sanitized && ROTATE="pread:3 mmap:3 populate:1"

# one compare per read path and thread count; all outputs equal the first
same_everywhere() { # DESC REF TARGET RUNS
	local desc=$1 ref=$2 tgt=$3 first="" n=0 run path j
	for run in $4; do
		path=${run%:*} j=${run#*:}
		# --follow-links: noise_miles_engine links another fixture's engines in
		DUMPBISECT_READ=$path timeout 60 "$DB_BIN" compare "$ref" "$tgt" --follow-links \
			--format json --no-cache -j "$j" >"$DB_TMP/rp.$path.$j.json" 2>"$DB_TMP/rp.err"
		local rc=$?
		[ "$rc" -le 1 ] || { fail "$desc: $path -j $j exit $rc: $(head -c 300 "$DB_TMP/rp.err")"; continue; }
		if [ -z "$first" ]; then
			first=$DB_TMP/rp.$path.$j.json
		elif ! cmp -s "$first" "$DB_TMP/rp.$path.$j.json"; then
			fail "$desc: $path -j $j differs from $(basename "$first")"
		fi
		n=$((n + 1))
	done
	[ -s "$first" ] || fail "$desc: no output"
}

seen=0
while IFS= read -r -d '' side; do
	d=$(dirname "$side")
	[ -d "$d/target" ] || continue
	seen=$((seen + 1))
	if [ -n "$ROTATE" ]; then
		# one tree in three (every format and layout has several): the
		# plain build reads every tree every way
		[ $((seen % 3)) -eq 0 ] || continue
		set -- $ROTATE
		shift $((seen / 3 % $#))
		TREES="auto:1 $1"
	fi
	same_everywhere "${d#"$DB_FIXTURES"/}" "$d/ref" "$d/target" "$TREES"
done < <(find "$DB_FIXTURES" -type d -name ref -print0 | sort -z)
[ "$seen" -ge 20 ] || fail "only $seen fixture trees found"

# big tensors: 5,000,000 elements (> 2 chunks of 2^21, many read pieces,
# an odd tail), float32 against float32 and float32 against float16, one
# injected maximum near the end (argmax across chunk and piece bounds)
rm -rf "$DB_TMP/big"
"$PY" - "$DB_TMP/big" <<'PY' || fail "writing the big tensors"
import array, os, struct, sys
out, n = sys.argv[1], 5_000_000
def npy(path, code, shape, raw):
    h = "{'descr': '<%s', 'fortran_order': False, 'shape': %s, }" % (code, shape)
    h += " " * (-(len(h) + 11) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode() + raw)
x = array.array("f", (((i * 2654435761) % 1000003) / 1000003.0 - 0.5 for i in range(n)))
y = array.array("f", (v + (((i * 40503) % 997) - 498) * 1e-6 for i, v in enumerate(x)))
y[4_999_001] += 3.0
for side in ("ref", "target"):
    os.makedirs(os.path.join(out, side), exist_ok=True)
npy(os.path.join(out, "ref", "a.npy"), "f4", "(%d,)" % n, x.tobytes())
npy(os.path.join(out, "target", "a.npy"), "f4", "(%d,)" % n, y.tobytes())
npy(os.path.join(out, "ref", "b.npy"), "f4", "(1000, 5000)", x.tobytes())
npy(os.path.join(out, "target", "b.npy"), "f2", "(1000, 5000)", struct.pack("<%de" % n, *y))
PY
same_everywhere "big tensors" "$DB_TMP/big/ref" "$DB_TMP/big/target" "$FULL"
grep -q '"argmax": *4999001' "$DB_TMP/rp.auto.1.json" || fail "big tensors: argmax not 4999001"

finish t_readpath
