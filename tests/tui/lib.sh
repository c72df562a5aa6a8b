# Shared by tests/t_tui_*.sh: run the real binary with a key script in a
# fixed environment (no tty: the TUI writes to /dev/null and :save-display
# dumps its virtual screen), then diff screens against tests/tui/*.screen.
# DB_UPDATE_SCREENS=1 rewrites the expected screens (read them before
# committing!).
set -eu
export LC_ALL=C.UTF-8     # for grep on UTF-8 screens
: "${DB_BIN:?}" "${DB_SRC:?}" "${DB_FIXTURES:?}" "${DB_TMP:?}"
T=$DB_TMP
rm -rf "$T"
mkdir -p "$T/home"
EXP=$DB_SRC/tests/tui
FAILS=0

# tui_run COLS LINES ARGS... < script   (runs in $DB_FIXTURES, so tree paths
# are relative and screens do not depend on where the repo lives)
# TUI_LANG (default C.UTF-8) and TUI_ENV ("VAR=value ...") adjust the run.
tui_run() {
	local cols=$1 lines=$2
	shift 2
	cat >"$T/script"
	local rc=0
	# shellcheck disable=SC2086
	(cd "$DB_FIXTURES" && env -i PATH=/usr/bin:/bin HOME="$T/home" TZ=UTC \
		TERM=xterm-256color LANG="${TUI_LANG:-C.UTF-8}" LINES="$lines" COLUMNS="$cols" \
		DUMPBISECT_SCRIPT="$T/script" DUMPBISECT_WATCHDOG=30 ${TUI_ENV:-} \
		"$DB_BIN" "$@") >"$T/stdout" 2>"$T/stderr" || rc=$?
	TUI_RC=$rc
	if [ "$rc" -ne "${TUI_WANT_RC:-0}" ]; then
		echo "FAIL: exit code $rc (want ${TUI_WANT_RC:-0}); stderr:" >&2
		cat "$T/stderr" >&2
		FAILS=$((FAILS + 1))
	fi
}

# tui_expect NAME: $T/NAME.screen must equal tests/tui/NAME.screen.
tui_expect() {
	local name=$1
	if [ ! -f "$T/$name.screen" ]; then
		echo "FAIL: $name.screen was not saved" >&2
		FAILS=$((FAILS + 1))
		return
	fi
	if [ "${DB_UPDATE_SCREENS:-0}" = 1 ]; then
		cp "$T/$name.screen" "$EXP/$name.screen"
		return
	fi
	if ! diff -u "$EXP/$name.screen" "$T/$name.screen" >&2; then
		echo "FAIL: screen $name differs (above: expected vs got)" >&2
		FAILS=$((FAILS + 1))
	fi
}

# check DESCRIPTION COMMAND...: a shell condition that must hold.
check() {
	local what=$1
	shift
	if ! "$@"; then
		echo "FAIL: $what" >&2
		FAILS=$((FAILS + 1))
	fi
}

# grep_screen NAME REGEX: the saved screen NAME has a line matching REGEX.
grep_screen() {
	grep -Eq -- "$2" "$T/$1.screen"
}

finish() {
	if [ "$FAILS" -ne 0 ]; then
		echo "$FAILS check(s) failed" >&2
		exit 1
	fi
	echo ok
}
