#!/bin/sh
# tests/e2e/run.sh BUILD_DIR: the demo `make run` starts (scripts/run.sh), as a
# user runs it, each time in a temporary directory on a free port.
#
# It comes up, and the curl line it prints answers `accepted`, then the
# dispatcher delivers the action; a second run prints another job whose
# curl line is accepted again; every replay scenario passes against it
# and leaves nothing behind; SIGINT and SIGTERM stop everything it
# started and exit 0, and so does the death of a part, with exit 1.  It
# exits 1, says why and never says "listening" when the port is held by
# another server (one that even answers the health check), when nginx
# fails to start or is not ours, when nginx is missing; it finds nginx in
# /usr/sbin when PATH lacks it.  `make all` never asks for Check, and the
# demo's package set leaves it out.
set -u
build=$(cd "${1:?usage: run.sh BUILD_DIR}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/helpers/lib.sh"

tmp=$(mktemp -d)
run="$tmp/run"
demo=""
imp=""
cleanup() {
	[ -z "$demo" ] || kill "$demo" 2>/dev/null
	[ -z "$imp" ] || kill "$imp" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# A loopback port nothing answers on.
free_port() {
	while :; do
		_p=$(( ($(od -An -N2 -tu2 /dev/urandom) % 20000) + 20000 ))
		_rc=0
		curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$_p/" ||
		    _rc=$?
		[ $_rc -eq 7 ] && { echo "$_p"; return; }
	done
}

# start NAME [VAR=VALUE...]: scripts/run.sh in the background, in $run on
# $port, its output in $tmp/NAME.out, SIGINT handled as at a terminal
# (a background job's SIGINT is ignored, unless env resets it).
start() {
	_n=$1
	shift
	env --default-signal=INT HOOKBOX_RUN_DIR="$run" HOOKBOX_PORT="$port" \
	    "$@" sh "$top/scripts/run.sh" "$build" > "$tmp/$_n.out" 2>&1 &
	demo=$!
}

# wait_up NAME: until the demo says it listens (0) or exits (1), 60 s.
wait_up() {
	_i=0
	while [ $_i -lt 600 ]; do
		grep -q 'is listening' "$tmp/$1.out" && return 0
		alive "$demo" || return 1
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}

# wait_exit: sets $rc to the demo's exit status once it has exited (at
# most 30 s; 124 if it has not, and then kills it).  An exited child
# stays a zombie until waited for: kill -0 still finds it.
alive() {
	case "$(ps -o stat= -p "$1" 2>/dev/null)" in
	''|Z*) return 1 ;;
	esac
}
wait_exit() {
	_i=0
	while alive "$demo"; do
		_i=$((_i + 1))
		if [ $_i -ge 300 ]; then
			kill -KILL "$demo" 2>/dev/null
			wait "$demo" 2>/dev/null
			demo=""
			rc=124
			return
		fi
		sleep 0.1
	done
	rc=0
	wait "$demo" || rc=$?
	demo=""
}

# paste NAME: runs the first curl line NAME printed; sets $reply.
paste() {
	_line=$(grep -m 1 "^  curl -s -H 'Content-Type: application/json' -H '" \
	    "$tmp/$1.out")
	reply=$(sh -c "$_line" 2>&1)
}

job_of() { sed -n 's/^job registered for this run: //p' "$tmp/$1.out"; }

# Processes whose command line names the demo's directory: nginx (-p),
# the responder and the dispatcher (-d).
leftovers() { pgrep -f "$run" | tr '\n' ' '; }

state_of() {
	sqlite3 "$run/data/state.db" ".timeout 2000" \
	    "SELECT state FROM outbox WHERE action_id = '$1'"
}

# ---- the first run: up, the paste accepted, the action delivered ----
port=$(free_port)
start first
if wait_up first; then pass; else fail "first run did not come up:" \
    "$(cat "$tmp/first.out")"; fi
job1=$(job_of first)
contains "a job is named" job-demo- "$job1"
paste first
eq "the pasted curl is accepted" accepted "$(jget result "$reply")"
action1="demo:att-$job1:analyze-v1"
eq "its action" "$action1" "$(jget action "$reply")"
delivered() { [ "$(state_of "$1")" = delivered ]; }
until_true 60 delivered "$action1"
eq "the dispatcher delivers it" delivered "$(state_of "$action1")"
eq "health through the port" '{"status":"ok"}' \
    "$(curl -s "http://127.0.0.1:$port/hooks/_health")"
contains "the status page it names" "http://127.0.0.1:$port/hooks/_status" \
    "$(cat "$tmp/first.out")"
contains "the status page shows the delivery" \
    '<td id="outbox-delivered">1</td>' \
    "$(curl -s "http://127.0.0.1:$port/hooks/_status")"
ngx_pid=$(cat "$run/nginx/nginx.pid" 2>/dev/null)

# ---- Ctrl-C: everything stops, exit 0 ----
kill -INT "$demo"
wait_exit
eq "SIGINT: exit status" 0 "$rc"
contains "SIGINT: says so" stopping "$(cat "$tmp/first.out")"
eq "SIGINT: nothing left running" "" "$(leftovers)"
if [ -n "$ngx_pid" ] && ! kill -0 "$ngx_pid" 2>/dev/null; then pass
else fail "SIGINT: nginx ($ngx_pid) still runs"; fi

# ---- the second run: a fresh job, accepted again ----
start second
if wait_up second; then pass; else fail "second run did not come up:" \
    "$(cat "$tmp/second.out")"; fi
job2=$(job_of second)
if [ -n "$job2" ] && [ "$job2" != "$job1" ]; then pass
else fail "second run: another job: '$job1' then '$job2'"; fi
paste second
eq "second run: the pasted curl is accepted" accepted \
    "$(jget result "$reply")"
paste first
eq "the first run's curl is now a duplicate" duplicate \
    "$(jget result "$reply")"

# ---- the replay scenarios against the running demo and its dispatcher ----
# Twice: delivering to the demo's /sink, then to a port nothing listens
# on (as behind the production snippet, which has no /sink: the actions
# stay pending).  Each passes, and nothing of theirs is left: no row in
# state.db (dead or not), no tenant in config.db.
HB="$build/hookbox"
replays() {
	for s in "$top"/tests/replay/*.sh; do
		case "$s" in */common.sh) continue ;; esac
		if out=$(HOOKBOX="$HB" HOOKBOX_DIR="$run/data" \
		    sh "$s" "http://127.0.0.1:$port" 2>&1); then
			pass
		else
			fail "replay $1 $(basename "$s"): $out"
		fi
	done
	if "$HB" list --help 2>&1 | grep -q -- --json; then
		dead=$(HOOKBOX_DIR="$run/data" "$HB" list --state dead --json)
	else
		dead=$(HOOKBOX_DIR="$run/data" "$HB" list --state dead)
	fi
	lacks "replay $1: no dead row of theirs" replay- "$dead"
	eq "replay $1: no row of theirs in state.db" 0 "$(sqlite3 \
	    "$run/data/state.db" ".timeout 2000" "SELECT
	    (SELECT count(*) FROM outbox WHERE tenant LIKE 'replay-%'
	        OR action_id LIKE '%:att-replay-%') +
	    (SELECT count(*) FROM receipts WHERE tenant LIKE 'replay-%'
	        OR job_id LIKE 'replay-%') +
	    (SELECT count(*) FROM job_state WHERE tenant LIKE 'replay-%'
	        OR job_id LIKE 'replay-%')")"
	lacks "replay $1: no tenant of theirs left" replay- \
	    "$(HOOKBOX_DIR="$run/data" "$HB" tenant list)"
}
replays "(sink)"
REPLAY_SINK_URL="http://127.0.0.1:$(free_port)/nowhere"
export REPLAY_SINK_URL
replays "(no sink)"
unset REPLAY_SINK_URL
# A scenario that fails (nothing answers at its BASE_URL) cleans up too.
rc=0
HOOKBOX="$HB" HOOKBOX_DIR="$run/data" sh "$top/tests/replay/duplicate.sh" \
    "http://127.0.0.1:$(free_port)" > "$tmp/replay-fail.out" 2>&1 || rc=$?
