#!/bin/sh
# bench/distance.sh [BUILD_DIR] [SECONDS]
#
# What the distance to the database costs.  A database on another host
# turns every statement into a network round trip, which a local socket
# hides; here the distance is made on one machine by bench/delay.c, a
# TCP delay line in front of PostgreSQL's unix socket.  In one sitting,
# on the same traffic, each cell a wrk run of SECONDS (default 10) on
# $BENCH_CONNS connections (default 64) through nginx:
#   sqlite      the embedded default, one host
#   pg-unix     PostgreSQL on its unix socket, one host, then two
#   pg+R        PostgreSQL through the delay line, for each added round
#               trip R in ms of $BENCH_RTTS (default "0.25 0.5"), one
#               host, then two
# A host is a responder (hookbox-fcgi with its defaults) behind its own
# nginx on its own port; two hosts share the one database and are driven
# at once, half the connections each, as tests/e2e/hosts.sh runs them.  (Two
# hosts cannot share a SQLite file, so SQLite runs on one.)  The traffic,
# each cell on the same responders, in this order:
#   fresh       a new registered job completed on every request, to the
#               key-mode endpoint (scale.sh's traffic: one new accepted
#               action, outbox row, job state and receipt each)
#   dup-50      HMAC-signed bodies of about 600 bytes, pre-signed: every
#               other request repeats one of 64 jobs accepted before the
#               cell, the others are new jobs (http.sh's mixed traffic)
#   hot         every request the completion of one job, accepted before
#               the cell: all of them serialise on that job
# Each row: req/s and p99 as wrk measured them; failed, the answers other
# than 2xx and the requests wrk gave up on (after 30 s); the ratio of
# req/s to SQLite's on the same traffic in this sitting; rt/obs, the
# turnarounds the delay line counted over the cell (a flight of the
# client's followed by the server's answer: one round trip) divided by
# the observations the cell wrote (receipts counted in the database once
# the responders have finished, so those in flight when wrk stopped are
# on both sides); writer, the part of rt/obs on the connection of each
# host that made the most turnarounds: its writer's (the others are the
# configuration's read connections); db/obs, the round trips the
# responders' database layer counted itself over the cell
# (hookbox_db_round_trips_total on their metrics route, all its labels,
# less the cost of reading the route: see metrics_snap) per observation,
# on every backend, "-" when the responders do not expose it; the
# observations; the responders' CPU time per request in ms (process
# trees, user + system, as bench/http.sh counts it); on PostgreSQL, what
# the server did: st/obs, the statements it executed over the cell
# (pg_stat_statements, the configuration's reads and the metrics route's
# included; for BEGIN, SAVEPOINT, RELEASE and COMMIT the responders' own
# count, see stmts_snap) per observation, st/bat
# the same per batch (hookbox_commits_total), srv-ms the CPU time of its
# processes per request, in ms; and under the row the statements that
# made st/obs, those the server spent the most time executing first
# ($BENCH_STMTS of them, default 8), each with its executions and that
# time (ms) per observation.
#
# The delay line's delay is a configuration, not what the kernel
# delivers: its wake-ups and the TCP hop add their own time.  So each
# line is calibrated before its cells: its one-way delay is searched by
# bisection between 0 and R/2, each try a line started afresh and
# measured by bench/rtt.c (1000 `SELECT 1`s through the line and as many
# directly, in turn: the median of the differences is the added round
# trip), until that median is within 10% of R, at most five tries.
# The round trip it then adds is printed at rest and, after the one-host
# cells, under load (fresh traffic on one host, SELECT 1s 5 ms apart),
# median and p99.  The load average is printed at the start and the end.
#
# PostgreSQL is a private server started here (tests/helpers/pglib.sh: fsync on,
# synchronous_commit on).  Needs wrk, nginx, sqlite3, openssl, curl,
# psql and PostgreSQL's server (scripts/install-deps.sh check), and
# libpq's header to build bench/rtt.c; installs those of them that are
# missing with apt-get (curl aside).
# The default run takes about 8 minutes.
set -eu
build=$(cd "${1:-build}" && pwd)
secs=${2:-10}
conns=${BENCH_CONNS:-64}
rtts=${BENCH_RTTS:-0.25 0.5}
top=$(cd "$(dirname "$0")/.." && pwd)
HB="$build/hookbox"
wrk_timeout=30s
. "$top/bench/setup.sh"
. "$top/tests/helpers/pglib.sh"
bench_need wrk wrk
bench_need nginx nginx
bench_need sqlite3 sqlite3
bench_need openssl openssl
bench_need psql postgresql-client
pg_bindir >/dev/null || apt-get install -y -qq postgresql >/dev/null
[ -f "$(pg_config --includedir)/libpq-fe.h" ] ||
    apt-get install -y -qq libpq-dev >/dev/null

