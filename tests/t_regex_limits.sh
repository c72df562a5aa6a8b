#!/usr/bin/env bash
# Issue 26 item 8: regexes that backtrack exponentially stop at a match
# limit, and the limit hit is an error naming the pattern and the subject,
# never "no match":
# - compare --filter '^(a|a)+$' on 400 tensors named a...ax<i>: exit 2 with
#   the pattern and a name, under a CPU limit (before: 205 s of CPU, then
#   the wrong answer "matches no tensor");
# - DUMPBISECT_REGEX_LIMIT raises the limit (a 2^22-step match then passes);
# - a profile whose path regex hits the limit on one file: that file is
#   refused with the message, the good file still loads;
# - detection with such a user profile: an error naming the profile;
# - a per-stage rule (input_ids) that hits it: compare exits 2 naming it.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
fresh_tmp
need_python "to write the safetensors files"
A30=$(printf 'a%.0s' $(seq 30))
"$PY" - "$DB_TMP" "$A30" <<'PY'
import json, struct, sys, os
root, a30 = sys.argv[1], sys.argv[2]
def st(path, names):
    hdr = {k: {"dtype": "F32", "shape": [1], "data_offsets": [4 * i, 4 * i + 4]}
           for i, k in enumerate(names)}
    h = json.dumps(hdr, separators=(",", ":")).encode()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"\0" * 4 * len(names))
for side in ("ref", "target"):
    st(f"{root}/filter/{side}/m.safetensors", [a30 + "x%d" % i for i in range(400)])
    st(f"{root}/short/{side}/m.safetensors", ["a" * 22 + "x"])
PY

# the filter
(ulimit -t 20; "$DB_BIN" compare --no-cache --filter '^(a|a)+$' "$DB_TMP/filter/ref" "$DB_TMP/filter/target") \
	>"$DB_TMP/out" 2>"$DB_TMP/err"
rc=$?
err=$(cat "$DB_TMP/err")
[ $rc -eq 2 ] || fail "filter: exit $rc, want 2 (137/152: over the CPU limit): $err"
has "$err" "--filter: regex '^(a|a)+\$' on '${A30}x" "filter: names pattern and subject"
has "$err" "too much backtracking" "filter: says why"
grep -q "matches no tensor" <<<"$err" && fail "filter: the limit read as no match: $err"

# the limit is an environment variable
expect 2 "short subject, default limit" "$DB_BIN" compare --no-cache --filter '^(a|a)+$' \
	"$DB_TMP/short/ref" "$DB_TMP/short/target"
has "$err" "too much backtracking" "short subject, default limit"
expect 2 "short subject, raised limit" env DUMPBISECT_REGEX_LIMIT=100000000 "$DB_BIN" compare \
	--no-cache --filter '^(a|a)+$' "$DB_TMP/short/ref" "$DB_TMP/short/target"
has "$err" "matches no tensor" "short subject, raised limit: an answer"

# a profile's path regex: one file refused, the other read
mkdir -p "$DB_TMP/tree"
cp "$DB_FIXTURES/pt/f32.pt" "$DB_TMP/tree/good.pt"
cp "$DB_FIXTURES/pt/f32.pt" "$DB_TMP/tree/${A30}b.pt"
cat >"$DB_TMP/evil.yaml" <<'Y'
name: evil
path: '^(?<stage>(?:a|a)+|good)\.pt$'
Y
expect 0 "ls --profile evil" "$DB_BIN" ls --profile "$DB_TMP/evil.yaml" "$DB_TMP/tree"
has "$out" "2 parsed (1 refused)" "ls: the file is refused, not unparsed"
has "$out" "tree/${A30}b.pt: regex '^(?<stage>(?:a|a)+|good)\\.pt\$' on '${A30}b.pt': too much backtracking" \
	"ls: the refusal names the pattern and the path"
has "$out" "stages   ${A30}b 1, good 1" "ls: the good file is read"

# detection with that profile installed: an error, not a lost count
mkdir -p "$DB_TMP/xdg/dumpbisect/profiles"
cp "$DB_TMP/evil.yaml" "$DB_TMP/xdg/dumpbisect/profiles/evil.yaml"
expect 2 "detect with evil installed" env XDG_CONFIG_HOME="$DB_TMP/xdg" "$DB_BIN" ls "$DB_TMP/tree"
has "$err" "profile evil: regex" "detect: names the profile"
has "$err" "--profile" "detect: says the way out"

# a per-stage rule
mkdir -p "$DB_TMP/rule/ref" "$DB_TMP/rule/target"
cp "$DB_FIXTURES/pt/f32.pt" "$DB_TMP/rule/ref/${A30}b.pt"
cp "$DB_FIXTURES/pt/f32.pt" "$DB_TMP/rule/target/${A30}b.pt"
cat >"$DB_TMP/rule.yaml" <<'Y'
name: rule
path: '^(?<stage>[a-z]+)\.pt$'
input_ids: '^(a|a)+$'
Y
expect 2 "compare, input_ids rule" "$DB_BIN" compare --no-cache --profile "$DB_TMP/rule.yaml" \
	"$DB_TMP/rule/ref" "$DB_TMP/rule/target"
has "$err" "profile rule: regex '^(a|a)+\$' on '${A30}b'" "input_ids rule: named"
finish t_regex_limits
