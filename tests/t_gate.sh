#!/bin/bash
# The CI gate (issue 36) on trees written by the real SGLang dumper
# (tests/fixtures/realdump; dc_v2_bf16/target by gen_bf16.py, torch's own
# bf16 cast): compare --pass-if rules, per-stage rules, --allow-failed /
# --allow-skipped, exit statuses, the JSONL stream, the replicated-rank
# check, the downcast metrics, a profile's pass_if, syntax errors by column.
set -u
: "${DB_BIN:?}" "${DB_SRC:?}" "${DB_FIXTURES:?}" "${DB_TMP:?}"
R=$DB_FIXTURES/realdump
rm -rf "$DB_TMP"
mkdir -p "$DB_TMP"
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
run() { # WANT_RC ARGS... : out, err, rc
	local want=$1
	shift
	out=$("$DB_BIN" "$@" 2>"$DB_TMP/err" </dev/null)
	rc=$?
	err=$(cat "$DB_TMP/err")
	[ "$rc" = "$want" ] || fail "exit $rc (want $want): $*: $(head -3 "$DB_TMP/err")"
}
# JSONL checks: every line parses, exactly one summary, last; prints facts
jl() { # FILE PYTHON_EXPR_OVER_L_AND_S
	python3 - "$1" "$2" <<'E'
import json, sys
L = [json.loads(l) for l in open(sys.argv[1])]
S = [l for l in L if l["type"] == "summary"]
assert len(S) == 1 and L[-1]["type"] == "summary", "one summary line, last"
S = S[0]
P = [l for l in L if l["type"] == "pair"]
assert all(isinstance(p["passed"], bool) and "rule" in p for p in P)
assert [p["index"] for p in P] == list(range(len(P))), "pairs in execution order"
ok = eval("(" + sys.argv[2] + ")")
print("ok" if ok else "no")
E
}
BUG="$R/v2_tp1/ref $R/v2_tp1/target"       # norm_offset at L5 (pre_mlp_residual)

# --- a bug tree fails rel <= 1e-3; allowed, it passes ----------------------
run 1 compare $BUG --pass-if 'rel <= 1e-3'
printf '%s\n' "$out" | grep -qx 'gate: FAIL: 76 passed, 28 failed, 0 skipped, 0 allowed; 0 replicated ranks checked, 0 differ' ||
	fail "bug tree: $(printf '%s\n' "$out" | tail -1)"
printf '%s\n' "$out" | grep -q "^  failed L5 pre_mlp_residual rank 0 pass 0: rel 8.9404e-01 .* by 'rel <= 1e-3'$" ||
	fail "bug tree: L5 pre_mlp_residual not named failed"
run 0 compare $BUG --pass-if 'rel <= 1e-3' --allow-failed '^(pre_mlp_residual|mlp_output)$' \
	--allow-failed '^L[67] '
printf '%s\n' "$out" | grep -qx 'gate: PASS: 76 passed, 0 failed, 0 skipped, 28 allowed; 0 replicated ranks checked, 0 differ' ||
	fail "allowed: $(printf '%s\n' "$out" | tail -1)"
run 1 compare $BUG --pass-if 'rel <= 1e-3' --allow-failed '^(pre_mlp_residual|mlp_output)$'
# without rules nothing changes: the bands' exit status, no gate section
run 1 compare $BUG
printf '%s\n' "$out" | grep -q '^gate' && fail "a gate section without rules"

# --- two correct runs, TP 1 against TP 2: pass, replicas checked ------------
run 0 compare "$R/null_v2/ref" "$R/null_v2/target" --pass-if 'rel <= 1e-3'
printf '%s\n' "$out" | grep -qx 'gate: PASS: 192 passed, 0 failed, 0 skipped, 0 allowed; 80 replicated ranks checked, 0 differ' ||
	fail "TP1 vs TP2: $(printf '%s\n' "$out" | tail -1)"

# --- per-regex rules and the JSONL stream -----------------------------------
# L5's attention pairs by their own (loose) rule, the next stage by the
# catch-all: it fails there
"$DB_BIN" compare $BUG --pass-if '^attn_(pre_o_proj|output)$: rel <= 5' \
	--pass-if 'rel <= 1e-3' --format jsonl >"$DB_TMP/rx.jsonl" 2>"$DB_TMP/err"
