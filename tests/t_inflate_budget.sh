#!/usr/bin/env bash
# Issue 26 item 6: inflated data is bounded per process, not only per file.
# Two trees of twelve .npz files, each a 40 KB member inflating to 40 MiB,
# compared with DUMPBISECT_INFLATE_MAX=100M:
# - in 250 MB of address space (ulimit -v; before, every worker and scan
#   thread held its files' inflated members: "out of memory inflating",
#   and twelve files of 1 GiB took 18.9 GB) every pair is computed, ok;
# - with 85M (one pair's two files need 80) and four workers, workers that
#   hold a file and find the budget busy close theirs and wait holding
#   nothing: no deadlock (timeout), every pair ok;
# - with 30M, a file that needs more than the whole budget gets an entry
#   error naming the variable; the others load.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
fresh_tmp
need_python "to write the .npz files"
# M MiB a member; the budgets below in proportion (an eighth of the data
# under the sanitizer, which does not apply the address-space limit)
M=40
sanitized && M=8
A=$((M * 5 / 2)) B=$((M * 2 + M / 8)) C=$((M * 3 / 4))
"$PY" - "$DB_TMP" "$M" <<'PY'
import os, shutil, sys, zipfile
out = sys.argv[1]
N = ((int(sys.argv[2]) << 20) - 128) // 4
hdr = ("{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % N).encode()
hdr += b" " * (64 - (10 + len(hdr) + 1) % 64) + b"\n"
npy = b"\x93NUMPY\x01\x00" + len(hdr).to_bytes(2, "little") + hdr
for side in ("ref", "target"):
    os.makedirs(out + "/" + side)
p0 = out + "/ref/layers.0.w.npz"
with zipfile.ZipFile(p0, "w", compression=zipfile.ZIP_DEFLATED) as z:
    with z.open("x.npy", "w", force_zip64=True) as f:
        f.write(npy)
        f.write(b"\0" * (N * 4))
for side in ("ref", "target"):
    for i in range(12):
        d = out + "/%s/layers.%d.w.npz" % (side, i)
        if d != p0:
            shutil.copy(p0, d)
PY
all_ok() { # all_ok JSON DESC: 12 pairs, all ok
	"$PY" - "$1" <<'PY' || fail "$2: $(head -c 400 "$1")"
import json, sys
d = json.load(open(sys.argv[1]))
bad = [(p["ref_name"], p["status"], p["error"]) for p in d["pairs"] if p["status"] != "ok"]
assert len(d["pairs"]) == 12 and not bad, bad[:2]
PY
}
(vlimit 250000; DUMPBISECT_INFLATE_MAX=${A}M MALLOC_ARENA_MAX=1 timeout 120 "$DB_BIN" compare \
	--no-cache --format json "$DB_TMP/ref" "$DB_TMP/target") >"$DB_TMP/a.json" 2>"$DB_TMP/a.err"
all_ok "$DB_TMP/a.json" "${A}M budget in 250 MB"
grep -q "out of memory" "$DB_TMP/a.json" "$DB_TMP/a.err" && fail "${A}M budget: out of memory"

DUMPBISECT_INFLATE_MAX=${B}M timeout 120 "$DB_BIN" compare --no-cache --format json -j 4 \
	"$DB_TMP/ref" "$DB_TMP/target" >"$DB_TMP/b.json" 2>"$DB_TMP/b.err"
rc=$?
[ $rc -ne 124 ] || fail "${B}M budget, 4 workers: hung (deadlock)"
all_ok "$DB_TMP/b.json" "${B}M budget, 4 workers"

expect 0 "${C}M budget" env DUMPBISECT_INFLATE_MAX=${C}M "$DB_BIN" ls "$DB_TMP/ref"
has "$out" "layers.3.w.npz: entry 'x': byte " "${C}M budget: the entry error names file, entry, offset"
has "$out" "inflate budget exceeded: the file's members declare more than the $C MiB the process may hold inflated (DUMPBISECT_INFLATE_MAX)" \
	"${C}M budget: says why"
finish t_inflate_budget
