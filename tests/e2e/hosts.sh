#!/bin/sh
# tests/e2e/hosts.sh BUILD_DIR: two hosts on one PostgreSQL, simulated on
# loopback.  A private server (tests/helpers/pglib.sh) holds the configuration and
# the state; `hookbox init --grant` makes the schemas and lets the role
# hookbox_serve serve.  Each "host" is a responder on its own socket behind
# its own nginx on its own port, and a dispatcher; all four connect as
# hookbox_serve and deliver to one local HTTP sink (tests/helpers/sink.c).
#
# Proves, across the hosts: the three routes of one step (organization
# webhook, per-job callback, poll) racing make one action; a change made
# with the tool (or plain SQL) in force for the next request on either
# host; 200 identical callbacks, host B's through a delay line of about
# 0.5 ms (bench/delay.c), make one action and never a 2xx other
# than accepted or duplicate; the dispatchers share the deliveries and
# never send one key twice; a subject's versions sent out of order to
# both hosts end at the newest, one action per accepted answer, and the
# disorder tester passes against host B; SIGKILL of one host's responder and
# dispatcher under load loses nothing acknowledged.  One summary line
# per scenario group, then "hosts: N passed, N failed".
set -u
build=$(cd "${1:?usage: hosts.sh BUILD_DIR}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/helpers/lib.sh"
. "$top/tests/helpers/pglib.sh"
tmp=$(mktemp -d)
. "$top/tests/helpers/hostlib.sh"
export HOOKBOX_BACKOFF_MS=1		# retries at once
export HOOKBOX_LEASE_MARGIN_MS=300	# a dead owner's lease expires soon
export HOOKBOX_RECHECK_MS=1000

pids=""
cleanup() {
	for n in nginxA nginxB; do
		[ -f "$tmp/$n/nginx.pid" ] &&
		    kill "$(cat "$tmp/$n/nginx.pid")" 2>/dev/null
	done
	for p in $pids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	pg_stop "$tmp/pg"
	rm -rf "$tmp"
}
trap cleanup EXIT

# group NAME: prints the checks since the last group's line.
g_pass=0 g_fail=0 g_t=$(date +%s)
group() {
	echo "hosts $1: $((passed - g_pass)) passed, $((failed - g_fail))" \
	    "failed ($(( $(date +%s) - g_t )) s)"
	g_pass=$passed g_fail=$failed g_t=$(date +%s)
}

pg_up || { finish hosts; exit 1; }

# ---- init, grants, the tool on PostgreSQL ----
out=$("$HB" -d "$admin" init --grant hookbox_serve 2>&1)
eq "init --grant: exit" 0 $?
contains "init: says so" \
    "initialised user=hookbox_admin dbname=hookbox host=$pg_host" "$out"
contains "init: granted" "granted hookbox_serve" "$out"
out=$("$HB" -d "$admin" init --grant hookbox_serve 2>&1)
eq "init twice: exit 0" 0 $?
contains "init twice: says nothing changed" \
    "initialised already, its schemas current; nothing changed" "$out"
eq "both schemas" "hookbox_config hookbox_state" "$(q "SELECT string_agg(
    nspname, ' ' ORDER BY nspname) FROM pg_namespace WHERE nspname LIKE
    'hookbox_%'")"
eq "serve reads the configuration" "t|f" "$(q "SELECT
    has_table_privilege('hookbox_serve', 'hookbox_config.endpoints',
    'SELECT'), has_table_privilege('hookbox_serve',
    'hookbox_config.endpoints', 'INSERT')")"
eq "serve writes the state" "t|t" "$(q "SELECT
    has_table_privilege('hookbox_serve', 'hookbox_state.accepted',
    'INSERT'), has_table_privilege('hookbox_serve', 'hookbox_state.outbox',
    'UPDATE')")"
"$HB" -d "$admin" init --grant 'Robert;drop' >/dev/null 2>&1
eq "init --grant: a role needing quotes is a usage error" 2 $?
"$HB" -d "$admin" init --grant nosuchrole >/dev/null 2>"$tmp/err"
eq "init --grant: an unknown role is refused" 1 $?
contains "init --grant: the server says why" "nosuchrole" "$(cat "$tmp/err")"
"$HB" -d "$tmp/dir" init --grant hookbox_serve >/dev/null 2>&1
eq "init --grant on a directory: refused" 1 $?
out=$(env -u HOOKBOX_DIR -u HOOKBOX_DB "$HB" grants hookbox_serve)
eq "grants: exit 0 with no location" 0 $?
contains "grants: the state's line" "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA hookbox_state TO hookbox_serve;" "$out"
contains "grants: the configuration's line" "GRANT SELECT ON ALL TABLES IN SCHEMA hookbox_config TO hookbox_serve;" "$out"
"$HB" grants 'x y' >/dev/null 2>&1; eq "grants: bad role: 2" 2 $?
"$HB" grants >/dev/null 2>&1; eq "grants: no role: 2" 2 $?

# The admin configures; HOOKBOX_DB names the database.
export HOOKBOX_DB="$admin"
"$HB" tenant add acme; eq "tenant add" 0 $?
printf 'hmac-secret-for-hosts' > "$tmp/hmac.secret"
chmod 600 "$tmp/hmac.secret"
"$HB" endpoint add tornado --tenant acme --secret-file "$tmp/hmac.secret"
eq "endpoint add" 0 $?
"$HB" endpoint add tornado-org --tenant acme --kind tornado-org \
    --secret-file "$tmp/hmac.secret"
"$SINK" -p 0 -l "$tmp/sink.log" -s "slow:20:204" -r "$tmp/sink.pid" \
    > "$tmp/sink.port" 2>"$tmp/sink.err" &
pids="$pids $!"
until_true 60 test -s "$tmp/sink.port" || fail "sink did not start"
sport=$(head -n 1 "$tmp/sink.port")
"$HB" destination add sink --tenant acme --idempotent --timeout-ms 2000 \
    --url "http://127.0.0.1:$sport/hook"
eq "destination add" 0 $?
"$HB" job add cli-1 --tenant acme --attempt att-cli-1 --step deliver-v1 \
    --destination sink
eq "job add" 0 $?
contains "tenant list" '"acme"' "$("$HB" tenant list --json)"
contains "endpoint list" '"tornado-org"' "$("$HB" endpoint list --json)"
contains "job list" '"cli-1"' "$("$HB" job list --json)"
printf '{"id":"cli-1","status":"Completed"}' |
    HOOKBOX_DB=$serve "$HB" observe --tenant acme > "$tmp/out"
eq "observe as the serving role" "accepted" "$(jget result "$(cat "$tmp/out")")"
# The serving role reads the configuration and may not change it: said
# so, not "configuration database error".
HOOKBOX_DB=$serve "$HB" tenant add intruder 2>"$tmp/err"
eq "tenant add as the serving role: exit 1" 1 $?
contains "tenant add as the serving role: says why" \
    "intruder: the PostgreSQL role of user=hookbox_serve dbname=hookbox host=$pg_host has no write permission on the configuration (hookbox_config): it may not change it" \
    "$(cat "$tmp/err")"
eq "status: one pending" 1 "$(jget outbox.pending "$("$HB" status --json)")"
HOOKBOX_DB=$serve "$HB" dispatch --once 2>"$tmp/once.log"
eq "dispatch --once as the serving role" 0 $?
contains "dispatch: backend in its start line" "backend=postgresql" \
    "$(cat "$tmp/once.log")"
eq "status: one delivered" 1 \
    "$(jget outbox.delivered "$("$HB" status --json)")"
contains "list --state delivered" "acme:att-cli-1:deliver-v1" \
    "$("$HB" list --state delivered --json)"
contains "attempts" '"http_status"' \
    "$("$HB" attempts --json acme:att-cli-1:deliver-v1)"
eq "conflicts: none" "[]" "$("$HB" conflicts --json | tr -d ' \n')"
contains "endpoint secret list" '"active"' \
    "$("$HB" endpoint secret list --json tornado)"
"$HB" requeue acme:att-cli-1:deliver-v1 >/dev/null 2>&1
eq "requeue of a delivered action: refused" 1 $?
"$HB" prune >/dev/null; eq "prune" 0 $?
sign tool tornado '{"type":"job_progress","job_id":"cli-1","stage":"muxing"}'
eq "sign as the serving role: as the tests sign" "$(cat "$tmp/tool.sig")" \
    "$(HOOKBOX_DB=$serve "$HB" sign --endpoint tornado \
    --timestamp "$(sed 's/.*t=\([0-9]*\),.*/\1/' "$tmp/tool.sig")" \
    < "$tmp/tool.body")"
# The serving role may not write the configuration.
HOOKBOX_DB=$serve "$HB" tenant add mallory 2>/dev/null
eq "serving role: tenant add refused" 1 $?
eq "no tenant mallory" 0 "$(q "SELECT count(*) FROM hookbox_config.tenants
    WHERE id = 'mallory'")"
# A password on the command line: warned about, and never shown.
"$HB" -d "$admin password=s3cret-pw" status > "$tmp/out" 2>"$tmp/err"
eq "a password in -d: still works (trust)" 0 $?
contains "a password in -d: warned" "-d holds a password" "$(cat "$tmp/err")"
lacks "a password in -d: never printed" "s3cret-pw" \
    "$(cat "$tmp/out" "$tmp/err")"
HOOKBOX_DB="host=$tmp/nowhere user=x dbname=y password=s3cret-pw" \
    "$HB" status > "$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -ne 0 ] && pass || fail "status on a wrong host: exit $rc"
lacks "a wrong host: the password is not in the message" "s3cret-pw" \
    "$(cat "$tmp/out" "$tmp/err")"
contains "a wrong host: the message names it" "$tmp/nowhere" \
    "$(cat "$tmp/err")"
contains "a wrong host: libpq's reason" "connection to server" \
    "$(cat "$tmp/err")"
# As libpq reads a URI: a percent-encoded key is a password's, and a '?'
# or '#' does not end the password of a user:password@.
"$HB" -d "postgresql:///hookbox?host=$tmp/nowhere&user=x&%70assword=hunter2" \
    status > "$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -ne 0 ] && pass || fail "status, %70assword on a wrong host: exit $rc"
contains "%70assword in -d: warned" "-d holds a password" "$(cat "$tmp/err")"
contains "%70assword in -d: shown masked" "password=*** dbname=hookbox" \
    "$(cat "$tmp/err")"
lacks "%70assword in -d: never printed" "hunter2" \
    "$(cat "$tmp/out" "$tmp/err")"
HOOKBOX_DB="postgresql://x:s3c?r#t@/hookbox?host=$tmp/nowhere" \
    "$HB" status > "$tmp/out" 2>"$tmp/err"
contains "a '?' in the password: shown masked" "user=x password=***" \
    "$(cat "$tmp/err")"
lacks "a '?' in the password: never printed" "s3c" \
    "$(cat "$tmp/out" "$tmp/err")"
lacks "a password in HOOKBOX_DB: no warning" "holds a password" \
    "$(cat "$tmp/err")"
HOOKBOX_DB="host=$pg_host user=hookbox_admin dbname=postgres" \
    "$HB" tenant list 2>"$tmp/err"
eq "a database without the schemas: refused" 1 $?
contains "a database without the schemas: the server's words" \
    'relation "hookbox_config.tenants" does not exist' "$(cat "$tmp/err")"
HOOKBOX_DB="host=$pg_host user=hookbox_admin dbname=postgres" \
    "$HB" status 2>"$tmp/err"
contains "a database without the schemas: what to do" "hookbox init" \
    "$(cat "$tmp/err")"
# The responder with a password in -d: warned about, never logged.
timeout 5 "$FCGI" -d "$serve password=s3cret-pw" -s "$tmp/pw.sock" \
    2> "$tmp/pw.log"
contains "responder: a password in -d warned about" "event=password_in_argv" \
    "$(cat "$tmp/pw.log")"
contains "responder: its start line masks it" "password=***" \
    "$(grep ' event=start ' "$tmp/pw.log")"
lacks "responder: the password never logged" "s3cret-pw" "$(cat "$tmp/pw.log")"
timeout 5 "$FCGI" -d "postgresql://hookbox_serve:s3c?ret@/hookbox?host=$pg_host" \
    -s "$tmp/pw2.sock" 2> "$tmp/pw2.log"
contains "responder: a URI's password in -d warned about" \
    "event=password_in_argv" "$(cat "$tmp/pw2.log")"
contains "responder: its start line masks a URI's" \
    'dir="user=hookbox_serve password=*** dbname=hookbox' \
    "$(grep ' event=start ' "$tmp/pw2.log")"
lacks "responder: a URI's password never logged" "s3c" \
    "$(cat "$tmp/pw2.log")"
group "init and the tool"

# ---- two hosts: a responder and an nginx each, as the serving role ----
# Host B reaches the database at a distance: through bench/delay.c, a TCP
# delay line adding about 0.5 ms a round trip (0.25 ms each way), so that
# its batches' flights race host A's over a network's time.
cc -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -o "$tmp/delay" \
    "$top/bench/delay.c" || fail "bench/delay.c does not build"
"$tmp/delay" -d 0.25 -o "$tmp/line.stats" 127.0.0.1:0 \
    "$pg_host/.s.PGSQL.5432" > "$tmp/line.port" &
line=$!; pids="$pids $line"
until_true 60 test -s "$tmp/line.port" || fail "the delay line never listened"
far="host=127.0.0.1 port=$(cat "$tmp/line.port") user=hookbox_serve"
far="$far dbname=hookbox sslmode=disable gssencmode=disable"
responder A "$serve" -t 8
pids="$pids $rpid"; fcgiA=$rpid
responder B "$far" -t 8
pids="$pids $rpid"; fcgiB=$rpid
nginx_start "$tmp/A.sock" "" nginxA; baseA=$base
nginx_start "$tmp/B.sock" "" nginxB; baseB=$base
until_true 60 curl -sf "$baseA/hooks/_health" -o /dev/null ||
    fail "host A never healthy"
until_true 60 curl -sf "$baseB/hooks/_health" -o /dev/null ||
    fail "host B never healthy"
contains "responder: backend in its start line" "backend=postgresql" \
    "$(grep ' event=start ' "$tmp/A.log")"
contains "responder: its connections counted" "connections=" \
    "$(grep ' event=start ' "$tmp/A.log")"
lacks "responder: no probe failure" "event=db_" "$(cat "$tmp/A.log")"
[ "$baseA" != "$baseB" ] && pass || fail "the two hosts share a port"
# The serving processes connect as the serving role, and only as it.
serving() { test "$(q "SELECT count(*) FROM pg_stat_activity WHERE
    usename = 'hookbox_serve'")" -ge 2; }
until_true 60 serving && pass || fail "no hookbox_serve connection"
eq "no hookbox connection as the admin" 0 "$(q "SELECT count(*) FROM
    pg_stat_activity WHERE application_name LIKE 'hookbox%' AND
    usename <> 'hookbox_serve'")"

# ---- the three routes of one step, raced across both hosts ----
# Per job: the organization webhook on one host, the per-job callback on
# the other, the poll (observe) beside them, all at once.
R=20
jobs race $R sink
i=1
while [ $i -le $R ]; do
	sign "job$i" tornado "$(completed "race$i")"
	sign "org$i" tornado-org "$(org_completed "race$i")"
	printf '{"id":"race%d","status":"Completed"}' $i > "$tmp/poll$i.json"
	i=$((i + 1))
done
: > "$tmp/race.out"
racers=""
i=1
while [ $i -le $R ]; do
	if [ $((i % 2)) -eq 0 ]; then a=$baseA b=$baseB; else a=$baseB b=$baseA; fi
	post "$a" tornado-org "org$i" "org$i" >> "$tmp/race.out" &
	racers="$racers $!"
	post "$b" tornado "job$i" "job$i" >> "$tmp/race.out" &
	racers="$racers $!"
	(HOOKBOX_DB=$serve "$HB" observe --tenant acme < "$tmp/poll$i.json" |
	    sed -n "s/.*\"result\":\"\([a-z_]*\)\".*/poll$i 200 \1 -/p" \
	    >> "$tmp/race.out") &
	racers="$racers $!"
	i=$((i + 1))
done
for p in $racers; do wait "$p"; done
eq "race: 60 answers" $((3 * R)) "$(wc -l < "$tmp/race.out")"
eq "race: every answer 200" $((3 * R)) \
    "$(awk '$2 == 200' "$tmp/race.out" | wc -l)"
eq "race: one accepted per step" $R \
    "$(awk '$3 == "accepted"' "$tmp/race.out" | wc -l)"
eq "race: the rest duplicates" $((2 * R)) \
    "$(awk '$3 == "duplicate"' "$tmp/race.out" | wc -l)"
bad=0
i=1
while [ $i -le $R ]; do
	n=$(grep -E "^(org|job|poll)$i " "$tmp/race.out" |
	    awk '$3 == "accepted"' | wc -l)
	[ "$n" -eq 1 ] || bad=$((bad + 1))
	i=$((i + 1))
done
eq "race: each step exactly one accepted" 0 $bad
eq "race: one action row per step" "$R|$R" "$(q "SELECT
    (SELECT count(*) FROM hookbox_state.accepted WHERE action_id LIKE
    'acme:att-race%'), (SELECT count(*) FROM hookbox_state.outbox WHERE
    action_id LIKE 'acme:att-race%')")"
group "three routes"

# ---- configuration changed with the tool: in force on both hosts ----
# Each host serves from a snapshot of its own; a change made with the
# tool is in force for the next request on either, as one made with
# plain SQL is.
printf 'second-hmac-secret-for-hosts' > "$tmp/hmac2.secret"
chmod 600 "$tmp/hmac2.secret"
# on WHAT WANT SECRET_FILE ENDPOINT BODY: POSTs to host A, then host B,
# signed with that secret; each answer "CODE RESULT" must be WANT.
on() {
	_what=$1 _want=$2 _sf=$3 _ep=$4
	printf '%s' "$5" > "$tmp/cfg.body"
	for _h in A B; do
		_t=$(date +%s)
		_v=$({ printf '%s.' "$_t"; cat "$tmp/cfg.body"; } |
		    openssl dgst -sha256 -hmac "$(cat "$_sf")" -r |
		    cut -d' ' -f1)
		echo "X-Tornado-Signature: t=$_t,v1=$_v" > "$tmp/cfg.sig"
		if [ $_h = A ]; then _b=$baseA; else _b=$baseB; fi
		eq "$_what (host $_h)" "$_want" "$(sh "$tmp/post.sh" \
		    "$_b/hooks/$_ep" "$tmp/cfg.body" "$tmp/cfg.sig" x |
		    awk '{ print $2, $3 }')"
	done
}
jobs cfg 4 sink
on "a secret not added yet" "401 unauthorized" "$tmp/hmac2.secret" \
    tornado "$(completed cfg1)"
