#!/bin/sh
# tests/e2e/group.sh BUILD_DIR: group commit end to end: the responder's
# worker killed with SIGKILL while hundreds of callbacks are in flight.
#
# A real nginx in front of hookbox-fcgi as deployed (one worker, its
# default threads, one writer), each COMMIT made slow so that the writer
# spends most of its time inside one, before its batch is written.  N
# distinct completed callbacks, one job each, go out at once (curl
# --parallel, 32 at a time); once a fifth of them are answered, the
# worker is killed.  Whatever the kill cut:
#  - every callback answered 200 "accepted" has its action in accepted and
#    in outbox; no accepted row lacks its outbox row; no receipt says
#    accepted without its action; no receipt was left half-done;
#  - once the supervisor has respawned the worker, the callbacks that were
#    not answered 200 are sent again: each is accepted, or a duplicate of
#    what the killed batch committed without answering, and every job ends
#    with exactly one action and one "accepted" answer.
# Nothing here depends on when the kill lands: which requests it cuts is
# counted and printed, never asserted.  Then three quiet seconds: the
# worker gives back what the rounds took (its resident size falls, in the
# plain build), and answers every callback again, a duplicate.
set -u
build=$(cd "${1:?usage: group.sh BUILD_DIR}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/helpers/lib.sh"
HB="$build/hookbox"
FCGI="$build/hookbox-fcgi"
N=${GROUP_CALLBACKS:-500}
KEY=a-long-shared-key

tmp=$(mktemp -d)
export HOOKBOX_DIR="$tmp/data"
state="$HOOKBOX_DIR/state.db"
pids=""
cleanup() {
	[ -f "$tmp/nginx/nginx.pid" ] && kill "$(cat "$tmp/nginx/nginx.pid")" 2>/dev/null
	for p in $pids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$tmp"
}
[ -n "${GROUP_KEEP:-}" ] || trap cleanup EXIT

# ---- set-up: one tenant, a key-mode endpoint, N jobs ----
"$HB" init >/dev/null
"$HB" tenant add acme
printf '%s' "$KEY" | "$HB" endpoint add keyed --tenant acme --auth key \
    --header X-Hook-Key --secret-file -
"$HB" destination add sink --tenant acme --url http://127.0.0.1:9/sink
"$HB" job add j-0 --tenant acme --attempt att-j-0 --step analyze-v1 \
    --destination sink
# The other jobs are copies of the first row made by one statement: N
# runs of `hookbox job add` take minutes in the sanitizer builds.
sqlite3 "$HOOKBOX_DIR/config.db" "
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $N - 1)
INSERT INTO jobs(tenant, job_id, attempt, step, destination, source_url,
    output, created_at)
SELECT tenant, 'j-' || i, 'att-j-' || i, step, destination, source_url,
    output, created_at FROM jobs, n WHERE job_id = 'j-0'"
eq "jobs registered" "$N" \
    "$(sqlite3 "$HOOKBOX_DIR/config.db" 'SELECT count(*) FROM jobs')"

# ---- the responder with its defaults, then nginx in front ----
# Each COMMIT slowed before its first write (tests/helpers/slowcommit.c), so that
# the writer is mostly inside COMMIT with nothing of its batch written,
# and the kill lands there; the sanitizers' runtimes are then not the
# first library loaded, which ASan must be told is fine.
sock="$tmp/hookbox.sock"
slow="$build/tests/slowcommit.so"
[ -f "$slow" ] || { echo "no $slow: make tests first"; exit 1; }
LD_PRELOAD="$slow" \
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
    "$FCGI" -s "$sock" 2> "$tmp/fcgi.log" &
fcgi_pid=$!
pids="$pids $fcgi_pid"
until_true 60 test -S "$sock" || { echo "responder did not start"; cat "$tmp/fcgi.log"; exit 1; }

nginx_start "$sock" "$HOOKBOX_DIR"

# healthy: waits (at most 60 s) until the responder answers its health.
healthy() {
	_i=0
	until curl -sf "$base/hooks/_health" >/dev/null; do
		_i=$((_i + 1))
		[ $_i -ge 600 ] && return 1
		sleep 0.1
	done
}
healthy
eq "responder healthy" 0 $?
worker=$(pgrep -P "$fcgi_pid")
eq "one worker" 1 "$(echo $worker | wc -w)"

