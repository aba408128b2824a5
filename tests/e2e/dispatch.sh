#!/bin/sh
# tests/e2e/dispatch.sh BUILD_DIR: the outbox dispatcher against real local
# HTTP servers (tests/helpers/sink.c, scripted per request), with real processes
# killed with SIGKILL.  Every scenario of hookbox(1), DELIVERING ACTIONS.
set -u
build=$(cd "${1:?usage: dispatch.sh BUILD_DIR}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/helpers/lib.sh"
HB="$build/hookbox"
SINK="$build/tests/sink"

tmp=$(mktemp -d)
export HOOKBOX_DIR="$tmp/data"
export HOOKBOX_BACKOFF_MS=1		# retries at once, unless Retry-After
export HOOKBOX_LEASE_MARGIN_MS=300	# leases expire soon after a death
export HOOKBOX_RECHECK_MS=1000		# unknown outcomes are asked about soon
sinks=""
cleanup() {
	for p in $sinks; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

"$HB" init >/dev/null
"$HB" tenant add acme
"$HB" tenant add beta
n=0

# alive PID: the process exists, is not a zombie and is a dispatcher (a
# pid reused by another program does not count).
alive() {
	[ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" != "" ] &&
	    [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" != Z ] &&
	    tr '\0' ' ' < "/proc/$1/cmdline" 2>/dev/null | grep -q "dispatch"
}
none_alive() {
	for _p in "$@"; do
		alive "$_p" && return 1
	done
	return 0
}
nworkers() { test "$(pgrep -P "$1" | wc -l)" -eq "$2"; }

# sink NAME SCRIPT [GETSCRIPT]: starts a sink; sets $port; its log is
# $tmp/NAME.log, its answer times $tmp/NAME.times.  ksink: the same with
# kept-alive connections (sink -k).
_k=
sink() {
	: > "$tmp/$1.log"
	"$SINK" -p 0 -l "$tmp/$1.log" -s "$2" -g "${3:-0}" -r "$tmp/$1.pid" \
	    -t "$tmp/$1.times" $_k > "$tmp/$1.port" 2>"$tmp/$1.err" &
	sinks="$sinks $!"
	until_true 60 test -s "$tmp/$1.port" || fail "sink $1 did not start"
	port=$(head -n 1 "$tmp/$1.port")
}
ksink() { _k=-k; sink "$@"; _k=; }

# action DEST [TENANT]: registers a job going to DEST and accepts its
# completion; sets $a to the action id.
action() {
	n=$((n + 1))
	_t=${2:-acme}
	"$HB" job add "job-$n" --tenant "$_t" --attempt "att-$n" \
	    --step deliver-v1 --destination "$1" || exit 1
	printf '{"id":"job-%s","status":"Completed"}' "$n" |
	    "$HB" observe --tenant "$_t" >/dev/null || exit 1
	a="$_t:att-$n:deliver-v1"
}

# actions DEST TENANT N: N actions as action() makes them, their jobs
# registered in one import.
actions() {
	: > "$tmp/jobs.jsonl"
	_first=$((n + 1))
	while [ $n -lt $((_first + $3 - 1)) ]; do
		n=$((n + 1))
		printf '{"job_id":"job-%s","attempt":"att-%s","step":"%s","destination":"%s"}\n' \
		    "$n" "$n" deliver-v1 "$1" >> "$tmp/jobs.jsonl"
	done
	"$HB" job import --tenant "$2" "$tmp/jobs.jsonl" >/dev/null || exit 1
	_i=$_first
	while [ $_i -le $n ]; do
		printf '{"id":"job-%s","status":"Completed"}' "$_i" |
		    "$HB" observe --tenant "$2" >/dev/null || exit 1
		_i=$((_i + 1))
	done
}

state_of() {
	sqlite3 "file:$HOOKBOX_DIR/state.db?mode=ro" \
	    "SELECT state FROM outbox WHERE action_id = '$1'"
}
sq() { sqlite3 "file:$HOOKBOX_DIR/state.db?mode=ro" "$1"; }
is_state() { test "$(state_of "$1")" = "$2"; }
# The clock the dispatcher uses (unix ms), for comparisons in SQL.
NOW_MS="CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"
due() { test "$(sq "SELECT next_at <= $NOW_MS FROM outbox WHERE action_id = '$1'")" = 1; }
lease_expired() {
	test "$(sq "SELECT lease_until < $NOW_MS FROM outbox WHERE action_id = '$1'")" = 1
}
lines_ge() { test "$(wc -l < "$1")" -ge "$2"; }
posts() { grep -c "	POST	" "$tmp/$1.log"; }
posts_ge() { test "$(posts "$1")" -ge "$2"; }
keys() { awk -F'\t' '$2 == "POST" { print $4 }' "$tmp/$1.log" | sort -u | tr '\n' ' '; }
# posts_of SINK KEY: POSTs with that key; nkeys SINK: distinct keys POSTed;
# conns SINK: connections that carried a POST (the log's 11th field).
posts_of() { awk -F'\t' -v k="$2" '$2 == "POST" && $4 == k' "$tmp/$1.log" | wc -l; }
nkeys() { awk -F'\t' '$2 == "POST" { print $4 }' "$tmp/$1.log" | sort -u | wc -l; }
conns() { awk -F'\t' '$2 == "POST" { print $11 }' "$tmp/$1.log" | sort -u | wc -l; }
# states DEST: its rows' states in the order accepted.
states() { sq "SELECT group_concat(state, ' ') FROM (SELECT state FROM outbox
    WHERE destination = '$1' ORDER BY created_at, rowid)"; }
ndelivered_ge() { test "$(sq "SELECT count(*) FROM outbox WHERE
    destination = '$1' AND state = 'delivered'")" -ge "$2"; }

# ---- delivered on 2xx, with the key and the payload ----
sink ok 204
"$HB" destination add ok --tenant acme --url "http://127.0.0.1:$port/hook"
action ok
"$HB" dispatch --once; eq "dispatch --once exits 0" 0 $?
eq "2xx: delivered" delivered "$(state_of "$a")"
eq "one POST" 1 "$(posts ok)"
eq "Idempotency-Key is the action id" "$a " "$(keys ok)"
contains "payload carries the action" "\"action\":\"$a\"" "$(cat "$tmp/ok.log")"
eq "attempt recorded with its status" "1|204" \
    "$(sq "SELECT n || '|' || http_status FROM attempts WHERE action_id = '$a'")"

# ---- a row whose identifiers were written behind hookbox's back ----
# state.db is writable by the responder: what the dispatcher reads back
# from it is checked again before it goes into a header.
sink planted 204
"$HB" destination add planted --tenant acme --url "http://127.0.0.1:$port/hook"
bad="acme:att-x' || char(13, 10) || 'X-Evil: 1:deliver-v1"
sqlite3 "$HOOKBOX_DIR/state.db" ".timeout 10000" "INSERT INTO accepted(action_id,
    tenant, attempt, step, job_id, accepted_at) VALUES ('$bad', 'acme', 'att-x',
    'deliver-v1', 'job-x', 1); INSERT INTO outbox(action_id, tenant,
    destination, payload, next_at, created_at, updated_at) VALUES ('$bad',
    'acme', 'planted', '{}', 0, 1, 1)"
"$HB" dispatch --once
eq "planted CR LF in the action id: not sent" 0 "$(posts planted)"
eq "planted row: dead, and why" "dead|1" "$(sq "SELECT state || '|' ||
    (last_error LIKE '%invalid identifier%') FROM outbox WHERE destination = 'planted'")"
# Out of the way of the counts below.
sqlite3 "$HOOKBOX_DIR/state.db" ".timeout 10000" "DELETE FROM attempts WHERE
    action_id IN (SELECT action_id FROM outbox WHERE destination = 'planted');
    DELETE FROM outbox WHERE destination = 'planted';
    DELETE FROM accepted WHERE job_id = 'job-x'"

# ---- a destination row written behind the tool's back: retried, unsent ----
sink badurl 204
"$HB" destination add badurl --tenant acme --url "http://127.0.0.1:$port/hook"
action badurl
sqlite3 "$HOOKBOX_DIR/config.db" ".timeout 10000" \
    "UPDATE destinations SET url = 'file:///etc/passwd' WHERE name = 'badurl'"
"$HB" dispatch --once
eq "invalid destination URL: not sent" 0 "$(posts badurl)"
eq "invalid destination URL: retried, and why" "pending|1" "$(sq "SELECT state ||
    '|' || (last_error LIKE 'configuration:%') FROM outbox WHERE action_id = '$a'")"
sqlite3 "$HOOKBOX_DIR/config.db" ".timeout 10000" "UPDATE destinations SET
    url = 'http://127.0.0.1:$port/hook' WHERE name = 'badurl'"
sqlite3 "$HOOKBOX_DIR/state.db" ".timeout 10000" \
    "UPDATE outbox SET next_at = 0 WHERE action_id = '$a'"
"$HB" dispatch --once
eq "fixed by the operator: delivered" delivered "$(state_of "$a")"

# ---- 500, then success ----
sink flaky 500,204
"$HB" destination add flaky --tenant acme --url "http://127.0.0.1:$port/hook"
action flaky
"$HB" dispatch --once
eq "500 then 204: delivered" delivered "$(state_of "$a")"
eq "two POSTs" 2 "$(posts flaky)"
eq "same key both times" "$a " "$(keys flaky)"
eq "both attempts recorded" "500 204" \
    "$(sq "SELECT group_concat(http_status, ' ') FROM attempts WHERE action_id = '$a' ORDER BY id")"

# ---- 429 with Retry-After ----
# Counted from the moment the answer arrived: the dispatcher's own record
# (the attempt's end and the next attempt's due time), and the sink's
# clock (from writing the 429 to accepting the next request), which can
# only overstate the gap the dispatcher left.  3 s, so that --once (which
# waits for what falls due within 1 s) leaves it even if recording the
# 429 stalls for a second or two on a loaded machine.
sink slow 429:3,204
"$HB" destination add slow --tenant acme --url "http://127.0.0.1:$port/hook"
action slow
"$HB" dispatch --once
eq "429: back to pending" pending "$(state_of "$a")"
eq "not retried before Retry-After" 1 "$(posts slow)"
wait_ms=$(sq "SELECT o.next_at - a.ended_at FROM outbox o JOIN attempts a USING (action_id) WHERE action_id = '$a'")
[ "$wait_ms" -ge 3000 ] && pass || fail "Retry-After 3 s not honoured: next in $wait_ms ms"
"$HB" dispatch & d=$!
until_true 60 is_state "$a" delivered
eq "delivered after Retry-After" delivered "$(state_of "$a")"
kill -TERM $d; wait $d
gap=$(sq "SELECT max(started_at) - min(ended_at) FROM attempts WHERE action_id = '$a'")
[ "$gap" -ge 3000 ] && pass || fail "second attempt only $gap ms after the 429"
until_true 60 lines_ge "$tmp/slow.times" 2
gap=$(awk -F'\t' '$1 == 0 { a = $4 } $1 == 1 { n = $3 } END { print n - a }' "$tmp/slow.times")
[ "$gap" -ge 3000 ] && pass || fail "the sink saw the retry $gap ms after its 429"

# ---- 400: dead at once; requeue delivers with the same key ----
sink bad 400,204
"$HB" destination add bad --tenant acme --url "http://127.0.0.1:$port/hook"
action bad
"$HB" dispatch --once
eq "400: dead at once" dead "$(state_of "$a")"
eq "one POST only" 1 "$(posts bad)"
st=$("$HB" status --json)
eq "status counts the dead" 1 "$(jget outbox.dead "$st")"
"$HB" requeue "$a"; eq "requeue" 0 $?
"$HB" requeue "$a" 2>/dev/null; eq "requeue of a pending row refused" 1 $?
"$HB" dispatch --once 2>"$tmp/requeued.log"
eq "requeued: delivered" delivered "$(state_of "$a")"
contains "requeued: the log numbers the attempt as the history does" \
    " event=delivery action=$a tenant=acme destination=bad attempt=2 outcome=delivered" \
    "$(cat "$tmp/requeued.log")"
eq "same key after requeue" "$a " "$(keys bad)"
# The history numbers on across the requeue; the outbox's count, which
# the backoff and --max-attempts go by, started again.
eq "attempts after requeue: 1 then 2" "1 2" "$("$HB" attempts --json "$a" |
    sed -n 's/.*"n":[[:space:]]*\([0-9]*\).*/\1/p' | tr '\n' ' ' |
    sed 's/ $//')"
eq "the count since the requeue" 1 \
    "$(sq "SELECT attempts FROM outbox WHERE action_id = '$a'")"

# ---- max attempts: dead ----
sink down 503
"$HB" destination add down --tenant acme --url "http://127.0.0.1:$port/hook" \
    --max-attempts 3
action down
"$HB" dispatch --once 2> "$tmp/down.err"
eq "503 x 3: dead" dead "$(state_of "$a")"
eq "three POSTs" 3 "$(posts down)"
# The log: start, one line per attempt, one when the row went dead, the
# --once summary, stop.
log=$(cat "$tmp/down.err")
contains "log: start line" " level=info event=start program=\"hookbox dispatch\" version=" "$log"
for i in 1 2; do
	contains "log: attempt $i: retry" " event=delivery action=$a tenant=acme destination=down attempt=$i outcome=retry status=503 duration_ms=" "$log"
done
contains "log: attempt 3: dead" " event=delivery action=$a tenant=acme destination=down attempt=3 outcome=dead status=503 duration_ms=" "$log"
eq "log: three attempt lines" 3 "$(grep -c ' event=delivery ' "$tmp/down.err")"
contains "log: the row went dead" " level=warn event=dead action=$a tenant=acme destination=down attempts=3 error=\"HTTP 503\"" "$log"
contains "log: --once summary" " event=dispatch_summary delivered=0 retried=2 dead=1 unknown=0 duration_ms=" "$log"
contains "log: stop line" " event=stop program=\"hookbox dispatch\"" "$log"
eq "log: every line structured" 0 \
    "$(grep -vc '^ts=[0-9T:.-]*Z level=[a-z]* event=[a-z_]*' "$tmp/down.err")"
# The metrics, as the responder shows them (plain CGI, one request):
# attempts by outcome, and the latency histogram counting each.
metrics() { env -i HOOKBOX_DIR="$HOOKBOX_DIR" GATEWAY_INTERFACE=CGI/1.1 \
    REQUEST_METHOD=GET PATH_INFO=/hooks/_metrics "$build/hookbox-fcgi" \
    2>/dev/null; }
# msample SERIES: its value in the metrics, or "none".
msample() { metrics | awk -v s="$1" '$1 == s { print $2; f = 1 } END { if (!f) print "none" }'; }
m=$(metrics)
contains "metrics: answered" "Status: 200" "$m"
eq "metrics: retries to down" 2 \
    "$(msample 'hookbox_deliveries_total{destination="down",outcome="retry"}')"
eq "metrics: dead at down" 1 \
    "$(msample 'hookbox_deliveries_total{destination="down",outcome="dead"}')"
eq "metrics: delivered to ok" 1 \
    "$(msample 'hookbox_deliveries_total{destination="ok",outcome="delivered"}')"
eq "metrics: histogram count = attempts" \
    "$(sq "SELECT count(*) FROM attempts a JOIN outbox o USING (action_id)
    WHERE o.destination = 'down'")" \
    "$(msample 'hookbox_delivery_duration_seconds_count{destination="down"}')"
eq "metrics: +Inf bucket = count" 3 \
    "$(msample 'hookbox_delivery_duration_seconds_bucket{destination="down",le="+Inf"}')"
beat=$(msample 'hookbox_dispatcher_heartbeat_timestamp_seconds')
eq "metrics: heartbeat within the last minute" 1 \
    "$(awk -v b="$beat" -v n="$(date +%s)" 'BEGIN { print (b != "none" && n - b < 60 && b - n < 5) ? 1 : 0 }')"
eq "metrics: backlog gauge" 0 \
    "$(msample 'hookbox_destination_backlog{destination="down"}')"
eq "metrics: dead gauge" 1 \
    "$(msample 'hookbox_destination_actions{destination="down",state="dead"}')"
eq "three attempts" 3 "$(sq "SELECT count(*) FROM attempts WHERE action_id = '$a'")"
out=$("$HB" list --state dead --json)
contains "list --state dead shows it" "$a" "$out"

# ---- connection refused: retried, never unknown ----
"$HB" destination add nowhere --tenant acme --url "http://127.0.0.1:9/hook" \
    --max-attempts 2
action nowhere
"$HB" dispatch --once
eq "unreachable: dead after max attempts, not unknown" dead "$(state_of "$a")"

# ---- timeout after the downstream received it: no silent duplicate ----
# (The sink answers 2.5 s after the timeout: a loaded machine does not
# turn the timeout into an answer.)
sink late slow:3000:204
"$HB" destination add late --tenant acme --url "http://127.0.0.1:$port/hook" \
    --timeout-ms 500
action late
"$HB" dispatch --once
eq "timeout, not idempotent: unknown" unknown "$(state_of "$a")"
"$HB" dispatch --once
eq "not resent" 1 "$(posts late)"
st=$("$HB" status --json)
eq "status counts the unknown" 1 "$(jget outbox.unknown "$st")"
out=$("$HB" reconcile --resend "$a"); eq "reconcile --resend" 0 $?
eq "reconcile --resend says so" "action $a reconciled: to be sent again" \
    "$out"
"$HB" dispatch --once
eq "resent on the operator's word" 2 "$(posts late)"

sink late2 slow:3000:204,204
"$HB" destination add late2 --tenant acme --url "http://127.0.0.1:$port/hook" \
    --timeout-ms 500 --idempotent
action late2
"$HB" dispatch --once
eq "timeout, idempotent: resent with the same key" "$a " "$(keys late2)"
[ "$(posts late2)" -ge 2 ] && pass || fail "idempotent destination not resent"

# ---- SIGKILL while the downstream holds the request ----
# killed DEST [N]: starts a dispatcher, waits until the sink has N POSTs
# (default 1), kills the dispatcher with SIGKILL, waits for the lease to
# expire.  The destinations time out after 2 s: the kill comes long
# before, however loaded the machine.
killed() {
	"$HB" dispatch & _d=$!
	until_true 60 posts_ge "$1" "${2:-1}"
	kill -KILL $_d
	wait $_d 2>/dev/null
	eq "$1: leased while the worker is dead" leased "$(state_of "$a")"
	until_true 60 lease_expired "$a"	# timeout 2000 + margin 300
}

sink holdi hang:3,204
"$HB" destination add holdi --tenant acme --url "http://127.0.0.1:$port/hook" \
    --timeout-ms 2000 --idempotent
action holdi
killed holdi
"$HB" dispatch --once
eq "idempotent: resent after the lease expired" delivered "$(state_of "$a")"
eq "with the same Idempotency-Key" "$a " "$(keys holdi)"
eq "two POSTs" 2 "$(posts holdi)"
contains "the lost attempt says so" "lease expired: outcome unknown" \
    "$("$HB" attempts --json "$a")"

sink holdn hang:3,204
"$HB" destination add holdn --tenant acme --url "http://127.0.0.1:$port/hook" \
    --timeout-ms 2000
action holdn
killed holdn
"$HB" dispatch --once
eq "not idempotent: unknown" unknown "$(state_of "$a")"
"$HB" dispatch --once
eq "and nothing more is sent" 1 "$(posts holdn)"
out=$("$HB" reconcile --delivered "$a"); eq "reconcile --delivered" 0 $?
eq "reconcile --delivered says so" "action $a reconciled: delivered" "$out"
eq "operator: delivered" delivered "$(state_of "$a")"
"$HB" reconcile --delivered "$a" 2>/dev/null
eq "reconcile of a delivered row refused" 1 $?
"$HB" dispatch --once
eq "still one POST" 1 "$(posts holdn)"

# A worker that keeps dying mid-request: each lost attempt counts, so an
# idempotent destination is not sent the action forever.
sink holdx hang:5
"$HB" destination add holdx --tenant acme \
    --url "http://127.0.0.1:$port/hook" --timeout-ms 2000 --idempotent \
    --max-attempts 2
action holdx
killed holdx 1
killed holdx 2
"$HB" dispatch --once
eq "lost attempts count: dead after max attempts" dead "$(state_of "$a")"
eq "sent twice, no more" 2 "$(posts holdx)"
eq "both attempts lost" "lease expired: outcome unknown|lease expired: outcome unknown" \
    "$(sq "SELECT group_concat(error, '|') FROM attempts WHERE action_id = '$a' ORDER BY id")"

# Through the destination's status URL: the sink has it, so delivered.
sink holds hang:3,204
"$HB" destination add holds --tenant acme --url "http://127.0.0.1:$port/hook" \
    --timeout-ms 2000 --status-url "http://127.0.0.1:$port/status"
action holds
killed holds
# Not due again within this run, however slow the machine; then made due.
HOOKBOX_RECHECK_MS=600000 "$HB" dispatch --once
eq "expired lease: unknown first" unknown "$(state_of "$a")"
sqlite3 -cmd ".timeout 10000" "$HOOKBOX_DIR/state.db" \
    "UPDATE outbox SET next_at = 0 WHERE action_id = '$a'"
"$HB" dispatch --once
eq "status URL found it: delivered" delivered "$(state_of "$a")"
eq "no resend" 1 "$(posts holds)"
contains "the sink was asked" "	GET	/status	$a	" "$(cat "$tmp/holds.log")"

# A timeout: the status URL is not asked at once (the destination may
# still be working on it and answer "not found"), but after a while: the
# check is due HOOKBOX_RECHECK_MS after the attempt ended, by the row's
# own record (a check is claimed only once due).
sink asklater slow:3000:204
"$HB" destination add asklater --tenant acme \
    --url "http://127.0.0.1:$port/hook" --timeout-ms 500 \
    --status-url "http://127.0.0.1:$port/status"
action asklater
"$HB" dispatch --once
eq "timeout: unknown" unknown "$(state_of "$a")"
later=$(sq "SELECT o.next_at - a.ended_at FROM outbox o JOIN attempts a USING (action_id) WHERE action_id = '$a'")
[ "$later" -ge 1000 ] && pass || fail "status check due $later ms after the timeout"
until_true 60 due "$a"
"$HB" dispatch --once
eq "asked later: delivered" delivered "$(state_of "$a")"
eq "sent once" 1 "$(posts asklater)"
contains "the sink was asked" "	GET	/status	$a	" "$(cat "$tmp/asklater.log")"

# ---- two dispatchers, one unknown row: one status check at a time ----
# The first POST times out, then fails (500: the destination does not
# have it): unknown.  Both dispatchers find the row due.  The status URL
# answers slowly, the second asker more slowly, so that its "not found"
# is stale when it lands.  The resend is cut off (no answer) after it
# reached the destination: unknown again.  A stale 404 must not make the
# destination take the action a second time.
sink race slow:2500:500,hang:0,204 500,1200,0
"$HB" destination add race --tenant acme --url "http://127.0.0.1:$port/hook" \
    --timeout-ms 1500 --status-url "http://127.0.0.1:$port/status"
action race
"$HB" dispatch --once
eq "timeout: unknown" unknown "$(state_of "$a")"
until_true 60 due "$a"	# started together, both find it
"$HB" dispatch & d1=$!
"$HB" dispatch & d2=$!
until_true 60 is_state "$a" delivered
eq "reconciled: delivered" delivered "$(state_of "$a")"
kill -TERM $d1 $d2; wait $d1 $d2
reached() { awk -F'\t' '$2 == "POST" && ($9 == "hang" || $9 ~ /^2/)' "$tmp/$1.log" | wc -l; }
eq "the destination took the action once" 1 "$(reached race)"
eq "the status URL was asked" 1 "$(test "$(grep -c '	GET	' "$tmp/race.log")" -ge 2 && echo 1)"

# ---- config.db locked: nothing is decided from the failure ----
# A second connection holds config.db's exclusive lock while a running
# dispatcher meets an expired lease (idempotent destination) and an
# unknown row due for a status check.  Neither may be decided from the
# busy configuration (not "unknown", not an hour's wait): both are taken
# up soon after the lock goes.  The rows are made due by moving their
# times once the lock is held, which stands for time passing.
sink cfgi hang:15,204
"$HB" destination add cfgi --tenant acme \
    --url "http://127.0.0.1:$port/hook" --timeout-ms 10000 --idempotent
action cfgi; ae=$a
HOOKBOX_LEASE_MARGIN_MS=600000 "$HB" dispatch & d=$!
until_true 60 posts_ge cfgi 1
kill -KILL $d; wait $d 2>/dev/null
sink cfgu slow:3000:204
"$HB" destination add cfgu --tenant acme \
    --url "http://127.0.0.1:$port/hook" --timeout-ms 500 \
    --status-url "http://127.0.0.1:$port/status"
action cfgu; au=$a
HOOKBOX_RECHECK_MS=600000 "$HB" dispatch --once
eq "cfgi: leased, its worker dead" leased "$(state_of "$ae")"
eq "cfgu: unknown" unknown "$(state_of "$au")"
sink cfgr 204
"$HB" destination add cfgr --tenant acme --url "http://127.0.0.1:$port/hook"
action cfgr; ar=$a
HOOKBOX_BUSY_MS=200 "$HB" dispatch 2> "$tmp/cfg.err" & d=$!
until_true 60 is_state "$ar" delivered	# it runs, config.db open
mkfifo "$tmp/lock.in"
sqlite3 "$HOOKBOX_DIR/config.db" < "$tmp/lock.in" > /dev/null & lk=$!
exec 3> "$tmp/lock.in"
printf '.timeout 10000\nBEGIN EXCLUSIVE;\n' >&3
cfg_locked() { ! sqlite3 "file:$HOOKBOX_DIR/config.db?mode=ro" \
    "SELECT count(*) FROM tenants" > /dev/null 2>&1; }
until_true 60 cfg_locked; eq "config.db locked" 0 $?
sqlite3 -cmd ".timeout 10000" "$HOOKBOX_DIR/state.db" "UPDATE outbox SET lease_until = 1 WHERE action_id = '$ae'; UPDATE outbox SET next_at = 0 WHERE action_id = '$au';"
put_off() { grep -q " event=left_for_later what=expired_lease action=$ae " \
    "$tmp/cfg.err" && grep -q \
    " event=left_for_later what=reconciliation action=$au " "$tmp/cfg.err"; }
until_true 60 put_off; eq "both put off while config.db is locked" 0 $?
eq "expired lease not taken for unknown" leased "$(state_of "$ae")"
soon=$(sq "SELECT next_at - $NOW_MS < 60000 FROM outbox WHERE action_id = '$au'")
eq "status check put off briefly, not for an hour" 1 "$soon"
echo "COMMIT;" >&3
exec 3>&-
wait $lk
until_true 60 is_state "$ae" delivered
eq "lock gone: the expired lease resent, delivered" delivered "$(state_of "$ae")"
eq "with the same key" "$ae " "$(keys cfgi)"
until_true 60 is_state "$au" delivered
eq "lock gone: the status URL asked, delivered" delivered "$(state_of "$au")"
eq "cfgu: sent once" 1 "$(posts cfgu)"
kill -TERM $d; wait $d

# ---- one batch: claimed together, each outcome its own ----
# Four destinations in one batch: 204; 500 with no attempt left; 503 with
# Retry-After; an answer that comes after the timeout.  One claim (one
# start for all four); each attempt ends when its own answer came, not
# when the batch's last one did, and is decided on its own.
sink mx204 204
"$HB" destination add mx204 --tenant acme --url "http://127.0.0.1:$port/hook"
sink mx500 500
"$HB" destination add mx500 --tenant acme --url "http://127.0.0.1:$port/hook" \
    --max-attempts 1
sink mx503 503:3
"$HB" destination add mx503 --tenant acme --url "http://127.0.0.1:$port/hook" \
    --max-attempts 2
sink mxto slow:3000:204
"$HB" destination add mxto --tenant acme --url "http://127.0.0.1:$port/hook" \
    --timeout-ms 1000
action mx204; m204=$a
action mx500; m500=$a
action mx503; m503=$a
action mxto; mto=$a
"$HB" dispatch --once
eq "batch: one claim for all four" 1 "$(sq "SELECT count(DISTINCT started_at)
    FROM attempts WHERE action_id IN ('$m204', '$m500', '$m503', '$mto')")"
eq "batch: one POST each" "1 1 1 1" \
    "$(posts mx204) $(posts mx500) $(posts mx503) $(posts mxto)"
eq "batch: 204 delivered" "delivered|204" \
    "$(sq "SELECT state || '|' || last_status FROM outbox WHERE action_id = '$m204'")"
eq "batch: 500, no attempt left: dead" "dead|500|HTTP 500" \
    "$(sq "SELECT state || '|' || last_status || '|' || last_error FROM outbox
    WHERE action_id = '$m500'")"
eq "batch: 503: back to pending" pending "$(state_of "$m503")"
wait_ms=$(sq "SELECT o.next_at - a.ended_at FROM outbox o JOIN attempts a USING (action_id) WHERE action_id = '$m503'")
[ "$wait_ms" -ge 3000 ] && pass || fail "batch: Retry-After 3 s not honoured: next in $wait_ms ms"
eq "batch: timeout, not idempotent: unknown" unknown "$(state_of "$mto")"
contains "batch: the timeout said so" "(may have been received)" \
    "$(sq "SELECT error FROM attempts WHERE action_id = '$mto'")"
took() { sq "SELECT ended_at - started_at FROM attempts WHERE action_id = '$1'"; }
quick=$(took "$m204") slow=$(took "$mto")
# Ordered, not timed: were both ended when the batch's last answer came,
# they would be equal.
[ "$quick" -lt "$slow" ] && [ "$slow" -ge 1000 ] && pass ||
    fail "batch: the 204 ended after $quick ms, the timeout after $slow ms"

# ---- connections: fresh unless the destination deduplicates ----
# Sinks that keep connections alive: any connection could carry more
# requests.  A destination without --idempotent gets one connection per
# request; an idempotent one's are reused (a running dispatcher keeps
# them between batches), so there are at most as many as were ever in
# flight at once (four: each wave has four).
ksink kan 204
"$HB" destination add kan --tenant acme --url "http://127.0.0.1:$port/hook"
ksink kai 204
"$HB" destination add kai --tenant acme --url "http://127.0.0.1:$port/hook" \
    --idempotent
"$HB" dispatch & d=$!
for wave in 1 2; do
	i=0
	while [ $i -lt 4 ]; do action kan; action kai; i=$((i + 1)); done
	until_true 60 ndelivered_ge kan $((wave * 4))
	until_true 60 ndelivered_ge kai $((wave * 4))
done
kill -TERM $d; wait $d
eq "not idempotent: a connection per request" "8 8" "$(posts kan) $(conns kan)"
eq "idempotent: all eight sent" 8 "$(posts kai)"
[ "$(conns kai)" -le 4 ] && pass ||
    fail "idempotent: $(conns kai) connections for 8 requests, never 4 at once"

# A connection that drops the second request without an answer.  Where
# a connection is reused, libcurl itself sends the request again on a
# new one: the idempotent control shows that it does.  A destination that
# does not deduplicate must never be exposed to that: exactly one POST,
# and the row goes unknown.
ksink kdrop 204,hang:0,204
"$HB" destination add kdrop --tenant acme --url "http://127.0.0.1:$port/hook"
ksink kdropi 204,hang:0,204
"$HB" destination add kdropi --tenant acme \
    --url "http://127.0.0.1:$port/hook" --idempotent
"$HB" dispatch & d=$!
action kdrop; k1=$a
action kdropi; ki1=$a
until_true 60 is_state "$k1" delivered
until_true 60 is_state "$ki1" delivered
action kdrop; k2=$a
action kdropi; ki2=$a
until_true 60 is_state "$k2" unknown
until_true 60 is_state "$ki2" delivered
kill -TERM $d; wait $d
eq "dropped, not idempotent: unknown" unknown "$(state_of "$k2")"
eq "dropped, not idempotent: sent once" 1 "$(posts_of kdrop "$k2")"
eq "not idempotent: two requests, two connections" "2 2" \
    "$(posts kdrop) $(conns kdrop)"
eq "control: libcurl resent on its own over a reused connection" 2 \
    "$(posts_of kdropi "$ki2")"
eq "control: that was one attempt" 1 \
    "$(sq "SELECT count(*) FROM attempts WHERE action_id = '$ki2'")"

# ---- SIGKILL mid-batch ----
# Eight rows in flight in one batch when the dispatcher dies: three to a
# destination that does not deduplicate, three to one that does, two to
# one that does but allows one attempt.  Once the leases expire: unknown
# with no second send; resent with the same key and delivered; dead.
sink bkn hang:3,hang:3,hang:3,204
"$HB" destination add bkn --tenant acme --url "http://127.0.0.1:$port/hook" \
    --timeout-ms 2000
sink bki hang:3,hang:3,hang:3,204
"$HB" destination add bki --tenant acme --url "http://127.0.0.1:$port/hook" \
    --timeout-ms 2000 --idempotent
sink bkd hang:3
"$HB" destination add bkd --tenant acme --url "http://127.0.0.1:$port/hook" \
    --timeout-ms 2000 --idempotent --max-attempts 1
for dest in bkn bki bkd bkn bki bkd bkn bki; do action $dest; done
bk="o.destination IN ('bkn', 'bki', 'bkd')"
"$HB" dispatch & d=$!
until_true 60 posts_ge bkn 3
until_true 60 posts_ge bki 3
until_true 60 posts_ge bkd 2
kill -KILL $d
wait $d 2>/dev/null
eq "mid-batch: all eight leased by the dead worker" 8 \
    "$(sq "SELECT count(*) FROM outbox o WHERE $bk AND state = 'leased'")"
eq "mid-batch: claimed as one batch" 1 "$(sq "SELECT count(DISTINCT started_at)
    FROM attempts a JOIN outbox o USING (action_id) WHERE $bk")"
bk_expired() { test "$(sq "SELECT count(*) FROM outbox o WHERE $bk AND
    state = 'leased' AND lease_until >= $NOW_MS")" = 0; }
until_true 60 bk_expired
"$HB" dispatch --once
eq "not idempotent: unknown, all three" "unknown unknown unknown" "$(states bkn)"
eq "not idempotent: each sent once" "3 3" "$(posts bkn) $(nkeys bkn)"
eq "idempotent: resent and delivered" "delivered delivered delivered" \
    "$(states bki)"
eq "idempotent: each twice, with its own key" "6 3" "$(posts bki) $(nkeys bki)"
eq "idempotent, one attempt allowed: dead" "dead dead" "$(states bkd)"
eq "one attempt allowed: sent once each" "2 2" "$(posts bkd) $(nkeys bkd)"
eq "the lost attempts say so" 8 "$(sq "SELECT count(*) FROM attempts a JOIN
    outbox o USING (action_id) WHERE $bk AND a.error =
    'lease expired: outcome unknown'")"

# ---- restart resumes recorded work and invents nothing ----
sink resume 204
"$HB" destination add resume --tenant acme --url "http://127.0.0.1:$port/hook"
action resume; a1=$a; action resume; a2=$a; action resume; a3=$a
before=$(sq "SELECT count(*) FROM accepted")
"$HB" dispatch --once
eq "all resumed and delivered" "delivered delivered delivered" \
    "$(state_of "$a1") $(state_of "$a2") $(state_of "$a3")"
eq "no new action invented" "$before" "$(sq "SELECT count(*) FROM accepted")"

# ---- two dispatchers on one state file: each row exactly once ----
# Answers take 100 ms, so that batches are in flight side by side.
sink many slow:100:204
"$HB" destination add many --tenant acme --url "http://127.0.0.1:$port/hook"
"$HB" destination add many --tenant beta --url "http://127.0.0.1:$port/hook"
actions many acme 60
actions many beta 60
"$HB" dispatch --once --workers 2 & d1=$!
"$HB" dispatch --once --workers 2 & d2=$!
wait $d1; r1=$?
wait $d2; r2=$?
eq "both dispatchers exit 0" "0 0" "$r1 $r2"
eq "120 POSTs" 120 "$(posts many)"
eq "120 distinct keys" 120 "$(awk -F'\t' '$2 == "POST" { print $4 }' "$tmp/many.log" | sort -u | wc -l)"
eq "120 delivered" 120 "$(sq "SELECT count(*) FROM outbox WHERE destination = 'many' AND state = 'delivered'")"
eq "one attempt each" 120 "$(sq "SELECT count(*) FROM attempts a JOIN outbox o USING (action_id) WHERE o.destination = 'many'")"
owners=$(sq "SELECT count(DISTINCT owner) FROM attempts a JOIN outbox o USING (action_id) WHERE o.destination = 'many'")
[ "$owners" -ge 2 ] && pass || fail "only $owners worker(s) did the work"

# ---- round-robin: one tenant's backlog does not starve another ----
sink rr 204
"$HB" destination add rr --tenant acme --url "http://127.0.0.1:$port/hook"
"$HB" destination add rr --tenant beta --url "http://127.0.0.1:$port/hook"
# acme's backlog is older and larger than a batch; beta's three rows
# still go in the first batch, interleaved with acme's.
actions rr acme 70
actions rr beta 3
"$HB" dispatch --once
# In the order claimed (a batch's requests are in flight together, so
# the sink's arrival order says nothing): tenants take turns.
claimed_tenants() {
	sq "SELECT group_concat(t, ' ') FROM (SELECT substr(a.action_id, 1,
	    instr(a.action_id, ':') - 1) AS t FROM attempts a JOIN outbox o
	    USING (action_id) WHERE o.destination = '$1' ORDER BY a.id
	    LIMIT $2)"
}
eq "the first six alternate tenants" "acme beta acme beta acme beta" \
    "$(claimed_tenants rr 6)"