cc -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -o "$build/delay" \
    "$top/bench/delay.c"
cc -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror \
    -I"$(pg_config --includedir)" -o "$build/rtt" "$top/bench/rtt.c" -lpq

bench_load
t_start=$(date +%s)

tmp=$(mktemp -d)
chmod 0755 "$tmp"
line=""
hosts_on=0
cleanup() {
	hosts_down
	[ -n "$line" ] && kill "$line" 2>/dev/null
	wait 2>/dev/null
	pg_stop "$tmp/pg"
	rm -rf "$tmp"
}
trap cleanup EXIT

# hosts_up N LOCATION: N responders on LOCATION, each behind its own
# nginx; sets fcgi1 .. fcgiN and base1 .. baseN.
hosts_up() {
	hosts_on=$1
	_i=1
	while [ $_i -le "$1" ]; do
		"$build/hookbox-fcgi" -d "$2" -s "$tmp/h$_i.sock" \
		    2>>"$tmp/h$_i.log" &
		eval "fcgi$_i=$!"
		wait_for test -S "$tmp/h$_i.sock"
		_p=$(bench_port)
		nginx_start "$tmp/nginx$_i" "$_p" "$tmp/h$_i.sock" "$data"
		eval "base$_i=http://127.0.0.1:$_p"
		wait_for curl -sf "http://127.0.0.1:$_p/hooks/_health"
		_i=$((_i + 1))
	done
}
hosts_down() {
	_i=1
	while [ $_i -le "$hosts_on" ]; do
		nginx_stop "$tmp/nginx$_i"
		eval "kill \$fcgi$_i" 2>/dev/null || :
		eval "wait \$fcgi$_i" 2>/dev/null || :
		rm -rf "$tmp/nginx$_i"
		_i=$((_i + 1))
	done
	hosts_on=0
}

# observations: the receipts written so far.
observations() {
	if [ -n "${HOOKBOX_DB:-}" ]; then
		psql "$HOOKBOX_DB" -X -Atq -c \
		    "SELECT count(*) FROM hookbox_state.receipts"
	else
		sqlite3 "$HOOKBOX_DIR/state.db" "SELECT count(*) FROM receipts"
	fi
}

# settle: waits until no more observations are being written (the
# requests in flight when wrk stopped), at most about 10 s; prints them.
settle() {
	_a=$(observations)
	_n=0
	while [ $_n -lt 20 ]; do
		sleep 0.5
		_b=$(observations)
		[ "$_a" = "$_b" ] && break
		_a=$_b
		_n=$((_n + 1))
	done
	echo "$_a"
}

# line_snap FILE: the delay line's counts so far (its stats file, written
# on SIGUSR1) copied to FILE; an empty FILE without a line.
line_snap() {
	: > "$1"
	[ -n "$line" ] || return 0
	rm -f "$tmp/line.stats"
	kill -USR1 "$line"
	wait_for test -s "$tmp/line.stats"
	cp "$tmp/line.stats" "$1"
}

# line_turns BEFORE AFTER N: the turnarounds between two snapshots, in
# all and on the N connections that made the most (each host's writer):
# prints "ALL TOP".
line_turns() {
	awk 'function turns(  i) { for (i = 2; i <= NF; i++)
		if ($i ~ /^turnarounds=/) return substr($i, 13) }
	    $1 == "conn" && FNR == NR { was[$2] = turns(); next }
	    $1 == "conn" { print turns() - was[$2] }' "$1" "$2" |
	    sort -rn | awk -v n="$3" '{ t += $1; if (NR <= n) w += $1 }
	    END { print t + 0, w + 0 }'
}

