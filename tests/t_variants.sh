#!/bin/bash
# compare REF T1 T2 ...: one comparison per variant, a summary line each
# (first divergence, counts) before the pair tables; JSON {"variants": [...]}
# with each variant's pairs; a single target keeps today's output; one
# folder keeps its meaning. Variants are built from the real torch dumps of
# sglang_v1 (bug from L2 on): the target itself, the reference (everything
# reverted), and the reference with the target's L3 files (the change that
# broke L2 reverted, L3's kept: the first divergence moves to L3).
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
S=$L/sglang_v1
V=$DB_TMP/v3
rm -rf "$V" && mkdir -p "$V/sglang_dump_1700000100.0"
cp "$S"/ref/sglang_dump_1700000000.0/*.pt "$V/sglang_dump_1700000100.0/"
cp "$S"/target/sglang_dump_1700000100.0/*layer_id=3.pt "$V/sglang_dump_1700000100.0/"

expect 1 "three variants" "$DB_BIN" compare --no-cache "$S/ref" "$S/target" "$S/ref" "$V"
has "$out" "variant 1 $S/target: first divergence L2 attn.o_proj every rank (of 2) pass 0 [bug]; 256 pairs: 154 ok, 102 diverge, 0 missing, 0 error" "variant 1"
has "$out" "variant 2 $S/ref: no divergence; 256 pairs: 256 ok, 0 diverge, 0 missing, 0 error" "variant 2"
grep -qE "^variant 3 $V: first divergence L3 " <<<"$out" || fail "variant 3 moves the divergence to L3"
# which variant fixes which layer: the probe per layer and variant
has "$out" "probe hidden_out per layer (cos, band; ok in: the variants ok where another is bad)" "matrix"
grep -qE '^L1 +1\.000000 ok +1\.000000 ok +1\.000000 ok$' <<<"$out" || fail "matrix: L1 ok everywhere, none named"
grep -qE '^L2 +0\.907335 bug +1\.000000 ok +1\.000000 ok +2 3$' <<<"$out" || fail "matrix: L2 fixed by 2 and 3"
grep -qE '^L3 +0\.891180 bug +1\.000000 ok +0\.891180 bug +2$' <<<"$out" || fail "matrix: L3 fixed by 2 only"
# summaries first, then one table per variant
[ "$(grep -c '^== variant [0-9] ==$' <<<"$out")" = 3 ] || fail "one table per variant"
[ "$(grep -n '^variant 3 ' <<<"$out" | cut -d: -f1)" -lt "$(grep -n '^== variant 1 ==' <<<"$out" | cut -d: -f1)" ] ||
	fail "summary lines come before the tables"
[ "$(grep -c '^first divergence: ' <<<"$out")" = 2 ] || fail "two tables name a first divergence"

# all clean: exit 0
expect 0 "clean variants" "$DB_BIN" compare --no-cache "$S/ref" "$S/ref" "$S/ref"
has "$out" "variant 2 $S/ref: no divergence" "clean variants"

# JSON: one object per variant, in argument order, with its pairs
expect 1 "json variants" "$DB_BIN" compare --no-cache --format json "$S/ref" "$S/target" "$S/ref" "$V"
printf '%s\n' "$out" >"$DB_TMP/v.json"
/usr/bin/python3 - "$DB_TMP/v.json" "$S" "$V" <<'PY' || fail "json variants: see above"
import json, sys
d = json.load(open(sys.argv[1]))
S, V = sys.argv[2], sys.argv[3]
vs = d["variants"]
assert [v["target"] for v in vs] == [S + "/target", S + "/ref", V], [v["target"] for v in vs]
assert all(len(v["pairs"]) == 256 for v in vs)
fd = [v["first_divergence"] for v in vs]
assert fd[1] is None, fd
assert vs[0]["pairs"][fd[0]]["layer"] == 2 and vs[0]["pairs"][fd[0]]["stage"] == "attn.o_proj", fd
assert vs[2]["pairs"][fd[2]]["layer"] == 3, vs[2]["pairs"][fd[2]]
assert vs[1]["counts"] == {"pairs": 256, "ok": 256, "diverge": 0, "missing": 0, "error": 0}, vs[1]["counts"]
PY
# CSV has one header for one target
expect 2 "csv variants" "$DB_BIN" compare --format csv "$S/ref" "$S/target" "$S/ref"
has "$err" "--format csv takes one target" "csv variants"
# a bad variant is named
expect 2 "missing variant" "$DB_BIN" compare "$S/ref" "$S/target" "$DB_TMP/nope"
has "$err" "variant 2 ($DB_TMP/nope)" "missing variant"

# one target: today's JSON, unchanged (no "variants" key)
expect 1 "single json" "$DB_BIN" compare --no-cache --format json "$S/ref" "$S/target"
head -c 30 <<<"$out" | grep -qF '{"profile": "sglang-v1"' || fail "single target json unchanged"
grep -qF '"variants"' <<<"$out" && fail "single target json has variants"
# one folder: both sides in it, as before
expect 1 "one folder" "$DB_BIN" compare "$L/atom_fwd"
has "$out" "profile atom-fwd" "one folder"
finish t_variants
