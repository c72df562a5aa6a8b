#!/bin/bash
# One command line: every command (and the workbench) has the same --help
# layout, the same usage-error style, --version, "--", the same comparison
# options and "table" (alias "text") as the human --format; a mistyped
# command is named with a suggestion; `ls --profiles` lists the profiles
# with their origins; `replay --tui` keeps --target; relative
# XDG_CONFIG_HOME values are ignored (XDG spec).
set -u
: "${DB_BIN:?}" "${DB_SRC:?}" "${DB_FIXTURES:?}" "${DB_TMP:?}"
rm -rf "$DB_TMP"
mkdir -p "$DB_TMP/home"
export HOME=$DB_TMP/home XDG_CACHE_HOME=$DB_TMP/cache LC_ALL=C.UTF-8
unset XDG_CONFIG_HOME
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
D=$DB_FIXTURES/demo
COMMANDS="compare ls schema bisect replay export"

# run WANT_RC ARGS...: run the binary, stdout/stderr in $out/$err.
run() {
	local want=$1 rc=0
	shift
	"$DB_BIN" "$@" >"$DB_TMP/out" 2>"$DB_TMP/err" </dev/null || rc=$?
	out=$(cat "$DB_TMP/out")
	err=$(cat "$DB_TMP/err")
	[ "$rc" = "$want" ] || fail "dumpbisect $*: exit $rc, want $want; stderr: $err"
}

# A session to replay and export.
S=$DB_TMP/demo.session
run 1 bisect "$D/ref" "$D/target" --auto --session "$S"

# --- --help: usage, one-line description, options, exit status ----------
for c in "" $COMMANDS; do
	# shellcheck disable=SC2086
	run 0 $c --help
	name="dumpbisect${c:+ $c}"
	printf '%s\n' "$out" | head -1 | grep -q "^usage: $name " || fail "$name --help: no usage line first"
	# the description: the first paragraph after the usage lines, one line
	desc=$(printf '%s\n' "$out" | awk 'NR > 1 && /^$/ { n++; next } n == 1' )
	[ "$(printf '%s\n' "$desc" | wc -l)" = 1 ] || fail "$name --help: description is not one line: $desc"
	printf '%s\n' "$out" | grep -qx 'options:' || fail "$name --help: no 'options:'"
	printf '%s\n' "$out" | grep -q '^exit status: 0 ' || fail "$name --help: no 'exit status:'"
	printf '%s\n' "$out" | grep -qE '^  -h, --help +this help$' || fail "$name --help: no -h, --help"
	printf '%s\n' "$out" | grep -qE '^  -V, --version +the version$' || fail "$name --help: no -V, --version"
	long=$(printf '%s\n' "$out" | awk 'length > 80')
	[ -z "$long" ] || fail "$name --help: lines over 80 columns: $long"
	# The comparison options, alike wherever a comparison is opened.
	if [ "$c" != ls ]; then
		for o in '-p, --profile P' '--filter RE' '-j, --threads N' '--no-cache'; do
			printf '%s\n' "$out" | grep -qF -- "$o " ||
				fail "$name --help lacks the comparison option '$o'"
		done
	fi
done
run 0 --no-mouse --help
[ "$out" = "$("$DB_BIN" --help)" ] || fail "the workbench has two usage texts"

# --- one error style ---------------------------------------------------
for c in "" $COMMANDS; do
	name="dumpbisect${c:+ $c}"
	# shellcheck disable=SC2086
	run 2 $c --bogus
	[ "$(printf '%s\n' "$err" | head -1)" = "$name: unknown option '--bogus'" ] ||
		fail "$name --bogus: $err"
	[ "$(printf '%s\n' "$err" | sed -n 2p)" = "Try '$name --help' for more information." ] ||
		fail "$name --bogus: no hint to --help: $err"
	[ -z "$out" ] || fail "$name --bogus printed on stdout"
	# shellcheck disable=SC2086
	run 2 $c --profile
	[ "$(printf '%s\n' "$err" | head -1)" = "$name: option '--profile' needs a value" ] ||
		fail "$name --profile (no value): $err"
	# --version anywhere: the version, exit 0
	# shellcheck disable=SC2086
	run 0 $c --version
	printf '%s\n' "$out" | grep -qE '^dumpbisect [0-9]+\.[0-9]+' || fail "$name --version: $out"
	# shellcheck disable=SC2086
	run 0 $c -V
	# shellcheck disable=SC2086
	run 2 $c --threads 0 "$D/ref"
	printf '%s\n' "$err" | grep -q -- "--threads needs a positive number" ||
		[ "$c" = ls ] || fail "$name --threads 0: $err"
