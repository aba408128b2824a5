#!/bin/sh
# scripts/includes.sh: fails when a header is included where it is not for.
#
#  - <sqlite3.h> is included by lib/db_sqlite.c alone, <libpq-fe.h> by
#    lib/db_pg.c alone: each backend is a file of its own (lib/db.h);
#  - lib/db_int.h, the backends' table of operations, by lib/db*.c alone;
#  - lib/db.h by no file outside lib/: the front ends (cli/, fcgi/) call
#    the modules above it.
# Run from the top of the tree.
set -u
status=0

# only HEADER WHO FILE...: each of FILEs that includes HEADER (quotes or
# brackets) is one of WHO.
only() {
	h=$1 who=$2
	shift 2
	re="^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]$h[>\"]"
	for f in $(grep -lE "$re" "$@"); do
		case " $who " in
		*" $f "*) ;;
		*) echo "includes.sh: $f includes $h" \
		       "(allowed: ${who:-none here})" >&2
		   status=1 ;;
		esac
	done
}

only sqlite3.h lib/db_sqlite.c lib/*.[ch] cli/*.[ch] fcgi/*.[ch]
only libpq-fe.h lib/db_pg.c lib/*.[ch] cli/*.[ch] fcgi/*.[ch]
only db_int.h "lib/db.c lib/db_sqlite.c lib/db_pg.c" lib/*.[ch] cli/*.[ch] \
    fcgi/*.[ch]
only db.h "" cli/*.[ch] fcgi/*.[ch]
exit "$status"
