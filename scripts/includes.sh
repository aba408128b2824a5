#!/bin/sh
# scripts/includes.sh: fails when a header is included where it is not
# for, or an include climbs back up the library's floors.
#
#  - <sqlite3.h> is included by lib/db/sqlite.c alone, <libpq-fe.h> by
#    lib/db/pg.c alone: each backend is a file of its own (lib/db/db.h);
#  - lib/db/db_int.h, the backends' table of operations, by lib/db/db.c
#    and the backends alone;
#  - lib/db/db.h, the one interface to SQL, by the two databases' modules
#    (lib/config/, lib/store/) and lib/run/settings.c, which tells a
#    directory from a server, alone: nothing above them asks which
#    backend holds the data, and the front ends (cli/, fcgi/) never see
#    it;
#  - each folder's private header (_int.h) by that folder alone;
#  - the library's folders stand on floors (FLOORS, the lowest first): a
#    file includes from its own folder and from floors below its own,
#    never from its floor's other folders nor from above, so that no
#    include climbs back and no two folders include each other.
# Run from the top of the tree.
set -u
status=0

FLOORS="base|net db provider|config store|intake|delivery|status|run"

fail() {
	echo "includes.sh: $*" >&2
	status=1
}

# only HEADER WHO FILE...: each of FILEs that includes HEADER (quotes or
# brackets) is one of WHO (files, or folders ending in '/').
only() {
	h=$1 who=$2
	shift 2
	re="^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]$h[>\"]"
	for f in $(grep -lE "$re" "$@"); do
		ok=0
		for w in $who; do
			case "$w" in
			*/) case "$f" in "$w"*) ok=1 ;; esac ;;
			*) [ "$f" = "$w" ] && ok=1 ;;
			esac
		done
		[ $ok -eq 1 ] || fail "$f includes $h (allowed: ${who:-none})"
	done
}

# The floor of a folder of lib/, from 1; 0 for none.
floor() {
	echo "$FLOORS" | tr '|' '\n' | awk -v d="$1" '
	{ for (i = 1; i <= NF; i++) if ($i == d) { print NR; exit } }
	END { if (NR == 0) print 0 }' | head -n 1
}

all="lib/*/*.[ch] cli/*.[ch] fcgi/*.[ch]"
# shellcheck disable=SC2086
only sqlite3.h lib/db/sqlite.c $all
# shellcheck disable=SC2086
only libpq-fe.h lib/db/pg.c $all
# shellcheck disable=SC2086
only db/db_int.h "lib/db/db.c lib/db/sqlite.c lib/db/pg.c" $all
# shellcheck disable=SC2086
only db/db.h "lib/db/ lib/config/ lib/store/ lib/run/settings.c" $all
# shellcheck disable=SC2086
only config/config_int.h "lib/config/" $all
# shellcheck disable=SC2086
only store/store_int.h "lib/store/" $all

# Every folder of lib/ stands on a floor.
for d in lib/*/; do
	d=${d#lib/}
	d=${d%/}
	[ "$(floor "$d")" -gt 0 ] || fail "lib/$d/ stands on no floor" \
	    "(FLOORS in scripts/includes.sh)"
done

# The floors: what each file of lib/ includes from lib/.
inc='[[:space:]]*#[[:space:]]*include[[:space:]]*'
for f in lib/*/*.[ch]; do
	d=${f#lib/}
	d=${d%%/*}
	mine=$(floor "$d")
	for h in $(sed -n "s/^$inc\"\\([a-z_]*\\)\\/[a-z_]*\\.h\".*/\\1/p" \
	    "$f" | sort -u); do
		[ "$h" = "$d" ] && continue
		theirs=$(floor "$h")
		if [ "$theirs" -eq 0 ]; then
			fail "$f includes from $h/, which is no folder of lib/"
		elif [ "$theirs" -ge "$mine" ]; then
			fail "$f (lib/$d/, floor $mine) includes from lib/$h/" \
			    "(floor $theirs): only lower floors"
		fi
	done
	# A header of lib/ is named by its folder: "db/db.h", not "db.h".
	if grep -qE "^$inc\"[a-z_]*\\.h\"" "$f"; then
		fail "$f includes a header of lib/ without its folder"
	fi
done
exit "$status"