"$HB" endpoint secret add --secret-file "$tmp/hmac2.secret" tornado \
    >/dev/null
on "a secret added" "200 recorded" "$tmp/hmac2.secret" tornado \
    '{"type":"job_progress","job_id":"cfg1","stage":"muxing"}'
old_id=$("$HB" endpoint secret list --json tornado |
    sed -n 's/^[^0-9]*"id":[ \t]*\([0-9]*\).*/\1/p' | head -n 1)
"$HB" endpoint secret revoke tornado "$old_id" >/dev/null
on "a secret revoked" "401 unauthorized" "$tmp/hmac.secret" tornado \
    "$(completed cfg2)"
"$HB" job remove --tenant acme cfg3 >/dev/null
on "a job removed" "422 unknown_job" "$tmp/hmac2.secret" tornado \
    "$(completed cfg3)"
"$HB" endpoint add late --tenant acme --secret-file "$tmp/hmac2.secret"
on "an endpoint added" "422 unknown_job" "$tmp/hmac2.secret" late \
    "$(completed cfg3)"
"$HB" endpoint remove late >/dev/null
on "an endpoint removed" "404 unknown_endpoint" "$tmp/hmac2.secret" late \
    "$(completed cfg3)"
"$HB" tenant set --inactive acme >/dev/null
on "a tenant made inactive" "404 unknown_endpoint" "$tmp/hmac2.secret" \
    tornado "$(completed cfg4)"
