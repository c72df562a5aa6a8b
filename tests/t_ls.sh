#!/bin/bash
# dumpbisect ls: a tree (profile and why, counts, unparsed and skipped
# files — a FIFO is listed, never opened), a single file (JSON contract,
# --stats), a refused file (exit 2, message on stderr).
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

expect 0 "tree" "$DB_BIN" ls "$L/sglang_v1/ref"
has "$out" "profile sglang-v1 (sglang-v1: " "tree"
grep -qE '^files +[0-9]+ parsed \(0 refused\) \+ 0 unparsed \+ 0 not dump-named = [0-9]+ files; 0 skipped$' <<<"$out" || fail "tree: files line"
grep -qE '^ranks +0 [0-9]+, 1 [0-9]+$' <<<"$out" || fail "tree: ranks line"
grep -qE '^passes +0 [0-9]+, 1 [0-9]+$' <<<"$out" || fail "tree: passes line"
grep -qE '^layers +-' <<<"$out" || fail "tree: model-level counted as layer -"

expect 0 "one folder, two sides" "$DB_BIN" ls "$L/atom_fwd"
grep -qE '^sides +ref [0-9]+, target [0-9]+$' <<<"$out" || fail "atom_fwd: sides line"

expect 0 "tree json" "$DB_BIN" ls --format json "$L/miles/baseline"
has "$out" '"profile": "sglang-v1"' "tree json"
has "$out" '"phases": {"inference": ' "tree json: phases in causal order"
grep -qF '"fwd_only": ' <<<"$out" || fail "tree json: fwd_only"

# a real Miles tree (tests/fixtures/upstream/miles/GEN.md): causal phases, the
# trainer's gradients and weights in phases of their own, passes per phase;
# qkv_format ('thd', a string) is no tensor and is left out quietly
M=$DB_FIXTURES/upstream/miles
expect 0 "real miles" "$DB_BIN" ls "$M/ref"
has "$out" "files   145 parsed (0 refused) + 0 unparsed" "real miles"
has "$out" "tensors 81" "real miles"
grep -qE '^phases +inference 20, fwd_only 26, fwd_bwd 26, fwd_bwd.grad 8, fwd_bwd.param 1$' <<<"$out" || fail "real miles: phases line"
grep -qE '^passes +inference: 0 5, 1 5, 2 5, 3 5$' <<<"$out" || fail "real miles: inference passes"
grep -qE '^passes +fwd_bwd.grad: 0 4, 1 4$' <<<"$out" || fail "real miles: grad passes"
grep -qE '^passes +fwd_bwd.param: 0 1$' <<<"$out" || fail "real miles: param pass"
has "$out" "embedding.word_embeddings 6, self_attention.linear_qkv 6, final_layernorm 6, self_attention.linear_qkv.weight 1" "real miles: Megatron stages"
has "$out" "embed_tokens 4, self_attn.qkv_proj 4, output 10, norm 4" "real miles: SGLang stages"
expect 0 "real miles json" "$DB_BIN" ls --format json "$M/ref"
has "$out" '"phase_passes": {"inference": {"0": 5, "1": 5, "2": 5, "3": 5}, "fwd_only": {"0": 13, "1": 13}, "fwd_bwd": {"0": 13, "1": 13}, "fwd_bwd.grad": {"0": 4, "1": 4}, "fwd_bwd.param": {"0": 1}}' "real miles json: passes per phase"

# unparsed files, a FIFO, a symlink loop
T=$DB_TMP/tree
rm -rf "$T"
cp -R "$L/sglang_v1/ref" "$T"
echo junk >"$T/junk.pt"
mkfifo "$T/forward_pass_id=0___rank=0___name=fifo___dump_index=999.pt"
ln -s . "$T/loop"
expect 0 "special files" "$DB_BIN" ls --profile sglang-v1 "$T"
has "$out" "unparsed (no pattern of the profile matches):" "special files"
has "$out" "  junk.pt" "special files"
has "$out" "dump_index=999.pt: FIFO; not opened" "special files"
has "$out" "loop: symlink loop" "special files"
grep -qE '^files +[0-9]+ parsed \(0 refused\) \+ 1 unparsed \+ 0 not dump-named = [0-9]+ files; 2 skipped$' <<<"$out" || fail "special files: counts"

# single files
expect 0 "file json" "$DB_BIN" ls --format json "$DB_FIXTURES/pt/f32.pt"
has "$out" '{"file": ' "file json"
has "$out" '{"key": "", "dtype": "float32", "shape": [3, 4]}' "file json"
expect 0 "file stats" "$DB_BIN" ls --format json --stats "$DB_FIXTURES/pt/f32.pt"
grep -qE '"sum": 2\.22385707497596[0-9]*, "min": ' <<<"$out" || fail "file stats: sum (torch: 2.2238570749759674)"
expect 0 "file table" "$DB_BIN" ls "$DB_FIXTURES/st/multi.safetensors"
has "$out" "bfloat16" "file table"

expect 2 "refused" "$DB_BIN" ls "$DB_FIXTURES/bad/os_system.pt"
has "$err" "os.system" "refused"
[ -z "$out" ] || fail "refused: nothing on stdout"
mkdir -p "$DB_TMP/empty"
expect 2 "empty dir" "$DB_BIN" ls "$DB_TMP/empty"
expect 2 "missing" "$DB_BIN" ls "$DB_TMP/missing"
expect 2 "fifo path" "$DB_BIN" ls "$T/forward_pass_id=0___rank=0___name=fifo___dump_index=999.pt"
# a tree of one run under a profile whose sides are marked by a prefix:
# the files lacking it are not "target" here, and the counts add up
expect 0 "one run, atom" "$DB_BIN" ls --profile atom "$L/atom_hooks/ref"
has "$out" "sides    none marked: one run, REF or TARGET as it is given" "atom one run"
grep -q '^sides.*target' <<<"$out" && fail "atom one run: called target: $(grep ^sides <<<"$out")"
expect 0 "one run, atom, json" "$DB_BIN" ls --format json --profile atom "$L/atom_hooks/ref"
grep -q '"sides": {}, "one_run": true' <<<"$out" || fail "atom one run json: $(grep -o '"sides[^}]*}' <<<"$out")"
expect 0 "not dump-named" "$DB_BIN" ls "$DB_FIXTURES/realdump_order"
has "$out" "files   2 parsed (0 refused) + 0 unparsed + 1 not dump-named = 3 files; 0 skipped" "realdump_order"

expect 2 "no args" "$DB_BIN" ls
expect 0 "help" "$DB_BIN" ls --help
has "$out" "usage: dumpbisect ls" "help"

finish t_ls