if [ "$rc" -ne 0 ]; then pass
else fail "a replay against nothing passed: $(cat "$tmp/replay-fail.out")"; fi
lacks "a failed replay leaves no tenant" replay- \
    "$(HOOKBOX_DIR="$run/data" "$HB" tenant list)"
eq "a failed replay leaves no job" "" \
    "$(HOOKBOX_DIR="$run/data" "$HB" job list | grep -o 'replay-[0-9-]*' | head -n 1)"
if alive "$demo"; then pass; else fail "the demo stopped during the replays"; fi

# ---- the delivery-disorder tester against the running demo ----
# Its Tornado endpoint, and a mapped one with the Mux preset: every case
# consistent, exit 0, and nothing of the tester's left in either
# database.  Then a sample that does not fit the mapping: exit 1, the
# field named, nothing left.
D="$run/data"
disorder_left() {
	sqlite3 "$D/state.db" ".timeout 2000" "SELECT
	    (SELECT count(*) FROM outbox WHERE tenant LIKE 'disorder-%') +
	    (SELECT count(*) FROM receipts WHERE tenant LIKE 'disorder-%') +
	    (SELECT count(*) FROM subjects WHERE tenant LIKE 'disorder-%') +
	    (SELECT count(*) FROM accepted WHERE tenant LIKE 'disorder-%') +
	    (SELECT count(*) FROM job_state WHERE tenant LIKE 'disorder-%')"
	HOOKBOX_DIR="$D" "$HB" tenant list | grep -c disorder-
}
base="http://127.0.0.1:$port"
rc=0
HOOKBOX_DIR="$D" "$HB" disorder --endpoint tornado-demo --url "$base" \
    > "$tmp/dis-tornado.out" 2>&1 || rc=$?
