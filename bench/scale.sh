#!/bin/sh
# bench/scale.sh [BUILD_DIR] [SECONDS] [ACTIONS]
#
# Whether acceptance keeps its rate as state.db grows.  The fresh traffic
# of bench/http.sh (a new registered job completed on every request: a new
# accepted action, outbox row, job state and receipt each), sent by wrk on
# 64 connections through nginx to hookbox-fcgi run with its defaults
# (-d DIR -s SOCKET), for SECONDS (default 10), is measured twice in the
# same run:
#   empty      state.db as "hookbox init" leaves it
#   prefilled  state.db holding ACTIONS (default 1000000) accepted actions
# Both runs use the same config.db and send the same job ids, none of them
# among the prefilled ones.  Each run reports req/s, p99, non-2xx, the
# responder's CPU time per request in ms (as bench/http.sh does), the
# bytes its processes wrote per request in kB (wchar in /proc/PID/io: WAL
# frames, checkpoints and the FastCGI answers; unlike req/s it does not
# move with the machine's other load), the sizes of state.db and its WAL
# after the run, the 1-minute load average before it, and VmRSS in kB of
# the supervisor and its worker after it; then the ratio prefilled/empty
# of req/s (target: 0.9 at least, within 10%).
#
# The prefill is bench only: sqlite3 inserts every table's rows from a
# recursive CTE, four INSERTs in one transaction, into the schema "hookbox
# init" made, the rows shaped as acceptance writes them.  For each action i, over the last 30 days: the accepted row
# "bench:att-i:analyze-v1" of job-i, its outbox row (the newest 1%
# pending, the others delivered on their first attempt; the payload the
# responder builds, about 330 bytes with the file's key and URL), the
# job_state row (completed, stage 6) and the receipt from the "keyed"
# endpoint with a body of about 600 bytes (like bench/http.sh's mixed
# bodies).  No attempts rows.  Then wal_checkpoint(TRUNCATE), so that both
# runs start with an empty WAL; no ANALYZE (the product does not run it).
# synchronous=FULL: the checkpoint's fsync puts the file on disk before
# the run, where the kernel's writeback of it would compete with the
# responder's fsyncs.  1,000,000 actions take about a minute to insert
# (46 to 64 s on 2 shared cores) and make a state.db of 1.6 GB; the whole
# bench with 10-second runs takes about a minute and a half.
set -eu
build=$(cd "${1:-build}" && pwd)
secs=${2:-10}
actions=${3:-1000000}
conns=64
top=$(cd "$(dirname "$0")/.." && pwd)
HB="$build/hookbox"
. "$top/bench/setup.sh"
bench_need wrk wrk
bench_need sqlite3 sqlite3
bench_need nginx nginx

bench_load

tmp=$(mktemp -d)
export HOOKBOX_DIR="$tmp/data"
db="$HOOKBOX_DIR/state.db"
cleanup() {
	nginx_stop "$tmp/nginx"
	[ -n "${fcgi:-}" ] && kill "$fcgi" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# Jobs job-0 .. job-(ACTIONS-1) for the prefill, and after them those of
# the fresh traffic: from job-ACTIONS on, up to 100000 for each of wrk's
# two threads.
bench_data $((actions + 200001))
fresh_lua "$actions" > "$tmp/fresh.lua"

sock="$tmp/hookbox.sock"
port=$(bench_port)
nginx_start "$tmp/nginx" "$port" "$sock" "$HOOKBOX_DIR"
base="http://127.0.0.1:$port"

# prefill N: N accepted actions into the empty state.db (see above).
prefill() {
	now=$(($(date +%s) * 1000))
	step=$((30 * 86400000 / $1))
	sqlite3 "$db" >/dev/null <<SQL
PRAGMA synchronous = FULL;
PRAGMA cache_size = -1048576;
BEGIN;
CREATE TEMP TABLE n AS WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL
    SELECT i + 1 FROM c WHERE i < $1 - 1)
    SELECT i, $now - ($1 - i) * $step AS t,
    substr(lower(hex(sha3('job-' || i, 256))), 1, 40) AS sig,
    i >= $1 - $1 / 100 AS pending FROM c;
INSERT INTO accepted(action_id, tenant, attempt, step, job_id, accepted_at)
    SELECT 'bench:att-' || i || ':analyze-v1', 'bench', 'att-' || i,
    'analyze-v1', 'job-' || i, t FROM n;
INSERT INTO outbox(action_id, tenant, destination, payload, state,
    attempts, next_at, created_at, updated_at, last_status)
    SELECT 'bench:att-' || i || ':analyze-v1', 'bench', 'sink',
    printf('{"action":"bench:att-%d:analyze-v1","tenant":"bench",'
    || '"attempt":"att-%d","step":"analyze-v1","job_id":"job-%d",'
    || '"observed_via":"job","file":{"key":"outputs/bench/job-%d/'
    || 'render.mp4","url":"https://storage.example.com/outputs/bench/'
    || 'job-%d/render.mp4?sig=%s"},"accepted_at_ms":%d}',
    i, i, i, i, i, sig, t),
    iif(pending, 'pending', 'delivered'), iif(pending, 0, 1), t, t,
    t + iif(pending, 0, 850), iif(pending, NULL, 204) FROM n;
INSERT INTO job_state(tenant, job_id, stage, terminal, file_key, file_url,
    error, updated_at)
    SELECT 'bench', 'job-' || i, 6, 'completed',
    'outputs/bench/job-' || i || '/render.mp4',
    'https://storage.example.com/outputs/bench/job-' || i
    || '/render.mp4?sig=' || sig, NULL, t FROM n;
INSERT INTO receipts(received_at, tenant, endpoint, source, delivery_id,
    job_id, type, status, stage, result, action_id, body)
    SELECT t, 'bench', 'keyed', 'job', NULL, 'job-' || i, 'job_completed',
    'completed', 'completed', 'accepted', 'bench:att-' || i || ':analyze-v1',
    CAST(printf('{"type":"job_completed","job_id":"job-%d",'
    || '"status":"completed","key":"outputs/bench/job-%d/render.mp4",'
    || '"url":"https://storage.example.com/outputs/bench/job-%d/'
    || 'render.mp4?sig=%s","file_size_bytes":%d,"duration_ms":%d,'
    || '"started_at_ms":%d,"finished_at_ms":%d,'
    || '"queued_ms":%d,"worker":"gpu-%02d.eu-west-1",'
    || '"region":"eu-west-1","step":"analyze-v1","priority":"normal",'
    || '"outputs":[{"name":"render.mp4",'
    || '"content_type":"video/mp4","size":%d,"sha256":"%s"}],'
    || '"attempt":"att-%d"}', i, i, i, sig, 104857600 + i % 9973,
    60000 + i % 240000, t - 60500 - i % 240000, t - 500, 200 + i % 5000,
    i % 32,
    104857600 + i % 9973, lower(hex(sha3(sig, 256))), i) AS BLOB) FROM n;
DROP TABLE n;
COMMIT;
PRAGMA wal_checkpoint(TRUNCATE);
SQL
}

