#!/bin/bash
# man/dumpbisect-profile.5: renders without warnings, and every YAML example
# (an .EX block after a `.\" example-profile` line) loads with the real
# loader through `dumpbisect ls --profile FILE` and parses real trees.
set -u
: "${DB_BIN:?}" "${DB_SRC:?}" "${DB_FIXTURES:?}" "${DB_TMP:?}"
PAGE=$DB_SRC/man/dumpbisect-profile.5
L=$DB_FIXTURES/layouts
rm -rf "$DB_TMP"
mkdir -p "$DB_TMP"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# --- rendering -------------------------------------------------------------
w=$(LC_ALL=C.UTF-8 groff -man -ww -Tutf8 "$PAGE" 2>&1 >/dev/null)
[ -z "$w" ] || fail "groff warnings: $w"
if command -v mandoc >/dev/null; then
	w=$(mandoc -Tlint "$PAGE" 2>&1)
	[ -z "$w" ] || fail "mandoc -Tlint: $w"
fi

# --- extraction --------------------------------------------------------------
# roff escapes used in examples back to text; the C test does the same.
awk -v dir="$DB_TMP" '
	$0 == ".\\\" example-profile" { want = 1; next }
	want && $0 == ".EX" { n++; out = sprintf("%s/example_%02d.yaml", dir, n); inex = 1; want = 0; next }
	inex && $0 == ".EE" { inex = 0; close(out); next }
	inex {
		gsub(/\\\(aq/, "\047"); gsub(/\\\(dq/, "\""); gsub(/\\\(ha/, "^")
		gsub(/\\\(ti/, "~"); gsub(/\\\(ga/, "`"); gsub(/\\-/, "-"); gsub(/\\&/, "")
		gsub(/\\e/, "\\")
		print > out
	}
' "$PAGE"
shopt -s nullglob
examples=("$DB_TMP"/example_*.yaml)
[ ${#examples[@]} -ge 8 ] || fail "only ${#examples[@]} examples extracted"

# the tree each built-in example must parse
tree_for() {
	case $1 in
	sglang-v1) echo "$L/sglang_v1/ref" ;;
	sglang-v2) echo "$L/sglang_v2/target" ;;
	sglang-hook) echo "$L/fwd_hook/ref" ;;
	atom) echo "$L/atom_hooks/ref" ;;
	atom-fwd) echo "$L/atom_fwd" ;;
	atom-weights) echo "$L/atom_weights" ;;
	generic) echo "$L/generic_npz/ref" ;;
	esac
}

# small trees for the hand-written examples, from real fixture files
mkdir -p "$DB_TMP/my-hooks/run/step_0/rank1" "$DB_TMP/one-folder"
cp "$L/generic_npy/ref/layer0.hidden_in.npy" "$DB_TMP/my-hooks/run/step_0/rank1/L07-mlp.out.npy"
cp "$L/generic_npy/ref/embed.input_ids.npy" "$DB_TMP/my-hooks/run/step_0/rank1/embed.npy"
cp "$L/atom_fwd/ref_rank0_fwd.pt" "$DB_TMP/one-folder/base_rank0.pt"
cp "$L/atom_fwd/atom_rank0_fwd.pt" "$DB_TMP/one-folder/new_rank0.pt"

for ex in "${examples[@]}"; do
	name=$(sed -n 's/^name: *//p' "$ex" | head -n1)
	tree=$(tree_for "$name")
	[ -n "$tree" ] || tree=$DB_TMP/$name
	if [ ! -d "$tree" ]; then
		fail "$ex: example '$name' has no tree to try it on"
		continue
	fi
	out=$("$DB_BIN" ls --profile "$ex" "$tree" 2>"$DB_TMP/err")
	rc=$?
	if [ $rc -ne 0 ]; then
		fail "$ex ($name): ls exit $rc: $(cat "$DB_TMP/err")"
		continue
	fi
	grep -q "^profile $name " <<<"$out" || fail "$ex: ls did not use profile $name"
	grep -q " 0 unparsed" <<<"$out" || fail "$ex ($name): unparsed files in $tree: $out"
done

# the hand-written examples read what the page says they read
out=$("$DB_BIN" ls --profile "$DB_TMP/example_01.yaml" "$DB_TMP/my-hooks" 2>&1)
grep -q "mlp.out" <<<"$out" || fail "my-hooks: no stage mlp.out: $out"
grep -Eq "layers .*7 1" <<<"$out" || fail "my-hooks: no layer 7: $out"

# --- a broken profile is refused with file:line:col ----------------------------
printf 'name: broken\npath: x\npathh: y\n' >"$DB_TMP/broken.yaml"
"$DB_BIN" ls --profile "$DB_TMP/broken.yaml" "$L/sglang_v1/ref" >/dev/null 2>"$DB_TMP/err"
rc=$?
[ $rc -eq 2 ] || fail "broken profile: exit $rc, want 2"
grep -q "broken.yaml:3:1: unknown key 'pathh'" "$DB_TMP/err" || fail "broken profile: $(cat "$DB_TMP/err")"
printf 'name: badre\npath: "(?<layer>\\\\d+"\n' >"$DB_TMP/badre.yaml"
"$DB_BIN" ls --profile "$DB_TMP/badre.yaml" "$L/sglang_v1/ref" >/dev/null 2>"$DB_TMP/err"
grep -q "badre.yaml:2:7: path: bad regex .*missing closing parenthesis at offset" "$DB_TMP/err" ||
	fail "bad regex: $(cat "$DB_TMP/err")"

if [ $fails -ne 0 ]; then
	echo "$fails failure(s)"
	exit 1
fi
echo "ok: ${#examples[@]} examples"
