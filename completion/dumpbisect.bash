# bash completion for dumpbisect(1): commands, each command's options, the
# values of --format, --band and --profile (profile names from the binary),
# trees and files.
# Installed as share/bash-completion/completions/dumpbisect.
# shellcheck disable=SC2207 # COMPREPLY=($(compgen ...)) is the idiom; IFS is set where it matters

# Profile names, as the binary lists them (`dumpbisect ls --profiles`: the
# built-in ones and the user's, one a line, the name first).
_dumpbisect_profiles()
{
	local name rest IFS=$' \t\n'     # the caller's IFS may be a newline alone
	"$1" ls --profiles 2>/dev/null </dev/null | while read -r name rest; do
		printf '%s\n' "$name"
	done
}

_dumpbisect_files() # MODE(-d dirs, -f files) CUR
{
	if declare -F _filedir >/dev/null; then
		if [[ $1 == -d ]]; then _filedir -d; else _filedir; fi
		return
	fi
	compopt -o filenames 2>/dev/null
	local IFS=$'\n'
	COMPREPLY+=($(compgen "$1" -- "$2"))
}

_dumpbisect()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local bin=${COMP_WORDS[0]} cmd=tui
	COMPREPLY=()
	# shellcheck disable=SC2088 # a literal "~/" typed on the line
	[[ $bin == "~/"* ]] && bin=$HOME/${bin#\~/}

	local commands="compare ls schema bisect replay export"
	# options that take a value, per command (tui = the workbench); every
	# command that opens a comparison takes the same four ($cmp, --no-cache)
	local cmp="--profile -p --filter --threads -j --align"
	local -A valopts=(
		[tui]="$cmp --session --ref --target --notes --slot --noise --slots"
		[compare]="$cmp --noise --format --timeout --slot --slots --pass-if --allow-failed --allow-skipped"
		[ls]="--profile -p --format"
		[schema]="$cmp --format"
		[bisect]="--stage $cmp --phase --pass --band --cos --rel --pass-if --good --layers --run --session --ref --target --format --noise --slots"
		[replay]="--ref --target $cmp --noise --format"
		[export]="--out --ref --target --notes $cmp --noise"
	)
	local std="--help -h --version -V"
	local -A flags=(
		[tui]="--no-cache --follow-links --no-session --no-mouse --no-watch --keys-man $std"
		[compare]="--no-cache --follow-links --diverging --watch $std"
		[ls]="--stats --profiles --follow-links $std"
		[schema]="--no-cache --follow-links $std"
		[bisect]="--auto --no-cache --follow-links --no-session $std"
		[replay]="--no-cache --follow-links --tui $std"
		[export]="--no-cache --follow-links $std"
	)

	# The command is the first word; an option of the workbench first means
	# there is none.
	if ((COMP_CWORD > 1)) && [[ " $commands " == *" ${COMP_WORDS[1]} "* ]]; then
		cmd=${COMP_WORDS[1]}
	fi

	# --opt=value
	if [[ $cur == --*=* ]]; then
		prev=${cur%%=*}
		cur=${cur#*=}
	fi

	if [[ " ${valopts[$cmd]} " == *" $prev "* ]]; then
		case $prev in
		--profile | -p)
			if [[ $cur == */* || $cur == .* ]]; then
				_dumpbisect_files -f "$cur"
			else
				local IFS=$'\n'
				COMPREPLY=($(compgen -W "$(_dumpbisect_profiles "$bin")" -- "$cur"))
			fi
			;;
		--align) COMPREPLY=($(compgen -W "auto tokens passes" -- "$cur")) ;;
		--format)
			# "table" is the human format everywhere ("text" is its alias)
			case $cmd in
			compare) COMPREPLY=($(compgen -W "table csv json jsonl" -- "$cur")) ;;
			*) COMPREPLY=($(compgen -W "table json" -- "$cur")) ;;
			esac
			;;
		--band) COMPREPLY=($(compgen -W "ok drift algo bug" -- "$cur")) ;;
		--session) _dumpbisect_files -f "$cur" ;;
		--notes | --out | --ref | --target | --noise) _dumpbisect_files -d "$cur" ;;
		*) ;; # a regex, a number, a stage, a shell command: nothing to offer
		esac
		return 0
	fi

	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "${valopts[$cmd]} ${flags[$cmd]}" -- "$cur"))
		return 0
	fi

	if ((COMP_CWORD == 1)); then
		COMPREPLY=($(compgen -W "$commands" -- "$cur"))
		# the workbench takes trees right away
		_dumpbisect_files -d "$cur"
		return 0
	fi

	case $cmd in
	bisect)
		# a verb (bisect start|good|..., one verdict per command) or REF
		((COMP_CWORD == 2)) &&
			COMPREPLY=($(compgen -W "start good bad skip undo log reset run" -- "$cur"))
		_dumpbisect_files -d "$cur"
		;;
	replay | export) _dumpbisect_files -f "$cur" ;; # SESSION
	ls) _dumpbisect_files -f "$cur" ;;             # a tree or one file
	*) _dumpbisect_files -d "$cur" ;;              # REF [TARGET]
	esac
	return 0
}

complete -F _dumpbisect dumpbisect
