#!/bin/sh
# bench/profile.sh [BUILD_DIR] [SECONDS]
#
# Where a request's time goes, in one run.  Through the same nginx, with
# wrk, for SECONDS (default 5) each:
#   nop-fcgi   bench/nop-fcgi.c, the responder that does nothing (the
#              baseline every other row is read against)
#   duplicate  the same keyed callback again and again
#   fresh      a new registered job on every request
#   mixed-50   HMAC-signed Tornado bodies of about 600 B, every other one
#              a job accepted before the run (as bench/http.sh sends)
# each one at a time (c1) and on 64 connections (c64).  For each row:
# req/s, the responder's CPU time per request in ms (user + system, every
# thread, from /proc), its system calls and context switches per request
# (perf stat on the raw_syscalls:sys_enter tracepoint and the
# context-switches event of the whole process: at c64 a batch's calls are
# shared by its members), and the ratio of its rate to nop-fcgi's.
#
# Then the profile itself: the hot functions of the responder on the
# mixed traffic at c64 (perf record, flat, by symbol), and the system
# calls by name (perf trace -s, the worker's threads summed) of duplicate
# and fresh requests at c1 and of the mixed traffic at c64.
#
# Needs perf (linux-perf) and what bench/http.sh needs; as root it
# installs what it misses.  KEEP=DIR keeps perf.data there.
set -eu
build=$(cd "${1:-build}" && pwd)
secs=${2:-5}
top=$(cd "$(dirname "$0")/.." && pwd)
HB="$build/hookbox"
. "$top/bench/setup.sh"
bench_need wrk wrk
bench_need openssl openssl
bench_need perf linux-perf
bench_need bc bc
[ -f /usr/include/fcgiapp.h ] ||
    apt-get install -y -qq libfcgi-dev >/dev/null
bench_load
cc -O2 -Wall -Wextra -pthread -o "$build/nop-fcgi" "$top/bench/nop-fcgi.c" \
    -lfcgi

