#!/bin/sh
# bench/http.sh [BUILD_DIR] [SECONDS] [CONNECTIONS...]
#
# Requests per second through nginx, measured with wrk on loopback, for
# each connection count (default: 16 and 64), for these kinds of traffic:
#   baseline   POST to a static location nginx answers itself (204)
#   nop-fcgi   POST through the same site snippet to bench/nop-fcgi.c, a
#              libfcgi responder that reads the body and answers 200
#              without doing any work: the ceiling of nginx + libfcgi
#   duplicate  the same callback over and over: authenticated, parsed,
#              answered "duplicate" (one read transaction + receipt commit)
#   fresh      a new registered job on every request: "accepted", a new
#              action and outbox row committed (one fsync each)
#   mixed-50   HMAC-signed (X-Tornado-Signature) bodies of about 600
#              bytes, pre-signed: every other request repeats a job
#              accepted before the run, the others are new jobs
# Every row is reported with its ratio to the nginx baseline and to the
# nop-fcgi baseline measured in the same run, and to the commit baseline:
# single-row INSERT transactions per second (bench/commit.c, WAL,
# synchronous=FULL) on the same file system.  The cpu-ms column is the
# CPU time (user + system) the responder's processes used over the run,
# per request wrk reported, in ms (target for hookbox: 0.1 at most); the
# rss column is VmRSS in kB of each responder process after the run
# (master+workers), and the line under the table the same 3 s later,
# once the responder has given back what the traffic freed.
# The responder runs with its defaults (hookbox-fcgi -d DIR -s SOCKET);
# FCGI_OPTS adds options ("-w 2 -t 1": the pre-forked model).  nop-fcgi
# runs NOP_THREADS threads (default 4).  Set HOOKBOX_SYNC=normal to
# measure the opt-in synchronous=NORMAL.
#
# BENCH_PG=1: the same workload on PostgreSQL, a private server started
# here (tests/helpers/pglib.sh: fsync on, synchronous_commit on), the responders
# connecting over its unix socket; the commit baseline is then single-row
# INSERT transactions per second measured by pgbench on that server.
# BENCH_HOSTS=2 (with BENCH_PG=1): two responders, each behind its own
# nginx on loopback, both on the one database, as two web hosts would be;
# every run drives both at once, half the connections each, and reports
# the sum (cpu-ms and rss cover both responders; the mixed row is left
# out).
set -eu
build=$(cd "${1:-build}" && pwd)
secs=${2:-10}
[ $# -gt 2 ] && shift 2 && conns_list=$* || conns_list="16 64"
top=$(cd "$(dirname "$0")/.." && pwd)
HB="$build/hookbox"
nop_threads=${NOP_THREADS:-4}
. "$top/bench/setup.sh"
bench_need wrk wrk
bench_need openssl openssl
[ -f /usr/include/fcgiapp.h ] ||
    apt-get install -y -qq libfcgi-dev >/dev/null

bench_load
pg=${BENCH_PG:-0}
hosts=${BENCH_HOSTS:-1}
[ "$hosts" = 2 ] && [ "$pg" != 1 ] && {
	echo "bench/http.sh: BENCH_HOSTS=2 needs BENCH_PG=1" >&2; exit 2; }

cc -O2 -Wall -Wextra -pthread -o "$build/nop-fcgi" "$top/bench/nop-fcgi.c" \
    -lfcgi
cc -O2 -Wall -Wextra -o "$build/bench-commit" "$top/bench/commit.c" \
    -lsqlite3

tmp=$(mktemp -d)
cleanup() {
	nginx_stop "$tmp/nginx" "$tmp/nginx-nop" "$tmp/nginx2"
	[ -n "${fcgi:-}" ] && kill "$fcgi" 2>/dev/null
	[ -n "${fcgi2:-}" ] && kill "$fcgi2" 2>/dev/null
	[ -n "${nop:-}" ] && kill "$nop" 2>/dev/null
	wait 2>/dev/null
	[ "$pg" = 1 ] && pg_stop "$tmp/pg"
	rm -rf "$tmp"
}
trap cleanup EXIT
if [ "$pg" = 1 ]; then
	bench_need pgbench postgresql-contrib
	. "$top/tests/helpers/pglib.sh"
	chmod 0755 "$tmp"
	pg_start "$tmp/pg" >/dev/null || exit 1
	unset HOOKBOX_DIR
	export HOOKBOX_DB="$pg_uri"
	data=""
else
	export HOOKBOX_DIR="$tmp/data"
	data=$HOOKBOX_DIR
fi

bench_data $((hosts == 2 ? 1600000 : 1000000))
secret=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
printf '%s' "$secret" > "$tmp/secret"
chmod 600 "$tmp/secret"
"$HB" endpoint add tornado --tenant bench --secret-file "$tmp/secret"

sock="$tmp/hookbox.sock"
# shellcheck disable=SC2086
"$build/hookbox-fcgi" -s "$sock" ${FCGI_OPTS:-} 2>/dev/null &
fcgi=$!
wait_for test -S "$sock"
if [ "$hosts" = 2 ]; then
	sock2="$tmp/hookbox2.sock"
	# shellcheck disable=SC2086
	"$build/hookbox-fcgi" -s "$sock2" ${FCGI_OPTS:-} 2>/dev/null &
	fcgi2=$!
	wait_for test -S "$sock2"
fi
nsock="$tmp/nop.sock"
"$build/nop-fcgi" "$nsock" "$nop_threads" &
nop=$!
wait_for test -S "$nsock"

port=$(bench_port)
nport=$((port + 1))
nginx_start "$tmp/nginx" "$port" "$sock" "$data"
nginx_start "$tmp/nginx-nop" "$nport" "$nsock" "$data"
if [ "$hosts" = 2 ]; then
	port2=$((port + 2))
	nginx_start "$tmp/nginx2" "$port2" "$sock2" "$data"
	base2="http://127.0.0.1:$port2"
	wait_for curl -sf "$base2/hooks/_health"
fi
base="http://127.0.0.1:$port"
nbase="http://127.0.0.1:$nport"
wait_for curl -sf "$base/hooks/_health"
wait_for curl -sf -d x "$nbase/hooks/nop"

dup_lua job-0 > "$tmp/dup.lua"
cat > "$tmp/sink.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"type":"job_completed","job_id":"job-0","status":"completed","key":"k"}'
LUA
# The mixed traffic (mixed_lua): the file of pre-signed requests, two
# threads.
mixed_lua "$tmp/mixed.txt" 2 > "$tmp/mixed.lua"

# Warm the duplicate path: job-0 accepted once.
curl -s -o /dev/null -H 'Content-Type: application/json' \
    -H 'X-Hook-Key: bench-shared-key' \
    --data-binary '{"type":"job_completed","job_id":"job-0","status":"completed","key":"k"}' \
    "$base/hooks/keyed"

# row NAME REQS P99 NON2XX CPU-MS RSS: one line of the table.
row() {
	printf '%-10s %10s %10s %10s %8.3f %8.3f %9.3f %8s %s\n' "$1" "$2" \
	    "$3" "$4" "$(echo "$2 / $b" | bc -l)" "$(echo "$2 / $nb" | bc -l)" \
	    "$(echo "$2 / $commits" | bc -l)" "$5" "$6"
}

if [ "$pg" = 1 ]; then
	psql "$pg_uri" -X -q -c "CREATE TABLE bench_commit(x int)"
	echo "INSERT INTO bench_commit VALUES (1);" > "$tmp/commit.sql"
	commits=$(pgbench -n -c 1 -T "$secs" -f "$tmp/commit.sql" "$pg_uri" \
	    2>/dev/null | awk '/^tps =/ { printf "%d", $3 }')
	echo "commit baseline: $commits single-row commits/s (PostgreSQL," \
	    "fsync on, synchronous_commit on, one client, pgbench)"
	echo "backend: postgresql, $hosts responder host(s)"
else
	commits=$("$build/bench-commit" "$tmp/commit.db" $((secs * 200)))
	echo "commit baseline: $commits single-row commits/s (WAL," \
	    "synchronous=FULL, in the data's temp directory)"
fi

first=0
for conns in $conns_list; do
	set -- $(rps "$base/sink" "$tmp/sink.lua")
	b=$1
	echo
	printf '%-10s %10s %10s %10s %8s %8s %9s %8s %s\n' traffic req/s p99 \
	    non-2xx ratio vs-nop vs-commit cpu-ms rss-kB
	printf '%-10s %10s %10s %10s %8s %8s %9.3f %8s %s\n' baseline "$1" \
	    "$2" "$3" 1.000 - "$(echo "$1 / $commits" | bc -l)" - -
	set -- $(rps_cpu "$nop" "$nbase/hooks/nop" "$tmp/sink.lua")
	nb=$1
	row nop-fcgi "$1" "$2" "$3" "$6" "$(rss "$nop")"
	if [ "$hosts" = 2 ]; then
		set -- $(rps_pair "$fcgi" "$fcgi2" "$base/hooks/keyed" \
		    "$tmp/dup.lua" "$base2/hooks/keyed" "$tmp/dup.lua")
		row duplicate "$1" "$2" "$3" "$6" \
		    "$(tree_rss "$fcgi")+$(tree_rss "$fcgi2")"
		fresh_lua "$first" > "$tmp/fresh.lua"
		fresh_lua $((first + 200000)) > "$tmp/fresh2.lua"
		set -- $(rps_pair "$fcgi" "$fcgi2" "$base/hooks/keyed" \
		    "$tmp/fresh.lua" "$base2/hooks/keyed" "$tmp/fresh2.lua")
		row fresh "$1" "$2" "$3" "$6" \
		    "$(tree_rss "$fcgi")+$(tree_rss "$fcgi2")"
		first=$((first + 400000))
		echo "connections: $conns over two hosts, duration:" \
		    "${secs}s each, backend: postgresql"
		continue
	fi
	set -- $(rps_cpu "$fcgi" "$base/hooks/keyed" "$tmp/dup.lua")
	row duplicate "$1" "$2" "$3" "$6" "$(tree_rss "$fcgi")"
	fresh_lua "$first" > "$tmp/fresh.lua"
	set -- $(rps_cpu "$fcgi" "$base/hooks/keyed" "$tmp/fresh.lua")
	fr=$1
	row fresh "$1" "$2" "$3" "$6" "$(tree_rss "$fcgi")"
	first=$((first + 200000))
	# Enough new bodies for three times the fresh rate.
	nnew=$(echo "$fr * $secs * 3 / 1 + 1000" | bc)
	[ "$nnew" -gt 199000 ] && nnew=199000
	# 64 duplicate bodies, jobs 999900 ..
	sign_bodies "$first" "$nnew" 64 999900 "$tmp/mixed.txt"
	accept_dups "$base/hooks/tornado" "$tmp/mixed.txt"
	set -- $(rps_cpu "$fcgi" "$base/hooks/tornado" "$tmp/mixed.lua")
	row mixed-50 "$1" "$2" "$3" "$6" "$(tree_rss "$fcgi")"
	[ "$4" -gt 0 ] && echo "mixed-50: $4 of the new half were duplicates" \
	    "(the $nnew pre-signed new bodies ran out)"
	first=$((first + 200000))
	# What stays once the traffic stops: a threaded responder gives its
	# freed heap back after a quiet second (hookbox-fcgi(8)).
	sleep 3
	rest=$(tree_rss "$fcgi")
	[ "$hosts" = 2 ] && rest="$rest+$(tree_rss "$fcgi2")"
	echo "rss-kB 3 s after the last row (at rest): $rest"
	[ "$pg" = 1 ] && how="backend: postgresql" ||
	    how="sync: ${HOOKBOX_SYNC:-full}"
	echo "connections: $conns, duration: ${secs}s each, $how"
done
"$HB" status
