#!/bin/sh
# bench/wal.sh [BUILD_DIR] [REQUESTS]
#
# What one observation writes to state.db's WAL, by table.  A responder
# (one worker, its defaults) gets REQUESTS (default 2000) fresh keyed
# callbacks first, so that the tables are not empty; then, one at a time
# (each its own batch and COMMIT), ten more fresh callbacks and then the
# same ten again (duplicates).  After each, the WAL's frames are read
# (each frame one page: a 24-byte header and the page) and every page is
# named by its table or index (the dbstat table of the sqlite3 shell); a
# checkpoint empties the WAL before the next.  Prints, for each kind, the
# frames and WAL bytes per request and the pages by table, averaged.
#
# At c64 a batch's members share the pages that land on the same place
# (the end of receipts, of each outbox index, the metrics row): bench/
# scale.sh prints the kB written per request there.
set -eu
build=$(cd "${1:-build}" && pwd)
n=${2:-2000}
top=$(cd "$(dirname "$0")/.." && pwd)
HB="$build/hookbox"
. "$top/bench/setup.sh"
bench_need sqlite3 sqlite3
bench_need cgi-fcgi libfcgi-bin
bench_need python3 python3-minimal
bench_load

tmp=$(mktemp -d)
export HOOKBOX_DIR="$tmp/data"
cleanup() {
	[ -n "${fcgi:-}" ] && kill "$fcgi" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
bench_data $((n + 20))
sock="$tmp/fcgi.sock"
"$build/hookbox-fcgi" -s "$sock" 2>/dev/null &
fcgi=$!
wait_for test -S "$sock"

# send JOB: one keyed callback straight to the socket.
send() {
	body="{\"type\":\"job_completed\",\"job_id\":\"$1\",\"status\":\"completed\",\"key\":\"outputs/bench/$1.mp4\"}"
	printf '%s' "$body" | env -i REQUEST_METHOD=POST \
	    DOCUMENT_URI=/hooks/keyed CONTENT_TYPE=application/json \
	    CONTENT_LENGTH=${#body} HTTP_X_HOOK_KEY=bench-shared-key \
	    cgi-fcgi -bind -connect "$sock" >/dev/null
}
checkpoint() {
	sqlite3 "$HOOKBOX_DIR/state.db" "PRAGMA wal_checkpoint(TRUNCATE)" \
	    >/dev/null
}

i=0
while [ $i -lt "$n" ]; do
	send "job-$i"
	i=$((i + 1))
done
checkpoint
# measure KIND JOB...: each JOB sent alone, its WAL read and emptied;
# prints the frames and bytes per request and the pages by table.
measure() {
	kind=$1
	shift
	: > "$tmp/pages"
	bytes=0
	for job in "$@"; do
		send "$job"
		wal="$HOOKBOX_DIR/state.db-wal"
		bytes=$((bytes + $(wc -c < "$wal")))
		python3 - "$wal" >> "$tmp/pages" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
size = struct.unpack('>I', d[8:12])[0]
off = 32
while off + 24 + size <= len(d):
    print(struct.unpack('>I', d[off:off + 4])[0])
    off += 24 + size
PY
		# Named now: a later request may put the page to another use.
		while read -r p; do
			sqlite3 "$HOOKBOX_DIR/state.db" \
			    "SELECT name FROM dbstat WHERE pageno = $p"
		done < "$tmp/pages" >> "$tmp/names"
		: > "$tmp/pages"
		checkpoint
	done
	k=$#
	echo "$kind: $(awk -v k="$k" 'END { printf "%.1f", NR / k }' \
	    "$tmp/names") frames, $((bytes / k)) bytes of WAL per request" \
	    "($k requests)"
	sort "$tmp/names" | uniq -c | sort -rn |
	    awk -v k="$k" '{ printf "  %-28s %.2f\n", $2, $1 / k }'
	rm -f "$tmp/names"
}

# Ten fresh jobs, then each of them again.
set --
i=0
while [ $i -lt 10 ]; do
	set -- "$@" "job-$((n + i))"
	i=$((i + 1))
done
measure fresh "$@"
measure duplicate "$@"
