#!/bin/bash
# Issue 37, msprobe's dump.json under attack; each case failed before its fix:
#  - a statistics-only shape of [2^44] (a 214-byte file) took 1.87 GB, a pool task
#    per 2^21 of its elements: statistics need one (here under a 600 MB ulimit);
#  - 37-byte tensor records: a 37 MB dump.json took 2.0 GB (one call's parsed tree
#    1.2 GB). One call's parsed form is capped (64 MiB: that call is an error, the
#    others load), a file's entries too (DUMPBISECT_JSON_ENTRIES): refused by name;
#  - shape [2^48, 2^48]: signed overflow (UBSan) and accepted; now an entry error;
#  - md5 "-1" read as CRC 0xffffffff; now "not a CRC-32 in hex";
#  - two top-level "data" members were merged; now the file is refused;
#  - one bad call (not JSON inside, a second call of one name, the file cut in a
#    call) dropped the whole file; now that call is an error naming the file, the
#    call and the byte, and the other calls load;
#  - data_name through a link out of the tree was read; now the pair says it is
#    refused, as the walk refuses such links.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
fresh_tmp
need_python "to write the dump.json files"
M=$DB_TMP/ms
"$PY" - "$M" <<'PY'
import json, os, sys
M = sys.argv[1]
def put(name, side, text):
    d = "%s/%s/%s/step0/rank0" % (M, name, side)
    os.makedirs(d)
    open(d + "/dump.json", "w").write(text)
def t(v, shape=[4], **kw):
    d = {"type": "torch.Tensor", "dtype": "torch.float32", "shape": shape, "Max": v, "Min": v,
         "Mean": v, "Norm": v}
    d.update(kw)
    return d
def doc(calls, task="statistics"):
    return json.dumps({"task": task, "level": "L0", "data": calls}, indent=1)
three = {"Module.model.layers.%d.mlp.MLP.forward.0" % i: {"output": [t(1.0 + i)]} for i in range(3)}
good = doc(three)
# [2^44], statistics only, both sides
big = ('{"task":"statistics","level":"L1","dump_data_dir":null,"data":{"Functional.linear.0.forward":'
       '{"output":[{"type":"torch.Tensor","dtype":"torch.float32","shape":[17592186044416],'
       '"Max":1,"Min":1,"Mean":1,"Norm":1}]}}}')
for s in ("ref", "target"):
    put("big44", s, big)
# 1M 37-byte records in one call (37 MB)
rec = '{"dtype":"torch.float32","shape":[1]}'
put("wide", "ref", '{"task":"statistics","level":"L1","data":{"Functional.linear.0.forward":'
    '{"output":[' + ",".join([rec] * 1000000) + ']},' + '"Module.model.layers.1.mlp.MLP.forward.0":'
    + json.dumps({"output": [t(2.0)]}) + '}}')
# many calls: over a small DUMPBISECT_JSON_ENTRIES
put("many", "ref", doc({"Functional.a.%d.forward" % i: {"output": [t(1.0)]} for i in range(50)}))
# shape [2^48, 2^48]
c = json.loads(good)["data"]
c["Module.model.layers.1.mlp.MLP.forward.0"]["output"][0]["shape"] = [2**48, 2**48]
put("huge", "ref", doc(c))
# md5 "-1"
c = json.loads(good)["data"]
for i, v in enumerate(c.values()):
    v["output"][0]["md5"] = "-1" if i == 1 else "0000abcd"
put("md5", "ref", doc(c, "md5"))
# two "data" members
put("twodata", "ref", good[:-2] + ',\n "data": ' + json.dumps({"Module.model.layers.5.mlp.MLP.forward.0":
    {"output": [t(9.0)]}}) + "\n}")
# a call that is not JSON inside, a second call of one name, a file cut in a call
put("syntax", "ref", good.replace('"Max": 2.0', '"Max": 2.0,,', 1))
put("dup", "ref", good.replace('"Module.model.layers.2.mlp.MLP.forward.0"',
                               '"Module.model.layers.1.mlp.MLP.forward.0"'))
put("cut", "ref", good[:good.index('"Module.model.layers.2.mlp') + 60])
PY