q() { sqlite3 "file:$state?mode=ro" ".timeout 10000" "$1"; }

# requests FILE DIR LIST: a curl config that posts the callback of every
# job in LIST, each answer's body into DIR/JOB.
requests() {
	: > "$1"
	mkdir -p "$2"
	_sep=""
	for _j in $3; do
		[ -n "$_sep" ] && echo "$_sep" >> "$1"
		printf '{"type":"job_completed","job_id":"%s","status":"completed","key":"k/%s"}' \
		    "$_j" "$_j" > "$tmp/bodies/$_j"
		cat >> "$1" <<EOF
url = "$base/hooks/keyed"
header = "Content-Type: application/json"
header = "X-Hook-Key: $KEY"
data-binary = "@$tmp/bodies/$_j"
output = "$2/$_j"
write-out = "$_j %{http_code}\\n"
max-time = 120
EOF
		# "next" between transfers only: one at the end is one more.
		_sep=next
	done
}

# results DIR CODES: "JOB CODE RESULT" for every answer in CODES.
results() {
	while read -r _j _code; do
		_r=""
		[ -f "$1/$_j" ] && _r=$(sed -n \
		    's/^{"result":"\([a-z_]*\)".*/\1/p' "$1/$_j")
		echo "$_j $_code ${_r:--}"
	done < "$2"
}

mkdir -p "$tmp/bodies"
all=$(i=0; while [ $i -lt "$N" ]; do echo "j-$i"; i=$((i + 1)); done)
requests "$tmp/first.cfg" "$tmp/first" "$all"

# ---- round one: all at once, and the worker killed under them ----
curl -s --parallel --parallel-max 32 -K "$tmp/first.cfg" \
    > "$tmp/first.codes" 2> "$tmp/first.err" &
curl_pid=$!
i=0
while [ "$(ls "$tmp/first" | wc -l)" -lt $((N / 5)) ] &&
    kill -0 $curl_pid 2>/dev/null && [ $i -lt 6000 ]; do
	sleep 0.01
	i=$((i + 1))
done
kill -KILL "$worker"
wait $curl_pid
results "$tmp/first" "$tmp/first.codes" > "$tmp/first.res"

eq "every request of round one answered or failed" "$N" \
    "$(wc -l < "$tmp/first.res" | tr -d ' ')"
ok1=$(grep -c ' 200 ' "$tmp/first.res")
acc1=$(grep -c ' 200 accepted$' "$tmp/first.res")
eq "a 200 in round one is an acceptance (one callback per job)" "$ok1" "$acc1"
echo "group: worker killed with $((N - ok1)) of $N callbacks unanswered"

# The supervisor respawns the worker; the kill must not have stopped it.
i=0
while new=$(pgrep -P "$fcgi_pid"); [ -z "$new" ] || [ "$new" = "$worker" ]; do
	i=$((i + 1))
	[ $i -ge 600 ] && break
	sleep 0.1
done
if [ -n "$new" ] && [ "$new" != "$worker" ]; then pass; else
	fail "no worker respawned after the kill"; fi
healthy
eq "healthy after the respawn" 0 $?

# ---- what the killed worker left: never an answer without its rows ----
acked=$(grep ' 200 accepted$' "$tmp/first.res" | cut -d' ' -f1 |
    sed "s/.*/'&'/" | paste -sd, -)
eq "every 200 accepted: its accepted and outbox rows" "$acc1" \
    "$(q "SELECT count(*) FROM accepted a JOIN outbox o USING(action_id)
    WHERE a.job_id IN (${acked:-''})")"
eq "no accepted row without its outbox row" 0 \
    "$(q 'SELECT count(*) FROM accepted a LEFT JOIN outbox o
    USING(action_id) WHERE o.action_id IS NULL')"
eq "no outbox row without its accepted row" 0 \
    "$(q 'SELECT count(*) FROM outbox o LEFT JOIN accepted a
    USING(action_id) WHERE a.action_id IS NULL')"
