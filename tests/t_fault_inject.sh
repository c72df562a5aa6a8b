#!/usr/bin/env bash
# A full disk or a read-only file system during session saves, exports and
# metrics cache saves (fault injection with the LD_PRELOAD shim tests/fault_inject.c): every
# failing call (mkstemp, fflush, fsync, rename) gives exit 2 and a message
# naming the file, the call and the errno text; the file on disk is always
# the old version or a complete new one, and no temp file is left behind.
set -euo pipefail
: "${DB_BIN:?}" "${DB_SRC:?}" "${DB_FIXTURES:?}" "${DB_TMP:?}"
rm -rf "$DB_TMP"
mkdir -p "$DB_TMP"
cc=${CC:-cc}
command -v "$cc" >/dev/null || { echo "skip: no C compiler for the shim"; exit 0; }
shim=$DB_TMP/fault_inject.so
"$cc" -shared -fPIC -o "$shim" "$DB_SRC/tests/fault_inject.c" -ldl
# An ASan build wants its runtime first in the library list; the shim only
# wraps libc calls, so the order does not matter here.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
T=$DB_FIXTURES/bisect/signflip_tp2
# Own, warm caches: the faults must hit the saves under test, not the
# metrics/index cache writes of a first run.
export XDG_CACHE_HOME=$DB_TMP/cache
"$DB_BIN" compare "$T/ref" "$T/target" >/dev/null 2>&1 || true
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# run EXPECTED_RC FAULT_SPEC ERRNO_NUMBER -- command...: stderr in $DB_TMP/err
run() {
	local want=$1 spec=$2 eno=$3
	shift 4
	set +e
	LD_PRELOAD=$shim DB_FAULT=$spec DB_FAULT_ERRNO=$eno timeout 60 "$@" >"$DB_TMP/out" 2>"$DB_TMP/err"
	rc=$?
	set -e
	[ "$rc" -eq "$want" ] || fail "DB_FAULT=$spec $*: exit $rc, want $want: $(cat "$DB_TMP/err")"
	if [ -n "$spec" ]; then
		grep -q "fault_inject: ${spec%%:*} failed" "$DB_TMP/err" ||
			fail "DB_FAULT=$spec: the fault was never reached"
	fi
}
no_temp_files() {
	local left
	left=$(find "$1" -name '*.tmp.*' | head -3)
	[ -z "$left" ] || fail "temp files left behind: $left"
}
steps() { grep -c '^- {layer' "$1" || true; }
# same_export A B: two export files alike but for their generation stamps
unstamp() { sed -e '/xport generation /d' -e 's/^{"export_generation": "[^"]*", /{/' "$1"; }
same_export() { cmp -s <(unstamp "$1") <(unstamp "$2"); }

cd "$DB_TMP"
# --- session saves (bisect --auto saves after creating and after each step)
# call (fault after N passes) | message part | session file afterwards
for c in "mkstemp:0|create temp file|absent" "fflush:0|write|absent" \
         "fsync:0|fsync|absent" "rename:0|rename|absent" \
         "fsync:2|fsync|old" "rename:1|rename|old"; do
	IFS='|' read -r spec what after <<<"$c"
	rm -rf s.yaml*
	run 2 "$spec" 28 -- "$DB_BIN" bisect --auto --session s.yaml "$T/ref" "$T/target"
	grep -q "s.yaml" "$DB_TMP/err" || fail "$spec: message does not name the session: $(cat err)"
	grep -q "$what" "$DB_TMP/err" || fail "$spec: message lacks '$what': $(cat err)"
	grep -q "No space left on device" "$DB_TMP/err" || fail "$spec: message lacks the errno text: $(cat err)"
	case $after in
	absent) [ ! -e s.yaml ] || fail "$spec: a session file exists after the first save failed" ;;
	old)    # the first save (before any step) survived whole
		[ -f s.yaml ] || fail "$spec: the earlier session file is gone"
		[ "$(steps s.yaml)" -eq 0 ] || fail "$spec: session holds $(steps s.yaml) steps, want the old 0"
		"$DB_BIN" bisect --auto --session s.yaml >/dev/null 2>&1 || [ $? -eq 1 ] ||
			fail "$spec: the old session does not resume" ;;
	esac
	no_temp_files .