"$HB" tenant set --active acme >/dev/null
q "DELETE FROM hookbox_config.secrets WHERE endpoint = 'tornado'"
on "plain SQL behind the tool's back" "401 unauthorized" \
    "$tmp/hmac2.secret" tornado "$(completed cfg4)"
# Back as before, for what follows: hmac.secret signs.
"$HB" endpoint secret add --secret-file "$tmp/hmac.secret" tornado \
    >/dev/null
sign back tornado "$(completed cfg4)"
eq "back: accepted" "200 accepted" "$(post "$baseA" tornado back x |
    awk '{ print $2, $3 }')"
group "configuration changes"

# ---- 200 identical callbacks, across both hosts at once ----
jobs storm 1 sink
sign storm tornado "$(completed storm1)"
i=1
while [ $i -le 200 ]; do
	if [ $((i % 2)) -eq 0 ]; then echo "$baseA A$i"; else echo "$baseB B$i"; fi
	i=$((i + 1))
done > "$tmp/storm.list"
awk -v p="$tmp/post.sh" -v b="$tmp/storm.body" -v s="$tmp/storm.sig" \
    '{ print p, $1 "/hooks/tornado", b, s, $2 }' "$tmp/storm.list" |
    xargs -P 40 -L 1 sh > "$tmp/storm.out" 2>/dev/null
