#!/bin/bash
# The workbench given no terminal (issue 14): `dumpbisect REF TARGET <
# /dev/null > out` refuses at once — exit 2, one line pointing to compare
# and bisect --auto, nothing written to stdout — instead of drawing into
# the file and waiting for keys. The same for replay --tui.
. "$DB_SRC/tests/tui/lib.sh"

# noterm DESC ARGS...: no DUMPBISECT_SCRIPT, stdin /dev/null, stdout a file.
noterm() {
	local rc=0
	(cd "$DB_FIXTURES" && env -i PATH=/usr/bin:/bin HOME="$T/home" TERM=xterm-256color \
		LANG=C.UTF-8 timeout 20 "$DB_BIN" "$@") </dev/null >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" -eq 2 ] &&
		grep -qx "dumpbisect: not a terminal: the workbench needs one; without, use dumpbisect compare REF TARGET or dumpbisect bisect REF TARGET --auto" "$T/err" &&
		[ ! -s "$T/out" ] || {
		echo "  exit $rc (124 = hung), stderr: $(head -c 300 "$T/err")" >&2
		return 1
	}
}
check "workbench, stdin and stdout not a terminal" noterm demo/ref demo/target
check "a session alone, no terminal" noterm --session "$T/none.yaml" demo/ref demo/target
check "the refused session was not created" test ! -e "$T/none.yaml"
(cd "$DB_FIXTURES" && "$DB_BIN" bisect demo/ref demo/target --auto --session "$T/s.yaml" >/dev/null) || true
check "replay --tui without a terminal" noterm replay "$T/s.yaml" --tui
# --help and --keys-man need no terminal
check "--keys-man still prints" bash -c "'$DB_BIN' --keys-man </dev/null | grep -q ."
finish