# peak_mb MAX DESC CMD...: CMD's peak RSS (its own and its children's) is under
# MAX MB; not checked under AddressSanitizer (its shadow and quarantine)
peak_mb() {
	local max=$1 desc=$2
	shift 2
	ldd "$DB_BIN" 2>/dev/null | grep -q libasan && return
	local kb
	kb=$("$PY" -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@")
	[ -n "$kb" ] && [ "$kb" -lt $((max * 1024)) ] || fail "$desc: peak RSS ${kb:-?} KB, over $max MB"
}

# 2^44: one task, not 2^23 of them (1.87 GB before)
peak_mb 200 "[2^44] statistics-only pair" \
	"$DB_BIN" compare --no-cache --format json "$M/big44/ref" "$M/big44/target"
expect 0 "[2^44] statistics-only pair" "$DB_BIN" compare --no-cache --format json "$M/big44/ref" "$M/big44/target"
has "$out" '"statistics_only": true' "[2^44]: measured on its statistics"

# one 37 MB call: that call refused by name, the other call loads
peak_mb 400 "37 MB of 37-byte records" "$DB_BIN" ls "$M/wide/ref"
expect 0 "37 MB of 37-byte records" "$DB_BIN" ls "$M/wide/ref"
has "$out" 'dump.json: byte ' "wide: the byte named"
has "$out" 'parsed form over its cap (64 MiB) at byte ' "wide: the call's cap said"
has "$out" 'in $.data["Functional.linear.0.forward"]' "wide: the call named"
has "$out" "layers   - 1, 1 1" "wide: the other call loads"
# entries of one file over DUMPBISECT_JSON_ENTRIES: the file refused by name
DUMPBISECT_JSON_ENTRIES=20 expect 0 "50 entries over a limit of 20" "$DB_BIN" ls "$M/many/ref"
has "$out$err" "dump.json: byte " "many: the byte named"
has "$out$err" "msprobe dump.json with more than 20 tensor entries: refused" "many: refused by name"

expect 0 "shape [2^48, 2^48]" "$DB_BIN" ls "$M/huge/ref"
has "$out" '$.data["Module.model.layers.1.mlp.MLP.forward.0"].output[0]: a shape of more than 2^63 bytes' \
	"[2^48, 2^48]: refused"
expect 0 "md5 -1" "$DB_BIN" ls "$M/md5/ref"
has "$out" '$.data["Module.model.layers.1.mlp.MLP.forward.0"].output[0]: md5 is not a CRC-32 in hex' \
	"md5 -1: refused"
expect 0 "two data members" "$DB_BIN" ls "$M/twodata/ref"
has "$out$err" '$.data: a second "data" member' "two data members: refused"

for v in syntax dup cut; do
	expect 0 "$v" "$DB_BIN" ls "$M/$v/ref"
	has "$out" "0 refused" "$v: the file is not refused"
	has "$out" "$M/$v/ref/step0/rank0/dump.json: byte " "$v: the file and byte named"
	has "$out" '$.data["Module.model.layers.' "$v: the call named"
done
has "$("$DB_BIN" ls "$M/syntax/ref")" "layers   0 1, 1 1, 2 1" "syntax: the calls around it load"
has "$("$DB_BIN" ls "$M/dup/ref")" "a second call of that name (the first one is read)" "dup: said"
has "$("$DB_BIN" ls "$M/cut/ref")" "layers   0 1, 1 1, 2 1" "cut: the calls before the cut load"

# data_name through a link out of the tree (tensor task)
R=$DB_FIXTURES/realdump/ms_tensor_tp1
cp -r "$R/ref" "$DB_TMP/lref"
cp -r "$R/target" "$DB_TMP/ltgt"
mkdir -p "$DB_TMP/outside"
f=$(cd "$DB_TMP/ltgt" && ls step0/*/dump_tensor_data/Module.model.layers.6.LlamaDecoderLayer.forward.0.output.0.pt)
mv "$DB_TMP/ltgt/$f" "$DB_TMP/outside/x.pt"
ln -s "$DB_TMP/outside/x.pt" "$DB_TMP/ltgt/$f"
"$DB_BIN" compare --no-cache --format json "$DB_TMP/lref" "$DB_TMP/ltgt" >"$DB_TMP/link.json" 2>/dev/null
"$PY" - "$DB_TMP/link.json" "$DB_TMP/outside/x.pt" <<'PY' || fail "data_name through a link out of the tree was read"
import json, sys
c = json.load(open(sys.argv[1]))
p = [p for p in c["pairs"] if p["layer"] == 6 and p["stage"] == "hidden_out"]
assert p and p[0]["status"] == "error", p
assert "a link out of the tree (to %s); not followed" % sys.argv[2] in p[0]["error"], p[0]["error"]
# the other data files of the layer are still read
assert [q for q in c["pairs"] if q["layer"] == 6 and q["status"] == "ok" and not q.get("statistics_only")]
PY
finish t_msprobe_hostile