first_batch="SELECT count(*) FROM attempts a JOIN outbox o USING (action_id)
    WHERE o.destination = 'rr' AND a.started_at = (SELECT min(started_at)
    FROM attempts JOIN outbox USING (action_id) WHERE destination = 'rr')"
eq "the first batch: 64 rows claimed together" 64 "$(sq "$first_batch")"
eq "beta's three rows among them" 3 "$(sq "$first_batch AND o.tenant = 'beta'")"
eq "73 POSTs" 73 "$(posts rr)"

# ---- prune: undelivered rows and recent tombstones stay ----
delivered_old=$a1
undelivered_old=$(sq "SELECT action_id FROM outbox WHERE state = 'dead' LIMIT 1")
sqlite3 "$HOOKBOX_DIR/state.db" "UPDATE accepted SET accepted_at = accepted_at - 100 * 86400000 WHERE action_id IN ('$delivered_old', '$undelivered_old'); UPDATE receipts SET received_at = received_at - 30 * 86400000 WHERE id = 1;"
out=$("$HB" prune)
contains "prune counts" "pruned 1 receipts, 1 delivered actions, 0 ended jobs, 0 poll marks, " "$out"
eq "old delivered action pruned" 0 "$(sq "SELECT count(*) FROM accepted WHERE action_id = '$delivered_old'")"
eq "old undelivered action kept" 1 "$(sq "SELECT count(*) FROM accepted WHERE action_id = '$undelivered_old'")"
eq "its outbox row kept" dead "$(state_of "$undelivered_old")"
eq "recent delivered tombstones kept" 1 "$(sq "SELECT count(*) FROM accepted WHERE action_id = '$a2'")"

