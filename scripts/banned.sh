#!/bin/sh
# scripts/banned.sh FILE...: fails when a C source calls a banned function.
#
# The list follows curl's and git's: calls that cannot be bounded
# (sprintf, strcpy, strcat, gets), that truncate without a NUL or a word
# (strncpy, strncat), that hide parse errors (atoi and friends, sscanf),
# or that keep hidden state (strtok).  Use snprintf, memcpy with a checked
# length, util_strtonum() and strcspn() instead.  Comments are skipped.
set -u
banned='sprintf|vsprintf|strcpy|stpcpy|strcat|strncpy|strncat|gets|atoi|atol|atoll|atof|sscanf|strtok|tmpnam|mktemp'
status=0
for f in "$@"; do
	# Drop /* ... */ comments and string literals, then look for calls.
	hits=$(sed -e 's/"\([^"\\]\|\\.\)*"/""/g' "$f" |
	    awk '{
		line = $0; out = ""
		while (length(line) > 0) {
			if (incomment) {
				i = index(line, "*/")
				if (i == 0) { line = ""; break }
				line = substr(line, i + 2); incomment = 0
			} else {
				i = index(line, "/*")
				if (i == 0) { out = out line; line = ""; break }
				out = out substr(line, 1, i - 1)
				line = substr(line, i + 2); incomment = 1
			}
		}
		print NR ": " out
	    }' | grep -E "(^|[^A-Za-z0-9_])($banned)[[:space:]]*\\(" |
	    grep -vE '^[0-9]+: *#')
	if [ -n "$hits" ]; then
		echo "$hits" | sed "s|^|$f:|" >&2
		status=1
	fi
done
[ "$status" -eq 0 ] || echo "banned.sh: banned calls found (see scripts/banned.sh)" >&2
exit "$status"
