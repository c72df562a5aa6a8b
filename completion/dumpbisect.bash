# bash completion for dumpbisect(1): commands, each command's options, the
# values of --format, --band and --profile (profile names), trees and files.
# Installed as share/bash-completion/completions/dumpbisect.
# shellcheck disable=SC2207 # COMPREPLY=($(compgen ...)) is the idiom; IFS is set where it matters

# Profile names: the built-in ones as the binary itself names them (it lists
# them when asked for an unknown profile; nothing is scanned: the trees do
# not exist), the installed copies beside the binary, and the user's.
_dumpbisect_profiles()
{
	local bin=$1 msg dir f IFS=$' \t\n'
	local -a names=()
	msg=$("$bin" schema /nonexistent/ref /nonexistent/target --profile @ 2>&1 </dev/null)
	if [[ $msg == *"built-in: "* ]]; then
		msg=${msg#*built-in: }
		msg=${msg%%;*}
		msg=${msg%%)*}
		# shellcheck disable=SC2206 # names hold no blanks or globs
		names+=(${msg//,/ })
	fi
	dir=$(command -v -- "$bin" 2>/dev/null)
	dir=${dir%/*}
	for dir in "${dir%/bin}/share/dumpbisect/profiles" \
		"${XDG_CONFIG_HOME:-$HOME/.config}/dumpbisect/profiles"; do
		for f in "$dir"/*.yaml; do
			[[ -f $f ]] || continue
			f=${f##*/}
			names+=("${f%.yaml}")
		done
	done
	printf '%s\n' "${names[@]}" | sort -u
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
	# options that take a value, per command (tui = the workbench)
	local -A valopts=(
		[tui]="--profile -p --filter --session --notes"
		[compare]="--profile --filter --format --threads -j"
		[ls]="--profile --format"
		[schema]="--profile --filter --format"
		[bisect]="--stage --profile --phase --pass --band --cos --rel --good --layers --run --session --ref --target --format"
		[replay]="--ref --target --format"
		[export]="--out --ref --target --notes"
	)
	local -A flags=(
		[tui]="--no-mouse --keys-man --help -h --version -V"
		[compare]="--no-cache --help -h"
		[ls]="--stats --help -h"
		[schema]="--help -h"
		[bisect]="--auto --help -h"
		[replay]="--tui --help -h"
		[export]="--help -h"
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
		--format)
			case $cmd in
			compare) COMPREPLY=($(compgen -W "table csv json" -- "$cur")) ;;
			ls | schema) COMPREPLY=($(compgen -W "table json" -- "$cur")) ;;
			*) COMPREPLY=($(compgen -W "text json" -- "$cur")) ;;
			esac
			;;
		--band) COMPREPLY=($(compgen -W "ok drift algo bug" -- "$cur")) ;;
		--session) _dumpbisect_files -f "$cur" ;;
		--notes | --out | --ref | --target) _dumpbisect_files -d "$cur" ;;
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
	replay | export) _dumpbisect_files -f "$cur" ;; # SESSION
	ls) _dumpbisect_files -f "$cur" ;;             # a tree or one file
	*) _dumpbisect_files -d "$cur" ;;              # REF [TARGET]
	esac
	return 0
}

complete -F _dumpbisect dumpbisect