eq "storm: 200 answers" 200 "$(wc -l < "$tmp/storm.out")"
eq "storm: exactly one accepted" 1 \
    "$(awk '$2 == 200 && $3 == "accepted"' "$tmp/storm.out" | wc -l)"
eq "storm: every answer accepted, duplicate, or 503 with Retry-After" 200 \
    "$(awk '($2 == 200 && ($3 == "accepted" || $3 == "duplicate")) ||
    ($2 == 503 && $4 != "-")' "$tmp/storm.out" | wc -l)"
eq "storm: no other 2xx" 0 \
    "$(awk '$2 ~ /^2/ && $3 != "accepted" && $3 != "duplicate"' \
    "$tmp/storm.out" | wc -l)"
eq "storm: both hosts answered 200" 2 \
    "$(awk '$2 == 200 { print substr($1, 1, 1) }' "$tmp/storm.out" |
    sort -u | wc -l)"
eq "storm: one action row" "1|1" "$(q "SELECT (SELECT count(*) FROM
    hookbox_state.accepted WHERE action_id = 'acme:att-storm1:deliver-v1'),
    (SELECT count(*) FROM hookbox_state.outbox WHERE
    action_id = 'acme:att-storm1:deliver-v1')")"
# Host B's came through the delay line: its round trips were counted.
rm -f "$tmp/line.stats"
kill -USR1 "$line"
until_true 60 test -s "$tmp/line.stats" || fail "no counts from the line"
turns=$(sed -n 's/^total .*turnarounds=\([0-9]*\).*/\1/p' "$tmp/line.stats")
[ "${turns:-0}" -gt 0 ] && pass ||
    fail "storm: host B's round trips did not cross the delay line"