eq "no receipt says accepted without the action" 0 \
    "$(q "SELECT count(*) FROM receipts r WHERE result = 'accepted' AND
    NOT EXISTS (SELECT 1 FROM accepted a JOIN outbox o USING(action_id)
    WHERE a.action_id = r.action_id AND a.job_id = r.job_id)")"
eq "no receipt left half-done" 0 \
    "$(q "SELECT count(*) FROM receipts WHERE result = 'pending'")"
committed=$(q 'SELECT count(*) FROM accepted')
unanswered=$((committed - acc1))
[ "$unanswered" -ge 0 ] && pass ||
    fail "fewer accepted rows ($committed) than 200 answers ($acc1)"
echo "group: $committed actions committed, $unanswered of them unanswered"

# ---- round two: the providers retry what was not answered 200 ----
retry=$(grep -v ' 200 ' "$tmp/first.res" | cut -d' ' -f1)
nretry=$(echo $retry | wc -w)
requests "$tmp/second.cfg" "$tmp/second" "$retry"
if [ "$nretry" -gt 0 ]; then
	curl -s --parallel --parallel-max 32 -K "$tmp/second.cfg" \
	    > "$tmp/second.codes" 2> "$tmp/second.err"
else
	: > "$tmp/second.codes"
fi
results "$tmp/second" "$tmp/second.codes" > "$tmp/second.res"
eq "every retry answered 200" "$nretry" \
    "$(grep -c ' 200 ' "$tmp/second.res")"
acc2=$(grep -c ' 200 accepted$' "$tmp/second.res")
dup2=$(grep -c ' 200 duplicate$' "$tmp/second.res")
eq "every retry accepted or duplicate" "$nretry" $((acc2 + dup2))
eq "the duplicates are what the kill committed unanswered" "$unanswered" \
    "$dup2"
eq "every job answered accepted once, or duplicate of its unanswered commit" \
    "$N" $((acc1 + acc2 + dup2))
eq "one action per job" "$N" \
    "$(q 'SELECT count(DISTINCT job_id) FROM accepted')"
eq "one outbox row per job" "$N" "$(q 'SELECT count(*) FROM outbox')"
eq "one accepted receipt per action" 0 \
    "$(q "SELECT count(*) FROM accepted a WHERE (SELECT count(*) FROM
    receipts r WHERE r.action_id = a.action_id AND
    r.result = 'accepted') != 1")"

# ---- quiet: the worker gives back what the rounds took, and serves on ----
# A second with nothing to serve: the writer's page cache and the freed
# heap go back (hookbox-fcgi(8), MEMORY).  The sanitizers' allocators
# keep their own heaps, so only the plain build's size is compared.
busy_kb=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$new/status")
sleep 3
rest_kb=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$new/status")
echo "group: worker RSS $busy_kb kB after round two, $rest_kb kB 3 s later"
if readelf --dyn-syms -W "$FCGI" | grep -q '__[at]san_init'; then :; else
	[ "$rest_kb" -lt "$busy_kb" ] && pass ||
	    fail "quiet: RSS $busy_kb kB, then $rest_kb kB"
fi
requests "$tmp/third.cfg" "$tmp/third" "$all"
curl -s --parallel --parallel-max 32 -K "$tmp/third.cfg" \
    > "$tmp/third.codes" 2> "$tmp/third.err"
results "$tmp/third" "$tmp/third.codes" > "$tmp/third.res"
eq "after the quiet, every callback again answered 200 duplicate" "$N" \
    "$(grep -c ' 200 duplicate$' "$tmp/third.res")"
eq "still one action per job" "$N" "$(q 'SELECT count(*) FROM outbox')"

# ---- the sanitizer builds: no report from any worker ----
if grep -q 'Sanitizer\|runtime error' "$tmp/fcgi.log"; then
	fail "sanitizer report:"
	cat "$tmp/fcgi.log" >&2
else
	pass
fi

kill "$fcgi_pid"
wait "$fcgi_pid"
eq "responder exits cleanly" 0 $?
pids=""

finish group