done

# --- --format: table everywhere, text its alias -------------------------
run 1 compare "$D/ref" "$D/target" --format table
t=$out
run 1 compare "$D/ref" "$D/target" --format text
[ "$out" = "$t" ] || fail "compare --format text is not the table"
run 1 bisect "$D/ref" "$D/target" --auto --format=table
t=$out
run 1 bisect "$D/ref" "$D/target" --auto --format=text
[ "$out" = "$t" ] || fail "bisect --format text is not the table"
printf '%s\n' "$t" | grep -q '^first bad layer L7' || fail "bisect --format table: $t"
run 0 replay "$S" --format table
printf '%s\n' "$out" | grep -q '^5 of 5 verdicts hold$' || fail "replay --format table: $out"
run 0 replay "$S" --format text
run 0 ls "$D/ref" --format text
run 0 schema "$D/ref" "$D/target" --format text
for c in "compare $D/ref" "ls $D/ref" "schema $D/ref" "bisect $D/ref --auto" "replay $S"; do
	# shellcheck disable=SC2086
	run 2 $c --format yaml
	printf '%s\n' "$err" | grep -q "^dumpbisect ${c%% *}: --format must be table.* or jsonl\?, not 'yaml'$" ||
		fail "${c%% *} --format yaml: $err"
done
run 2 compare "$D/ref" --format html
printf '%s\n' "$err" | grep -qF -- "--format must be table, csv, json or jsonl, not 'html'" ||
	fail "compare --format html: $err"

# --- "--" ends the options everywhere -----------------------------------
mkdir -p "$DB_TMP/dash"
cp -r "$D/ref" "$DB_TMP/dash/-ref"
cp -r "$D/target" "$DB_TMP/dash/-target"
cp "$S" "$DB_TMP/dash/-s.session"
cd "$DB_TMP/dash" || exit 1
run 0 ls -- -ref
run 0 schema -- -ref -target
run 1 compare --no-cache -j 2 -- -ref -target
run 1 bisect --auto -- -ref -target
run 0 replay -- -s.session
run 0 export --out rep -- -s.session
[ -s rep/report.md ] || fail "export -- SESSION wrote no report"
# a third positional is a second variant (compare REF T1 T2)
run 2 compare -- -ref -target extra
printf '%s\n' "$err" | grep -qF "variant 2 (extra): extra: cannot open" || fail "variant after --: $err"
run 2 compare -- -ref $(seq 1 33)
printf '%s\n' "$err" | grep -qF "unexpected argument '33'" || fail "too many variants: $err"
cd "$DB_TMP" || exit 1

# --- comparison options work where they are listed ----------------------
run 1 bisect "$D/ref" "$D/target" --auto -p sglang-v1 -j2 --no-cache --filter '^(hidden_out|attn.*)$'
printf '%s\n' "$out" | grep -q '^first bad layer L7' || fail "bisect with the comparison options: $out"
run 2 bisect "$D/ref" "$D/target" --auto --profile nosuch
printf '%s\n' "$err" | grep -q "unknown profile 'nosuch'" || fail "bisect --profile nosuch: $err"
run 2 replay "$S" --profile nosuch
printf '%s\n' "$err" | grep -q "unknown profile 'nosuch'" || fail "replay --profile nosuch: $err"
run 0 replay "$S" -p sglang-v1 --no-cache -j 1
run 0 export "$S" --out "$DB_TMP/rep2" --filter '^(hidden_out|attn_out)$' --no-cache
n=$(($(wc -l <"$DB_TMP/rep2/metrics.csv") - 1))
{ [ "$n" -gt 0 ] && [ "$n" -lt 368 ]; } || fail "export --filter kept $n of 368 pairs"

