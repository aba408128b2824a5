#!/bin/sh
# tests/e2e/pgfail.sh BUILD_DIR: a responder behind nginx and a dispatcher on
# a private PostgreSQL, and the database failing under them:
#
#  - the server stopped (pg_ctl stop -m fast) in the middle of a load:
#    every answer while it is down is 503 with Retry-After, never a 2xx,
#    nor a 401 or 404 from the configuration's snapshot; started again,
#    the same responder (no restart) answers 200, and the same
#    dispatcher delivers again; nothing acknowledged is lost;
#  - the server down when the responder starts: one clear log line, 503s,
#    then service once the server is up;
#  - a synchronous standby that is not there (synchronous_standby_names):
#    the COMMIT, which the server's statement_timeout does not bound, is
#    cancelled past the busy budget: 503 with Retry-After in bounded time,
#    never 200, and the responder serves the next request; once the
#    standby is no longer waited for, the same callback is a duplicate
#    (the row did commit on the primary);
#  - a serving role with read grants only (USAGE and SELECT on the state):
#    503 with Retry-After, and a log line naming the permission problem.
# Prints "pgfail: N passed, N failed".
set -u
build=$(cd "${1:?usage: pgfail.sh BUILD_DIR}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/helpers/lib.sh"
. "$top/tests/helpers/pglib.sh"
tmp=$(mktemp -d)
. "$top/tests/helpers/hostlib.sh"
export HOOKBOX_BACKOFF_MS=1
export HOOKBOX_LEASE_MARGIN_MS=300

pids=""
cleanup() {
	[ -f "$tmp/nginx/nginx.pid" ] &&
	    kill "$(cat "$tmp/nginx/nginx.pid")" 2>/dev/null
	for p in $pids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	pg_standby "$tmp/pg" 2>/dev/null
	pg_stop "$tmp/pg"
	rm -rf "$tmp"
}
trap cleanup EXIT

pg_up || { finish pgfail; exit 1; }
"$HB" -d "$admin" init --grant hookbox_serve >/dev/null ||
    fail "init --grant"
export HOOKBOX_DB="$admin"
"$HB" tenant add acme
printf 'hmac-secret-for-pgfail' > "$tmp/hmac.secret"
chmod 600 "$tmp/hmac.secret"
"$HB" endpoint add tornado --tenant acme --secret-file "$tmp/hmac.secret"
"$SINK" -p 0 -l "$tmp/sink.log" -s 204 -r "$tmp/sink.pid" \
    > "$tmp/sink.port" 2>"$tmp/sink.err" &
pids="$pids $!"
until_true 60 test -s "$tmp/sink.port" || fail "sink did not start"
"$HB" destination add sink --tenant acme --idempotent --timeout-ms 2000 \
    --url "http://127.0.0.1:$(head -n 1 "$tmp/sink.port")/hook"
N=400
jobs load $N sink
i=1
while [ $i -le $N ]; do
	sign "load$i" tornado "$(completed "load$i")"
	i=$((i + 1))
done

# A short busy budget: a request waits at most that for the database.
BUSY_MS=1000
responder R "$serve" -t 8
rpid_main=$rpid; pids="$pids $rpid"
nginx_start "$tmp/R.sock" ""
until_true 60 curl -sf "$base/hooks/_health" -o /dev/null ||
    fail "never healthy"
HOOKBOX_DB=$serve "$HB" dispatch 2>>"$tmp/d.log" &
dpid=$!; pids="$pids $dpid"

# load FROM TO OUT: the jobs' callbacks one after another, each line
# "loadI CODE RESULT RETRY_AFTER START_MS END_MS".
load() {
	_i=$1
	while [ "$_i" -le "$2" ]; do
		_s=$(date +%s%3N)
		_r=$(post "$base" tornado "load$_i" "load$_i")
		echo "$_r $_s $(date +%s%3N)" >> "$3"
		_i=$((_i + 1))
	done
}
delivered() { q "SELECT count(*) FROM hookbox_state.outbox WHERE
    state = 'delivered'"; }
delivered_ge() { test "$(delivered)" -ge "$1"; }

# ---- up: 200 ----
: > "$tmp/up.out"
load 1 20 "$tmp/up.out"
eq "up: 20 accepted" 20 "$(awk '$2 == 200 && $3 == "accepted"' \
    "$tmp/up.out" | wc -l)"
until_true 60 delivered_ge 20 || fail "up: not delivered"

# ---- stopped under load ----
: > "$tmp/mid.out"
load 21 200 "$tmp/mid.out" &
loader=$!
until_true 60 lines_ge "$tmp/mid.out" 20 ||
    fail "the load never started"
# Refused from the snapshot while the server is up...
printf '%s' "$(completed load1)" > "$tmp/bad.body"
echo "X-Tornado-Signature: t=$(date +%s),v1=$(printf '%064d' 0)" \
    > "$tmp/bad.sig"
# refusals: "CODE RA" for each, RA "-" without Retry-After, "+" with it.
refusals() {
	for _ep in tornado nosuch; do
		sh "$tmp/post.sh" "$base/hooks/$_ep" "$tmp/bad.body" \
		    "$tmp/bad.sig" x |
		    awk '{ print $2, ($4 == "-" ? "-" : "+") }'
	done | tr '\n' ' ' | sed 's/ $//'
}
eq "up: a bad signature 401, an unknown endpoint 404" "401 - 404 -" \
    "$(refusals)"
down_from=$(date +%s%3N)
pg_halt || fail "pg_ctl stop failed"
down_at=$(date +%s%3N)
# While it is down: each answer 503 with Retry-After.
: > "$tmp/down.out"
load 201 220 "$tmp/down.out"
eq "down: every answer 503 with Retry-After" 20 \
    "$(awk '$2 == 503 && $4 != "-"' "$tmp/down.out" | wc -l)"
eq "down: no 2xx" 0 "$(awk '$2 ~ /^2/' "$tmp/down.out" | wc -l)"
# ...and not from it while the version cannot be read: 503 as well.
eq "down: the same two 503 with Retry-After, never from the snapshot" \
    "503 + 503 +" "$(refusals)"
up_from=$(date +%s%3N)
kill "$loader" 2>/dev/null; wait "$loader" 2>/dev/null
# The background load's requests that started after the stop returned
# and ended before the start began: all 503.
eq "down: the load got no 2xx while stopped" 0 "$(awk -v a="$down_at" \
    -v b="$up_from" '$5 >= a && $6 <= b && $2 ~ /^2/' "$tmp/mid.out" |
    wc -l)"
echo "down: $(awk -v a="$down_at" -v b="$up_from" '$5 >= a && $6 <= b' \
    "$tmp/mid.out" | wc -l) load requests while stopped, stop took $((down_at - down_from)) ms"
grep -q 'result=unavailable' "$tmp/R.log" && pass ||
    fail "down: no request log line says unavailable"
alive() { kill -0 "$1" 2>/dev/null; }
alive "$rpid_main" && pass || fail "down: the responder died"
alive "$dpid" && pass || fail "down: the dispatcher died"

# ---- started again: the same processes serve ----
pg_restart || fail "pg_ctl start failed"
first_ok() {
	_r=$(post "$base" tornado load221 x | awk '{ print $2 }')
	test "$_r" = 200
}
until_true 60 first_ok || fail "back: never 200 again"
: > "$tmp/back.out"
load 222 260 "$tmp/back.out"
eq "back: every answer 200, same responder" 39 \
    "$(awk '$2 == 200 && $3 == "accepted"' "$tmp/back.out" | wc -l)"
alive "$rpid_main" && pass || fail "back: the responder was restarted"
# Everything acknowledged, at any time, is in the state.
acked=$(cat "$tmp/up.out" "$tmp/mid.out" "$tmp/down.out" "$tmp/back.out" |
    awk '$2 ~ /^2/ { sub(/^load/, "", $1); print $1 }')
list=$(for i in $acked; do printf "'acme:att-load%s:deliver-v1'," "$i"; done)
missing=$(( $(echo "$acked" | grep -c .) - $(q "SELECT count(*) FROM
    hookbox_state.outbox WHERE action_id IN (${list%,})") ))
eq "nothing acknowledged is lost" 0 $missing
# The dispatcher carries on: everything accepted ends delivered.
all_delivered() { test "$(q "SELECT count(*) FROM hookbox_state.outbox
    WHERE state <> 'delivered'")" = 0; }
until_true 60 all_delivered || fail "back: the dispatcher did not carry on"
alive "$dpid" && pass || fail "back: the dispatcher was restarted"
sent=$(awk -F'\t' '$2 == "POST" { print $4 }' "$tmp/sink.log" | sort -u |
    wc -l)
eq "back: the sink got every action" \
    "$(q "SELECT count(*) FROM hookbox_state.outbox")" "$sent"

# ---- a synchronous standby that is not there ----
# Each COMMIT would wait for it for ever; the busy budget (1 s) bounds it.
pg_standby "$tmp/pg" hookbox_missing ||
    fail "synchronous_standby_names never in force"
for j in load300 load301; do
	sign "$j" tornado "$(completed "$j")"
	_s=$(date +%s%3N)
	r=$(post "$base" tornado "$j" "$j")
	ms=$(( $(date +%s%3N) - _s ))
	eq "standby missing, $j: 503" 503 "$(echo "$r" | awk '{ print $2 }')"
	[ "$(echo "$r" | awk '{ print $4 }')" != "-" ] && pass ||
	    fail "standby missing, $j: no Retry-After"
	[ "$ms" -lt 30000 ] && pass ||
	    fail "standby missing, $j: answered after $ms ms"
	echo "standby missing: $j answered $(echo "$r" | awk '{ print $2 }') in $ms ms"
done
alive "$rpid_main" && pass || fail "standby missing: the responder died"
pg_standby "$tmp/pg" || fail "synchronous_standby_names never reset"
for j in load300 load301; do
	r=$(post "$base" tornado "$j" "$j")
	eq "standby back, $j: committed on the primary, a duplicate" \
	    "200 duplicate" "$(echo "$r" | awk '{ print $2, $3 }')"
done

# ---- down when the responder starts ----
kill9 "$rpid_main"
pg_halt
mv "$tmp/R.log" "$tmp/R.1.log"
responder R "$serve" -t 4
r3=$rpid; pids="$pids $r3"
contains "start, down: one clear line" "event=db_unavailable" \
    "$(cat "$tmp/R.log")"
lacks "start, down: not fatal" "event=start_failed" "$(cat "$tmp/R.log")"
r=$(post "$base" tornado load261 x)
eq "start, down: 503" 503 "$(echo "$r" | awk '{ print $2 }')"
[ "$(echo "$r" | awk '{ print $4 }')" != "-" ] && pass ||
    fail "start, down: no Retry-After"
pg_restart || fail "pg_ctl start failed"
until_true 60 first_ok || fail "start, down: never 200 once up"
alive "$r3" && pass || fail "start, down: the responder died"

# ---- a role that may only read the state ----
kill "$r3" 2>/dev/null; wait "$r3" 2>/dev/null
qs "CREATE ROLE hookbox_ro LOGIN" && q "GRANT CONNECT ON DATABASE hookbox TO hookbox_ro;
    GRANT USAGE ON SCHEMA hookbox_config, hookbox_state TO hookbox_ro;
    GRANT SELECT ON ALL TABLES IN SCHEMA hookbox_config TO hookbox_ro;
    GRANT SELECT ON ALL TABLES IN SCHEMA hookbox_state TO hookbox_ro" ||
    fail "create hookbox_ro"
ro="host=$pg_host user=hookbox_ro dbname=hookbox"
before=$(q "SELECT count(*) FROM hookbox_state.receipts")
mv "$tmp/R.log" "$tmp/R.2.log"
responder R "$ro" -t 4
pids="$pids $rpid"
contains "read-only role: the start says which permission" \
    "permission denied" "$(grep 'event=db_denied' "$tmp/R.log")"
contains "read-only role: and what to do" "init --grant" \
    "$(grep 'event=db_denied' "$tmp/R.log")"
r=$(post "$base" tornado load262 x)
eq "read-only role: 503" 503 "$(echo "$r" | awk '{ print $2 }')"
[ "$(echo "$r" | awk '{ print $4 }')" != "-" ] && pass ||
    fail "read-only role: no Retry-After"
eq "read-only role: nothing written" "$before" \
    "$(q "SELECT count(*) FROM hookbox_state.receipts")"
contains "read-only role: the request logged unavailable" \
    "result=unavailable" "$(cat "$tmp/R.log")"

finish pgfail
