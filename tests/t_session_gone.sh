#!/bin/bash
# Issue 37: the session file replaced by a directory or a FIFO while the
# workbench runs. Its saves fail ("session not saved" on the status line);
# at quit the work of the run is not on disk, so the workbench says so on
# standard error and exits 1, not 0 as if all were kept. No sleeps: the
# script's :save-display into a FIFO holds the workbench until the test has
# read it (then replaced the file), @wait-file until the test says go.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
fresh_tmp
D=$DB_FIXTURES/demo
for kind in dir fifo; do
	S=$DB_TMP/$kind.yaml
	sync=$DB_TMP/$kind.sync
	rm -rf "$S" "$DB_TMP/go"
	mkfifo "$sync"
	cat >"$DB_TMP/keys" <<KEYS
b
<Enter>
:save-display $sync
@wait-file $DB_TMP/go
<Enter>
:save-display $DB_TMP/$kind.screen
q
KEYS
	env DUMPBISECT_SCRIPT="$DB_TMP/keys" DUMPBISECT_WATCHDOG=60 TERM=xterm LINES=30 COLUMNS=200 \
		HOME="$DB_TMP/home" timeout 90 "$DB_BIN" --session "$S" "$D/ref" "$D/target" \
		>/dev/null 2>"$DB_TMP/$kind.err" &
	pid=$!
	# the first verdict is saved once the screen comes through the FIFO
	timeout 60 cat "$sync" >/dev/null || fail "$kind: the workbench never got to its first save"
	[ -f "$S" ] || fail "$kind: the first verdict was not saved"
	rm -f "$S"
	if [ $kind = dir ]; then mkdir "$S"; else mkfifo "$S"; fi
	touch "$DB_TMP/go"
	wait $pid
	rc=$?
	[ $rc = 1 ] || fail "$kind: exit $rc, want 1 (stderr: $(head -c 300 "$DB_TMP/$kind.err"))"
	grep -q "^dumpbisect: session not saved: .*$kind.yaml" "$DB_TMP/$kind.err" ||
		fail "$kind: standard error does not say the session was not saved: $(head -c 300 "$DB_TMP/$kind.err")"
	grep -q "session not saved" "$DB_TMP/$kind.screen" 2>/dev/null ||
		fail "$kind: the status line does not say it"
	if [ $kind = dir ]; then [ -d "$S" ]; else [ -p "$S" ]; fi ||
		fail "$kind: the $kind put in the session's place was replaced"
done
finish t_session_gone
