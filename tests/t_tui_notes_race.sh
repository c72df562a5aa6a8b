#!/bin/bash
# Two workbenches on one session folder write notes into the same notes/
# at the same moment (scripted, 10 notes each, started together): every
# note gets its own number (never repeated, no gap), every title is there
# once, a note written before is never overwritten.
. "$DB_SRC/tests/tui/lib.sh"

W=$T/work
mkdir -p "$W/notes"
printf '# 01 — keep me\n\nwritten before\n' >"$W/notes/01_keep_me.md"
cp "$W/notes/01_keep_me.md" "$T/keep"
export XDG_CACHE_HOME=$T/cache
"$DB_BIN" compare "$DB_FIXTURES/demo/ref" "$DB_FIXTURES/demo/target" >/dev/null 2>&1 || true   # warm: both start at once

# writer NAME: a script writing 10 notes titled "NAME 1".."NAME 10"
writer() {
	local i
	for i in $(seq 10); do
		printf 'w\n%s %d<Enter>\n' "$1" "$i"
	done
	printf ':save-display %s/%s.screen\n' "$T" "$1"
}
writer alpha >"$T/alpha.keys"
writer beta >"$T/beta.keys"
pids=()
for name in alpha beta; do
	(cd "$DB_FIXTURES" && env -i PATH=/usr/bin:/bin HOME="$T/home" TZ=UTC TERM=xterm-256color \
		LANG=C.UTF-8 LINES=30 COLUMNS=100 XDG_CACHE_HOME="$T/cache" \
		DUMPBISECT_SCRIPT="$T/$name.keys" DUMPBISECT_WATCHDOG=60 \
		"$DB_BIN" --session "$W/$name.session" demo/ref demo/target) >/dev/null 2>"$T/$name.err" &
	pids+=($!)
done
for p in "${pids[@]}"; do
	wait "$p" || { echo "FAIL: a workbench exited $?: $(cat "$T"/*.err)" >&2; FAILS=$((FAILS + 1)); }
done

check "21 notes" test "$(ls "$W/notes" | grep -c '\.md$')" -eq 21
nums=$(ls "$W/notes" | sed -n 's/^\([0-9]*\)_.*\.md$/\1/p' | sort -n | tr '\n' ' ')
check "numbers 01..21, none repeated: $nums" test "$nums" = "$(seq -f %02g -s ' ' 1 21) "
check "the earlier note intact" cmp -s "$T/keep" "$W/notes/01_keep_me.md"
for name in alpha beta; do
	for i in $(seq 10); do
		n=$(grep -l "^# [0-9]* — $name $i\$" "$W"/notes/*.md | wc -l)
		[ "$n" -eq 1 ] || { echo "FAIL: '$name $i' is in $n notes" >&2; FAILS=$((FAILS + 1)); }
	done
done
# each file's heading carries its own file's number
bad=$(for f in "$W"/notes/*.md; do
	b=$(basename "$f"); head -1 "$f" | grep -q "^# ${b%%_*} — " || echo "$b"
done)
check "headings match file numbers: ${bad:-ok}" test -z "$bad"
finish