# metrics_snap FILE: every responder's metrics route now, in FILE.1 ..
# FILE.N.  Reading the route costs round trips of its own, part of them
# before the counters are read and part after: cell reads it twice before
# the cell, the difference being the cost of one read, which the count
# over the cell (from the second read to one after it) also holds.
metrics_snap() {
	_i=1
	while [ $_i -le "$hosts_on" ]; do
		eval "_b=\$base$_i"
		curl -sf "$_b/hooks/_metrics" > "$1.$_i" || : > "$1.$_i"
		_i=$((_i + 1))
	done
}

# metric_sum NAME FILE: NAME's value in FILE's snapshot (metrics_snap),
# every label (db="state", db="config") and every host added up; "-" when
# one of them does not expose it.
metric_sum() {
	_i=1
	_s=0
	while [ $_i -le "$hosts_on" ]; do
		_v=$(awk -v m="$1" '$1 == m || index($1, m "{") == 1 {
		    s += $2; n++ }
		    END { if (n) printf "%.0f\n", s; else print "-" }' "$2.$_i")
		[ "$_v" = - ] && { echo -; return 0; }
		_s=$((_s + _v))
		_i=$((_i + 1))
	done
	echo "$_s"
}

# The server's side (PostgreSQL only): server_ticks, the CPU time of its
# processes in clock ticks: the postmaster's, every process it started
# that still runs (the responders' connections, the checkpointer, the WAL
# writer), and those that ended (an autovacuum worker, a psql's
# connection), which the postmaster's own count of its children's time
# holds once it has reaped them (fields 16 and 17 of its stat); stmts_reset and stmts_snap FILE, the statements
# it executed between them (pg_stat_statements), "calls|ms|query" a line
# (ms: the time it spent executing them),
# the bench's own left out, and those that begin, end or mark a
# transaction too: PostgreSQL 15's pg_stat_statements counts a prepared
# one only the first time, so the responders' own count stands for them
# (hookbox_db_transaction_statements_total).
server_ticks() {
	_pm=$(head -1 "$tmp/pg/data/postmaster.pid")
	echo $(( $(tree_ticks "$_pm") + $(sed 's/.*) //' "/proc/$_pm/stat" |
	    awk '{ print $14 + $15 }') ))
}
stmts_reset() {
	psql "$pg_uri" -X -Atq -c "SELECT pg_stat_statements_reset()" \
	    >/dev/null
}
# server_quiet: what the cell's set-up left the server to do (the jobs
# it registered: autovacuum's work, dirty pages) done before the cell,
# so that the cell's CPU is its own traffic's.
server_quiet() {
	psql "$pg_uri" -X -q -c "VACUUM ANALYZE" -c "CHECKPOINT" >/dev/null
}
stmts_snap() {
	psql "$pg_uri" -X -Atq -F '|' -c "SELECT calls,
	    round(total_exec_time::numeric, 3),
	    regexp_replace(query, '\\s+', ' ', 'g') FROM pg_stat_statements
	    WHERE dbid = (SELECT oid FROM pg_database
	    WHERE datname = current_database())
	    AND query NOT LIKE '%pg_stat_statements%'
	    AND query NOT LIKE 'SELECT count(*) FROM hookbox_state.receipts%'
	    AND query !~* '^(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)'
	    ORDER BY total_exec_time DESC" > "$1"
}

# wrk_errors FILE...: the requests wrk gave up on (its socket errors).
wrk_errors() {
	cat "$@" | awk '/Socket errors:/ {
		gsub(/,/, ""); s += $4 + $6 + $8 + $10
	} END { print s + 0 }'
}

# jobs_take N: registers N more jobs; sets first to the first of them.
next=0
jobs_take() {
	first=$next
	bench_jobs "$first" "$1"
	next=$((next + $1))
}

# rtt_line ARGS...: bench/rtt.c between the server's socket and the line.
rtt_line() {
	"$build/rtt" "$@" "$pg_uri" "host=127.0.0.1 port=$lport \
user=postgres dbname=hookbox sslmode=disable gssencmode=disable"
}

