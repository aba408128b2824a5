#!/bin/sh
# tests/e2e/outage.sh BUILD_DIR: hookbox(1), OUTAGES AND LIMITS, against real
# local HTTP servers (tests/helpers/sink.c) and real dispatcher processes.
# On SQLite, with two workers: a destination down for longer than its
# actions' retry horizon loses none of them, the attempts sent while it is
# down are bounded by its circuit (counted), and delivery resumes within
# the cool-down once it is back; the horizon alone sends a failing action
# dead, and --max-attempts keeps its meaning; a 429's Retry-After pauses
# the whole destination; an operator's pause sends nothing until resume;
# the in-flight cap and the rate hold at the destination.  On one
# PostgreSQL server, two dispatchers (two hosts) never exceed the in-flight
# cap between them.
set -u
build=$(cd "${1:?usage: outage.sh BUILD_DIR}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/helpers/lib.sh"
. "$top/tests/helpers/pglib.sh"
HB="$build/hookbox"
SINK="$build/tests/sink"

tmp=$(mktemp -d)
export HOOKBOX_DIR="$tmp/data"
export HOOKBOX_BACKOFF_MS=1		# retries at once, but for a circuit
export HOOKBOX_LEASE_MARGIN_MS=2000
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	pg_stop "$tmp/pg"
	rm -rf "$tmp"
}
trap cleanup EXIT

