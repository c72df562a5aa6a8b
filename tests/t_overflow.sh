#!/bin/bash
# Issue 37: sizes from a file multiplied past 64 bits were signed overflow
# (undefined behaviour: the ASan+UBSan build aborts on it). Now checked, with
# an error naming the file and the entry; the other pairs are compared:
#  - GPTQ int4 qweight declared [2^61, 0] (no bytes, so no size check stops
#    it), unpacked times 8 along its rows (read/quant.c);
#  - msprobe's shape [2^48, 2^48] is in t_msprobe_hostile.sh.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
fresh_tmp
need_python "to edit the safetensors header"
Q=$DB_TMP/q
cp -r "$DB_FIXTURES/quant/gptq" "$Q"
"$PY" - "$Q/target/model.safetensors" <<'PY'
import json, struct, sys
p = sys.argv[1]
b = open(p, "rb").read()
n = struct.unpack("<Q", b[:8])[0]
h = json.loads(b[8:8 + n])
data = b[8 + n:]
meta = h.pop("__metadata__", None)
k = "model.layers.2.self_attn.q_proj.qweight"
out, off, nh = [], 0, {}
for name, v in sorted(h.items(), key=lambda kv: kv[1]["data_offsets"][0]):
    s, e = v["data_offsets"]
    blob = b"" if name == k else data[s:e]
    v = dict(v, data_offsets=[off, off + len(blob)])
    if name == k:
        v["shape"] = [2**61, 0]
    nh[name] = v
    out.append(blob)
    off += len(blob)
if meta is not None:
    nh["__metadata__"] = meta
hb = json.dumps(nh).encode()
hb += b" " * (-len(hb) % 8)
open(p, "wb").write(struct.pack("<Q", len(hb)) + hb + b"".join(out))
PY
expect 1 "qweight [2^61, 0]" "$DB_BIN" compare "$Q/ref" "$Q/target"
has "$out" "model.safetensors:model.layers.2.self_attn.q_proj.qweight: codes' dim of 2305843009213693952 times 8 (rule gptq) overflows 64 bits" \
	"qweight [2^61, 0]: the error"
has "$out" "9 pairs: 3 ok" "qweight [2^61, 0]: the other pairs compared"
finish t_overflow