echo "storm: $(awk '{ print $2 }' "$tmp/storm.out" | sort | uniq -c |
    tr -s ' \n' ' ')"
group "identical callbacks"

# ---- a subject's versions, out of order, across both hosts ----
# A mapped endpoint: asset s1's versions 1..30 sent at once in a shuffled
# order, every other one to each host (host B at a distance).  They take
# the same lock per (tenant, subject) as a job: whatever order they
# commit in, the subject ends at version 30, each accepted answer is one
# action and each action one accepted answer, and version 30's is there.
# Then one event sent 20 times to both hosts at once: one action.
cat > "$tmp/assets.json" <<'EOF2'
{"destination": "sink", "event_id": "/id", "subject": "/asset",
 "version": "/v", "type": "/type", "occurred": "/at",
 "steps": {"publish": ["approved"]}, "undo": {"unpublish": ["deleted"]}}
EOF2
"$HB" endpoint add assets --tenant acme --kind mapped \
    --mapping "$tmp/assets.json" --secret-file "$tmp/hmac.secret" >/dev/null
eq "a mapped endpoint on PostgreSQL" 0 $?
asset() {
	printf '{"id":"%s","asset":"%s","v":%d,"type":"%s","at":%d}' \
	    "$1" "$2" "$3" "$4" $((1700000000 + $3))
}
: > "$tmp/versions.list"
for v in $(seq 1 30 | shuf); do
	sign "v$v" assets "$(asset "ev-$v" s1 "$v" approved)"
	if [ $((v % 2)) -eq 0 ]; then b=$baseA; else b=$baseB; fi
	echo "$tmp/post.sh $b/hooks/assets $tmp/v$v.body $tmp/v$v.sig v$v" \
	    >> "$tmp/versions.list"
