#!/bin/sh
# tests/e2e/mandrift.sh: the manual pages against the programs' own help, so
# that neither drifts from the other.  Every command `hookbox --help`
# lists has its entry in man/hookbox.1 (an indented tag in COMMANDS whose
# leading words are the command), every option `hookbox COMMAND --help`
# prints is named in that command's entries, and every option an entry
# names is in that command's help; every long option named anywhere in
# the page is one some help prints.  The same for `hookbox-fcgi -h`
# against the OPTIONS of man/hookbox-fcgi.8.  The help is read when the
# test runs, never from a stored list.
# Usage: tests/e2e/mandrift.sh BUILD_DIR [MAN_DIR]
set -u
# Words are split on purpose below (a tag, a list of options); never globbed.
set -f
build=$(cd "${1:?usage: mandrift.sh BUILD_DIR [MAN_DIR]}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/helpers/lib.sh"
mandir=${2:-$top/man}
hb=$build/hookbox
fcgi=$build/hookbox-fcgi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# plain FILE: the page's source as text: continued lines joined, font and
# dash escapes removed, macro names and quotes dropped.
plain() {
	awk '/\\$/ { sub(/\\$/, ""); printf "%s", $0; next } { print }' "$1" |
	    sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\f(..//g' \
	    -e 's/\\&//g' -e 's/\\(..//g' -e 's/\\e/\\/g' \
	    -e 's/^\.[A-Z][A-Z]* *//' -e 's/"//g'
}

# longopts: the long options in standard input, one a line, sorted.
longopts() {
	grep -o -- '--[a-z][a-z0-9-]*[a-z0-9]' | sort -u
}

# ---- hookbox(1) ----
plain "$mandir/hookbox.1" > "$tmp/man1"
# The commands as the tool lists them; "tenant {add|set}" is two.
"$hb" --help > "$tmp/help" 2>&1
eq "hookbox --help exits 0" 0 $?
awk '/^commands:/ { on = 1; next } on && NF == 0 { exit }
    on { if ($2 ~ /^\{/) { gsub(/[{}]/, "", $2); n = split($2, v, "|")
	for (i = 1; i <= n; i++) print $1 " " v[i] } else print $1 }' \
    "$tmp/help" > "$tmp/commands"
eq "the tool lists its commands" 1 \
    "$([ "$(wc -l < "$tmp/commands")" -ge 20 ] && echo 1)"

# The COMMANDS section's entries: each .TP tag with its text, up to the
# next .TP, .PP or .SH (an .IP goes on with the entry), as "tag<TAB>text".
awk '/\\$/ { sub(/\\$/, ""); printf "%s", $0; next } { print }' \
    "$mandir/hookbox.1" | awk '
	/^\.SH/ { if (on && tag != "") print tag "\t" body; on = ($0 ~ /^\.SH COMMANDS/); tag = ""; next }
	!on { next }
	/^\.(TP|PP)/ { if (tag != "") print tag "\t" body; tag = ""; body = ""; want = ($0 ~ /^\.TP/); next }
	want { tag = $0; want = 0; next }
	tag != "" { body = body " " $0 }
	END { if (on && tag != "") print tag "\t" body }' |
    sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\f(..//g' \
    -e 's/\\&//g' -e 's/\\(..//g' -e 's/\.[A-Z][A-Z]* //g' \
    -e 's/^\.[A-Z][A-Z]* *//' -e 's/"//g' > "$tmp/entries"
eq "hookbox(1) has command entries" 1 \
    "$([ "$(wc -l < "$tmp/entries")" -ge 20 ] && echo 1)"

# Each entry belongs to the longest command its tag starts with; a tag
# that starts with no command is documented behaviour the tool lacks.
: > "$tmp/owned"
while IFS='	' read -r tag body; do
	# shellcheck disable=SC2086
	set -- $tag
	w1=${1:-}; w2=${2:-}
	if grep -Fqx "$w1 $w2" "$tmp/commands"; then
		cmd="$w1 $w2"
	elif grep -Fqx "$w1" "$tmp/commands"; then
		cmd=$w1
	else
		fail "hookbox(1) documents a command the tool lacks: $tag"
		continue
	fi
	pass
	printf '%s\t%s\t%s\n' "$cmd" "$tag" "$body" >> "$tmp/owned"
done < "$tmp/entries"

# Every listed command has an entry; every option its help prints is in
# one of its entries, and every option its synopses (the tags) name is in
# its help.  An entry's text may name another command's options (init's
# --grant in grants'): the check of the whole page below covers those.
: > "$tmp/allhelp"
cat "$tmp/help" >> "$tmp/allhelp"
while read -r cmd; do
	# shellcheck disable=SC2086
	"$hb" $cmd --help > "$tmp/chelp" 2>&1
	eq "hookbox $cmd --help exits 0" 0 $?
	cat "$tmp/chelp" >> "$tmp/allhelp"
	awk -F '\t' -v c="$cmd" '$1 == c { print $2 " " $3 }' \
	    "$tmp/owned" > "$tmp/entry"
	awk -F '\t' -v c="$cmd" '$1 == c { print $2 }' "$tmp/owned" \
	    > "$tmp/tags"
	if [ -s "$tmp/entry" ]; then
		pass
	else
		fail "hookbox(1) has no entry for the command '$cmd'"
		continue
	fi
	longopts < "$tmp/chelp" | grep -vx -- --help > "$tmp/hopts"
	longopts < "$tmp/entry" > "$tmp/mopts"
	longopts < "$tmp/tags" > "$tmp/topts"
	for o in $(comm -23 "$tmp/hopts" "$tmp/mopts"); do
		fail "hookbox(1): '$cmd' lacks $o, which its help prints"
	done
	[ -z "$(comm -23 "$tmp/hopts" "$tmp/mopts")" ] && pass
	for o in $(comm -13 "$tmp/hopts" "$tmp/topts"); do
		fail "hookbox(1): the synopsis of '$cmd' has $o, which its" \
		    "help lacks"
	done
	[ -z "$(comm -13 "$tmp/hopts" "$tmp/topts")" ] && pass
done < "$tmp/commands"

# Every long option the page names anywhere is one some help prints; the
# global ones (-d, -h) are in the page.
longopts < "$tmp/allhelp" > "$tmp/allopts"
longopts < "$tmp/man1" > "$tmp/manopts"
for o in $(comm -13 "$tmp/allopts" "$tmp/manopts"); do
	fail "hookbox(1) names $o, which no help of the tool prints"
done
[ -z "$(comm -13 "$tmp/allopts" "$tmp/manopts")" ] && pass
for o in -d -h; do
	if grep -q -- "$o" "$tmp/help" && grep -q -- "$o " "$tmp/man1"; then
		pass
	else
		fail "hookbox(1) lacks the global option $o"
	fi
done

# ---- hookbox-fcgi(8) ----
"$fcgi" -h > "$tmp/fhelp" 2>&1
eq "hookbox-fcgi -h exits 0" 0 $?
sed -n 's/^  *-\([A-Za-z]\)\( .*\)*$/\1/p' "$tmp/fhelp" | sort -u \
    > "$tmp/fhopts"
eq "hookbox-fcgi -h lists its options" 1 \
    "$([ "$(wc -l < "$tmp/fhopts")" -ge 5 ] && echo 1)"
# The OPTIONS section's tags: ".TP" then ".BI \-d ..." or ".B \-h".
awk '/^\.SH/ { on = ($0 ~ /^\.SH OPTIONS/); next }
    on && /^\.TP/ { want = 1; next }
    want { print; want = 0 }' "$mandir/hookbox-fcgi.8" |
    sed -n 's/^\.B[IR]* \\-\([A-Za-z]\).*/\1/p' | sort -u > "$tmp/fmopts"
for o in $(comm -23 "$tmp/fhopts" "$tmp/fmopts"); do
	fail "hookbox-fcgi(8) OPTIONS lacks -$o, which -h prints"
done
for o in $(comm -13 "$tmp/fhopts" "$tmp/fmopts"); do
	fail "hookbox-fcgi(8) OPTIONS documents -$o, which -h lacks"
done
[ -z "$(comm -3 "$tmp/fhopts" "$tmp/fmopts")" ] && pass
# The synopsis names each option too.
syn=$(awk '/^\.SH SYNOPSIS/ { on = 1; next } /^\.SH/ { on = 0 } on' \
    "$mandir/hookbox-fcgi.8" | sed 's/\\-/-/g')
for o in $(cat "$tmp/fhopts"); do
	case "$o:$syn" in
	[hV]:*"-hV"*|?:*"-$o"*) pass ;;
	*) fail "hookbox-fcgi(8) SYNOPSIS lacks -$o" ;;
	esac
done

finish mandrift