tmp=$(mktemp -d)
cleanup() {
	nginx_stop "$tmp/nginx" "$tmp/nginx-nop"
	[ -n "${fcgi:-}" ] && kill "$fcgi" 2>/dev/null
	[ -n "${nop:-}" ] && kill "$nop" 2>/dev/null
	wait 2>/dev/null
	[ -n "${KEEP:-}" ] && cp "$tmp"/perf.data "$KEEP"/ 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
export HOOKBOX_DIR="$tmp/data"
bench_data 450000
secret=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
printf '%s' "$secret" > "$tmp/secret"
chmod 600 "$tmp/secret"
"$HB" endpoint add tornado --tenant bench --secret-file "$tmp/secret"

sock="$tmp/hookbox.sock"
"$build/hookbox-fcgi" -s "$sock" 2>/dev/null &
fcgi=$!
wait_for test -S "$sock"
nsock="$tmp/nop.sock"
"$build/nop-fcgi" "$nsock" 4 &
nop=$!
wait_for test -S "$nsock"
port=$(bench_port)
nginx_start "$tmp/nginx" "$port" "$sock" "$HOOKBOX_DIR"
nginx_start "$tmp/nginx-nop" $((port + 1)) "$nsock" "$HOOKBOX_DIR"
base="http://127.0.0.1:$port"
nbase="http://127.0.0.1:$((port + 1))"
wait_for curl -sf "$base/hooks/_health"
wait_for curl -sf -d x "$nbase/hooks/nop"
worker=$(pgrep -P "$fcgi")

dup_lua job-0 > "$tmp/dup.lua"
curl -s -o /dev/null -H 'Content-Type: application/json' \
    -H 'X-Hook-Key: bench-shared-key' \
    --data-binary '{"type":"job_completed","job_id":"job-0","status":"completed","key":"k"}' \
    "$base/hooks/keyed"
# 64 accepted jobs for the mixed traffic's repeats (jobs 449900 ..), and
# new bodies from job 350000 on, enough for c1 and c64; the fresh runs
# take jobs below 350000.
sign_bodies 350000 99000 64 449900 "$tmp/mixed.txt"
accept_dups "$base/hooks/tornado" "$tmp/mixed.txt"
first=1

# mixed_sent: after a mixed run, drops the new bodies it sent (about half
# of its requests, wrk's count in $tmp/out), so that the next run's are new.
mixed_sent() {
	awk -F '\t' -v skip="$(awk '/ requests in / { print int($1 / 2) + 2 }' \
	    "$tmp/out")" '$1 == "d" || ++n > skip' "$tmp/mixed.txt" \
	    > "$tmp/mixed.next" && mv "$tmp/mixed.next" "$tmp/mixed.txt"
}

# measure PID URL SCRIPT: one wrk run under perf stat on the threads of
# PID and its children;
# prints "req/s cpu-ms syscalls/req switches/req".
measure() {
	_t0=$(tree_ticks "$1")
	_pids=$(pgrep -P "$1" | paste -sd, -)
	perf stat -x, -e raw_syscalls:sys_enter,context-switches \
	    -p "$1${_pids:+,$_pids}" \
	    -o "$tmp/stat" -- sleep $((secs + 1)) &
	_ps=$!
	sleep 0.2
	set -- "$1" $(rps "$2" "$3")
	wait "$_ps" || true
	_t1=$(tree_ticks "$1")
	awk -F, -v n="$6" -v r="$2" -v t=$((_t1 - _t0)) \
	    -v hz="$(getconf CLK_TCK)" '
	$3 == "raw_syscalls:sys_enter" { sc = $1 }
	$3 == "context-switches" { cs = $1 }
	END {
		if (n == 0) n = 1
		printf "%s %.3f %.1f %.2f\n", r, t * 1000 / hz / n, sc / n, cs / n
	}' "$tmp/stat"
}

# row NAME PID URL SCRIPT: measure, printed with the ratio to nop-fcgi
# ($nb, set by the nop-fcgi row of the same connection count).
row() {
	_name=$1
	shift
	set -- $(measure "$@")
	[ "$_name" = nop-fcgi ] && nb=$1
	printf '%-10s %6s %10s %8.3f %8s %10s %12s\n' "$_name" "$conns" "$1" \
	    "$(echo "$1 / $nb" | bc -l)" "$2" "$3" "$4"
}

printf '%-10s %6s %10s %8s %8s %10s %12s\n' traffic conns req/s vs-nop \
    cpu-ms calls/req switches/req
for conns in 1 64; do
	row nop-fcgi "$nop" "$nbase/hooks/nop" "$tmp/dup.lua"
	row duplicate "$fcgi" "$base/hooks/keyed" "$tmp/dup.lua"
	fresh_lua "$first" 50000 > "$tmp/fresh.lua"
	first=$((first + 100000))
	row fresh "$fcgi" "$base/hooks/keyed" "$tmp/fresh.lua"
	mixed_lua "$tmp/mixed.txt" 2 > "$tmp/mixed.lua"
	row mixed-50 "$fcgi" "$base/hooks/tornado" "$tmp/mixed.lua"
	mixed_sent
done

echo
echo "hot functions, mixed-50 at c64 (perf record, % of the responder's samples):"
conns=64
perf record -q -F 499 -p "$fcgi,$worker" -o "$tmp/perf.data" \
    -- sleep $((secs + 1)) >/dev/null 2>&1 &
_pr=$!
sleep 0.2
rps "$base/hooks/tornado" "$tmp/mixed.lua" >/dev/null
wait "$_pr" || true
mixed_sent
perf report -q -i "$tmp/perf.data" --no-children --sort dso,sym --stdio \
    2>/dev/null | awk 'NF > 0 && n++ < 25'
echo
echo "by library:"
perf report -q -i "$tmp/perf.data" --no-children --sort dso --stdio \
    2>/dev/null | awk 'NF > 0 && n++ < 10'

# by_name LABEL URL SCRIPT: one wrk run on $conns connections under perf
# trace -s; the worker's system calls by name, per request.
by_name() {
	echo
	echo "system calls of $1 (perf trace -s, per request):"
	perf trace -s -p "$worker" -o "$tmp/trace" -- sleep $((secs + 1)) \
	    >/dev/null 2>&1 &
	_pt=$!
	sleep 0.2
	set -- $(rps "$2" "$3")
	wait "$_pt" || true
	awk -v n="$5" '
	$1 ~ /^[a-z_0-9]+$/ && $2 ~ /^[0-9]+$/ { c[$1] += $2 }
	END {
		for (k in c) if (c[k] / n >= 0.05)
			printf "  %-14s %6.2f\n", k, c[k] / n
	}' "$tmp/trace" | sort -k2 -rn
}

conns=1
by_name "duplicate requests at c1" "$base/hooks/keyed" "$tmp/dup.lua"
fresh_lua "$first" 50000 > "$tmp/fresh.lua"
first=$((first + 100000))
by_name "fresh requests at c1" "$base/hooks/keyed" "$tmp/fresh.lua"
conns=64
by_name "mixed-50 at c64" "$base/hooks/tornado" "$tmp/mixed.lua"