done
xargs -P 30 -L 1 sh < "$tmp/versions.list" > "$tmp/versions.out" 2>/dev/null
# What was answered 503 (nothing committed) is sent again, one at a time.
for t in $(awk '$2 == 503 { print $1 }' "$tmp/versions.out"); do
	n=0
	until post "$baseA" assets "$t" "$t" > "$tmp/again.out" &&
	    [ "$(awk '{ print $2 }' "$tmp/again.out")" = 200 ] ||
	    [ $n -ge 20 ]; do n=$((n + 1)); sleep 0.2; done
	grep -v "^$t " "$tmp/versions.out" > "$tmp/v.tmp"
	cat "$tmp/v.tmp" "$tmp/again.out" > "$tmp/versions.out"
done
eq "versions: 30 answers, each 200 accepted or stale" 30 \
    "$(awk '$2 == 200 && ($3 == "accepted" || $3 == "stale")' \
    "$tmp/versions.out" | wc -l)"
eq "versions: version 30 accepted" 1 \
    "$(awk '$1 == "v30" && $3 == "accepted"' "$tmp/versions.out" | wc -l)"
eq "versions: one action per accepted answer" \
    "$(awk '$3 == "accepted"' "$tmp/versions.out" | wc -l | tr -d ' ')" \
    "$(q "SELECT count(*) FROM hookbox_state.outbox WHERE
    action_id LIKE 'acme:assets/s1:%:publish'")"
