#!/bin/bash
# completion/dumpbisect.bash: simulated <TAB> presses (COMP_WORDS /
# COMP_CWORD, as bash sets them) give commands, each command's options,
# --format and --band values and profile names (asked from the binary). Both
# completion files know every option each command's --help lists, so they
# cannot fall behind the CLI. zsh itself is not required: with zsh the file
# is loaded with compinit; without, only parsed.
set -u
: "${DB_BIN:?}" "${DB_SRC:?}" "${DB_FIXTURES:?}" "${DB_TMP:?}"
BASH_COMP=$DB_SRC/completion/dumpbisect.bash
ZSH_COMP=$DB_SRC/completion/_dumpbisect
rm -rf "$DB_TMP"
mkdir -p "$DB_TMP/home"
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# complete WORD... : the words on the line, the last one being completed
# (may be ""); prints COMPREPLY one per line. A fresh bash each time, with
# the binary as the first word, in the fixtures dir, and a HOME without
# user profiles.
complete_words() {
	(cd "$DB_FIXTURES" && env -i PATH=/usr/bin:/bin HOME="$DB_TMP/home" \
		bash --norc --noprofile -c '
		. "$1" || exit 9
		shift
		COMP_WORDS=("$@")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMP_LINE="${COMP_WORDS[*]}"
		COMP_POINT=${#COMP_LINE}
		_dumpbisect dumpbisect "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
		printf "%s\n" "${COMPREPLY[@]}"' _ "$BASH_COMP" "$DB_BIN" "$@")
}

# expect "WORDS" WANTED... : every WANTED is among the completions.
expect() {
	local words=$1 got w
	shift
	eval "got=\$(complete_words $words)"
	for w in "$@"; do
		printf '%s\n' "$got" | grep -qxF -- "$w" ||
			fail "'$words<TAB>' lacks '$w'; got: $(printf '%s' "$got" | tr '\n' ' ')"
	done
}
# only "WORDS" EXACT... : the completions are exactly these (any order).
only() {
	local words=$1 got want
	shift
	eval "got=\$(complete_words $words | sort | tr '\\n' ' ')"
	want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
	[ "$got" = "$want" ] || fail "'$words<TAB>' gave '$got', want '$want'"
}

bash -n "$BASH_COMP" || fail "bash -n $BASH_COMP"
complete_words '' >/dev/null || fail "sourcing the completion failed"

# commands
only "co" compare
# "rep": fixtures/realdump* folders (the cwd) also start with "re"
only "rep" replay
expect "''" compare ls schema bisect replay export
# options, per command
only "compare --for" --format
only "compare --fol" --follow-links
only "ls --fol" --follow-links
expect "compare --" --profile --filter --format --threads --no-cache --help
only "ls --st" --stats
only "bisect --au" --auto
only "bisect --al" --align
only "compare --align ''" auto passes tokens
expect "bisect demo/ref demo/target --" --auto --stage --band --run --session --layers
only "replay x.session --t" --target --threads --tui
only "export x.session --o" --out
expect "--" --profile --filter --session --notes --no-mouse --keys-man --ref --target
only "ls --profi" --profile --profiles
# the comparison options, alike in every command that opens a comparison
for c in "" compare schema bisect replay export; do
	# shellcheck disable=SC2086
	got=$(complete_words $c -)
	for o in -p --profile --filter -j --threads --no-cache -h --help -V --version; do
		printf '%s\n' "$got" | grep -qxF -- "$o" || fail "'dumpbisect $c -<TAB>' lacks $o"
	done
done
# a command's options do not leak into another's
complete_words ls --a | grep -qx -- --auto && fail "ls offers bisect's --auto"
complete_words compare --t | grep -qx -- --tui && fail "compare offers replay's --tui"
# values
only "compare --format ''" table csv json jsonl
only "ls --format ''" table json
only "bisect --format ''" table json
only "replay --format ''" table json
only "replay --format=j" json
only "bisect --band ''" ok drift algo bug
# profile names, from the binary
expect "--profile ''" sglang-v1 sglang-v2 sglang-hook atom atom-fwd atom-weights generic
expect "compare --profile ''" sglang-v1
only "compare demo/ref demo/target --profile sglang-v" sglang-v1 sglang-v2
only "-p atom" atom atom-fwd atom-weights
only "schema --profile=gen" generic
# a user profile joins them, once even when it shadows a built-in one
mkdir -p "$DB_TMP/home/.config/dumpbisect/profiles"
cp "$DB_SRC/profiles/generic.yaml" "$DB_TMP/home/.config/dumpbisect/profiles/mine.yaml"
cp "$DB_SRC/profiles/generic.yaml" "$DB_TMP/home/.config/dumpbisect/profiles/atom.yaml"
only "ls --profile mi" mine
only "-p ato" atom atom-fwd atom-weights
rm -r "$DB_TMP/home/.config"
# files and trees
expect "demo/r" demo/ref
expect "compare demo/ref demo/t" demo/target
only "ls demo/target/" demo/target/sglang_dump_1700000100.0
expect "ls pt/c6" pt/c64.pt

# Every option a command's --help names is completed, in bash and in zsh.
help_opts() { # COMMAND ("" = the workbench)
	if [ -z "$1" ]; then
		"$DB_BIN" --help
	else
		"$DB_BIN" "$1" --help
	fi | grep -oE -- '--[a-z][a-z-]+' | sort -u
}
for c in "" compare ls schema bisect replay export; do
	opts=$(help_opts "$c")
	[ -n "$opts" ] || fail "no options in 'dumpbisect $c --help'"
	# shellcheck disable=SC2086
	got=$(complete_words $c -- | sort -u)
	for o in $opts; do
		printf '%s\n' "$got" | grep -qxF -- "$o" ||
			fail "bash: 'dumpbisect $c --<TAB>' lacks $o (listed by --help)"
		# zsh: the option's spec in the command's _arguments block
		awk -v c="${c:-workbench}" '$0 ~ "^# --- " c "$" { on = 1; next } /^# --- / { on = 0 } on' \
			"$ZSH_COMP" | grep -q -- "'[^']*${o}[^a-z-]" ||
			fail "zsh: $c lacks $o (listed by --help)"
	done
done

# zsh: load it for real when zsh is there; otherwise a parse check.
if command -v zsh >/dev/null; then
	zsh -fc "autoload -Uz compinit && compinit -u -d '$DB_TMP/zcompdump' &&
		fpath=('$DB_SRC/completion' \$fpath) && autoload -Uz _dumpbisect &&
		whence -w _dumpbisect" >/dev/null 2>&1 || fail "zsh cannot load _dumpbisect"
	zsh -n "$ZSH_COMP" || fail "zsh -n $ZSH_COMP"
else
	bash -n "$ZSH_COMP" 2>/dev/null || fail "_dumpbisect does not even parse as shell"
fi
head -1 "$ZSH_COMP" | grep -qx '#compdef dumpbisect' || fail "_dumpbisect lacks '#compdef dumpbisect'"
# profile names come from `dumpbisect ls --profiles`, not from an error message
for f in "$BASH_COMP" "$ZSH_COMP"; do
	grep -q 'ls --profiles' "$f" || fail "${f##*/} does not ask 'ls --profiles' for the profile names"
	! grep -q 'nonexistent\|built-in: ' "$f" || fail "${f##*/} still scrapes an error message"
done

if [ "$fails" -ne 0 ]; then
	echo "$fails check(s) failed" >&2
	exit 1
fi
echo ok