# sink NAME SCRIPT [PORT]: starts a sink (on PORT, default any); sets
# $port and $sinkpid; its log is $tmp/NAME.log, its times $tmp/NAME.times.
sink() {
	: > "$tmp/$1.log"
	: > "$tmp/$1.times"
	rm -f "$tmp/$1.port"
	"$SINK" -p "${3:-0}" -l "$tmp/$1.log" -s "$2" -r "$tmp/$1.pid" \
	    -t "$tmp/$1.times" > "$tmp/$1.port" 2>"$tmp/$1.err" &
	sinkpid=$!
	pids="$pids $sinkpid"
	until_true 60 test -s "$tmp/$1.port" || fail "sink $1 did not start"
	port=$(head -n 1 "$tmp/$1.port")
}
n=0
# action DEST: a job of tenant acme going to DEST, its completion accepted.
action() {
	n=$((n + 1))
	"$HB" job add "job-$n" --tenant acme --attempt "att-$n" \
	    --step deliver --destination "$1" || exit 1
	printf '{"id":"job-%s","status":"Completed"}' "$n" |
	    "$HB" observe --tenant acme >/dev/null || exit 1
}
sq() { sqlite3 "file:$HOOKBOX_DIR/state.db?mode=ro" ".timeout 5000" "$1"; }
count() { sq "SELECT count(*) FROM outbox WHERE destination = '$1'$2"; }
all_delivered() { test "$(count "$1" " AND state <> 'delivered'")" = 0; }
# none_due DEST: none of its pending rows due now.
none_due() { test "$(count "$1" " AND state = 'pending' AND next_at <= $(now_ms)")" = 0; }
none_leased() { test "$(count "$1" " AND state = 'leased'")" = 0; }
# dead_is DEST N: N of its rows dead (read again each time, for until_true).
dead_is() { test "$(count "$1" " AND state = 'dead'")" = "$2"; }
# attempts_of DEST [AND...]: its attempts (a), those of its rows (o).
attempts_of() { sq "SELECT count(*) FROM attempts a JOIN outbox o
    ON o.action_id = a.action_id WHERE o.destination = '$1'${2:-}"; }
posts() { awk -F'\t' '$2 == "POST"' "$tmp/$1.log" | wc -l; }
posts_ge() { test "$(posts "$1")" -ge "$2"; }
keys() { awk -F'\t' '$2 == "POST" { print $4 }' "$tmp/$1.log" | sort -u |
    wc -l; }
circuit() {
	_doc=$("$HB" status --json | sed "s/'/''/g")
	sqlite3 :memory: "SELECT json_extract(value, '\$.$2') FROM
	    json_each(json_extract('$_doc', '\$.circuits')) WHERE
	    json_extract(value, '\$.destination') = '$1'"
}
circuit_is() { test "$(circuit "$1" circuit)" = "$2"; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
# most_at_once TIMES: the most requests the sink held at once (an answer
# at the moment another arrived counts as before it).
most_at_once() {
	awk '$2 == "POST" { print $3, 1; print $4, -1 }' "$1" | sort -k1,1n \
	    -k2,2n | awk '{ c += $2; if (c > m) m = c } END { print m + 0 }'
}
# most_in_a_second TIMES: the most requests that arrived within 1000 ms.
most_in_a_second() {
	awk '$2 == "POST" { print $3 }' "$1" | sort -n | awk '{ t[NR] = $1 }
	    END { for (i = 1; i <= NR; i++) { c = 0
	    for (j = i; j <= NR && t[j] < t[i] + 1000; j++) c++
	    if (c > m) m = c } print m + 0 }'
}

"$HB" init >/dev/null
"$HB" tenant add acme

"$HB" dispatch --workers 2 > "$tmp/dispatch.log" 2>&1 &
dpid=$!
pids="$pids $dpid"

# ---- an outage longer than the retry horizon ----
# The sink is started to find a port, then stopped: nothing listens there
# (every attempt fails at once) until it is started again on that port.
sink down 204
down=$port
kill "$sinkpid"
wait "$sinkpid" 2>/dev/null
"$HB" destination add down --tenant acme --idempotent \
    --url "http://127.0.0.1:$down/hook" --circuit-failures 3 \
    --cool-down 1s --retry-for 1s
i=0
while [ $i -lt 8 ]; do action down; i=$((i + 1)); done
until_true 30 circuit_is down open
eq "outage: the circuit opens" open "$(circuit down circuit)"
# Held back, its rows are not due before the probe: no pick reads them.
if until_true 10 none_due down; then pass; else
	fail "outage: its rows stay due while it is open"
fi
contains "outage: logged" "event=circuit tenant=acme destination=down from=closed to=open" \
    "$(cat "$tmp/dispatch.log")"
# Plain status says what the page does: the dispatcher's heartbeat, and
# why the destination fails.
out=$("$HB" status)
contains "status: the heartbeat" "dispatcher: last recorded" "$out"
lacks "status: a live dispatcher is not said to be gone" "none is recording" \
    "$out"
contains "status: the destination's last error" "destination down: last error" \
    "$out"
# Attempts claimed before it opened may still start after: wait for
# their outcomes, then count from there.
until_true 10 none_leased down
t_down=$(now_ms)
sleep 3		# three horizons
eq "outage: no action dead after three horizons down" 0 \
    "$(count down " AND state = 'dead'")"
tried=$(attempts_of down)
opened=$(sq "SELECT opened_at FROM circuits WHERE destination = 'down'")
since=$(attempts_of down " AND a.started_at > $opened")
after=$(attempts_of down " AND a.started_at > $t_down")
# Before it opened, the failures that opened it (3 at least); since, a
# probe after the cool-down (1 s), and then one after each doubled
# cool-down (2 s, 4 s): at most two in any 3 s.
if [ "$since" -ge 1 ] && [ "$after" -le 2 ] && [ "$tried" -ge 4 ]; then
	pass
else
	fail "outage: $tried attempts, $since since it opened, $after in 3 s open"
fi
probe_at=$(( $(circuit down probe_at) * 1000 + 999 ))
sink down 204 "$down"
until_true 40 all_delivered down
t_up=$(now_ms)
eq "outage: every action delivered" 8 "$(count down " AND state = 'delivered'")"
eq "outage: each once" "8 8" "$(posts down) $(keys down)"
if [ "$t_up" -le $((probe_at + 3000)) ]; then pass; else
	fail "outage: delivered at $t_up, the probe was due at $probe_at"
fi
eq "outage: closed again, its count 0" "" "$(circuit down circuit)"
contains "outage: closing logged" "destination=down from=half-open to=closed" \
    "$(cat "$tmp/dispatch.log")"
# Every row but the probe's, which was delivered as the circuit closed.
held=$(sq "SELECT count(*) FROM outbox WHERE destination = 'down' AND
    held_ms >= 2500")
if [ "$held" -ge 7 ]; then pass; else
	fail "outage: $held rows' horizons held the time it was open"
fi

# ---- the horizon alone; --max-attempts as before ----
sink failing 503
"$HB" destination add failing --tenant acme --circuit-failures 0 \
    --url "http://127.0.0.1:$port/hook" --retry-for 2s
"$HB" destination add counted --tenant acme --circuit-failures 0 \
    --url "http://127.0.0.1:$port/hook" --max-attempts 3
action failing
t0=$(now_ms)
action counted
until_true 30 dead_is failing 1
until_true 30 dead_is counted 1
lived=$(sq "SELECT updated_at - created_at FROM outbox WHERE
    destination = 'failing'")
if [ "$lived" -ge 2000 ] && [ "$lived" -lt 6000 ]; then pass; else
	fail "horizon: dead after $lived ms, not its 2 s"
fi
if [ "$(attempts_of failing)" -gt 3 ]; then pass; else
	fail "horizon: dead after $(attempts_of failing) attempts"
fi
eq "--max-attempts 3: dead after three" 3 "$(attempts_of counted)"

# ---- a requeue by filter moves exactly what its dry run listed ----
sink gone 404
"$HB" destination add gone --tenant acme --url "http://127.0.0.1:$port/hook"
i=0
while [ $i -lt 3 ]; do action gone; i=$((i + 1)); done
until_true 30 dead_is gone 3
# Paused, so that what is requeued stays to be looked at.
"$HB" destination pause --tenant acme gone >/dev/null
before=$(sq "SELECT group_concat(action_id || updated_at) FROM outbox WHERE
    destination <> 'gone' AND state = 'dead'")
dry=$("$HB" requeue --dry-run --destination gone)
eq "dry run: three listed" 3 "$(printf '%s\n' "$dry" | grep -c '^acme:')"
contains "dry run: says nothing moved" \
    "3 actions would be requeued (--dry-run: nothing moved)" "$dry"
eq "dry run: nothing moved" 3 "$(count gone " AND state = 'dead'")"
eq "a filter nothing matches" "0 actions would be requeued (--dry-run: nothing moved)" \
    "$("$HB" requeue --dry-run --tenant nobody)"
eq "--since in the future: none" 0 \
    "$("$HB" requeue --dry-run --since 2999-01-01 | grep -c '^acme:')"
moved=$("$HB" requeue --destination gone)
eq "requeue: the dry run's list" \
    "$(printf '%s\n' "$dry" | grep '^acme:')" \
    "$(printf '%s\n' "$moved" | grep '^acme:')"
contains "requeue: says how many" "3 actions requeued" "$moved"
eq "requeue: pending again, attempts and horizon anew" 3 \
    "$(count gone " AND state = 'pending' AND attempts = 0 AND
    horizon_from IS NOT NULL AND held_ms = 0")"
eq "requeue: nothing else moved" "$before" "$(sq "SELECT
    group_concat(action_id || updated_at) FROM outbox WHERE
    destination <> 'gone' AND state = 'dead'")"
"$HB" requeue >/dev/null 2>&1
eq "requeue without ACTION or a filter: usage" 2 $?
"$HB" requeue --state pending >/dev/null 2>&1
eq "requeue --state pending: usage" 2 $?
"$HB" destination resume --tenant acme gone >/dev/null

# ---- a 429's Retry-After holds the whole destination ----
sink busy "429:2,204"
"$HB" destination add busy --tenant acme --idempotent \
    --url "http://127.0.0.1:$port/hook"
action busy
until_true 30 posts_ge busy 1
i=0
while [ $i -lt 3 ]; do action busy; i=$((i + 1)); done
until_true 30 all_delivered busy
first=$(awk '$1 == 0 { print $4 }' "$tmp/busy.times")
soonest=$(awk '$1 != 0 && $2 == "POST" { print $3 }' "$tmp/busy.times" |
    sort -n | head -n 1)
if [ -n "$first" ] && [ -n "$soonest" ] &&
    [ "$soonest" -ge $((first + 2000)) ]; then pass; else
	fail "Retry-After: the next request came at $soonest, the 429 at $first"
fi
eq "Retry-After: all four delivered, each once" "5 4" \
    "$(posts busy) $(keys busy)"

# ---- an operator's pause ----
sink quiet 204
"$HB" destination add quiet --tenant acme --url "http://127.0.0.1:$port/hook"
out=$("$HB" destination pause --tenant acme quiet)
eq "pause: says so" "destination quiet paused" "$out"
action quiet
action quiet
sleep 1.5
eq "pause: nothing sent" 0 "$(posts quiet)"
contains "pause: status says so" "destination quiet of acme: circuit closed" \
    "$("$HB" status)"
contains "pause: and how to resume" "paused (hookbox destination resume)" \
    "$("$HB" status)"
eq "pause: status --json" 1 "$(circuit quiet paused)"
"$HB" destination resume --tenant acme quiet >/dev/null
until_true 30 all_delivered quiet
eq "resume: both delivered" 2 "$(posts quiet)"
"$HB" destination pause --tenant acme nosuch 2>"$tmp/err"
eq "pause: an unknown destination: exit 1" 1 $?

# ---- the in-flight cap and the rate, at the destination ----
sink narrow "slow:300:204"
"$HB" destination add narrow --tenant acme --max-in-flight 2 \
    --url "http://127.0.0.1:$port/hook"
sink metered 204
"$HB" destination add metered --tenant acme --rate 4 \
    --url "http://127.0.0.1:$port/hook"
# Paused while they are accepted, so that all are due at once.
"$HB" destination pause --tenant acme narrow >/dev/null
"$HB" destination pause --tenant acme metered >/dev/null
i=0
while [ $i -lt 10 ]; do action narrow; action metered; i=$((i + 1)); done
"$HB" destination resume --tenant acme narrow >/dev/null
"$HB" destination resume --tenant acme metered >/dev/null
until_true 60 all_delivered narrow
until_true 60 all_delivered metered
eq "in flight: all ten, each once" "10 10" "$(posts narrow) $(keys narrow)"
eq "in flight: never more than 2 at the sink, two workers" 2 \
    "$(most_at_once "$tmp/narrow.times")"
eq "rate: all ten, each once" "10 10" "$(posts metered) $(keys metered)"
# Started 250 ms apart: ten take 2.25 s at least; on the way a request
# may come a little late, closer to the next (one more in a second).
most=$(most_in_a_second "$tmp/metered.times")
span=$(awk '$2 == "POST" { print $3 }' "$tmp/metered.times" | sort -n |
    sed -n '1p;$p' | tr '\n' ' ' | awk '{ print $2 - $1 }')
if [ "$most" -le 5 ] && [ "$span" -ge 2200 ]; then pass; else
	fail "rate 4: $most requests within one second, ten in $span ms"
fi
metrics=$("$HB" status --json)
contains "status --json: circuits" '"circuits":' "$metrics"

kill "$dpid"
wait "$dpid" 2>/dev/null

# ---- a probe's dispatcher killed mid-way ----
# The probe hangs at the sink, and its dispatcher is killed with SIGKILL:
# the circuit stays half open until the probe's lease runs out, then the
# next dispatcher sends another probe, and the destination's actions go.
sink crash 204
crash=$port
kill "$sinkpid"
wait "$sinkpid" 2>/dev/null
"$HB" destination add crash --tenant acme --idempotent --timeout-ms 2000 \
    --url "http://127.0.0.1:$crash/hook" --circuit-failures 1 --cool-down 1s
"$HB" dispatch > "$tmp/d2.log" 2>&1 &
d2=$!
pids="$pids $d2"
action crash
action crash
until_true 30 circuit_is crash open
sink crash "hang:8,204" "$crash"
until_true 30 posts_ge crash 1
kill -9 "$d2"
wait "$d2" 2>/dev/null
eq "killed probe: the circuit stays half open" half-open \
    "$(circuit crash circuit)"
"$HB" dispatch > "$tmp/d3.log" 2>&1 &
d3=$!
pids="$pids $d3"
until_true 60 all_delivered crash
eq "killed probe: both delivered after another probe" "3 2" \
    "$(posts crash) $(keys crash)"
eq "killed probe: closed again" "" "$(circuit crash circuit)"
contains "killed probe: its lease expired" "event=lease_expired" \
    "$(cat "$tmp/d3.log")"
kill "$d3"
wait "$d3" 2>/dev/null

# ---- two dispatchers on one PostgreSQL: the cap between them ----
chmod 0755 "$tmp"
if pg_start "$tmp/pg" nosync; then
	export HOOKBOX_DB="$pg_uri"
	"$HB" init >/dev/null
	"$HB" tenant add acme
	sink shared "slow:800:204"
	"$HB" destination add shared --tenant acme --max-in-flight 3 \
	    --url "http://127.0.0.1:$port/hook"
	# All due at once (paused while accepted).  Host A alone takes the
	# cap; host B starts while A's three are in flight, all twelve
	# others due: the cap, in the database, holds B back.
	"$HB" destination pause --tenant acme shared >/dev/null
	i=0
	while [ $i -lt 15 ]; do action shared; i=$((i + 1)); done
	"$HB" dispatch > "$tmp/a.log" 2>&1 &
	pids="$pids $!"
	"$HB" destination resume --tenant acme shared >/dev/null
	until_true 30 posts_ge shared 3
	"$HB" dispatch > "$tmp/b.log" 2>&1 &
	pids="$pids $!"
	pg_all() { test "$(psql "$pg_uri" -XAtqc "SELECT count(*) FROM
	    hookbox_state.outbox WHERE state <> 'delivered'")" = 0; }
	until_true 90 pg_all
	eq "two hosts: all fifteen, each once" "15 15" \
	    "$(posts shared) $(keys shared)"
	eq "two hosts: never more than 3 at the sink" 3 \
	    "$(most_at_once "$tmp/shared.times")"
	eq "two hosts: both ran" "1 1" "$(grep -c "event=start" "$tmp/a.log") \
$(grep -c "event=start" "$tmp/b.log")"
else
	fail "PostgreSQL did not start"
fi

finish outage