done
# a read-only file system (EROFS = 30) at the first save
rm -rf s.yaml*
run 2 mkstemp:0 30 -- "$DB_BIN" bisect --auto --session s.yaml "$T/ref" "$T/target"
grep -q "Read-only file system" err || fail "EROFS: message lacks the errno text: $(cat err)"

# --- exports: a complete session, exported once cleanly, then again with
# faults: each report file stays the old one or becomes a complete new one
rm -rf s.yaml* rep
"$DB_BIN" bisect --auto --session s.yaml "$T/ref" "$T/target" >/dev/null || [ $? -eq 1 ]
[ "$(steps s.yaml)" -ge 3 ] || fail "clean bisect saved $(steps s.yaml) steps"
run 0 "" 0 -- "$DB_BIN" export s.yaml --out rep
cp -r rep rep.clean
nfiles=$(ls rep.clean | wc -l)
[ "$nfiles" -ge 4 ] || fail "clean export wrote $nfiles files"
for spec in fflush:0 fsync:0 fsync:2 rename:1 rename:3; do
	run 2 "$spec" 28 -- "$DB_BIN" export s.yaml --out rep
	grep -q "rep/" err || fail "export $spec: message does not name the file: $(cat err)"
	grep -q "No space left on device" err || fail "export $spec: no errno text: $(cat err)"
	for f in rep.clean/*; do
		same_export "$f" "rep/$(basename "$f")" || fail "export $spec: $(basename "$f") differs from a whole version"
	done
	no_temp_files rep
	# into an empty directory: files are complete or absent
	rm -rf rep2
	run 2 "$spec" 28 -- "$DB_BIN" export s.yaml --out rep2
	for f in rep2/*; do
		[ -e "$f" ] || continue
		same_export "$f" "rep.clean/$(basename "$f")" || fail "export $spec: partial $(basename "$f") in a new directory"
	done
	no_temp_files rep2
done
[ "$(steps s.yaml)" -ge 3 ] || fail "export touched the session"

# --- the metrics cache: a cache with some pairs, then a run that adds the
# rest while the disk is full / the cache folder read-only. The output is
# the same as without faults, one clear line says the cache was not saved,
# the old cache file is intact and no temp file is left.
export XDG_CACHE_HOME=$DB_TMP/cache2
"$DB_BIN" compare --filter hidden "$T/ref" "$T/target" >/dev/null 2>&1 || true
cache=$(ls "$XDG_CACHE_HOME"/dumpbisect/*.cache)
cp "$cache" cache.old
"$DB_BIN" compare --no-cache "$T/ref" "$T/target" >want.out 2>/dev/null || true
for c in "rename:0|28|rename: No space left on device" "fsync:0|28|fsync: No space left on device" \
         "open:0|30|create: Read-only file system"; do
	IFS='|' read -r spec eno what <<<"$c"
	run 1 "$spec" "$eno" -- "$DB_BIN" compare "$T/ref" "$T/target"
	cmp -s want.out out || fail "cache $spec: the output changed"
	grep -q "metrics cache not saved: $cache: $what (the numbers are right" err ||
		fail "cache $spec: no clear message: $(grep -v fault_inject err)"
	cmp -s "$cache" cache.old || fail "cache $spec: the old cache file changed"
	no_temp_files "$XDG_CACHE_HOME"
done

if [ $fails -ne 0 ]; then
	echo "$fails failure(s)"
	exit 1
fi
echo "ok: session saves, exports and cache saves survive injected ENOSPC/EROFS"