eq "versions: no action for a stale answer" 0 "$(for t in $(awk \
    '$3 == "stale" { print substr($1, 2) }' "$tmp/versions.out"); do
	q "SELECT count(*) FROM hookbox_state.outbox WHERE
	    action_id = 'acme:assets/s1:$t:publish'"; done | grep -vc '^0$')"
eq "versions: the subject ends at version 30" "30|do" "$(q "SELECT version,
    effect FROM hookbox_state.subjects WHERE tenant = 'acme' AND
    subject = 'assets/s1'")"
sign same assets "$(asset ev-same s2 7 approved)"
i=1
while [ $i -le 20 ]; do
	echo "$tmp/post.sh $baseA/hooks/assets $tmp/same.body $tmp/same.sig A$i"
	echo "$tmp/post.sh $baseB/hooks/assets $tmp/same.body $tmp/same.sig B$i"
	i=$((i + 1))
done | xargs -P 40 -L 1 sh > "$tmp/same.out" 2>/dev/null
eq "one event 40 times: one accepted" 1 \
    "$(awk '$2 == 200 && $3 == "accepted"' "$tmp/same.out" | wc -l)"
eq "one event 40 times: the rest duplicates or 503 with Retry-After" 39 \
    "$(awk '($2 == 200 && $3 == "duplicate") || ($2 == 503 && $4 != "-")' \
    "$tmp/same.out" | wc -l)"
eq "one event 40 times: one action" 1 "$(q "SELECT count(*) FROM
    hookbox_state.outbox WHERE action_id = 'acme:assets/s2:7:publish'")"
# The disorder tester against host B, its state read on PostgreSQL.
rc=0
"$HB" disorder --endpoint assets --url "$baseB" \
    --sample "$tmp/v1.body" > "$tmp/disorder.out" 2>&1 || rc=$?
eq "disorder on PostgreSQL: exit ($(cat "$tmp/disorder.out"))" 0 "$rc"
contains "disorder on PostgreSQL: all consistent" \
    "0 of 6 cases inconsistent, 1 skipped" "$(cat "$tmp/disorder.out")"
eq "disorder on PostgreSQL: nothing left" 0 "$(q "SELECT
    (SELECT count(*) FROM hookbox_state.receipts WHERE tenant LIKE
    'disorder-%') + (SELECT count(*) FROM hookbox_state.subjects WHERE
    tenant LIKE 'disorder-%') + (SELECT count(*) FROM
    hookbox_config.tenants WHERE id LIKE 'disorder-%')")"
group "a subject's versions"

# ---- two dispatchers share the deliveries, no key sent twice ----
HOOKBOX_DB=$serve "$HB" dispatch 2>>"$tmp/dA.log" &
dA=$!; pids="$pids $dA"
HOOKBOX_DB=$serve "$HB" dispatch 2>>"$tmp/dB.log" &
dB=$!; pids="$pids $dB"
M=120
jobs many $M sink
: > "$tmp/many.out"
i=1
while [ $i -le $M ]; do
	sign "many$i" tornado "$(completed "many$i")"
	if [ $((i % 2)) -eq 0 ]; then b=$baseA; else b=$baseB; fi
	echo "$tmp/post.sh $b/hooks/tornado $tmp/many$i.body $tmp/many$i.sig many$i"
	i=$((i + 1))
done | xargs -P 16 -L 1 sh > "$tmp/many.out" 2>/dev/null
eq "many: every one accepted" $M \
    "$(awk '$2 == 200 && $3 == "accepted"' "$tmp/many.out" | wc -l)"
