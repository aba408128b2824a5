#!/bin/sh
# scripts/exports.sh LIB.so HEADER...: checks what the shared library
# exports against what the headers promise.
#
#  - every exported function is declared HB_API in one of the headers
#    (nothing leaks out of lib/ that no header states a contract for);
#  - each is named with its module's prefix: its header's name (util_...
#    in base/util.h, webhook_... in intake/webhook.h), or, in a folder
#    whose modules share one name, the folder's (store_... in
#    store/outbox.h, config_... in config/admin.h).
# How many functions a header exports is for its concern to say, not a
# number here.
# Prints one line per header with its count.
set -u
so=${1:?usage: exports.sh LIB.so HEADER...}
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0

nm -D --defined-only "$so" | awk '$2 == "T" { print $3 }' | sort > "$tmp/exported"
: > "$tmp/declared"
for h in "$@"; do
	base=$(basename "$h" .h)
	dir=$(basename "$(dirname "$h")")
	grep -v '^#' "$h" | tr '\n' ' ' | grep -o 'HB_API[^;]*;' |
	    sed -e 's/(.*//' -e 's/.*[ *]//' | sort > "$tmp/one"
	n=$(wc -l < "$tmp/one")
	printf '%-20s %3d exported\n' "$dir/$base.h" "$n"
	while read -r f; do
		case "$f" in
		"$base"_*|"$dir"_*) ;;
		*) echo "exports.sh: $h: $f lacks the prefix ${base}_ or" \
		       "${dir}_" >&2
		   status=1 ;;
		esac
	done < "$tmp/one"
	cat "$tmp/one" >> "$tmp/declared"
done
sort -o "$tmp/declared" "$tmp/declared"
extra=$(comm -23 "$tmp/exported" "$tmp/declared")
if [ -n "$extra" ]; then
	echo "exports.sh: exported but declared HB_API in no header:" $extra >&2
	status=1
fi
exit "$status"