out=$(cat "$tmp/dis-tornado.out")
eq "disorder, Tornado: exit status ($out)" 0 "$rc"
contains "disorder, Tornado: the routes raced" "routes raced" "$out"
contains "disorder, Tornado: the summary" "0 of 5 cases inconsistent, 1 skipped" "$out"
HOOKBOX_DIR="$D" "$HB" destination add downstream --tenant demo \
    --url "$base/sink" --idempotent > /dev/null
(umask 077; od -An -N24 -tx1 /dev/urandom | tr -d ' \n' > "$tmp/mux.secret")
HOOKBOX_DIR="$D" "$HB" endpoint add mux --tenant demo --kind mapped \
    --mapping "$top/presets/mux.json" --secret-file "$tmp/mux.secret" \
    > /dev/null
# The README's worked example, through to the delivered action: a Mux
# asset ready, signed, accepted, and the demo's dispatcher delivers it.
printf '%s' "$(cat "$top/presets/mux-asset-ready.json")" > "$tmp/ready.json"
h=$(HOOKBOX_DIR="$D" "$HB" sign --endpoint mux < "$tmp/ready.json")
reply=$(curl -s -H "$h" -H 'Content-Type: application/json' \
    --data-binary "@$tmp/ready.json" "$base/hooks/mux")
mux_action="demo:mux/tb8pTuaWwzsDRWOXM2fhRzqjkkqBvrcT:1796119205000:publish"
eq "Mux preset: accepted" "accepted $mux_action" \
    "$(jget result "$reply") $(jget action "$reply")"
until_true 60 delivered "$mux_action"
eq "Mux preset: the dispatcher delivers its action" delivered \
    "$(state_of "$mux_action")"
rc=0
HOOKBOX_DIR="$D" "$HB" disorder --endpoint mux --url "$base" \
    --sample "$top/presets/mux-asset-ready.json" \
    --undo "$top/presets/mux-asset-deleted.json" \
    > "$tmp/dis-mux.out" 2>&1 || rc=$?
out=$(cat "$tmp/dis-mux.out")
eq "disorder, Mux: exit status ($out)" 0 "$rc"
for c in "same event twice" "same event, new id" "N at once" \
    "older after newer" "timeout after success" "older than an undo" \
    "the event log"; do
	eq "disorder, Mux: $c is consistent" 1 \
	    "$(printf '%s\n' "$out" | grep "^$c " | grep -c ' consistent')"
