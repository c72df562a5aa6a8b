# Shared by the headless command tests (tests/t_compare.sh, t_ls.sh, ...):
# the environment ctest gives, a scratch dir, failure counting, and helpers
# to run the binary and look at what it printed. The TUI tests have their
# own, tests/tui/lib.sh. Source it first:
#   . "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
set -u
: "${DB_BIN:?}" "${DB_FIXTURES:?}" "${DB_TMP:?}"
mkdir -p "$DB_TMP"
# a cache of its own and a fixed locale: the output does not depend on the host
export XDG_CACHE_HOME="$DB_TMP/cache" LC_ALL=C LANG=C
L=$DB_FIXTURES/layouts
fails=0

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# fresh_tmp: start from an empty $DB_TMP (tests that count files in it).
fresh_tmp() {
	rm -rf "$DB_TMP"
	mkdir -p "$DB_TMP"
}

# need_python WHY: sets $PY, or stops the test (exit 1) saying WHY.
need_python() {
	PY=$(command -v python3) || { echo "python3 is needed $1"; exit 1; }
}

# sanitized: DB_BIN is the AddressSanitizer build. Scale tests (linear vs
# quadratic cost) run a tenth of their size there: the plain build checks
# the scaling, the sanitizer the memory (at full size they were 5 of CI's
# 15 minutes).
sanitized() {
	ldd "$DB_BIN" 2>/dev/null | grep -q libasan
}

# vlimit KB: ulimit -v KB, except under AddressSanitizer, which reserves
# terabytes of address space (the sanitizer build then runs unbounded).
vlimit() {
	ldd "$DB_BIN" 2>/dev/null | grep -q libasan || ulimit -v "$1"
}

# expect RC DESC CMD...: run CMD (60 s at most), stdout in $out, stderr in
# $err; a failure unless it exits RC.
expect() {
	local want=$1 desc=$2
	shift 2
	out=$(timeout 60 "$@" 2>"$DB_TMP/stderr")
	local rc=$?
	err=$(cat "$DB_TMP/stderr")
	[ "$rc" = "$want" ] || fail "$desc: exit $rc, want $want (stderr: ${err:0:300})"
}

# has TEXT WANT DESC: TEXT holds the fixed string WANT.
has() { grep -qF -- "$2" <<<"$1" || fail "$3: missing '$2'"; }

# finish NAME: the closing line; the exit status says whether all passed.
finish() {
	if [ "$fails" = 0 ]; then
		echo "$1: all passed"
	else
		echo "$1: $fails failures"
	fi
	exit $((fails > 0))
}