# field NAME LINE: the value of NAME=... in LINE.
field() {
	echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

# line_up R: a delay line adding about R ms of round trip in front of
# the server's socket, calibrated as said above; sets line, lport, at_rest.
line_up() {
	_lo=0
	_hi=$(awk -v r="$1" 'BEGIN { printf "%.4f", r / 2 }')
	_try=1
	while :; do
		_d=$(awk -v a="$_lo" -v b="$_hi" 'BEGIN { printf "%.4f",
		    (a + b) / 2 }')
		# The last line's port file gone first: else it may be read
		# between this line's start and its truncating it, empty.
		rm -f "$tmp/line.port"
		"$build/delay" -d "$_d" -o "$tmp/line.stats" 127.0.0.1:0 \
		    "$pg_host/.s.PGSQL.5432" > "$tmp/line.port" &
		line=$!
		wait_for test -s "$tmp/line.port"
		lport=$(cat "$tmp/line.port")
		at_rest=$(rtt_line -n 1000)
		_m=$(field added_median_ms "$at_rest")
		[ $_try -ge 5 ] && break
		awk -v m="$_m" -v r="$1" 'BEGIN { exit !(m < r * 0.9 ||
		    m > r * 1.1) }' || break
		if awk -v m="$_m" -v r="$1" 'BEGIN { exit !(m < r) }'; then
			_lo=$_d
		else
			_hi=$_d
		fi
		kill "$line"
		wait "$line" || :
		_try=$((_try + 1))
	done
	echo "line for $1 ms: one-way delay $_d ms; added round trip at rest:" \
	    "median $_m ms, p99 $(field added_p99_ms "$at_rest") ms" \
	    "(direct: median $(field direct_median_ms "$at_rest") ms)"
}
line_down() {
	_cpu=$(tree_ticks "$line")
	kill "$line"
	wait "$line" || :
	echo "line for $1 ms: $(sed -n 's/^total //p' "$tmp/line.stats" |
	    tr ' ' '\n' | grep -E '^(conns|turnarounds|c2s_bytes|s2c_bytes)=' |
	    paste -sd' ' -), its CPU time $(awk -v t="$_cpu" \
	    -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", t / hz }') s"
	line=""
}

# under_load R: the line's added round trip while fresh traffic runs
# on the one host (not a cell: its counts are not used).
under_load() {
	jobs_take $((2 * range))
	fresh_lua "$first" "$range" > "$tmp/load.lua"
	mkdir -p "$tmp/load"
	_top=$tmp
	(tmp="$_top/load"; rps "$base1/hooks/keyed" "$_top/load.lua" \
	    > "$_top/load/rps") &
	_w=$!
	sleep 1
	_l=$(rtt_line -n 800 -i 5)
	wait "$_w"
	echo "line for $1 ms: added round trip under load: median" \
	    "$(field added_median_ms "$_l") ms," \
	    "p99 $(field added_p99_ms "$_l") ms" \
	    "(direct: median $(field direct_median_ms "$_l") ms," \
	    "p99 $(field direct_p99_ms "$_l") ms;" \
	    "$(cut -d' ' -f1 "$tmp/load/rps") req/s meanwhile)"
}

