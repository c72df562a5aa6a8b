#!/usr/bin/env bash
# Issue 26 item 7: a safetensors file with many tensors is not quadratic.
# Two trees of one file holding 200k one-element tensors each (written by
# the generator below): `ls` and `compare` finish under a CPU-time limit
# (ulimit -t; before the fix, finding each pair's tensor scanned the file's
# entries: 100k tensors took 97 s, 200k four times that) and every pair is
# compared with the right numbers.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
fresh_tmp
need_python "to write the safetensors files"
N=200000
sanitized && N=20000   # the scaling is checked by the plain build (common.sh)
gen() { # gen FILE BIAS: tensor "layers.I.w" = [I % 7 + BIAS], in reverse order
	"$PY" - "$1" "$2" "$N" <<'PY'
import json, struct, sys
out, bias, n = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
hdr = {}
for i in reversed(range(n)):
    hdr["layers.%d.w" % i] = {"dtype": "F32", "shape": [1], "data_offsets": [4 * i, 4 * i + 4]}
h = json.dumps(hdr, separators=(",", ":")).encode()
with open(out, "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h)
    f.write(struct.pack("<%df" % n, *[float(i % 7) + bias for i in range(n)]))
PY
}
mkdir -p "$DB_TMP/ref" "$DB_TMP/target"
gen "$DB_TMP/ref/m.safetensors" 0
gen "$DB_TMP/target/m.safetensors" 0.5

# CPU seconds, not wall time: the bound holds on a loaded machine
(ulimit -t 60; "$DB_BIN" ls "$DB_TMP/ref/m.safetensors") >"$DB_TMP/ls.out" 2>"$DB_TMP/ls.err"
rc=$?
[ $rc -eq 0 ] || fail "ls: exit $rc (137/152: over the CPU limit): $(head -c 300 "$DB_TMP/ls.err")"
[ "$(grep -c '^layers\.' "$DB_TMP/ls.out")" = $N ] || fail "ls: want $N tensors listed"

(ulimit -t 90; "$DB_BIN" compare --no-cache --format json "$DB_TMP/ref" "$DB_TMP/target") \
	>"$DB_TMP/cmp.json" 2>"$DB_TMP/cmp.err"
rc=$?
[ $rc -le 1 ] || fail "compare: exit $rc (137/152: over the CPU limit): $(head -c 300 "$DB_TMP/cmp.err")"
"$PY" - "$DB_TMP/cmp.json" "$N" <<'PY' || fail "compare: wrong pairs or numbers"
import json, sys
d = json.load(open(sys.argv[1])); n = int(sys.argv[2])
pairs = d["pairs"]
assert len(pairs) == n, len(pairs)
errs = [p for p in pairs if p.get("error")]
assert not errs, errs[:3]
# layer L holds L % 7 (ref) and L % 7 + 0.5 (target): max_abs 0.5 everywhere
bad = [p for p in pairs if abs(p["max_abs"] - 0.5) > 1e-6 or p["status"] != "ok"]
assert not bad, bad[:3]
PY
finish t_many_tensors