done
lacks "disorder, Mux: none inconsistent" INCONSISTENT "$out"
contains "disorder, Mux: the summary" "0 of 7 cases inconsistent, 0 skipped" "$out"
# Replicate's preset: Standard Webhooks, its event id the webhook-id
# header the tester signs with; no undo sample, so that case is skipped.
(umask 077; printf 'whsec_%s' "$(head -c 24 /dev/urandom | base64)" \
    > "$tmp/replicate.secret")
HOOKBOX_DIR="$D" "$HB" endpoint add replicate --tenant demo --kind mapped \
    --auth standard --mapping "$top/presets/replicate.json" \
    --secret-file "$tmp/replicate.secret" > /dev/null
rc=0
HOOKBOX_DIR="$D" "$HB" disorder --endpoint replicate --url "$base" \
    --sample "$top/presets/replicate-prediction-succeeded.json" \
    --at-once 12 > "$tmp/dis-replicate.out" 2>&1 || rc=$?
out=$(cat "$tmp/dis-replicate.out")
eq "disorder, Replicate: exit status ($out)" 0 "$rc"
contains "disorder, Replicate: 12 at once" "1 accepted, 11 duplicate" "$out"
eq "disorder, Replicate: no undo sample, skipped" 1 \
    "$(printf '%s\n' "$out" | grep '^older than an undo ' | grep -c skipped)"
contains "disorder, Replicate: the summary" "0 of 6 cases inconsistent, 1 skipped" "$out"
eq "disorder: nothing of its own left" "0
0" "$(disorder_left)"
printf '{"id":"e1","type":"video.asset.ready",%s}' \
    '"created_at":"2026-01-01T00:00:00Z"' \
    > "$tmp/nosubject.json"
rc=0
HOOKBOX_DIR="$D" "$HB" disorder --endpoint mux --url "$base" \
    --sample "$tmp/nosubject.json" > "$tmp/dis-bad.out" 2>&1 || rc=$?
eq "disorder, a sample without the subject: exit status" 1 "$rc"
contains "disorder, a sample without the subject: names it" \
    "subject: missing from the sample" "$(cat "$tmp/dis-bad.out")"
eq "disorder, a sample that does not fit: nothing left" "0
0" "$(disorder_left)"

kill -TERM "$demo"
wait_exit
eq "SIGTERM: exit status" 0 "$rc"
eq "SIGTERM: nothing left running" "" "$(leftovers)"

# ---- the tester interrupted: the cases left are not run, all is removed ----
# An instance that answers slowly (tests/helpers/sink.c, 2 s each): Ctrl-C once
# its tenant exists stops it after the case under way, exit 1.
"$build/tests/sink" -p 0 -l "$tmp/slow.log" -s "slow:2000:200" \
    > "$tmp/slow.port" 2> "$tmp/slow.err" &
slow=$!
until_true 30 test -s "$tmp/slow.port"
HOOKBOX_DIR="$D" "$HB" disorder --endpoint tornado-demo \
    --url "http://127.0.0.1:$(head -n 1 "$tmp/slow.port")" \
    > "$tmp/dis-int.out" 2> "$tmp/dis-int.err" &
dis=$!
has_tenant() { HOOKBOX_DIR="$D" "$HB" tenant list | grep -q disorder-; }
until_true 30 has_tenant
kill -INT "$dis"
rc=0
wait "$dis" || rc=$?
eq "disorder interrupted: exit status" 1 "$rc"
contains "disorder interrupted: says so" "interrupted" \
    "$(cat "$tmp/dis-int.err")"
lacks "disorder interrupted: the last cases not run" "routes raced" \
    "$(cat "$tmp/dis-int.out")"
eq "disorder interrupted: nothing left" "0
0" "$(disorder_left)"
kill "$slow" 2>/dev/null
wait "$slow" 2>/dev/null

