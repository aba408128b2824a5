#!/bin/sh
# tests/e2e/completion.sh BUILD_DIR: completion/hookbox.bash in bash, without
# the bash-completion package: each case sets COMP_WORDS and COMP_CWORD
# as bash would, calls _hookbox, and checks COMPREPLY.
set -u
build=$(cd "${1:?usage: completion.sh BUILD_DIR}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/helpers/lib.sh"

# comp WORD...: what <TAB> offers after the words (the last is the word
# being completed, '' for a new one), sorted, space-separated.
comp() {
	PATH="$build:$PATH" bash -c '
	. "$1"
	shift
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMPREPLY=()
	_hookbox
	printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' \
	    comp "$top/completion/hookbox.bash" "$@" | sed 's/ $//'
}

# Commands and a group's verbs.
eq "a command" "conflicts" "$(comp hookbox conf)"
eq "a group's verbs" "add list remove set" "$(comp hookbox tenant '')"
eq "after -d DIR" "add list remove secret set show" \
    "$(comp hookbox -d /tmp endpoint '')"

# A command's own verbs, not its options.
eq "endpoint secret: its verbs" "add list revoke" \
    "$(comp hookbox endpoint secret '')"
eq "endpoint secret: a verb begun" "revoke" \
    "$(comp hookbox endpoint secret r)"
contains "endpoint secret add: then its options" "--secret-file" \
    "$(comp hookbox endpoint secret add --)"
contains "endpoint secret: options when asked for" "--expires" \
    "$(comp hookbox endpoint secret --)"

# An option's fixed set of values, not option names.
eq "list --state: the states" "all dead delivered leased pending unknown" \
    "$(comp hookbox list --state '')"
eq "list --state d" "dead delivered" "$(comp hookbox list --state d)"
eq "endpoint add --auth: the modes" "hmac key standard" \
    "$(comp hookbox endpoint add --auth '')"
eq "endpoint add --kind: the kinds" "mapped tornado-job tornado-org" \
    "$(comp hookbox endpoint add --kind '')"
# A value given is no command word: the options follow.
contains "list --state dead: the options again" "--tenant" \
    "$(comp hookbox list --state dead '')"
lacks "list --state dead: no state names" "pending" \
    "$(comp hookbox list --state dead '')"
contains "list: its options" "--state" "$(comp hookbox list '')"
# A file where a file is asked for.
contains "--secret-file: files" "hookbox.bash" \
    "$(cd "$top/completion" && comp hookbox endpoint add --secret-file h)"

# What loads it once installed: in the packages `make run` installs.
contains "install-deps.sh's run set: bash-completion" " bash-completion " \
    " $(sh "$top/scripts/install-deps.sh" -l run | tr '\n' ' ')"

finish completion