# ---- SIGTERM stops every worker of a multi-worker dispatcher ----
"$HB" dispatch --workers 3 & d=$!
until_true 60 nworkers $d 3
eq "three workers" 3 "$(pgrep -P $d | wc -l)"
workers=$(pgrep -P $d)
kill -TERM $d
wait $d; rc=$?
eq "SIGTERM: clean exit" 0 $rc
none_alive $workers; eq "no worker left behind" 0 $?

# ---- SIGKILL of a multi-worker dispatcher: its workers go with it ----
"$HB" dispatch --workers 2 & d=$!
until_true 60 nworkers $d 2
workers=$(pgrep -P $d)
eq "two workers" 2 "$(echo $workers | wc -w)"
kill -KILL $d
wait $d 2>/dev/null
until_true 60 none_alive $workers
eq "workers gone once their dispatcher was killed" 0 $?
for p in $workers; do alive $p && kill -TERM $p; done	# never leave them

# ---- state.db restored under a running dispatcher: it follows the file ----
sink restored 204
"$HB" destination add restored --tenant acme --url "http://127.0.0.1:$port/hook"
"$HB" dispatch & d=$!
sleep 0.5
sqlite3 "$HOOKBOX_DIR/state.db" ".timeout 10000" \
    "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
cp -p "$HOOKBOX_DIR/state.db" "$tmp/restored.db"
mv "$tmp/restored.db" "$HOOKBOX_DIR/state.db"
action restored
until_true 60 is_state "$a" delivered
eq "restored state.db: its new row delivered" delivered "$(state_of "$a")"
eq "restored state.db: one POST" 1 "$(posts restored)"
kill -TERM $d
wait $d

finish dispatch
