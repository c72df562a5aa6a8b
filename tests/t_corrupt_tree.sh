#!/usr/bin/env bash
# A tree with one damaged file still compares: the reference tree against a
# copy of itself with one file truncated -> exactly one error pair, naming the file and a byte offset,
# and every other pair measured and in the ok band. Exit status 1.
set -euo pipefail
: "${DB_BIN:?}" "${DB_FIXTURES:?}" "${DB_TMP:?}"
rm -rf "$DB_TMP"
mkdir -p "$DB_TMP"
src=$DB_FIXTURES/layouts/sglang_v1/ref
cp -r "$src" "$DB_TMP/ref"
cp -r "$src" "$DB_TMP/target"
victim=$(cd "$DB_TMP/target" && find . -type f -name '*layer_id=2.pt' | sort | sed -n 1p)  # not head: SIGPIPE under pipefail
victim=${victim#./}
[ -n "$victim" ] || { echo "FAIL: no layer-2 file in $src"; exit 1; }
size=$(stat -c %s "$DB_TMP/target/$victim")
truncate -s $((size / 2)) "$DB_TMP/target/$victim"

# the undamaged comparison gives the pair count to expect
"$DB_BIN" compare --no-cache --format json "$src" "$src" >"$DB_TMP/clean.json"
total=$(grep -c '"stage": ' "$DB_TMP/clean.json")
[ "$total" -gt 100 ] || { echo "FAIL: only $total pairs in the clean comparison"; exit 1; }
set +e
timeout 60 "$DB_BIN" compare --no-cache --format json "$DB_TMP/ref" "$DB_TMP/target" \
	>"$DB_TMP/out.json" 2>"$DB_TMP/err.txt"
rc=$?
set -e
fail() { echo "FAIL: $*"; echo "--- stderr"; cat "$DB_TMP/err.txt"; exit 1; }
[ $rc -eq 1 ] || fail "exit status $rc, want 1 (one unreadable pair)"
pairs=$(grep -c '"stage": ' "$DB_TMP/out.json" || true)
# one per-rank pair fails; the rank-merged pair built from it may fail too
errors=$(grep '"status": "error"' "$DB_TMP/out.json" | grep -c '"merged": false' || true)
merged=$(grep '"status": "error"' "$DB_TMP/out.json" | grep -c '"merged": true' || true)
ok=$(grep -c '"severity": "ok"' "$DB_TMP/out.json" || true)
[ "$pairs" -eq "$total" ] || fail "$pairs pairs, the undamaged trees give $total"
[ "$errors" -eq 1 ] || fail "$errors per-rank error pairs, want 1"
[ "$merged" -le 1 ] || fail "$merged merged error pairs, want at most 1"
[ "$ok" -eq $((total - 1 - merged)) ] || fail "$ok pairs in the ok band, want $((total - 1 - merged))"
line=$(grep '"status": "error"' "$DB_TMP/out.json" | grep '"merged": false')
case $line in
*"$victim"*"byte "*) ;;
*) fail "error pair does not name $victim and a byte offset: $line" ;;
esac
# the table says the same
set +e
timeout 60 "$DB_BIN" compare --no-cache "$DB_TMP/ref" "$DB_TMP/target" >"$DB_TMP/out.txt" 2>&1
set -e
grep -q "$((1 + merged)) error" "$DB_TMP/out.txt" ||
	fail "table summary lacks '$((1 + merged)) error': $(tail -3 "$DB_TMP/out.txt")"

# The caches (metrics and tree index, under $XDG_CACHE_HOME/dumpbisect) are
# files too: truncated or bit-flipped, a compare must give exactly the
# numbers of a run without cache (a damaged cache is a miss, never a source
# of wrong numbers or a crash).
F=$DB_FIXTURES/layouts/sglang_v1
export XDG_CACHE_HOME=$DB_TMP/cache
"$DB_BIN" compare --no-cache --format json "$F/ref" "$F/target" >"$DB_TMP/nocache.json" || [ $? -eq 1 ]
"$DB_BIN" compare --format json "$F/ref" "$F/target" >"$DB_TMP/cold.json" || [ $? -eq 1 ]
cmp -s "$DB_TMP/nocache.json" "$DB_TMP/cold.json" || fail "cold cache run differs from --no-cache"
ncache=0
flip() {   # flip FILE OFFSET: xor the byte at OFFSET with 0x5a
	local b
	b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
	printf "\\$(printf %03o $((b ^ 0x5a)))" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}
for c in "$XDG_CACHE_HOME"/dumpbisect/*; do
	ncache=$((ncache + 1))
	cp "$c" "$DB_TMP/orig"
	sz=$(stat -c %s "$c")
	for how in t0 t8 t$((sz / 2)) t$((sz - 1)) f0 f9 f$((sz / 7)) f$((sz / 3)) f$((sz / 2)) \
	           f$((sz * 5 / 7)) f$((sz - 2)) f$((sz - 1)); do
		cp "$DB_TMP/orig" "$c"
		case $how in
		t*) truncate -s "${how#t}" "$c" ;;
		f*) flip "$c" "${how#f}" ;;
		esac
		set +e
		timeout 60 "$DB_BIN" compare --format json "$F/ref" "$F/target" >"$DB_TMP/warm.json" 2>"$DB_TMP/err.txt"
		rc=$?
		set -e
		[ $rc -le 1 ] || fail "cache $(basename "$c") damaged ($how): exit $rc"
		cmp -s "$DB_TMP/nocache.json" "$DB_TMP/warm.json" ||
			fail "cache $(basename "$c") damaged ($how): output differs from --no-cache"
	done
	cp "$DB_TMP/orig" "$c"
done
[ $ncache -ge 2 ] || fail "only $ncache cache files were written"
echo "ok: $total pairs, 1 error pair ($victim), $ok ok; $ncache damaged caches ignored"
