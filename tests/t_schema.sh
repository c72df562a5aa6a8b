#!/bin/bash
# dumpbisect schema: names, shapes and dtypes before any number.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

expect 0 "same schema" "$DB_BIN" schema "$L/generic_st/ref" "$L/generic_st/ref"
has "$out" "0 ref-only, 0 target-only, 0 shape, 0 dtype, 0 unreadable" "same schema"

# the target dumps final_logits in bfloat16
expect 1 "dtype" "$DB_BIN" schema "$L/generic_st/ref" "$L/generic_st/target"
has "$out" "dtype        final_logits  ref float32 target bfloat16" "dtype"

# a stage missing on one side, another reshaped, a file unreadable
T=$DB_TMP/s
rm -rf "$T"
mkdir -p "$T"
cp -R "$L/generic_npy/ref" "$L/generic_npy/target" "$T/"
rm "$T/target/layer3.ffn_out.npy"
rm "$T/ref/layer0.attn.q.npy"
head -c 30 "$L/generic_npy/target/layer1.hidden_in.npy" >"$T/target/layer1.hidden_in.npy"
expect 1 "differences" "$DB_BIN" schema "$T/ref" "$T/target"
has "$out" "ref_only     L3 ffn_out  [6, 32] float32" "ref-only"
has "$out" "target_only  L0 attn.q  [6, 32] float32" "target-only"
grep -qE '^error +L1 hidden_in .*layer1.hidden_in.npy' <<<"$out" || fail "unreadable file"
has "$out" "1 ref-only, 1 target-only, 0 shape, 0 dtype, 1 unreadable" "counts"

expect 1 "json" "$DB_BIN" schema --format json "$T/ref" "$T/target"
has "$out" '"differences": [' "json"
has "$out" '{"kind": "ref_only", "phase": null, "pass": null, "rank": null, "layer": 3, "stage": "ffn_out"' "json"
has "$out" '"ref_only": 1, "target_only": 1, "shape": 0, "dtype": 0, "error": 1}' "json counts"

expect 2 "missing" "$DB_BIN" schema "$DB_TMP/nope" "$T/target"
expect 2 "no args" "$DB_BIN" schema
expect 0 "help" "$DB_BIN" schema --help

finish t_schema
