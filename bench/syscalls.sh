#!/bin/sh
# bench/syscalls.sh [BUILD_DIR] [REQUESTS]
#
# System calls per request in one responder worker, counted with strace -c
# while REQUESTS signed callbacks (default 200) go straight to its FastCGI
# socket, for two kinds of traffic:
#   duplicate  the same callback again and again: authenticated, parsed,
#              answered "duplicate"
#   fresh      a new registered job on every request: "accepted"
# Prints the calls per request, in total and for the calls that touch
# files (openat, fstat, newfstatat, pread64, pwrite64, fcntl, lseek,
# access, faccessat2, fsync, fdatasync), beside the baseline: the same
# requests answered 404 by the same worker (a path outside /hooks/: no
# database is touched, only the FastCGI exchange).
set -eu
build=$(cd "${1:-build}" && pwd)
n=${2:-200}
HB="$build/hookbox"
command -v strace >/dev/null 2>&1 || apt-get install -y -qq strace >/dev/null

tmp=$(mktemp -d)
export HOOKBOX_DIR="$tmp/data"
cleanup() {
	[ -n "${fcgi:-}" ] && kill "$fcgi" 2>/dev/null
	wait 2>/dev/null
	[ -n "${KEEP:-}" ] && cp "$tmp"/*.strace "$KEEP"/ 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

. "$(dirname "$0")/setup.sh"
bench_data $((n + 1))

sock="$tmp/fcgi.sock"
"$build/hookbox-fcgi" -d "$HOOKBOX_DIR" -s "$sock" -w 1 2>"$tmp/fcgi.log" &
fcgi=$!
i=0
while [ ! -S "$sock" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
sleep 0.3
worker=$(pgrep -P "$fcgi")

# send PATH JOB_PREFIX FIXED: n requests, job ids JOB_PREFIX<i> (or
# one fixed job when FIXED is 1).
send() {
	j=0
	while [ $j -lt "$n" ]; do
		job="job-$j"
		[ "$3" -eq 1 ] && job="job-0"
		body="{\"type\":\"job_completed\",\"job_id\":\"$job\",\"status\":\"completed\"}"
		printf '%s' "$body" | env -i REQUEST_METHOD=POST \
		    DOCUMENT_URI="$1" CONTENT_TYPE=application/json \
		    CONTENT_LENGTH=${#body} HTTP_X_HOOK_KEY=bench-shared-key \
		    cgi-fcgi -bind -connect "$sock" >/dev/null 2>&1
		j=$((j + 1))
	done
}

# count NAME PATH FIXED: strace the worker while send runs.
count() {
	# Warm up: the first request opens the databases.
	send "$2" x 1 >/dev/null 2>&1 || true
	strace -c -f -p "$worker" -o "$tmp/$1.strace" 2>/dev/null &
	st=$!
	sleep 0.5
	send "$2" x "$3"
	sleep 0.2
	kill -INT "$st"
	wait "$st" 2>/dev/null || true
	awk -v n="$n" -v name="$1" '
	$NF ~ /^(openat|fstat|newfstatat|pread64|pwrite64|fcntl|lseek|access|faccessat2|fsync|fdatasync|stat)$/ { files += $4 }
	$NF == "total" { total = $4 }
	END { printf "%-10s %6.1f calls/request, %6.1f on files\n", name, total / n, files / n }' \
	    "$tmp/$1.strace"
}

echo "bench/syscalls.sh: $n requests each, one worker, load $(cut -d' ' -f1-3 /proc/loadavg)"
count baseline /elsewhere 1
count duplicate /hooks/keyed 1
# Fresh jobs: the warm-up used job-0, so start the count on new ones.
sqlite3 "$HOOKBOX_DIR/state.db" "DELETE FROM outbox; DELETE FROM accepted;
    DELETE FROM job_state" 2>/dev/null
count fresh /hooks/keyed 0