[ $? = 1 ] || fail "per-regex jsonl: exit $?"
r=$(jl "$DB_TMP/rx.jsonl" '
all(p["rule"] == "^attn_(pre_o_proj|output)$: rel <= 5" and p["passed"]
    for p in P if p["layer"] == 5 and p["stage"].startswith("attn_")) and
[p["verdict"] for p in P if p["layer"] == 5 and p["stage"] == "pre_mlp_residual"] == ["failed"] * 2 and
all(p["rule"] == "rel <= 1e-3" for p in P if p["layer"] == 5 and p["stage"] == "pre_mlp_residual") and
S["passed"] == 84 and S["failed"] == 20 and S["skipped"] == 0 and S["exit"] == 1')
[ "$r" = ok ] || fail "per-regex rules / JSONL: $r"

# a stage no rule names is an error before anything is measured
run 2 compare $BUG --pass-if 'attn: rel <= 1e-3' --format jsonl
[ -z "$out" ] || fail "no-rule error printed pairs"
printf '%s\n' "$err" | grep -q '^  pre_mlp_residual$' || fail "no-rule: $err"
# a syntax error names the column
run 2 compare $BUG --pass-if 'attn: rel <= 1e-3 and cos >'
printf '%s\n' "$err" | grep -qF "rule 'attn: rel <= 1e-3 and cos >': column 28: expected a metric name or a number, found the end" ||
	fail "syntax error: $err"
run 2 compare $BUG --pass-if 'rel <= 1e-3' --allow-failed 'a(b'
run 2 compare $BUG --allow-failed 'x'          # no rules to allow from

# --- a missing file fails, unless --allow-skipped names it -----------------
cp -r "$R/v2_tp1/ref" "$DB_TMP/miss"
f=$(cd "$DB_TMP/miss" && ls -d */*name=mlp_output___*layer_id=3___* | grep '^[^/]*/step=0')
rm "$DB_TMP/miss/$f"
run 1 compare "$R/v2_tp1/ref" "$DB_TMP/miss" --pass-if 'rel <= 1e-3'
printf '%s\n' "$out" | grep -qx 'gate: FAIL: 103 passed, 0 failed, 1 skipped, 0 allowed; 0 replicated ranks checked, 0 differ' ||
	fail "missing file: $(printf '%s\n' "$out" | tail -1)"
run 0 compare "$R/v2_tp1/ref" "$DB_TMP/miss" --pass-if 'rel <= 1e-3' \
	--allow-skipped 'step=0___.*name=mlp_output___.*layer_id=3___'
run 1 compare "$R/v2_tp1/ref" "$DB_TMP/miss" --pass-if 'rel <= 1e-3' --allow-failed 'mlp_output'

# --- a replicated rank that differs is a finding named with its ranks ------
# rank 1 of L2 attn_output ("t h # tp:replicated") taken from the bug run
cp -r "$R/v2_tp2/ref" "$DB_TMP/rep"
f=$(cd "$DB_TMP/rep" && ls -d */step=0___rank=1___*name=attn_output___*layer_id=2___*)
cp "$R/v2_tp2/target/$f" "$DB_TMP/rep/$f"
run 1 compare "$DB_TMP/rep" "$R/v2_tp2/ref" --pass-if 'rel <= 1' --filter '^attn_output$'
printf '%s\n' "$out" | grep -q "^  replica ref: L2 attn_output pass 0: rank 1 differs from rank 0 (max |diff| .* > atol 1e-06; dims 't h # tp:replicated')$" ||
	fail "replica finding: $out"
run 0 compare "$DB_TMP/rep" "$R/v2_tp2/ref" --pass-if 'rel <= 1' --filter '^attn_output$' \
	--allow-failed '^L2 attn_output pass 0$'
"$DB_BIN" compare "$DB_TMP/rep" "$R/v2_tp2/ref" --pass-if 'rel <= 1' --filter '^attn_output$' \
	--format jsonl >"$DB_TMP/rep.jsonl"
r=$(jl "$DB_TMP/rep.jsonl" '
[(l["side"], l["layer"], l["ranks"]) for l in L if l["type"] == "replica"] == [("ref", 2, [0, 1])]
and S["replica_failed"] == 1 and S["exit"] == 1')
[ "$r" = ok ] || fail "replica jsonl: $r"

# the profile says so where the dump does not (a forward-hook tree: no
# meta): rank 1's file of the reference taken from the bug run (kv_head_shard
# at L5 on rank 1), so from L5 on its post_attention_layernorm, replicated
# after the all-reduce, is not rank 0's
cp -r "$R/hook_tp2/ref" "$DB_TMP/hrep"
cp "$R/hook_tp2/target/TP1_PP0_Rank1_pid0/Pass00000.pt" "$DB_TMP/hrep/TP1_PP0_Rank1_pid0/"
sed 's/^name: .*/name: sglang-hook-replicated/' "$DB_SRC/profiles/sglang-hook.yaml" >"$DB_TMP/hrep.yaml"
echo "replicated: ['^post_attention_layernorm[.]0\$']" >>"$DB_TMP/hrep.yaml"
run 1 compare "$DB_TMP/hrep" "$R/hook_tp2/ref" --profile "$DB_TMP/hrep.yaml" --pass-if 'rel <= 10' \
	--filter '^post_attention_layernorm'
printf '%s\n' "$out" | grep -q "^  replica ref: L5 post_attention_layernorm.0 pass 0: rank 1 differs from rank 0 (max |diff| .*; profile replicated '^post_attention_layernorm\[.\]0\$')$" ||
	fail "profile replicated: $out"
printf '%s\n' "$out" | grep -q "replica ref: L4 " && fail "profile replicated: L4 named"
run 0 compare "$R/hook_tp2/ref" "$R/hook_tp2/ref" --profile "$DB_TMP/hrep.yaml" --pass-if 'rel <= 10' \
	--filter '^post_attention_layernorm'
printf '%s\n' "$out" | grep -q ' 32 replicated ranks checked, 0 differ$' || fail "profile replicated, clean: $out"

# --- downcast: float32 against its bf16 cast --------------------------------
DC="$R/dc_v2_bf16/ref $R/dc_v2_bf16/target"
run 1 compare $DC --pass-if 'rel <= 1e-3'
run 0 compare $DC --pass-if 'downcast_rel <= 1e-6 and downcast_byte_equal == 1'
"$DB_BIN" compare $DC --pass-if 'rel <= 1e-2' --format jsonl >"$DB_TMP/dc.jsonl"
r=$(jl "$DB_TMP/dc.jsonl" '
all(p["downcast_dtype"] == "bfloat16" and p["downcast"]["max_abs"] == 0 and p["rel"] > 0
    for p in P if p["dtype_ref"] == "float32") and
all("downcast" not in p for p in P if p["dtype_ref"] != "float32")')
[ "$r" = ok ] || fail "downcast jsonl: $r"

# --- the same rules from a profile's pass_if --------------------------------
sed 's/^name: .*/name: sglang-v2-gate/' "$DB_SRC/profiles/sglang-v2.yaml" >"$DB_TMP/gate.yaml"
printf 'pass_if:\n  - "^attn_(pre_o_proj|output)$: rel <= 5"\n  - "rel <= 1e-3"\n' >>"$DB_TMP/gate.yaml"
run 1 compare $BUG --profile "$DB_TMP/gate.yaml"
printf '%s\n' "$out" | grep -q '^gate (profile sglang-v2-gate (pass_if): 2 rules):$' || fail "profile pass_if: $out"
printf '%s\n' "$out" | grep -qx 'gate: FAIL: 84 passed, 20 failed, 0 skipped, 0 allowed; 0 replicated ranks checked, 0 differ' ||
	fail "profile pass_if: $(printf '%s\n' "$out" | tail -1)"
# bisect takes them as its predicate when it is given none
run 1 bisect $BUG --auto --profile "$DB_TMP/gate.yaml" --session "$DB_TMP/p.session"
printf '%s\n' "$out" | grep -q '^first bad layer L5' || fail "bisect, profile pass_if: $out"
grep -qF 'predicate: "pass-if:^attn_(pre_o_proj|output)$: rel <= 5\nrel <= 1e-3"' "$DB_TMP/p.session" ||
	fail "bisect with the profile's pass_if: $(grep predicate "$DB_TMP/p.session")"
run 0 replay "$DB_TMP/p.session"
printf 'pass_if:\n  - "rel <="\n' >>"$DB_TMP/gate.yaml"
run 2 compare $BUG --profile "$DB_TMP/gate.yaml"

# --- the rules as bisect's predicate, kept by its session ------------------
run 1 bisect $BUG --auto --pass-if 'rel <= 1e-3' --session "$DB_TMP/b.session"
printf '%s\n' "$out" | grep -q '^first bad layer L5' || fail "bisect --pass-if: $out"
grep -qF 'predicate: "pass-if:rel <= 1e-3"' "$DB_TMP/b.session" ||
	fail "session predicate: $(grep predicate "$DB_TMP/b.session")"
run 0 replay "$DB_TMP/b.session"
# a rule loose enough for the bug: nothing is bad
run 0 bisect $BUG --auto --pass-if 'pre_mlp|mlp_output|layer_: rel <= 10' --pass-if 'rel <= 1e-3'
run 2 bisect $BUG --auto --pass-if 'rel <= 1e-3' --band drift
run 2 bisect $BUG --auto --pass-if 'rel <<= 1e-3'

[ "$fails" = 0 ] || { echo "$fails check(s) failed" >&2; exit 1; }
echo "t_gate: ok"
