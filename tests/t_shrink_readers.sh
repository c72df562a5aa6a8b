#!/bin/bash
# Issue 37: a file that shrinks while it is mapped, under each reader of mapped
# bytes that t_shrink.sh does not reach (the LD_PRELOAD shim
# tests/shrink_after_map.c truncates it right after its n-th mmap, or at the
# first inflate). Each run must end (no hang: 60 s bound) without a signal
# (135: SIGBUS), the file said as changed or unreadable:
#  A. the layout-transform vote, sampled from a metrics-cache lookup with no
#     guard of its own (bf16 weights read transposed): was SIGBUS;
#  B. a quantized checkpoint (GPTQ), every mapping of its reference in turn:
#     the vote inside a worker's guard jumped out holding the vote's lock (a
#     hang), the quantization hint sampled unguarded (SIGBUS);
#  C. msprobe dump.json shrunk mid-parse: the JSON budget was not given back,
#     every later dump.json waited for it forever;
#  D. a .pt whose deflated data.pkl is inflated from the shrunk mapping: the
#     pickle budget was not given back, the next .pt waited forever.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
fresh_tmp
need_python "to write the trees"
cc=${CC:-cc}
command -v "$cc" >/dev/null || { echo "skip: no C compiler for the shim"; exit 0; }
"$cc" -shared -fPIC -o "$DB_TMP/shrink.so" "$DB_SRC/tests/shrink_after_map.c" -ldl || exit 1
# run NAME ENV... -- CMD...: with the shim, 60 s at most; $rc, output in $DB_TMP/NAME.out
run() {
	name=$1
	shift
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	rm -rf "$DB_TMP/cache"
	env "${envs[@]}" LD_PRELOAD="$DB_TMP/shrink.so" XDG_CACHE_HOME="$DB_TMP/cache" \
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
		timeout 60 "$@" >"$DB_TMP/$name.out" 2>&1
	rc=$?
}
ends() { # ends DESC: the last run ended with 0 or 1
	[ $rc -le 1 ] || fail "$1: exit $rc (124: hung, 135: SIGBUS): $(tail -c 300 "$DB_TMP/$name.out")"
}

# A. bf16 weights, the target stored transposed (4 square q_proj, 128 KiB each)
"$PY" - "$DB_TMP/A" <<'PY'
import json, os, random, struct, sys
random.seed(1)
N = 256
def save(path, mats):
    hdr, blobs, off = {}, [], 0
    for k, m in mats.items():
        b = b"".join(struct.pack("<f", x)[2:4] for row in m for x in row)
        hdr[k] = {"dtype": "BF16", "shape": [N, N], "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(hdr).encode()
    h += b" " * (-len(h) % 8)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, "wb").write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
ws = {"model.layers.%d.self_attn.q_proj.weight" % L:
      [[random.gauss(0, 1) for _ in range(N)] for _ in range(N)] for L in range(4)}
save(sys.argv[1] + "/ref/model.safetensors", ws)
save(sys.argv[1] + "/target.orig/model.safetensors", {k: [list(r) for r in zip(*m)] for k, m in ws.items()})
PY
for nth in 1 2 3 4; do
	rm -rf "$DB_TMP/A/target" && cp -r "$DB_TMP/A/target.orig" "$DB_TMP/A/target"
	run A$nth DB_SHRINK_SAY=1 DB_SHRINK_PATH=A/target/model.safetensors DB_SHRINK_NTH=$nth \
		DB_SHRINK_TO=4096 -- "$DB_BIN" compare "$DB_TMP/A/ref" "$DB_TMP/A/target"
	ends "A, the target's mapping $nth (the vote's: 2)"
	# (a mapping the run never made truncates nothing)
	! grep -q "^shrink_after_map: truncated" "$DB_TMP/$name.out" ||
		grep -v "^shrink_after_map:" "$DB_TMP/$name.out" | grep -q "A/target/model.safetensors" ||
		fail "A$nth: the file is not named: $(tail -c 300 "$DB_TMP/$name.out")"
done

