#!/bin/sh
# bench/dispatch.sh [BUILD_DIR] [ACTIONS]
#
# Deliveries per second from the outbox to a local sink that answers 204
# (nginx, on loopback), with 1 and with 2 dispatcher workers, each run on
# the same number of fresh pending actions: first to a destination that
# does not honour Idempotency-Key (a fresh connection per request, as the
# dispatcher must), then to the same destination marked --idempotent
# (kept-alive connections).  The baseline, measured in the same run, is
# the same number of POSTs sent to the same sink by one curl process
# reusing its connection (no database, no bookkeeping): the ratio says
# what leasing and recording each attempt costs.  The actions are made
# once, through the real acceptance path (`hookbox observe`), and each
# run starts from a copy of that data directory.
#
# BENCH_PG=1: the same on PostgreSQL, on a private server started here
# (tests/helpers/pglib.sh: fsync on, synchronous_commit on); the template is a
# database, and each run starts from CREATE DATABASE ... TEMPLATE.
set -eu
build=$(cd "${1:-build}" && pwd)
count=${2:-2000}
top=$(cd "$(dirname "$0")/.." && pwd)
HB="$build/hookbox"

. "$top/bench/setup.sh"

tmp=$(mktemp -d)
pg=${BENCH_PG:-0}
cleanup() {
	nginx_stop "$tmp/nginx"
	[ "$pg" = 1 ] && pg_stop "$tmp/pg"
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
if [ "$pg" = 1 ]; then
	. "$top/tests/helpers/pglib.sh"
	chmod 0755 "$tmp"
	pg_start "$tmp/pg" >/dev/null || exit 1
	unset HOOKBOX_DIR
	pgdb() { echo "host=$pg_host user=postgres dbname=$1"; }
	pq() { psql "$(pgdb "$1")" -X -Atq -v ON_ERROR_STOP=1 -c "$2"; }
fi

echo "load at the start: $(cat /proc/loadavg)"
port=$(bench_port)
nginx_start "$tmp/nginx" "$port" "$tmp/unused.sock" "$tmp/unused"
sink="http://127.0.0.1:$port/sink"
until curl -s -o /dev/null "$sink" -d x; do sleep 0.1; done

now_ms() { date +%s%3N; }

# The data directory with $count pending actions, made through acceptance.
prepare() {
	if [ "$pg" = 1 ]; then
		pq hookbox "CREATE DATABASE tmpl"
		export HOOKBOX_DB="$(pgdb tmpl)"
	else
		export HOOKBOX_DIR="$tmp/template"
	fi
	"$HB" init >/dev/null
	"$HB" tenant add bench
	"$HB" destination add sink --tenant bench --url "$sink"
	[ "$pg" = 1 ] && pq tmpl "INSERT INTO hookbox_config.jobs(tenant,
	    job_id, attempt, step, destination, created_at) SELECT 'bench',
	    'job-' || i, 'att-' || i, 'deliver', 'sink',
	    extract(epoch FROM now())::bigint FROM generate_series(0,
	    $count - 1) AS i"
	[ "$pg" = 1 ] || sqlite3 "$HOOKBOX_DIR/config.db" "WITH RECURSIVE n(i) AS (SELECT 0
	    UNION ALL SELECT i + 1 FROM n WHERE i < $count - 1)
	    INSERT INTO jobs(tenant, job_id, attempt, step, destination,
	    created_at) SELECT 'bench', 'job-' || i, 'att-' || i, 'deliver',
	    'sink', unixepoch() FROM n;"
	i=0
	while [ $i -lt "$count" ]; do
		printf '{"id":"job-%d","status":"Completed"}\n' $i
		i=$((i + 1))
	done > "$tmp/docs"
	# Through the real acceptance path, one observe per action.
	while IFS= read -r doc; do
		printf '%s' "$doc" | "$HB" observe --tenant bench >/dev/null
	done < "$tmp/docs"
}

# run WORKERS IDEMPOTENT: dispatches a fresh copy of the template.
run() {
	if [ "$pg" = 1 ]; then
		pq hookbox "DROP DATABASE IF EXISTS run" >/dev/null 2>&1
		pq hookbox "CREATE DATABASE run TEMPLATE tmpl"
		export HOOKBOX_DB="$(pgdb run)"
		pq run "UPDATE hookbox_config.destinations SET idempotent = $2
		    WHERE name = 'sink'"
	else
		rm -rf "$tmp/run"
		cp -a "$tmp/template" "$tmp/run"
		export HOOKBOX_DIR="$tmp/run"
		sqlite3 "$HOOKBOX_DIR/config.db" \
		    "UPDATE destinations SET idempotent = $2 WHERE name = 'sink'"
	fi
	t0=$(now_ms)
	# Its log (a line per delivery) to a file, as journald would take it.
	"$HB" dispatch --once --workers "$1" 2>> "$tmp/dispatch.log"
	t1=$(now_ms)
	if [ "$pg" = 1 ]; then
		done=$(pq run "SELECT count(*) FROM hookbox_state.outbox
		    WHERE state = 'delivered'")
	else
		done=$(sqlite3 "$HOOKBOX_DIR/state.db" \
		    "SELECT count(*) FROM outbox WHERE state = 'delivered'")
	fi
	echo "$done $((t1 - t0))"
}

prepare

# Baseline: the same POSTs from one curl process, one connection.
i=0
while [ $i -lt "$count" ]; do
	printf 'url = "%s"\nrequest = "POST"\ndata = "{}"\noutput = "/dev/null"\n' "$sink"
	[ $i -lt $((count - 1)) ] && echo next
	i=$((i + 1))
done > "$tmp/curl.cfg"
t0=$(now_ms)
curl -s -K "$tmp/curl.cfg"
t1=$(now_ms)
base=$(echo "$count * 1000 / ($t1 - $t0)" | bc)

printf '%-42s %10s %12s %8s\n' run delivered per-second ratio
printf '%-42s %10s %12s %8s\n' "curl, 1 connection" "$count" "$base" 1.000
for idem in 0 1; do
	for w in 1 2; do
		set -- $(run $w $idem)
		rate=$(echo "$1 * 1000 / $2" | bc)
		[ "$idem" = 1 ] && how="kept-alive" || how="fresh connections"
		printf '%-42s %10s %12s %8.3f\n' \
		    "dispatch, $w worker(s), $how" "$1" "$rate" \
		    "$(echo "$rate / $base" | bc -l)"
	done
done
[ "$pg" = 1 ] && backend="postgresql (fsync on, synchronous_commit on)" ||
    backend="sqlite, sync ${HOOKBOX_SYNC:-full}"
echo "backend: $backend; batch: 64; load at the end: $(cat /proc/loadavg)"
