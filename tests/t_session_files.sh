#!/bin/bash
# Session files as the user keeps them (issue 26 item 12): a session saved
# through a symlink (relative, a chain, a dangling one) replaces the file the
# link names and the link stays a link; the file keeps its mode (0600,
# 0640); the temp files a killed save left beside it are removed by the next
# save (only its own: another file's stay); a link loop is an error that
# says so.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
fresh_tmp
D=$DB_FIXTURES/demo
cd "$DB_TMP" || exit 1
mkdir real
steps() { grep -c '^- {layer' "$1"; }

expect 0 "start" "$DB_BIN" bisect start "$D/ref" "$D/target" --session real/s.yaml
ln -s real/s.yaml link.yaml
ln -s link.yaml chain.yaml
expect 0 "verdict through a link" "$DB_BIN" bisect bad --session link.yaml
[ -L link.yaml ] || fail "the link was replaced by a file"
[ "$(steps real/s.yaml)" = 1 ] || fail "the link's target does not hold the verdict"
expect 0 "verdict through a chain of links" "$DB_BIN" bisect good --session chain.yaml
[ -L chain.yaml ] && [ -L link.yaml ] || fail "a link of the chain was replaced"
[ "$(steps real/s.yaml)" = 2 ] || fail "the chain's target does not hold both verdicts"

# the workbench saves through the link too (q saves the view state)
printf 'q\n' >keys
expect 0 "workbench through a link" env DUMPBISECT_SCRIPT=keys DUMPBISECT_WATCHDOG=30 \
	TERM=xterm LINES=30 COLUMNS=100 "$DB_BIN" --session link.yaml
[ -L link.yaml ] || fail "the workbench replaced the link by a file"
[ "$(steps real/s.yaml)" = 2 ] || fail "the workbench lost verdicts saving through the link"

# modes
for m in 600 640; do
	chmod "$m" real/s.yaml
	expect 0 "verdict on a $m session" "$DB_BIN" bisect undo --session link.yaml
	[ "$(stat -c %a real/s.yaml)" = "$m" ] || fail "a $m session was rewritten as $(stat -c %a real/s.yaml)"
done
umask 077
expect 0 "a new session under umask 077" "$DB_BIN" bisect start "$D/ref" "$D/target" --session new.yaml
[ "$(stat -c %a new.yaml)" = 600 ] || fail "a new session under umask 077 is $(stat -c %a new.yaml)"
umask 022

# a dangling link: the session is created where it points
ln -s real/later.yaml dangling.yaml
expect 0 "start through a dangling link" "$DB_BIN" bisect start "$D/ref" "$D/target" --session dangling.yaml
[ -L dangling.yaml ] && [ -s real/later.yaml ] || fail "the dangling link's target was not created"

# a killed save's temp files (mkstemp names) go at the next save
for x in AbC123 zz9ZZ9 q1w2e3; do : >"real/s.yaml.tmp.$x"; done
: >real/other.yaml.tmp.AbC123           # another file's temp file
: >real/s.yaml.tmp.notmine              # not a mkstemp name
expect 0 "save after a killed one" "$DB_BIN" bisect bad --session link.yaml
left=$(ls real | grep -c '^s\.yaml\.tmp\.......$')
[ "$left" = 0 ] || fail "$left temp files of a killed save left after the next save"
[ -e real/other.yaml.tmp.AbC123 ] || fail "another file's temp file was removed"
[ -e real/s.yaml.tmp.notmine ] || fail "a file that is no temp file of ours was removed"

# a link loop says so, and nothing is written
ln -s loop2.yaml loop1.yaml
ln -s loop1.yaml loop2.yaml
expect 2 "a link loop" "$DB_BIN" bisect start "$D/ref" "$D/target" --session loop1.yaml
has "$err" "symbolic links" "a link loop"
[ -L loop1.yaml ] && [ -L loop2.yaml ] || fail "a looping link was replaced"
finish t_session_files