# B. GPTQ: each of the reference's mappings in turn
for nth in $(seq 1 11); do
	rm -rf "$DB_TMP/B" && cp -r "$DB_FIXTURES/quant/gptq" "$DB_TMP/B"
	run B$nth DB_SHRINK_PATH=B/ref/model.safetensors DB_SHRINK_NTH=$nth DB_SHRINK_TO=4096 -- \
		"$DB_BIN" compare "$DB_TMP/B/ref" "$DB_TMP/B/target"
	ends "B, the reference's mapping $nth (2: the vote in a worker, 10: the hint)"
done

# C. msprobe: 4 ranks a side, each dump.json ~100 KB (mapped); the budget holds
# one at a time; the first one mapped is cut to 8 KiB under its parse
"$PY" - "$DB_TMP/C" <<'PY'
import json, os, sys
for side in ("ref", "target"):
    for r in range(4):
        d = "%s/%s/step0/rank%d" % (sys.argv[1], side, r)
        os.makedirs(d)
        calls = {"Module.model.layers.%d.mlp.MLP.forward.0" % i:
                 {"output": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4, 64],
                              "Max": 1.0 + i, "Min": -1.0, "Mean": 0.5, "Norm": 3.0 + i,
                              "requires_grad": False}]} for i in range(300)}
        json.dump({"task": "statistics", "level": "L0", "data": calls}, open(d + "/dump.json", "w"),
                  indent=1)
PY
size=$(stat -c %s "$DB_TMP/C/ref/step0/rank0/dump.json")
# C and D jump out of a parse (or an inflate) half done: what it held (the
# parse's arena, zlib's state) is freed by the guard (db_bus_hold), so the
# sanitizer build's leak checker stays on for them.
run C DUMPBISECT_JSON_MAX=$((size * 3 / 2)) DB_SHRINK_PATH=/dump.json DB_SHRINK_NTH=1 DB_SHRINK_TO=8192 -- \
	"$DB_BIN" compare --no-cache "$DB_TMP/C/ref" "$DB_TMP/C/target"
ends "C, a dump.json cut under its parse"
grep -q "dump.json: byte [0-9]*: file changed while read" "$DB_TMP/C.out" ||
	fail "C: the cut file is not said: $(tail -c 300 "$DB_TMP/C.out")"
grep -q "pairs: 900 ok" "$DB_TMP/C.out" || fail "C: the other files did not load: $(tail -n 2 "$DB_TMP/C.out")"

# D. the demo trees; the target's file with the largest data.pkl gets an 80 KiB
# padding member (so it is mapped) and its data.pkl deflated, last; the pickle
# budget holds exactly that pickle
cp -r "$DB_FIXTURES/demo/ref" "$DB_TMP/Dref"
cp -r "$DB_FIXTURES/demo/target" "$DB_TMP/Dtgt"
read -r victim pkl < <("$PY" - "$DB_TMP/Dtgt" <<'PY'
import glob, io, sys, zipfile
def pkl(p):
    z = zipfile.ZipFile(p)
    return max(i.file_size for i in z.infolist() if i.filename.endswith("/data.pkl"))
files = sorted(glob.glob(sys.argv[1] + "/**/*.pt", recursive=True), key=pkl)
v = files[-1]
src = zipfile.ZipFile(v)
buf = io.BytesIO()
items = sorted(src.infolist(), key=lambda i: i.filename.endswith("/data.pkl"))
prefix = items[0].filename.split("/")[0]
with zipfile.ZipFile(buf, "w") as z:
    for i in items:
        if i.filename.endswith("/data.pkl"):
            z.writestr(prefix + "/pad", b"\0" * 81920)
        z.writestr(i.filename, src.read(i.filename), compress_type=zipfile.ZIP_DEFLATED
                   if i.filename.endswith("/data.pkl") else zipfile.ZIP_STORED)
open(v, "wb").write(buf.getvalue())
print(v, pkl(v))
PY
)
[ -n "$victim" ] || fail "D: no victim"
run D DUMPBISECT_PICKLE_MAX=$pkl DB_SHRINK_AT=inflate DB_SHRINK_FILE="$victim" DB_SHRINK_TO=4096 -- \
	"$DB_BIN" compare --no-cache "$DB_TMP/Dref" "$DB_TMP/Dtgt"
ends "D, a .pt inflating its data.pkl from a cut mapping"
grep -q "${victim##*/}: byte [0-9]*: file changed while read" "$DB_TMP/D.out" ||
	fail "D: the cut file is not said: $(tail -c 300 "$DB_TMP/D.out")"
finish t_shrink_readers
