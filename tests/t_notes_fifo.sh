#!/bin/bash
# Notes and sessions are read only when they are regular files, and never
# wait (issue 26 item 4): a FIFO named notes/05_x.md is no note — export
# finishes (its report lists the real notes, no report.md.tmp.* is left),
# the notes view shows, a new note takes the next number; a FIFO (or a
# directory) given as the session is refused at once, naming it, by every
# command that reads sessions. Each run is bounded by timeout: a block is a
# failure (exit 124), never a hung test.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
fresh_tmp
D=$DB_FIXTURES/demo
cd "$DB_TMP" || exit 1
expect 0 "start" "$DB_BIN" bisect start "$D/ref" "$D/target" --session s.yaml
mkdir notes
printf '# 01 — a real note\n\nbody\n' >notes/01_real.md
mkfifo notes/05_x.md

expect 0 "export beside a FIFO note" timeout 20 "$DB_BIN" export s.yaml --out rep
has "$(cat rep/report.md 2>/dev/null)" "a real note" "the report lists the real note"
grep -q "05_x" rep/report.md 2>/dev/null && fail "the report lists the FIFO as a note"
[ -z "$(ls rep | grep '\.tmp\.')" ] || fail "export left temp files: $(ls rep)"

# the workbench: the notes view (o) beside the FIFO, then a new note (w)
cat >keys <<KEYS
o
:save-display $DB_TMP/notes.screen
w
after the fifo<Enter>
q
KEYS
expect 0 "notes view beside a FIFO note" timeout 30 env DUMPBISECT_SCRIPT=keys \
	DUMPBISECT_WATCHDOG=20 TERM=xterm LINES=30 COLUMNS=100 "$DB_BIN" --session s.yaml
grep -q "a real note" notes.screen 2>/dev/null || fail "the notes view does not show the real note"
grep -q "05_x" notes.screen 2>/dev/null && fail "the notes view lists the FIFO"
[ -f notes/06_after_the_fifo.md ] || fail "the new note is not 06: $(ls notes)"
[ -p notes/05_x.md ] || fail "the FIFO was replaced"

# a FIFO or a directory as the session: refused at once, named
mkfifo fifo.yaml
mkdir dir.yaml
for f in fifo.yaml dir.yaml; do
	what="a FIFO"
	[ "$f" = dir.yaml ] && what="a directory"
	expect 2 "bisect good --session $f" timeout 20 "$DB_BIN" bisect good --session "$f"
	has "$err" "$f: not a regular file ($what)" "bisect good --session $f"
	expect 2 "bisect --auto --session $f" timeout 20 "$DB_BIN" bisect --auto --session "$f"
	has "$err" "not a regular file" "bisect --auto --session $f"
	expect 2 "replay $f" timeout 20 "$DB_BIN" replay "$f"
	has "$err" "not a regular file" "replay $f"
	expect 2 "export $f" timeout 20 "$DB_BIN" export "$f" --out rep2
	has "$err" "not a regular file" "export $f"
	expect 2 "workbench --session $f" timeout 20 env DUMPBISECT_SCRIPT=keys DUMPBISECT_WATCHDOG=20 \
		TERM=xterm LINES=30 COLUMNS=100 "$DB_BIN" --session "$f"
	has "$err" "not a regular file" "workbench --session $f"
done
finish t_notes_fifo
