#!/bin/sh
# bench/http.sh [BUILD_DIR] [SECONDS] [CONNECTIONS]
#
# Requests per second through nginx, measured with wrk on loopback, for
# three kinds of traffic, each reported with its ratio to a baseline
# measured in the same run on the same nginx:
#   baseline   POST to a static location nginx answers itself (204)
#   duplicate  the same callback over and over: authenticated, parsed,
#              answered "duplicate" (one read transaction + receipt commit)
#   fresh      a new registered job on every request: "accepted", a new
#              action and outbox row committed (one fsync each)
# The responder runs with 2 workers (this is a 2-core machine).  Set
# HOOKBOX_SYNC=normal to measure the opt-in synchronous=NORMAL.
set -eu
build=$(cd "${1:-build}" && pwd)
secs=${2:-10}
conns=${3:-16}
top=$(cd "$(dirname "$0")/.." && pwd)
HB="$build/hookbox"
command -v wrk >/dev/null 2>&1 || apt-get install -y -qq wrk >/dev/null

tmp=$(mktemp -d)
export HOOKBOX_DIR="$tmp/data"
cleanup() {
	[ -f "$tmp/nginx/nginx.pid" ] && kill "$(cat "$tmp/nginx/nginx.pid")" 2>/dev/null
	[ -n "${fcgi:-}" ] && kill "$fcgi" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

. "$top/bench/setup.sh"
bench_data 400000

sock="$tmp/hookbox.sock"
"$build/hookbox-fcgi" -s "$sock" -w 2 2>/dev/null &
fcgi=$!
while [ ! -S "$sock" ]; do sleep 0.1; done
port=$(( $(od -An -N2 -tu2 /dev/urandom) % 20000 + 20000 ))
conf=$(sh "$top/scripts/nginx-conf.sh" "$tmp/nginx" "$port" "$sock" \
    "$HOOKBOX_DIR")
sed -i 's|access_log .*;|access_log off;|' "$conf"
nginx -p "$tmp/nginx" -c "$conf" -e "$tmp/nginx/error.log"
base="http://127.0.0.1:$port"
until curl -sf "$base/hooks/_health" >/dev/null; do sleep 0.1; done

cat > "$tmp/dup.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-Hook-Key"] = "bench-shared-key"
wrk.body = '{"type":"job_completed","job_id":"job-0","status":"completed","key":"k"}'
LUA
cat > "$tmp/fresh.lua" <<'LUA'
-- Each wrk thread takes its own range of job ids ("base" is set per thread).
local counter = 0
local nthreads = 0
function setup(thread)
	thread:set("base", nthreads * 200000)
	nthreads = nthreads + 1
end
function request()
	counter = counter + 1
	local body = string.format(
	    '{"type":"job_completed","job_id":"job-%d","status":"completed","key":"k"}',
	    base + counter)
	return wrk.format("POST", nil, {["Content-Type"] = "application/json",
	    ["X-Hook-Key"] = "bench-shared-key"}, body)
end
LUA
cat > "$tmp/sink.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"type":"job_completed","job_id":"job-0","status":"completed","key":"k"}'
LUA

# Warm the duplicate path: job-0 accepted once.
curl -s -o /dev/null -H 'Content-Type: application/json' \
    -H 'X-Hook-Key: bench-shared-key' \
    --data-binary '{"type":"job_completed","job_id":"job-0","status":"completed","key":"k"}' \
    "$base/hooks/keyed"

rps() {
	wrk -t2 -c"$conns" -d"${secs}s" --latency -s "$2" "$base$1" \
	    > "$tmp/out" 2>&1
	r=$(awk '/Requests\/sec/ { print $2 }' "$tmp/out")
	p99=$(awk '$1 == "99%" { print $2 }' "$tmp/out")
	non2xx=$(awk '/Non-2xx/ { print $NF }' "$tmp/out")
	echo "$r ${p99:-?} ${non2xx:-0}"
}

set -- $(rps /sink "$tmp/sink.lua")
b=$1
printf '%-10s %10s %10s %10s %8s\n' traffic req/s p99 non-2xx ratio
printf '%-10s %10s %10s %10s %8s\n' baseline "$1" "$2" "$3" 1.000
set -- $(rps /hooks/keyed "$tmp/dup.lua")
printf '%-10s %10s %10s %10s %8.3f\n' duplicate "$1" "$2" "$3" \
    "$(echo "$1 / $b" | bc -l)"
set -- $(rps /hooks/keyed "$tmp/fresh.lua")
printf '%-10s %10s %10s %10s %8.3f\n' fresh "$1" "$2" "$3" \
    "$(echo "$1 / $b" | bc -l)"
echo "connections: $conns, duration: ${secs}s each, sync: ${HOOKBOX_SYNC:-full}"
"$HB" status