# --- a mistyped command -------------------------------------------------
run 2 comapre "$D/ref" "$D/target"
[ "$err" = "dumpbisect: unknown command 'comapre' (did you mean 'compare'?)
Try 'dumpbisect --help' for more information." ] || fail "comapre: $err"
run 2 bisetc
printf '%s\n' "$err" | grep -qF "did you mean 'bisect'?" || fail "bisetc: $err"
run 2 exp
printf '%s\n' "$err" | grep -qF "did you mean 'export'?" || fail "exp: $err"
run 2 frobnicate a b
printf '%s\n' "$err" | grep -qF "unknown command 'frobnicate' (and no file or directory" ||
	fail "frobnicate: $err"
# a tree that exists is a tree, whatever its name
mkdir -p "$DB_TMP/words/comapre"
(cd "$DB_TMP/words" && "$DB_BIN" comapre --version) >"$DB_TMP/out" 2>&1 ||
	fail "an existing tree named like a command is not a tree: $(cat "$DB_TMP/out")"
# a path with a slash is never a command
run 2 no/such/tree
printf '%s\n' "$err" | grep -q "unknown command" && fail "no/such/tree taken for a command: $err"

# --- ls --profiles --------------------------------------------------------
run 0 ls --profiles
for p in sglang-v1 sglang-v2 sglang-hook atom atom-fwd atom-weights generic; do
	printf '%s\n' "$out" | grep -qE "^$p +built-in$" || fail "ls --profiles lacks '$p built-in': $out"
done
U=$HOME/.config/dumpbisect/profiles
mkdir -p "$U"
cp "$DB_SRC/profiles/generic.yaml" "$U/mine.yaml"
cp "$DB_SRC/profiles/generic.yaml" "$U/atom.yaml"
run 0 ls --profiles
printf '%s\n' "$out" | grep -qxE "mine +$U/mine.yaml" || fail "user profile not listed with its file: $out"
printf '%s\n' "$out" | grep -qxE "atom +$U/atom.yaml" || fail "a shadowing user profile is not its file: $out"
[ "$(printf '%s\n' "$out" | grep -c '^atom ')" = 1 ] || fail "atom listed twice: $out"
run 0 ls --profiles --format json
printf '%s\n' "$out" | python3 -c '
import json, sys
d = {e["name"]: e for e in json.load(sys.stdin)}
assert d["generic"]["origin"] == "built-in", d["generic"]
assert d["mine"]["origin"].endswith("/mine.yaml"), d["mine"]
' || fail "ls --profiles --format json: $out"
printf 'name: broken\nbogus_key: 1\n' >"$U/broken.yaml"
run 2 ls --profiles
printf '%s\n' "$out" | grep -qE "^broken +error: $U/broken.yaml:[0-9]+:[0-9]+: " ||
	fail "a broken user profile is not listed with its error: $out"
rm "$U/broken.yaml"
run 2 ls --profiles "$D/ref"
printf '%s\n' "$err" | grep -qF -- "--profiles takes no PATH" || fail "ls --profiles PATH: $err"
# A relative XDG_CONFIG_HOME is ignored (XDG spec): ~/.config is used.
mkdir -p "$DB_TMP/rel/dumpbisect/profiles"
cp "$DB_SRC/profiles/generic.yaml" "$DB_TMP/rel/dumpbisect/profiles/relative.yaml"
(cd "$DB_TMP" && XDG_CONFIG_HOME=rel "$DB_BIN" ls --profiles) >"$DB_TMP/out" 2>&1
grep -q '^relative ' "$DB_TMP/out" && fail "a relative XDG_CONFIG_HOME was used for profiles"
grep -q '^mine ' "$DB_TMP/out" || fail "a relative XDG_CONFIG_HOME hid ~/.config: $(cat "$DB_TMP/out")"
rm -r "$HOME/.config"

# --- the workbench: keys file under a relative XDG_CONFIG_HOME ------------
# tui SCREEN ARGS...: a scripted workbench run that saves its screen.
tui() {
	local screen=$1
	shift
	printf ':save-display %s\n' "$DB_TMP/$screen" >"$DB_TMP/keys.script"
	(cd "$DB_TMP" && env -i PATH=/usr/bin:/bin HOME="$HOME" TZ=UTC TERM=xterm LANG=C.UTF-8 \
		LINES=30 COLUMNS=200 DUMPBISECT_SCRIPT="$DB_TMP/keys.script" DUMPBISECT_WATCHDOG=30 \
		${XDG:+XDG_CONFIG_HOME=$XDG} "$DB_BIN" "$@") >/dev/null 2>"$DB_TMP/tui.err" ||
		fail "workbench $* exited $?: $(cat "$DB_TMP/tui.err")"
}
mkdir -p "$DB_TMP/rel/dumpbisect"
printf 'bind\n' >"$DB_TMP/rel/dumpbisect/keys"
XDG=rel tui rel.screen "$D/ref" "$D/target"
grep -q 'keys:1' "$DB_TMP/rel.screen" && fail "keys file under a relative XDG_CONFIG_HOME was read"
XDG=$DB_TMP/rel tui abs.screen "$D/ref" "$D/target"
grep -q 'keys:1' "$DB_TMP/abs.screen" || fail "keys file under an absolute XDG_CONFIG_HOME was not read"

# --- replay --tui keeps --target (and --ref), and the workbench takes them --
# With the reference tree as the target nothing diverges: the status line
# tells which trees were opened, whatever the paths look like.
trees_before=$(grep -E '^(ref|target):' "$S")
printf ':save-display %s\n' "$DB_TMP/replay_tui.screen" >"$DB_TMP/keys.script"
(cd "$DB_TMP" && env -i PATH=/usr/bin:/bin HOME="$HOME" TZ=UTC TERM=xterm LANG=C.UTF-8 \
	LINES=30 COLUMNS=100 DUMPBISECT_SCRIPT="$DB_TMP/keys.script" DUMPBISECT_WATCHDOG=30 \
	"$DB_BIN" replay "$S" --tui --target "$D/ref") >/dev/null 2>"$DB_TMP/tui.err" ||
	fail "replay --tui --target exited $?: $(cat "$DB_TMP/tui.err")"
# (the bottom line may instead say that the session's verdicts changed
# on these trees, which tells the same)
grep -qE ' 368 pairs, 0 diverge$|^replay: .* now none \(no-bad\)' "$DB_TMP/replay_tui.screen" ||
	fail "replay --tui dropped --target: $(tail -1 "$DB_TMP/replay_tui.screen")"
[ "$(grep -E '^(ref|target):' "$S")" = "$trees_before" ] ||
	fail "the workbench wrote the trees given for one run into the session"
XDG="" tui ref_only.screen --session "$S" --ref "$D/target"
grep -qE ' 368 pairs, 0 diverge$|^replay: .* now none \(no-bad\)' "$DB_TMP/ref_only.screen" ||
	fail "--session S --ref: $(tail -1 "$DB_TMP/ref_only.screen")"
XDG="" tui session_only.screen --session "$S"
grep -qE ' 368 pairs, 135 diverge$' "$DB_TMP/session_only.screen" ||
	fail "--session S: $(tail -1 "$DB_TMP/session_only.screen")"

# --- bisect without --auto on a terminal opens the workbench with the same
# trees and comparison options (a pty for the terminal; keys scripted).
printf ':save-display %s\n' "$DB_TMP/bisect_tui.screen" >"$DB_TMP/keys.script"
(cd "$DB_FIXTURES" && env -i PATH=/usr/bin:/bin HOME="$HOME" TZ=UTC TERM=xterm LANG=C.UTF-8 \
	LINES=30 COLUMNS=100 DUMPBISECT_SCRIPT="$DB_TMP/keys.script" DUMPBISECT_WATCHDOG=30 \
	python3 -c '
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
while True:
    try:
        if not os.read(fd, 4096):
            break
    except OSError:
        break
sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
' "$DB_BIN" bisect demo/ref --target demo/ref -p sglang-v1 --filter '^hidden_out$' -j 1) \
	>/dev/null 2>&1 || fail "bisect on a terminal exited $?"
grep -qE ' 24 pairs, 0 diverge$' "$DB_TMP/bisect_tui.screen" ||
	fail "bisect on a terminal lost its trees or --filter: $(tail -1 "$DB_TMP/bisect_tui.screen" 2>&1)"
head -1 "$DB_TMP/bisect_tui.screen" | grep -q 'profile sglang-v1' ||
	fail "bisect on a terminal lost --profile"

if [ "$fails" -ne 0 ]; then
	echo "$fails check(s) failed" >&2
	exit 1
fi
echo ok
