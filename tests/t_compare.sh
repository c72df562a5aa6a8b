#!/bin/bash
# dumpbisect compare: exit codes, the table's verdict lines, JSON/CSV shape,
# thread-count independence, a corrupt file, empty/missing/one-sided input.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

expect 0 "identical trees" "$DB_BIN" compare "$L/sglang_v1/ref" "$L/sglang_v1/ref"
has "$out" "no divergence: every pair is in the ok band" "identical trees"

expect 1 "divergent trees" "$DB_BIN" compare "$L/sglang_v1/ref" "$L/sglang_v1/target"
has "$out" "profile sglang-v1" "divergent trees"
has "$out" "first divergence: L2 attn.o_proj every rank (of 2) pass 0" "divergent trees"
has "$out" "(dtype float32 vs bfloat16)" "dtype flagged"

expect 1 "miles phases" "$DB_BIN" compare "$L/miles/baseline" "$L/miles/target"
has "$out" "first divergent phase: fwd_only" "miles phases"

expect 1 "one folder, both sides" "$DB_BIN" compare "$L/atom_fwd"
has "$out" "profile atom-fwd" "one folder"
# ATOM's hooks (no prefix: target) beside the reference's ref_ files
expect 1 "one folder, hooks and ref_ files" "$DB_BIN" compare "$L/atom_onedir"
has "$out" "first divergence: L2 hidden_out rank 0" "atom one folder"
has "$out" "8 pairs: 5 ok" "atom one folder"
# the one-shot reference beside per-call hooks: nothing pairs, and the
# summary says which field keeps them apart
rm -rf "$DB_TMP/atom_calls" && mkdir -p "$DB_TMP/atom_calls"
cp "$L"/atom_onedir/ref_*.pt "$L"/atom_hooks/target/*.pt "$DB_TMP/atom_calls/"
expect 1 "one-shot ref vs calls" "$DB_BIN" compare "$DB_TMP/atom_calls"
has "$out" "unpaired: 8 ref tensors have a target tensor of the same layer and stage; e.g. L0 hidden_in differs in pass (none) vs 0 (ref vs target)" "one-shot ref vs calls"
# a real Miles tree: every tensor pairs (repeated core fields by occurrence),
# the engine diverges first, the trainer's gradients diverge too, the
# weights do not
M=$DB_FIXTURES/upstream/miles
expect 1 "real miles" "$DB_BIN" compare "$M/ref" "$M/target"
has "$out" "81 pairs: 57 ok, 0 drift, 2 algo, 22 bug, 0 scramble; 0 ref_only, 0 target_only, 0 shape_mismatch, 0 error" "real miles"
has "$out" "first divergent phase: inference" "real miles"
has "$out" "first divergence: L2 output rank 0 pass 0 phase inference" "real miles"
grep -qE '^X +fwd_bwd.grad 0 +2 +0 +output .* bug$' <<<"$out" || fail "real miles: layer 2's output gradient diverges"
grep -qE '^[.] +fwd_bwd.param 0 +2 +0 +self_attention.linear_qkv.weight.* ok$' <<<"$out" || fail "real miles: weights equal"
grep -qE '^X +fwd_only +0 +2 +0 +output .* bug$' <<<"$out" || fail "real miles: fwd_only layer 2 output"
# a stage name wider than its column is still followed by a blank
has "$out" "self_attention.linear_qkv.weight [128, 64]" "real miles: long stage name"
# weights first (seed 002, phase 1): one scrambled shard, a dtype that differs
expect 1 "atom weights" "$DB_BIN" compare "$L/atom_weights"
has "$out" "profile atom-weights" "atom weights"
has "$out" "first divergence: L2 attn.wo rank 1: cos -1.00000000" "atom weights"
has "$out" "80 pairs: 79 ok" "atom weights"
has "$out" "ok (dtype float32 vs bfloat16)" "atom weights"
# one side only: an error when given once, the tree against itself when twice
expect 2 "one folder, one side" "$DB_BIN" compare "$L/atom_refpatch"
has "$err" "profile atom finds no target side in it" "one side"
expect 0 "one-sided folder twice" "$DB_BIN" compare "$L/atom_refpatch" "$L/atom_refpatch"
has "$out" "20 pairs: 20 ok" "one-sided folder twice"

# JSON: the contract's fields on every pair, one pair per line
expect 1 "json" "$DB_BIN" compare --format json "$L/sglang_v1/ref" "$L/sglang_v1/target"
head -c 30 <<<"$out" | grep -qF '{"profile": "sglang-v1"' || fail "json: starts with the profile"
npairs=$(grep -c '^  {"phase": ' <<<"$out")
[ "$npairs" -ge 240 ] || fail "json: $npairs pairs"
for f in '"pass": ' '"rank": ' '"layer": ' '"stage": ' '"ref_name": ' '"target_name": ' \
         '"shape": [' '"dtype_ref": ' '"dtype_target": ' '"status": ' '"cos": ' '"rel": ' \
         '"rel_l2": ' '"rel_diff": ' '"max_abs": ' '"mean_abs": ' '"severity": ' '"error": '; do
	n=$(grep '^  {"phase": ' <<<"$out" | grep -cF -- "$f")
	[ "$n" = "$npairs" ] || fail "json: field $f on $n of $npairs pairs"
done
grep -qF '"phase": null, "pass": 0, "rank": 0, "layer": 2, "stage": "attn.o_proj"' <<<"$out" ||
	fail "json: fields of L2 attn.o_proj"
grep -qE '"cos": 1(\.0+)?, "rel": 0, ' <<<"$out" || fail "json: exact numbers"
tail -c 4 <<<"$out" | grep -qF ']}' || fail "json: closes"

# identical output with 1 and 3 threads
"$DB_BIN" compare --no-cache --format json --threads 1 "$L/fwd_hook/ref" "$L/fwd_hook/target" >"$DB_TMP/t1.json"
"$DB_BIN" compare --no-cache --format json --threads=3 "$L/fwd_hook/ref" "$L/fwd_hook/target" >"$DB_TMP/t3.json"
cmp -s "$DB_TMP/t1.json" "$DB_TMP/t3.json" || fail "threads: output differs between 1 and 3 threads"
# the metrics cache: the second run is served from it, same output
rm -rf "$XDG_CACHE_HOME"
"$DB_BIN" compare --format json "$L/fwd_hook/ref" "$L/fwd_hook/target" >"$DB_TMP/c1.json"
ls "$XDG_CACHE_HOME"/dumpbisect/*.cache >/dev/null 2>&1 || fail "cache: no cache file written"
"$DB_BIN" compare --format json "$L/fwd_hook/ref" "$L/fwd_hook/target" >"$DB_TMP/c2.json"
cmp -s "$DB_TMP/t1.json" "$DB_TMP/c1.json" || fail "cache: first run differs"
cmp -s "$DB_TMP/t1.json" "$DB_TMP/c2.json" || fail "cache: cached run differs"
echo garbage >"$(ls "$XDG_CACHE_HOME"/dumpbisect/*.cache | head -1)"
"$DB_BIN" compare --format json "$L/fwd_hook/ref" "$L/fwd_hook/target" >"$DB_TMP/c3.json"
cmp -s "$DB_TMP/t1.json" "$DB_TMP/c3.json" || fail "cache: corrupt cache changed the output"

expect 1 "csv" "$DB_BIN" compare --format csv "$L/generic_st/ref" "$L/generic_st/target"
[ "$(head -1 <<<"$out")" = "phase,pass,rank,layer,stage,ref_name,target_name,shape,dtype_ref,dtype_target,status,cos,rel,rel_l2,rel_diff,max_abs,mean_abs,byte_equal,severity,error,statistics_only,word,judged_by,hint" ] ||
	fail "csv: header"
[ "$(wc -l <<<"$out")" = 61 ] || fail "csv: $(wc -l <<<"$out") lines, want 61"

# byte-equal: "==" (the ASCII of ≡) for bit-identical pairs, a percentage
# else, "-" when the dtypes differ; the CSV has the fraction
expect 1 "bytes" "$DB_BIN" compare "$L/atom_weights"
grep -qE '^\.   0 +0 +attn\.wq .* 1\.00000000 +0\.0000e\+00 +== +ok$' <<<"$out" || fail "bytes: == for identical"
grep -qE '^#   2 +1 +attn\.wo .* 0\.0% +scramble( |$)' <<<"$out" || fail "bytes: 0.0% for the sign flip"
grep -qE ' attn_norm .* 1\.00000000 .* - +ok \(dtype float32 vs bfloat16\)$' <<<"$out" || fail "bytes: - across dtypes"
expect 1 "bytes csv" "$DB_BIN" compare --format csv "$L/atom_weights"
grep -q '^,,0,0,attn\.wq,.*,ok,1,0,0,0,0,0,1,ok,' <<<"$out" || fail "bytes csv: byte_equal 1"

# cache trust: a dump rewritten in place with the same size and its mtime
# put back (touch -r) is not served from the cache: the key has inode +
# ctime, which the rewrite changes
CT=$DB_TMP/trust
rm -rf "$CT"
cp -r "$L/generic_npy" "$CT"
O=$CT/target/layer2.attn.o_proj.npy
"$DB_BIN" compare --format csv "$CT/ref" "$CT/target" >"$DB_TMP/trust1.csv"
grep -q ',2,attn\.o_proj,.*,bug,' "$DB_TMP/trust1.csv" || fail "cache trust: L2 o_proj is not bug before"
cp -p "$O" "$CT/stamp"
cat "$CT/ref/layer2.attn.o_proj.npy" >"$O"       # same size, same inode, new bytes
touch -r "$CT/stamp" "$O"
[ "$(stat -c %s.%Y "$O")" = "$(stat -c %s.%Y "$CT/stamp")" ] || fail "cache trust: size/mtime not restored"
"$DB_BIN" compare --format csv "$CT/ref" "$CT/target" >"$DB_TMP/trust2.csv"
grep -q ',2,attn\.o_proj,.*,ok,1,0,0,0,0,0,1,ok,' "$DB_TMP/trust2.csv" ||
	fail "cache trust: old numbers served: $(grep ',2,attn\.o_proj,' "$DB_TMP/trust2.csv")"

# --filter: only matching stages
expect 1 "filter" "$DB_BIN" compare --format csv --filter '^attn\.o_proj$' "$L/generic_st/ref" "$L/generic_st/target"
[ "$(wc -l <<<"$out")" = 5 ] || fail "filter: $(wc -l <<<"$out") lines, want 5"

# a corrupt file: one error pair, the rest still compares
rm -rf "$DB_TMP/corrupt"
mkdir -p "$DB_TMP/corrupt"
cp -R "$L/generic_npy/ref" "$L/generic_npy/target" "$DB_TMP/corrupt/"
head -c 40 "$L/generic_npy/target/layer1.ffn_out.npy" >"$DB_TMP/corrupt/target/layer1.ffn_out.npy"
expect 1 "corrupt" "$DB_BIN" compare --format json "$DB_TMP/corrupt/ref" "$DB_TMP/corrupt/target"
[ "$(grep -c '"status": "error"' <<<"$out")" = 1 ] || fail "corrupt: one error pair"
grep '"status": "error"' <<<"$out" | grep -qF 'layer1.ffn_out.npy' || fail "corrupt: error names the file"
[ "$(grep -c '"status": "ok"' <<<"$out")" = 59 ] || fail "corrupt: 59 other pairs compared"
expect 1 "corrupt table" "$DB_BIN" compare "$DB_TMP/corrupt/ref" "$DB_TMP/corrupt/target"
has "$out" "1 error" "corrupt table"

# two single files: their one tensor each is compared whatever the names
expect 1 "two files" "$DB_BIN" compare --no-cache "$DB_FIXTURES/pt/f32.pt" "$DB_FIXTURES/pt/f64.pt"
has "$out" "1 pairs: 0 ok" "two files"
expect 0 "file with itself" "$DB_BIN" compare --no-cache "$DB_FIXTURES/pt/f32.pt" "$DB_FIXTURES/pt/f32.pt"

# input errors: exit 2, never a silent pass
mkdir -p "$DB_TMP/empty1" "$DB_TMP/empty2"
expect 2 "empty dirs" "$DB_BIN" compare "$DB_TMP/empty1" "$DB_TMP/empty2"
[ -n "$err" ] || fail "empty dirs: no message"
expect 2 "empty target" "$DB_BIN" compare --profile generic "$L/generic_npy/ref" "$DB_TMP/empty2"
has "$err" "no tensors" "empty target"
expect 2 "missing" "$DB_BIN" compare "$DB_TMP/nope" "$L/sglang_v1/target"
has "$err" "nope" "missing"
expect 2 "one-sided folder" "$DB_BIN" compare "$L/sglang_v1/ref"
expect 2 "no args" "$DB_BIN" compare
expect 2 "unknown option" "$DB_BIN" compare --bogus "$L/sglang_v1/ref" "$L/sglang_v1/target"
expect 2 "bad format" "$DB_BIN" compare --format xml "$L/sglang_v1/ref" "$L/sglang_v1/target"
expect 2 "bad threads" "$DB_BIN" compare --threads 0 "$L/sglang_v1/ref" "$L/sglang_v1/target"
expect 2 "bad regex" "$DB_BIN" compare --filter '([' "$L/sglang_v1/ref" "$L/sglang_v1/target"
expect 2 "unknown profile" "$DB_BIN" compare --profile no-such-profile "$L/sglang_v1/ref" "$L/sglang_v1/target"
expect 0 "help" "$DB_BIN" compare --help
has "$out" "usage: dumpbisect compare" "help"

finish t_compare
