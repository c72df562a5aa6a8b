#!/bin/bash
# Issue 26 item 1 in the workbench: a dump file that shrinks under a
# worker's mapping (tests/shrink_after_map.c truncates it right after the
# worker maps it: the index's open is the 1st mapping) is an error for that
# pair, the tree is scanned again (the file, now short, is refused: "no
# tgt"), the rest is drawn, and the workbench goes on (before: "internal
# error: SIGBUS ... in a worker thread" and death).
. "$DB_SRC/tests/tui/lib.sh"
cc=${CC:-cc}
command -v "$cc" >/dev/null || { echo "skip: no C compiler for the shim"; exit 0; }
command -v python3 >/dev/null || { echo "FAIL: python3 is needed"; exit 1; }
"$cc" -shared -fPIC -o "$T/shrink.so" "$DB_SRC/tests/shrink_after_map.c" -ldl
python3 - "$T" <<'PY'
import json, os, struct, sys
d = sys.argv[1]
def st(path, key, n, v):
    h = json.dumps({key: {"dtype": "F32", "shape": [n], "data_offsets": [0, 4 * n]}}).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + struct.pack("<f", v) * n)
for side in ("ref", "target"):
    os.makedirs(d + "/" + side)
    st(d + "/%s/big.safetensors" % side, "layers.0.w", 1 << 20, 1.0)
    st(d + "/%s/other.safetensors" % side, "layers.1.w", 1 << 16, 2.0)
PY
TUI_ENV="LD_PRELOAD=$T/shrink.so ASAN_OPTIONS=verify_asan_link_order=0 DB_SHRINK_PATH=target/big.safetensors DB_SHRINK_NTH=2 DB_SHRINK_TO=1000000 DUMPBISECT_READ=mmap" \
	tui_run 100 24 --no-cache -j 1 "$T/ref" "$T/target" <<EOF
:save-display $T/shrink.screen
EOF
check "no internal error" bash -c "! grep -q 'internal error' '$T/stderr'"
check "the file really shrank" test "$(stat -c %s "$T/target/big.safetensors")" = 1000000
check "the big cell is not ok" grep_screen shrink 'L0 +▸(‽ +error|◁ +no tgt)'
check "the other layer is computed" grep_screen shrink 'L1 +✓'
finish
