# bash completion for hookbox(1).  The commands and each command's
# options are read from `hookbox help`, so that they never drift from
# the program.
_hookbox()
{
	local cur prev words cword i cmd=() w help
	_init_completion 2>/dev/null || {
		cur=${COMP_WORDS[COMP_CWORD]}
		prev=${COMP_WORDS[COMP_CWORD-1]}
		words=("${COMP_WORDS[@]}")
		cword=$COMP_CWORD
	}
	case $prev in
	-d|--secret-file|--api-key-file|--mapping|--sample|--undo)
		# A file, but for `endpoint show --mapping NAME`.
		if [[ $prev != --mapping || " ${words[*]} " != *" show "* ]]
		then
			COMPREPLY=($(compgen -f -- "$cur"))
			return
		fi
		;;
	esac
	# The command words typed so far, skipping -d DIR and the values
	# of options that take one (a word after --state is no command).
	for ((i = 1; i < cword; i++)); do
		w=${words[i]}
		case $w in
		-d) i=$((i + 1)) ;;
		-*) ;;
		*)
			case ${words[i-1]} in
			--*) "${words[0]}" help "${cmd[@]}" 2>/dev/null |
			    grep -q -- "${words[i-1]} [A-Za-z]" && continue ;;
			esac
			cmd+=("$w") ;;
		esac
	done
	if [[ ${#cmd[@]} -eq 0 ]]; then
		COMPREPLY=($(compgen -W "$("${words[0]}" help 2>/dev/null |
		    awk '/^commands:/ { on = 1; next } on && NF == 0 { exit }
		    on { print $1 }') help --help --version" -- "$cur"))
		return
	fi
	if [[ ${#cmd[@]} -eq 1 ]]; then
		# A group's verbs: "tenant {add|list|remove}".
		w=$("${words[0]}" help 2>/dev/null |
		    awk -v c="${cmd[0]}" '$1 == c && $2 ~ /^\{/ {
			gsub(/[{}]/, "", $2); gsub(/\|/, " ", $2); print $2 }')
		if [[ -n $w ]]; then
			COMPREPLY=($(compgen -W "$w" -- "$cur"))
			return
		fi
	fi
	help=$("${words[0]}" help "${cmd[@]}" 2>/dev/null)
	# A value from a fixed set: "--state pending|leased|...|all".
	if [[ $prev == --* ]]; then
		w=$(printf '%s\n' "$help" |
		    grep -oE -- "$prev [a-z0-9-]+(\|[a-z0-9-]+)+" | head -n 1)
		if [[ -n $w ]]; then
			w=${w#* }
			COMPREPLY=($(compgen -W "${w//|/ }" -- "$cur"))
			return
		fi
	fi
	# A command's own verbs: "endpoint secret add|list|revoke", read
	# from its usage lines ("hookbox [-d DIR] endpoint secret add ...").
	if [[ $cur != -* ]]; then
		w=$(printf '%s\n' "$help" | awk -v c="${cmd[*]}" '
		    /^usage:/ || /^ +hookbox / {
			sub(/^usage:/, ""); sub(/^ *hookbox \[-d DIR\] /, "")
			if (index($0, c " ") == 1) {
				split(substr($0, length(c) + 2), r, " ")
				if (r[1] ~ /^[a-z]+$/) print r[1]
			}
		    }' | sort -u)
		if [[ -n $w ]]; then
			COMPREPLY=($(compgen -W "$w" -- "$cur"))
			return
		fi
	fi
	COMPREPLY=($(compgen -W "$(printf '%s\n' "$help" |
	    grep -o -- '--[a-z-]*' | sort -u)" -- "$cur"))
}
complete -F _hookbox hookbox