# cell BACKEND HOSTS TRAFFIC: one wrk run, or two at once for two hosts,
# on the responders up; prints the row.
cell() {
	_h=$2 _t=$3
	case $_t in
	fresh)
		jobs_take $((_h * 2 * range))
		fresh_lua "$first" "$range" > "$tmp/s1.lua"
		fresh_lua $((first + 2 * range)) "$range" > "$tmp/s2.lua"
		_path=keyed
		;;
	dup-50)
		# Enough new bodies for twice this host's fresh rate.
		_n=$(awk -v r="$fresh_rate" -v h="$_h" -v s="$secs" 'BEGIN {
		    n = int(r / h * s * 2) + 1000
		    print (n > 199000 ? 199000 : n) }')
		_i=1
		while [ $_i -le "$_h" ]; do
			jobs_take "$_n"
			sign_bodies "$first" "$_n" 64 1 "$tmp/mixed$_i.txt"
			mixed_lua "$tmp/mixed$_i.txt" 2 > "$tmp/s$_i.lua"
			_i=$((_i + 1))
		done
		accept_dups "$base1/hooks/tornado" "$tmp/mixed1.txt"
		_path=tornado
		;;
	hot)
		dup_lua job-0 > "$tmp/s1.lua"
		cp "$tmp/s1.lua" "$tmp/s2.lua"
		_path=keyed
		;;
	esac
	metrics_snap "$tmp/m0"
	metrics_snap "$tmp/m1"
	_pg=""
	case $backend in sqlite) ;; *) _pg=1 ;; esac
	if [ -n "$_pg" ]; then
		server_quiet
		stmts_reset
		_s0=$(server_ticks)
	fi
	_o0=$(observations)
	line_snap "$tmp/snap0"
	if [ "$_h" = 1 ]; then
		# shellcheck disable=SC2046
		set -- $(rps_cpu "$fcgi1" "$base1/hooks/$_path" "$tmp/s1.lua")
		_e=$(wrk_errors "$tmp/out")
	else
		# shellcheck disable=SC2046
		set -- $(rps_pair "$fcgi1" "$fcgi2" "$base1/hooks/$_path" \
		    "$tmp/s1.lua" "$base2/hooks/$_path" "$tmp/s2.lua")
		_e=$(wrk_errors "$tmp/p1/out" "$tmp/p2/out")
	fi
	_o1=$(settle)
	_obs=$((_o1 - _o0))
	_st=- _sb=- _srv=-
	if [ -n "$_pg" ]; then
		_s1=$(server_ticks)
		stmts_snap "$tmp/stmts"
	fi
	line_snap "$tmp/snap1"
	metrics_snap "$tmp/m2"
	_rt=$(line_turns "$tmp/snap0" "$tmp/snap1" "$_h")
	_d0=$(metric_sum hookbox_db_round_trips_total "$tmp/m0")
	_d1=$(metric_sum hookbox_db_round_trips_total "$tmp/m1")
	_d2=$(metric_sum hookbox_db_round_trips_total "$tmp/m2")
	_c1=$(metric_sum hookbox_commits_total "$tmp/m1")
	_c2=$(metric_sum hookbox_commits_total "$tmp/m2")
	_x1=$(metric_sum hookbox_db_transaction_statements_total "$tmp/m1")
	_x2=$(metric_sum hookbox_db_transaction_statements_total "$tmp/m2")
	_db=-
	case $_d0$_d1$_d2 in
	*-*) ;;
	*)
		[ "$_obs" -gt 0 ] && _db=$(awk -v o="$_obs" \
		    -v t=$((_d2 - 2 * _d1 + _d0)) \
		    'BEGIN { printf "%.1f", t / o }')
		;;
	esac
	if [ -n "$_pg" ] && [ "$_obs" -gt 0 ]; then
		_calls=$(awk -F'|' '{ s += $1 } END { print s + 0 }' \
		    "$tmp/stmts")
		case $_x1$_x2 in
		*-*) _tx=- ;;
		*)
			_tx=$((_x2 - _x1))
			_calls=$((_calls + _tx))
			;;
		esac
		_st=$(awk -v c="$_calls" -v o="$_obs" \
		    'BEGIN { printf "%.2f", c / o }')
		case $_c1$_c2 in
		*-*) ;;
		*)
			[ $((_c2 - _c1)) -gt 0 ] && _sb=$(awk -v c="$_calls" \
			    -v b=$((_c2 - _c1)) 'BEGIN { printf "%.1f", c / b }')
			;;
		esac
		[ "$5" -gt 0 ] && _srv=$(awk -v t=$((_s1 - _s0)) -v n="$5" \
		    -v hz="$(getconf CLK_TCK)" \
		    'BEGIN { printf "%.3f", t * 1000 / hz / n }')
	fi
	[ "$_t" = fresh ] && fresh_rate=$1
	[ "$backend" = sqlite ] && eval "sqlite_$(echo "$_t" | tr -d -)=$1"
	eval "_sq=\${sqlite_$(echo "$_t" | tr -d -):-}"
	printf '%-9s %5s %-7s %9s %10s %7s %8s %s %7s %7s %7s %7s %7s %7s\n' \
	    "$backend" "$_h" "$_t" "$1" "$2" "$(($3 + _e))" \
	    "$(awk -v a="$1" -v b="$_sq" 'BEGIN { if (b > 0)
	        printf "%.3f", a / b; else print "-" }')" \
	    "$(echo "$_rt" | awk -v o="$_obs" -v l="$line" '{
	        if (l != "" && o > 0) printf "%7.1f %7.1f", $1 / o, $2 / o
	        else printf "%7s %7s", "-", "-" }')" "$_db" "$_obs" \
	    "$6" "$_st" "$_sb" "$_srv"
	[ "$4" -gt 0 ] && echo "  ($4 requests past the traffic's prepared" \
	    "jobs: not all were new)"
	# The statements that made st/obs, the longest run first.
	if [ -n "$_pg" ] && [ "$_obs" -gt 0 ]; then
		head -n "${BENCH_STMTS:-8}" "$tmp/stmts" | awk -F'|' \
		    -v o="$_obs" '{ q = $0; sub(/^[^|]*[|][^|]*[|]/, "", q)
		    printf "    %6.2f %7.4f  %s\n", $1 / o, $2 / o,
		    substr(q, 1, 60) }'
		[ "$_tx" = - ] || awk -v t="$_tx" -v o="$_obs" 'BEGIN {
		    printf "    %6.2f %7s  %s\n", t / o, "-", "BEGIN, SAVEPOINT," \
		    " RELEASE, COMMIT: the writers'"'"' own count" }'
	fi
	return 0
}

