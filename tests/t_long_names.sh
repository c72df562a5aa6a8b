#!/bin/bash
# Names longer than their field are refused, never merged (issue 26 item
# 14). A stage is kept to 255 bytes (a phase or pass to 31); a reference
# "model.layers.0.<260 x>.q_proj" and a target "...k_proj" agree in their
# first 255 bytes and used to become one pair, a "scramble" of two
# different tensors. Now each such tensor is an error naming its file and
# entry ("stage name longer than 255 bytes: refused"), in a pair of its own;
# the tensors with names that fit are compared as before.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
need_python "to write the safetensors and read the JSON"
fresh_tmp
cd "$DB_TMP" || exit 1
"$PY" - <<'PY'
import json, struct, os
def st(path, tensors):
    hdr, data = {}, b''
    for k, vals in tensors.items():
        b = struct.pack('<%df' % len(vals), *vals)
        hdr[k] = {"dtype": "F32", "shape": [len(vals)], "data_offsets": [len(data), len(data) + len(b)]}
        data += b
    h = json.dumps(hdr).encode()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, 'wb').write(struct.pack('<Q', len(h)) + h + data)
P = "model.layers.0." + "x" * 260
F = "model.layers.0." + "y" * 230      # fits: 241 + ".o_proj" = 248 bytes
st("ref/m.safetensors", {P + ".q_proj": [1, 2, 3, 4], "model.layers.0.mlp": [1, 2, 3, 4],
                         F + ".o_proj": [1, 2, 3, 5]})
st("target/m.safetensors", {P + ".k_proj": [-4, 3, -2, 1], "model.layers.0.mlp": [1, 2, 3, 4],
                            F + ".o_proj": [1, 2, 3, 5]})
PY
# exit 1: the refused tensors are errors (a pair unreadable)
expect 1 "compare" "$DB_BIN" compare ref target --format json
printf '%s' "$out" >compare.json
"$PY" - compare.json <<'PY' || fail "compare JSON: see above"
import json, sys
d = json.load(open(sys.argv[1]))
bad = []
long = [p for p in d["pairs"] if "xxxx" in p["stage"]]
if len(long) != 2:
    bad.append("want 2 pairs for the two long names (one each), got %d" % len(long))
for p in long:
    if p["status"] != "error":
        bad.append("a long name was compared: status %s" % p["status"])
    e = p.get("error") or ""
    if "stage name longer than 255 bytes: refused" not in e or "/m.safetensors: entry 'model.layers.0.xxx" not in e:
        bad.append("error does not name the file and entry: %r" % e[:200])
if len({p["stage"] for p in long}) != len(long):
    bad.append("the two long names share a stage")
if any(p["status"] == "scramble" for p in d["pairs"]):
    bad.append("a scramble: two names merged into one pair")
ok = {p["stage"]: p["status"] for p in d["pairs"] if "xxxx" not in p["stage"]}
if ok.get("mlp") != "ok" or not any(s.endswith(".o_proj") and v == "ok" for s, v in ok.items()):
    bad.append("the names that fit are not compared: %r" % ok)
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
# ls names the file too
expect 0 "ls" "$DB_BIN" ls ref
has "$out" "ref/m.safetensors: entry 'model.layers.0.xxxx" "ls lists the refused entry"
has "$out" "stage name longer than 255 bytes: refused" "ls says why"
finish t_long_names
