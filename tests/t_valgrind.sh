#!/usr/bin/env bash
# valgrind memcheck on the headless commands over small fixture trees: no
# invalid access, no use of uninitialised values, no leak (definite or
# indirect). valgrind's own failure exit code is 99, which no command uses.
# Skipped (exit 0, with a note) when valgrind is missing or the binary is
# built with ASan (the two cannot run together; build-asan runs ASan's LSan).
set -euo pipefail
: "${DB_BIN:?}" "${DB_FIXTURES:?}" "${DB_TMP:?}"
if ! command -v valgrind >/dev/null; then
	echo "skip: valgrind is not installed (.ci/deps installs it)"
	exit 0
fi
libs=$(ldd "$DB_BIN" 2>/dev/null || true)   # not `ldd | grep -q`: SIGPIPE under pipefail
if [[ $libs == *libasan* ]]; then
	echo "skip: $DB_BIN is built with AddressSanitizer"
	exit 0
fi
rm -rf "$DB_TMP"
mkdir -p "$DB_TMP"
export XDG_CACHE_HOME=$DB_TMP/cache    # exercise the metrics cache, cold then warm
# PCRE2's JIT code reads ahead past a subject's end in aligned blocks (safe,
# never across a page), which memcheck reports as uninitialised reads inside
# unnamed JIT frames. A tiny preload makes pcre2_jit_compile fail, so the
# interpreter, which memcheck sees whole, runs instead (the code falls back
# to it when JIT is unavailable).
printf 'int pcre2_jit_compile_8(void *c, unsigned o) { (void)c; (void)o; return -45; }\n' \
	>"$DB_TMP/nojit.c"
${CC:-cc} -shared -fPIC -o "$DB_TMP/nojit.so" "$DB_TMP/nojit.c"
export LD_PRELOAD=$DB_TMP/nojit.so
F=$DB_FIXTURES
vg=(valgrind -q --error-exitcode=99 --leak-check=full
    --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect
    --num-callers=30)   # add --track-origins=yes when chasing a report
fails=0
n=0

# check -- command args...: memcheck-clean and a normal exit status (0 ok,
# 1 divergence found, 2 refused input; not valgrind's 99 or a signal).
check() {
	shift
	n=$((n + 1))
	set +e
	timeout 300 "${vg[@]}" "$DB_BIN" "$@" >"$DB_TMP/out.$n" 2>"$DB_TMP/err.$n"
	local rc=$?
	set -e
	if [ $rc -eq 99 ] || grep -q '^==[0-9]*== ' "$DB_TMP/err.$n"; then
		echo "FAIL: memcheck errors in: dumpbisect $*"
		grep '^==' "$DB_TMP/err.$n" | head -60
		fails=$((fails + 1))
	elif [ $rc -gt 2 ]; then
		echo "FAIL: dumpbisect $*: exit $rc"
		tail -5 "$DB_TMP/err.$n"
		fails=$((fails + 1))
	fi
}

check -- ls "$F/layouts/generic_st/ref"
check -- ls --format json "$F/layouts/sglang_v1/ref"
check -- ls --stats "$F/pt/nested.pt"
check -- ls --stats "$F/pt/legacy_dict.pt"
check -- ls --stats "$F/np/deflated.npz"
check -- ls --stats "$F/st/multi.safetensors"
check -- ls "$F/hostile/os_system.pt"
check -- ls "$F/bad/truncated.pt"
check -- compare --format json --threads 2 "$F/layouts/generic_st/ref" "$F/layouts/generic_st/target"
check -- compare --format json --threads 2 "$F/layouts/generic_st/ref" "$F/layouts/generic_st/target"
check -- compare --threads 2 "$F/layouts/sglang_v1/ref" "$F/layouts/sglang_v1/target"
check -- schema "$F/layouts/generic_st/ref" "$F/layouts/generic_st/target"
check -- schema "$F/layouts/sglang_v2/ref" "$F/layouts/sglang_v2/target"
check -- bisect --auto --session "$DB_TMP/s.yaml" "$F/bisect/signflip_tp2/ref" "$F/bisect/signflip_tp2/target"
check -- bisect --auto --session "$DB_TMP/s.yaml"
check -- export "$DB_TMP/s.yaml" --out "$DB_TMP/report"

if [ $fails -ne 0 ]; then
	echo "$fails of $n commands failed under memcheck"
	exit 1
fi
echo "ok: $n commands memcheck-clean"