# config BACKEND HOSTS LOCATION: HOSTS responders on LOCATION, the hot
# job and the mixed traffic's repeated jobs accepted, the three cells.
config() {
	backend=$1
	hosts_up "$2" "$3"
	_hot='{"type":"job_completed","job_id":"job-0","status":"completed",'
	curl -s -o /dev/null -H 'Content-Type: application/json' \
	    -H 'X-Hook-Key: bench-shared-key' --data-binary \
	    "$_hot\"key\":\"k\"}" "$base1/hooks/keyed"
	for _traffic in fresh dup-50 hot; do
		cell "$1" "$2" "$_traffic"
	done
	[ -n "$line" ] && [ "$2" = 1 ] && under_load "$rt"
	hosts_down
}

# data: the database's set-up, the same on both backends: job-0 (the hot
# job), job-1 .. job-64 (the mixed traffic's repeats), the HMAC endpoint
# "tornado"; the other jobs are registered as each cell needs them.
setup_data() {
	bench_data 65
	next=65
	"$HB" endpoint add tornado --tenant bench --secret-file "$tmp/secret"
}
secret=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
printf '%s' "$secret" > "$tmp/secret"
chmod 600 "$tmp/secret"

echo "cells: ${secs} s each, $conns connections, responders with their" \
    "defaults; the database server on this machine"
echo
printf '%-9s %5s %-7s %9s %10s %7s %8s %7s %7s %7s %7s %7s %7s %7s %7s\n' \
    backend hosts traffic req/s p99 failed /sqlite rt/obs writer db/obs obs \
    cpu-ms st/obs st/bat srv-ms

# A fresh cell's jobs per wrk thread: more than its rate can use.
export HOOKBOX_DIR="$tmp/data"
data=$HOOKBOX_DIR
setup_data
range=$((secs * 5000))
config sqlite 1 "$HOOKBOX_DIR"

unset HOOKBOX_DIR
data=""
PG_SERVER_OPTS="-c shared_preload_libraries=pg_stat_statements"
PG_SERVER_OPTS="$PG_SERVER_OPTS -c pg_stat_statements.max=1000"
pg_start "$tmp/pg" >/dev/null || exit 1
psql "$pg_uri" -X -q -c "CREATE EXTENSION pg_stat_statements" >/dev/null
export HOOKBOX_DB="$pg_uri"
setup_data
range=$((secs * 4000))
config pg-unix 1 "$pg_uri"
config pg-unix 2 "$pg_uri"
for rt in $rtts; do
	line_up "$rt"
	loc="host=127.0.0.1 port=$lport user=postgres dbname=hookbox"
	loc="$loc sslmode=disable gssencmode=disable"
	config "pg+$rt" 1 "$loc"
	config "pg+$rt" 2 "$loc"
	line_down "$rt"
done
echo
echo "bench/distance.sh: load $(cut -d' ' -f1-3 /proc/loadavg) at the end," \
    "$(( $(date +%s) - t_start )) s in all"