undelivered() { q "SELECT count(*) FROM hookbox_state.outbox WHERE
    state <> 'delivered'"; }
none_left() { test "$(undelivered)" = 0; }
until_true 120 none_left || fail "many: not all delivered ($(undelivered) left)"
total=$(q "SELECT count(*) FROM hookbox_state.outbox")
eq "many: every action delivered" "$total" "$(q "SELECT count(*) FROM
    hookbox_state.outbox WHERE state = 'delivered'")"
posts_keys() { awk -F'\t' '$2 == "POST" { print $4 }' "$tmp/sink.log"; }
eq "many: the sink got every key" "$total" "$(posts_keys | sort -u | wc -l)"
eq "many: no key twice" "" "$(posts_keys | sort | uniq -d | head -5)"
ownA=$(q "SELECT count(*) FROM hookbox_state.attempts WHERE owner LIKE
    '%:$dA'")
ownB=$(q "SELECT count(*) FROM hookbox_state.attempts WHERE owner LIKE
    '%:$dB'")
[ "$ownA" -gt 0 ] && [ "$ownB" -gt 0 ] && pass ||
    fail "many: one dispatcher did everything (A $ownA, B $ownB)"
echo "many: $total delivered, dispatcher A $ownA, dispatcher B $ownB"
group "two dispatchers"

# ---- SIGKILL of host A's responder and dispatcher under load ----
K=240
jobs kill $K sink
i=1
while [ $i -le $K ]; do
	sign "kill$i" tornado "$(completed "kill$i")"
	if [ $((i % 2)) -eq 0 ]; then b=$baseA; else b=$baseB; fi
	echo "$tmp/post.sh $b/hooks/tornado $tmp/kill$i.body $tmp/kill$i.sig kill$i"
	i=$((i + 1))
done > "$tmp/kill.list"
xargs -P 8 -L 1 sh < "$tmp/kill.list" > "$tmp/kill.out" 2>/dev/null &
loader=$!
until_true 60 lines_ge "$tmp/kill.out" $((K / 4)) ||
    fail "kill: the load never started"
kill9 "$fcgiA"
kill9 "$dA"
killed_at=$(wc -l < "$tmp/kill.out")
wait "$loader"
echo "kill: host A killed after $killed_at of $K answers"
eq "kill: every request answered" $K "$(wc -l < "$tmp/kill.out")"
acked=$(awk '$2 ~ /^2/ && $3 == "accepted" { print $1 }' "$tmp/kill.out" |
    sed 's/^kill//' | sort -n)
nacked=$(echo "$acked" | grep -c .)
[ "$nacked" -gt 0 ] && pass || fail "kill: nothing acknowledged"
eq "kill: no 2xx but accepted" 0 "$(awk '$2 ~ /^2/ && $3 != "accepted"' \
    "$tmp/kill.out" | wc -l)"
# One query: how many of the acknowledged have their accepted and outbox
# rows.
list=$(for i in $acked; do printf "'acme:att-kill%s:deliver-v1'," "$i"; done)
found=$(q "SELECT count(*) FROM hookbox_state.accepted a JOIN
    hookbox_state.outbox o USING (action_id) WHERE a.action_id IN
    (${list%,})")
missing=$((nacked - found))
eq "kill: every acknowledged action is in accepted and outbox" 0 $missing
# Host B's dispatcher carries on alone, A's leases expire and are taken.
until_true 120 none_left || fail "kill: not all delivered ($(undelivered) left)"
eq "kill: every action delivered" 0 "$(undelivered)"
eq "kill: the sink got every key" \
    "$(q "SELECT count(*) FROM hookbox_state.outbox")" \
    "$(posts_keys | sort -u | wc -l)"
# A key sent twice is only one A was sending when it died: an attempt of
# A's that never recorded an answer, resent with the same key as the
# destination allows.
twice=0
for k in $(posts_keys | sort | uniq -d); do
	[ "$(q "SELECT count(*) FROM hookbox_state.attempts WHERE
	    action_id = '$k' AND owner LIKE '%:$dA' AND http_status IS NULL")" \
	    -ge 1 ] || { twice=$((twice + 1)); q "SELECT * FROM
	    hookbox_state.attempts WHERE action_id = '$k'" >&2; }
done
eq "kill: no key sent twice but one cut off by the kill" 0 $twice
echo "kill: $nacked acknowledged, $(posts_keys | sort | uniq -d | wc -l) resent after the kill"
# Host B never stopped serving.
sign after tornado "$(completed cli-1)"
eq "kill: host B still answers" 200 "$(post "$baseB" tornado after x |
    awk '{ print $2 }')"
group "kill -9 one host"

finish hosts