# ---- the test of the tester: a responder that compares versions wrongly ----
# build/mutant's responder takes an older event for a newer one
# (Makefile: MUTANT).  The tester must say so, and exit 1.
if [ -x "$build/mutant/hookbox-fcgi" ]; then
	port=$(free_port)
	env --default-signal=INT HOOKBOX_RUN_DIR="$run" HOOKBOX_PORT="$port" \
	    sh "$top/scripts/run.sh" "$build/mutant" > "$tmp/mutant.out" 2>&1 &
	demo=$!
	if wait_up mutant; then pass; else fail "the mutant demo did not" \
	    "come up: $(cat "$tmp/mutant.out")"; fi
	HOOKBOX_DIR="$D" "$HB" destination add downstream --tenant demo \
	    --url "http://127.0.0.1:$port/sink" --idempotent > /dev/null 2>&1
	HOOKBOX_DIR="$D" "$HB" endpoint add mux --tenant demo --kind mapped \
	    --mapping "$top/presets/mux.json" \
	    --secret-file "$tmp/mux.secret" > /dev/null 2>&1
	rc=0
	HOOKBOX_DIR="$D" "$HB" disorder --endpoint mux \
	    --url "http://127.0.0.1:$port" \
	    --sample "$top/presets/mux-asset-ready.json" \
	    --undo "$top/presets/mux-asset-deleted.json" \
	    > "$tmp/dis-mutant.out" 2>&1 || rc=$?
	out=$(cat "$tmp/dis-mutant.out")
	eq "the tester against the mutant: exit status ($out)" 1 "$rc"
	eq "the mutant: older after newer is inconsistent" 1 \
	    "$(printf '%s\n' "$out" | grep '^older after newer ' | grep -c INCONSISTENT)"
	eq "the mutant: older than an undo is inconsistent" 1 \
	    "$(printf '%s\n' "$out" | grep '^older than an undo ' | grep -c INCONSISTENT)"
	eq "the mutant: the repeated event is still consistent" 1 \
	    "$(printf '%s\n' "$out" | grep '^same event twice ' |
	    grep -c ' consistent')"
	eq "the mutant: nothing of the tester's left" "0
0" "$(disorder_left)"
	kill -TERM "$demo"
	wait_exit
	eq "the mutant demo: exit status" 0 "$rc"
else
	fail "no mutant responder: make tests builds $build/mutant"
fi

# ---- the port held by another server that looks like hookbox ----
mkdir -p "$tmp/imp/tmp"
cat > "$tmp/imp/nginx.conf" <<EOF
worker_processes 1;
pid $tmp/imp/nginx.pid;
error_log $tmp/imp/error.log;
$( [ "$(id -u)" -eq 0 ] && echo "user root;" )
events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path $tmp/imp/tmp;
    server {
        listen 127.0.0.1:$port;
        location / { default_type application/json; return 200 '{"status":"ok"}'; }
    }
}
EOF
PATH="$PATH:/usr/sbin" nginx -p "$tmp/imp" -c "$tmp/imp/nginx.conf" \
    -e "$tmp/imp/error.log" -g 'daemon off;' 2>/dev/null &
imp=$!
until_true 60 curl -sf "http://127.0.0.1:$port/hooks/_health" >/dev/null
start taken
wait_exit
eq "port taken: exit status" 1 "$rc"
out=$(cat "$tmp/taken.out")
contains "port taken: names the port" "port $port" "$out"
contains "port taken: says it is in use" "in use" "$out"
lacks "port taken: never says listening" listening "$out"
eq "port taken: nothing left running" "" "$(leftovers)"
if kill -0 "$imp" 2>/dev/null; then pass
else fail "port taken: the other server was stopped"; fi
kill "$imp" 2>/dev/null
wait "$imp" 2>/dev/null
imp=""

# ---- an nginx that is not ours answering on the port after the start ----
# The program run as nginx serves the port from another prefix: health
# says ok, but the pid file is not that of the nginx the demo started.
port=$(free_port)
sed "s/127.0.0.1:[0-9]*;/127.0.0.1:$port;/" "$tmp/imp/nginx.conf" \
    > "$tmp/imp/nginx2.conf"
cat > "$tmp/fake-nginx" <<EOF
#!/bin/sh
exec env PATH="\$PATH:/usr/sbin" nginx -p "$tmp/imp" -c "$tmp/imp/nginx2.conf" \
    -e "$tmp/imp/error.log" -g 'daemon off;'
EOF
chmod +x "$tmp/fake-nginx"
start impostor HOOKBOX_NGINX="$tmp/fake-nginx"
wait_exit
eq "not our nginx: exit status" 1 "$rc"
out=$(cat "$tmp/impostor.out")
contains "not our nginx: says so" "did not answer" "$out"
lacks "not our nginx: never says listening" listening "$out"
eq "not our nginx: nothing left running" "" \
    "$(pgrep -f "$tmp/imp" | tr '\n' ' ')$(leftovers)"

