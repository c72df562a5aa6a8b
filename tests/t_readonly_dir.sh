#!/usr/bin/env bash
# Read-only directories, for real (mode 0555; the fault-injection tests
# cover EROFS and ENOSPC whoever runs them, this covers permissions, which
# root ignores: skipped as root). Session, export and metrics cache: a
# clear error naming the file, the previous file intact; the cache is only
# a cache: the output is unchanged, one line says it was not saved.
set -uo pipefail
: "${DB_BIN:?}" "${DB_FIXTURES:?}" "${DB_TMP:?}"
if [ "$(id -u)" -eq 0 ]; then
	echo "skip: root ignores directory modes (t_fault_inject covers EROFS)"
	exit 0
fi
rm -rf "$DB_TMP"
mkdir -p "$DB_TMP/work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
T=$DB_FIXTURES/bisect/signflip_tp2
export XDG_CACHE_HOME=$DB_TMP/cache
W=$DB_TMP/work
cd "$DB_TMP"

# session: a complete one, then its folder read-only; resuming must fail
# clearly (a save is due) and leave it as it was
"$DB_BIN" bisect "$T/ref" "$T/target" --session "$W/s.yaml" --auto --stage hidden_out >/dev/null 2>&1
[ -s "$W/s.yaml" ] || fail "no session to start from"
cp "$W/s.yaml" s.keep
"$DB_BIN" export "$W/s.yaml" --out "$W/report" >/dev/null 2>&1 || fail "first export"
cp -r "$W/report" report.keep
chmod 0555 "$W" "$W/report"
"$DB_BIN" bisect --auto --session "$W/s.yaml" --band algo >/dev/null 2>err
rc=$?
[ $rc -eq 2 ] || fail "session in a read-only folder: exit $rc, want 2"
grep -q "s.yaml.*Permission denied" err || fail "session: no clear message: $(cat err)"
cmp -s s.keep "$W/s.yaml" || fail "session: the previous file changed"
# export into a read-only report folder
"$DB_BIN" export "$W/s.yaml" --out "$W/report" >/dev/null 2>err
rc=$?
[ $rc -eq 2 ] || fail "export into a read-only folder: exit $rc, want 2"
grep -q "report/.*Permission denied" err || fail "export: no clear message: $(cat err)"
diff -r report.keep "$W/report" >/dev/null || fail "export: the previous report changed"
chmod 0755 "$W" "$W/report"

# metrics cache: some pairs cached, then the cache folder read-only and a
# run that adds the rest (a cache of its own: the bisect above filled one)
export XDG_CACHE_HOME=$DB_TMP/cache2
"$DB_BIN" compare --filter hidden "$T/ref" "$T/target" >/dev/null 2>&1
cache=$(ls "$XDG_CACHE_HOME"/dumpbisect/*.cache)
cp "$cache" cache.keep
"$DB_BIN" compare --no-cache "$T/ref" "$T/target" >want.out 2>/dev/null
chmod 0555 "$XDG_CACHE_HOME/dumpbisect"
"$DB_BIN" compare "$T/ref" "$T/target" >got.out 2>err
rc=$?
chmod 0755 "$XDG_CACHE_HOME/dumpbisect"
[ $rc -eq 1 ] || fail "compare with a read-only cache: exit $rc, want 1"
cmp -s want.out got.out || fail "cache: the output changed"
grep -q "metrics cache not saved: $cache: create: Permission denied" err || fail "cache: no clear message: $(cat err)"
cmp -s cache.keep "$cache" || fail "cache: the old cache file changed"

[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "ok: read-only session, report and cache folders"