# tree_wchar PID: the bytes PID and its children have written (wchar).
tree_wchar() {
	# shellcheck disable=SC2046
	for p in "$1" $(pgrep -P "$1"); do
		cat "/proc/$p/io" 2>/dev/null
	done | awk '$1 == "wchar:" { w += $2 } END { print w + 0 }'
}

# mb FILE: its size in MB (0 when it does not exist).
mb() {
	[ -f "$1" ] && stat -c %s "$1" | awk '{ printf "%.1f", $1 / 1048576 }' ||
	    echo 0
}

# run NAME: starts the responder with its defaults, sends the fresh
# traffic, prints the row and stops the responder again.
run() {
	"$build/hookbox-fcgi" -d "$HOOKBOX_DIR" -s "$sock" 2>/dev/null &
	fcgi=$!
	wait_for test -S "$sock"
	wait_for curl -sf "$base/hooks/_health"
	load=$(cut -d' ' -f1 /proc/loadavg)
	w0=$(tree_wchar "$fcgi")
	# shellcheck disable=SC2046
	set -- "$1" $(rps_cpu "$fcgi" "$base/hooks/keyed" "$tmp/fresh.lua")
	w1=$(tree_wchar "$fcgi")
	printf '%-10s %10s %10s %10s %8s %8.1f %10s %8s %6s %s\n' "$1" "$2" \
	    "$3" "$4" "$7" "$(echo "($w1 - $w0) / 1024 / $6" | bc -l)" \
	    "$(mb "$db")" "$(mb "$db-wal")" "$load" "$(tree_rss "$fcgi")"
	kill "$fcgi"
	wait "$fcgi" || :
	fcgi=
	reqs=$2
}

echo
printf '%-10s %10s %10s %10s %8s %8s %10s %8s %6s %s\n' state.db req/s p99 \
    non-2xx cpu-ms wkB/req db-MB wal-MB load rss-kB
run empty
empty=$reqs

# The same data directory, state.db made again and prefilled.
rm -f "$db" "$db-wal" "$db-shm"
"$HB" init >/dev/null
t0=$(date +%s)
prefill "$actions"
t1=$(date +%s)
# Sizes from the first 1000 rows (a full scan would read the whole file).
filled="prefill: $actions actions in $((t1 - t0)) s, state.db $(mb "$db") MB,\
 payload $(sqlite3 "$db" "SELECT CAST(avg(length(payload)) AS INTEGER)
    FROM outbox WHERE rowid <= 1000") bytes, receipt body $(sqlite3 "$db" \
    "SELECT CAST(avg(length(body)) AS INTEGER) FROM receipts
    WHERE id <= 1000") bytes on average"
run prefilled
echo
echo "$filled"
printf 'prefilled/empty: %.3f (target: 0.900 at least)\n' \
    "$(echo "$reqs / $empty" | bc -l)"
echo "connections: $conns, duration: ${secs}s each, sync: ${HOOKBOX_SYNC:-full}"