# ---- nginx that fails to start ----
start false HOOKBOX_NGINX=/bin/false
wait_exit
eq "nginx fails: exit status" 1 "$rc"
out=$(cat "$tmp/false.out")
contains "nginx fails: says so" "nginx did not start" "$out"
lacks "nginx fails: never says listening" listening "$out"
eq "nginx fails: nothing left running" "" "$(leftovers)"

# ---- nginx missing ----
start missing HOOKBOX_NGINX=/nonexistent/nginx
wait_exit
eq "nginx missing: exit status" 1 "$rc"
out=$(cat "$tmp/missing.out")
contains "nginx missing: names it" /nonexistent/nginx "$out"
contains "nginx missing: says how to install it" \
    "apt-get install nginx-light" "$out"
lacks "nginx missing: never says listening" listening "$out"
eq "nginx missing: nothing left running" "" "$(leftovers)"

start badport HOOKBOX_PORT=80a
wait_exit
eq "a port that is no number: exit status" 1 "$rc"
contains "a port that is no number: says so" "not a port number" \
    "$(cat "$tmp/badport.out")"

# ---- nginx in /usr/sbin, not on PATH ----
if [ -x /usr/sbin/nginx ] &&
    ! PATH=/usr/bin:/bin command -v nginx >/dev/null 2>&1; then
	start sbin PATH=/usr/bin:/bin
	if wait_up sbin; then pass; else fail "PATH without /usr/sbin:" \
	    "did not come up: $(cat "$tmp/sbin.out")"; fi
	paste sbin
	eq "PATH without /usr/sbin: accepted" accepted \
	    "$(jget result "$reply")"
	kill -TERM "$demo"
	wait_exit
eq "PATH without /usr/sbin: exit status" 0 "$rc"
	eq "PATH without /usr/sbin: nothing left running" "" "$(leftovers)"
else
	echo "note: nginx is not /usr/sbin/nginx alone: the PATH case is skipped"
fi

# ---- a part that stops by itself stops the demo, exit 1 ----
start dies
if wait_up dies; then pass; else fail "did not come up: $(cat "$tmp/dies.out")"; fi
d=$(pgrep -f "dispatch -d $run/data")
if [ -n "$d" ]; then kill -KILL $d; fi
wait_exit
eq "the dispatcher killed: exit status" 1 "$rc"
contains "the dispatcher killed: says so" "the dispatcher stopped" \
    "$(cat "$tmp/dies.out")"
eq "the dispatcher killed: nothing left running" "" "$(leftovers)"

# ---- the build and the demo's packages need no Check ----
mkdir -p "$tmp/pc"
cat > "$tmp/pc/pkg-config" <<EOF
#!/bin/sh
echo "\$*" >> "$tmp/pc/log"
for a; do [ "\$a" = check ] && exit 1; done
exec /usr/bin/pkg-config "\$@"
EOF
chmod +x "$tmp/pc/pkg-config"
rc=0
(cd "$top" && PATH="$tmp/pc:$PATH" make -n O="$tmp/nocheck" all \
    > "$tmp/make.out" 2>&1) || rc=$?
eq "make all without Check: exit status" 0 "$rc"
lacks "make all never asks pkg-config for check" check \
    "$(cat "$tmp/pc/log" 2>/dev/null)"
contains "make all compiles the programs" hookbox-fcgi "$(cat "$tmp/make.out")"
pk=$(sh "$top/scripts/install-deps.sh" -l run | tr '\n' ' ')
lacks "make run's packages: no Check" " check " " $pk"
contains "make run's packages: nginx" " nginx " " $pk"
contains "make check's packages: Check" " check " \
    " $(sh "$top/scripts/install-deps.sh" -l check | tr '\n' ' ')"
rc=0
(cd "$top" && make -n run O="$tmp/nocheck" > "$tmp/makerun.out" 2>&1) || rc=$?
contains "make run installs the run set" "install-deps.sh run" \
    "$(cat "$tmp/makerun.out")"

finish run
