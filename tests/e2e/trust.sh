#!/bin/sh
# tests/e2e/trust.sh BUILD_DIR: the responder's trust boundaries, tried the way
# another process on the same host would.
#
# The responder runs as an unprivileged user made for the test (root can
# write a read-only file, so only another user shows what a mode means).
# Requests go straight to its FastCGI socket with cgi-fcgi, past nginx, as
# any process that can connect to the socket could send them:
#  - a request naming another data directory (HOOKBOX_DIR) changes nothing;
#  - a state.db that is a symbolic link is refused;
#  - state.db made read-only, removed, or renamed over under the running
#    responder is never acknowledged into, and is reopened once good;
#  - the socket's mode is what -m says, in octal; a wildcard TCP -s warns;
#  - endpoint names with C1 and bidirectional characters reach the log
#    escaped;
#  - a supervisor whose fork failed tries again on its own;
#  - -h, -V and a bad option answer on the right stream, with the right
#    exit code (these need no root).
set -u
build=$(cd "${1:?usage: trust.sh BUILD_DIR}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/helpers/lib.sh"
HB="$build/hookbox"
FCGI="$build/hookbox-fcgi"
user=hookbox-test

# Help, version and a bad option: no user, no data directory needed.
err=$(mktemp)
out=$("$FCGI" -h 2>"$err"); rc=$?
eq "fcgi -h exits 0" 0 $rc
contains "fcgi -h prints usage to stdout" "usage: hookbox-fcgi" "$out"
contains "fcgi -h shows the threads default" "(default 32)" "$out"
contains "fcgi -h shows the socket mode default" "(default 0660)" "$out"
eq "fcgi -h writes nothing to stderr" "" "$(cat "$err")"
out=$("$FCGI" -V); rc=$?
eq "fcgi -V exits 0" 0 $rc
eq "fcgi -V prints the tool's version" \
    "hookbox-fcgi $("$HB" --version | cut -d' ' -f2)" "$out"
out=$("$FCGI" -Z 2>"$err"); rc=$?
eq "fcgi bad option exits 2" 2 $rc
eq "fcgi bad option: nothing on stdout" "" "$out"
contains "fcgi bad option: usage on stderr" "usage: hookbox-fcgi" \
    "$(cat "$err")"
rm -f "$err"

if [ "$(id -u)" -ne 0 ]; then
	echo "trust.sh: needs root to make its test user; the rest skipped"
	echo "trust: $passed passed, $failed failed, 1 skipped"
	[ "$failed" -eq 0 ]
	exit
fi
id "$user" >/dev/null 2>&1 ||
    useradd --system --no-create-home --home-dir /nonexistent \
    --shell /usr/sbin/nologin "$user" ||
    { echo "cannot create $user"; exit 1; }

tmp=$(mktemp -d)
chmod 0755 "$tmp"
# The test user may not be able to reach the build tree (a checkout under
# /root): run its own copy.
cp "$FCGI" "$tmp/hookbox-fcgi"
FCGI="$tmp/hookbox-fcgi"
export HOOKBOX_DIR="$tmp/data"
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	pkill -u "$user" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# start NAME ARGS...: starts a responder as the test user on $tmp/NAME.sock;
# sets $pid.  Its stderr is $tmp/NAME.log.
start() {
	_name=$1
	shift
	setpriv --reuid="$user" --regid="$user" --clear-groups -- \
	    "$FCGI" -s "$tmp/run/$_name.sock" "$@" 2> "$tmp/$_name.log" &
	pid=$!
	pids="$pids $pid"
	until_true 60 test -S "$tmp/run/$_name.sock" ||
	    fail "responder $_name did not start: $(cat "$tmp/$_name.log")"
}

# post SOCK ENDPOINT BODY [VAR=VALUE...]: one signed POST straight to the
# FastCGI socket; prints the whole answer (status line, headers, body).
post() {
	_sock=$1 _ep=$2 _body=$3
	shift 3
	_sig=$(printf '%s' "$_body" | "$HB" sign --endpoint tornado |
	    sed 's/^[^:]*: //')
	printf '%s' "$_body" | env -i REQUEST_METHOD=POST \
	    DOCUMENT_URI="/hooks/$_ep" CONTENT_TYPE=application/json \
	    CONTENT_LENGTH=${#_body} HTTP_X_TORNADO_SIGNATURE="$_sig" "$@" \
	    cgi-fcgi -bind -connect "$_sock" 2>/dev/null | tr -d '\r'
}
get() {
	env -i REQUEST_METHOD=GET DOCUMENT_URI="/hooks/$2" \
	    cgi-fcgi -bind -connect "$1" 2>/dev/null | tr -d '\r'
}
status() { printf '%s\n' "$1" | sed -n 's/^Status: \([0-9]*\).*/\1/p'; }
# healthy SOCKET: health's status once it is 200, or its last answer after
# 30 s.  Health is a moment's probe (it waits at most 100 ms for the write
# lock), and on a loaded machine one moment can miss; a responder that
# stays unhealthy fails, with the detail it gave.
healthy() {
	_n=0
	while :; do
		_h=$(get "$1" _health)
		[ "$(status "$_h")" = 200 ] && { echo 200; return; }
		_n=$((_n + 1))
		[ $_n -ge 300 ] && { printf '%s\n' "$_h" | tail -n 1; return; }
		sleep 0.1
	done
}
result() { jget result "$(printf '%s\n' "$1" | tail -n 1)"; }
completed() {
	printf '{"type":"job_completed","job_id":"%s","status":"completed","key":"k/%s"}' "$1" "$1"
}
outbox() { sqlite3 "file:$1?mode=ro" 'SELECT count(*) FROM outbox'; }

# ---- set-up: the operator's directory, owned by the responder's user ----
"$HB" init >/dev/null
"$HB" tenant add acme
printf 'the-operators-secret' > "$tmp/hmac.secret"
chmod 600 "$tmp/hmac.secret"
"$HB" endpoint add tornado --tenant acme --secret-file "$tmp/hmac.secret"
"$HB" destination add sink --tenant acme --url http://127.0.0.1:9/sink
for j in 1 2 3 4 5 6 7 8 9; do
	"$HB" job add "job-$j" --tenant acme --attempt "att-$j" \
	    --step analyze-v1 --destination sink
done
mkdir "$tmp/run"
chown "$user" "$tmp/data" "$tmp/data/state.db" "$tmp/run"
chgrp "$user" "$tmp/data/config.db"
state="$tmp/data/state.db"

start main -d "$tmp/data" -w 2
main="$tmp/run/main.sock"

# ---- 3. the socket's mode: octal, as the README writes it ----
eq "default socket mode" 660 "$(stat -c %a "$main")"
start m640 -d "$tmp/data" -w 1 -m 0640
eq "-m 0640" 640 "$(stat -c %a "$tmp/run/m640.sock")"
kill "$pid"; wait "$pid"
start m600 -d "$tmp/data" -w 1 -m 600
eq "-m 600" 600 "$(stat -c %a "$tmp/run/m600.sock")"
kill "$pid"; wait "$pid"
timeout 10 "$FCGI" -d "$tmp/data" -s "$tmp/run/bad.sock" -m 0680 2>/dev/null
eq "-m 0680 refused" 2 $?
timeout 10 env -u HOOKBOX_DIR "$FCGI" -s "$tmp/run/nodir.sock" 2> "$tmp/nodir.log" </dev/null
eq "no data directory: refused at start" 2 $?
contains "no data directory: said" "no data location" "$(cat "$tmp/nodir.log")"
HOOKBOX_SYNC=fast timeout 10 "$FCGI" -d "$tmp/data" -s "$tmp/run/sync.sock" \
    2> "$tmp/sync.log" </dev/null
eq "HOOKBOX_SYNC typo refused at start" 2 $?
contains "HOOKBOX_SYNC typo: said" "HOOKBOX_SYNC" "$(cat "$tmp/sync.log")"

# ---- the data directory, checked before serving, named when refused ----
ver=$("$HB" --version | cut -d' ' -f2)
contains "start line: version and directory" \
    " level=info event=start program=hookbox-fcgi version=$ver dir=$tmp/data " \
    "$(cat "$tmp/main.log")"
contains "start line: workers and threads" " workers=2 threads=32" \
    "$(grep ' event=start ' "$tmp/main.log")"
# refused WHAT MESSAGE ARGS...: the responder, as the test user, exits 2
# at start with one line, event=start_failed error="MESSAGE", and never
# listens.
refused() {
	_what=$1 _msg=$2
	shift 2
	timeout 5 setpriv --reuid="$user" --regid="$user" --clear-groups -- \
	    "$FCGI" -s "$tmp/run/refused.sock" "$@" 2> "$tmp/refused.log" \
	    </dev/null
	eq "$_what: exit 2" 2 $?
	eq "$_what: one line" 1 "$(wc -l < "$tmp/refused.log")"
	contains "$_what: said" " level=error event=start_failed error=\"$_msg\"" \
	    "$(cat "$tmp/refused.log")"
	[ ! -e "$tmp/run/refused.sock" ] || fail "$_what: it listened"
	rm -f "$tmp/run/refused.sock"
}
HOOKBOX_DIR= refused "empty HOOKBOX_DIR" \
    "no data location: give -d DIR or set HOOKBOX_DIR (or HOOKBOX_DB for PostgreSQL)"
: > "$tmp/afile"
refused "a file as DIR" "$tmp/afile: not a directory" -d "$tmp/afile"
refused "a missing DIR" "$tmp/nowhere: no such directory" -d "$tmp/nowhere"
mkdir "$tmp/blank"
chmod 0755 "$tmp/blank"
refused "an uninitialised DIR" \
    "$tmp/blank: not initialised, run \`hookbox init\`" -d "$tmp/blank"
# A directory the test user owns, but whose state.db is root's.
"$HB" -d "$tmp/rootstate" init >/dev/null
chown "$user" "$tmp/rootstate"
chgrp "$user" "$tmp/rootstate/config.db"
refused "state.db not writable" \
    "$tmp/rootstate/state.db: permission denied for user $user" \
    -d "$tmp/rootstate"
chmod 0600 "$tmp/rootstate/config.db"
chown "$user" "$tmp/rootstate/state.db"
refused "config.db not readable" \
    "$tmp/rootstate/config.db: permission denied for user $user" \
    -d "$tmp/rootstate"
chmod 0640 "$tmp/rootstate/config.db"
touch "$tmp/rootstate/state.db-wal"
refused "state.db-wal not writable" \
    "$tmp/rootstate/state.db-wal: permission denied for user $user" \
    -d "$tmp/rootstate"
rm -f "$tmp/rootstate/state.db-wal"
chmod 0700 "$tmp/blank"
refused "DIR not searchable" \
    "$tmp/blank: permission denied for user $user" -d "$tmp/blank"

# The tool, as the test user: the same check, the same names, exit 1.
cp "$HB" "$tmp/hookbox"
# as_user ARGS...: the tool as the test user; its stderr in $tmp/tool.err.
as_user() {
	setpriv --reuid="$user" --regid="$user" --clear-groups -- \
	    "$tmp/hookbox" "$@" 2> "$tmp/tool.err" </dev/null
}
chown root "$tmp/rootstate/state.db"
as_user -d "$tmp/rootstate" dispatch --once
eq "dispatch, state.db not writable: exit 1" 1 $?
eq "dispatch, state.db not writable: said" \
    "hookbox: $tmp/rootstate/state.db: permission denied for user $user" \
    "$(cat "$tmp/tool.err")"
as_user -d "$tmp/rootstate" status
eq "status, state.db not writable: exit 1" 1 $?
lacks "status: not 'disk full'" "disk full" "$(cat "$tmp/tool.err")"
contains "status, state.db not writable: said" \
    "state.db: permission denied for user $user" "$(cat "$tmp/tool.err")"
as_user -d "$tmp/rootstate" tenant add other
eq "tenant add, config.db read-only for the user: exit 1" 1 $?
eq "tenant add, config.db read-only for the user: said" \
    "hookbox: $tmp/rootstate/config.db is read-only for user $user, who may not change the configuration" \
    "$(cat "$tmp/tool.err")"
as_user -d "$tmp/rootstate" tenant list >/dev/null
eq "tenant list needs only to read config.db" 0 $?
# config.db the user may write, in a directory it may not (where the
# journal goes): the write itself is refused, and said the same way, not
# as "configuration database error".
mkdir "$tmp/rodir"
"$HB" -d "$tmp/rodir" init >/dev/null
chmod 0755 "$tmp/rodir"
chown "$user" "$tmp/rodir/config.db" "$tmp/rodir/state.db"
as_user -d "$tmp/rodir" tenant add other
eq "tenant add, directory read-only for the user: exit 1" 1 $?
eq "tenant add, directory read-only for the user: said" \
    "hookbox: other: $tmp/rodir/config.db is read-only for user $user, who may not change the configuration" \
    "$(cat "$tmp/tool.err")"
eq "tenant add, directory read-only: nothing added" "" \
    "$(as_user -d "$tmp/rodir" tenant list --json | grep '"other"')"

port=$(( (($(od -An -N2 -tu2 /dev/urandom) % 20000)) + 20000 ))
"$FCGI" -d "$tmp/data" -s ":$port" -w 1 2> "$tmp/wild.log" &
wpid=$!
"$FCGI" -d "$tmp/data" -s "127.0.0.1:$((port + 1))" -w 1 \
    2> "$tmp/loop.log" &
lpid=$!
# The warning comes before the socket is bound: once both listen, both
# have said what they will say.
listening() { grep -q ":$(printf '%04X' "$1") 00000000:0000 0A" /proc/net/tcp; }
i=0
while ! { listening "$port" && listening "$((port + 1))"; } && [ $i -lt 200 ]; do
	sleep 0.1; i=$((i + 1))
done
kill "$wpid" "$lpid" 2>/dev/null
wait "$wpid" "$lpid" 2>/dev/null
contains "wildcard TCP socket warns" "every address" "$(cat "$tmp/wild.log")"
contains "warning names FCGI_WEB_SERVER_ADDRS" "FCGI_WEB_SERVER_ADDRS" \
    "$(cat "$tmp/wild.log")"
lacks "loopback TCP socket does not warn" "every address" \
    "$(cat "$tmp/loop.log")"

# ---- 1. a peer on the socket cannot choose the data directory ----
# The attacker's own directory: a config.db with a secret it knows, and a
# state.db that is a link to the operator's.
evil="$tmp/evil"
mkdir "$evil"
HOOKBOX_DIR="$evil" "$HB" init >/dev/null
HOOKBOX_DIR="$evil" "$HB" tenant add acme
printf 'the-attackers-secret' > "$tmp/evil.secret"
chmod 600 "$tmp/evil.secret"
HOOKBOX_DIR="$evil" "$HB" endpoint add tornado --tenant acme \
    --secret-file "$tmp/evil.secret"
HOOKBOX_DIR="$evil" "$HB" destination add sink --tenant acme \
    --url http://127.0.0.1:9/evil
HOOKBOX_DIR="$evil" "$HB" job add job-evil --tenant acme --attempt att-evil \
    --step analyze-v1 --destination sink
rm -f "$evil/state.db"
ln -s "$state" "$evil/state.db"
chmod -R a+rX "$evil"

body=$(completed job-evil)
out=$(HOOKBOX_DIR="$evil" post "$main" tornado "$body" HOOKBOX_DIR="$evil")
eq "another HOOKBOX_DIR: 500" 500 "$(status "$out")"
eq "another HOOKBOX_DIR: result" misconfigured "$(result "$out")"
eq "another HOOKBOX_DIR: nothing planted" 0 "$(outbox "$state")"
contains "another HOOKBOX_DIR: logged" "misconfigured" "$(cat "$tmp/main.log")"
# Not sticky: the next plain request still lands in the operator's file.
out=$(post "$main" tornado "$(completed job-1)")
eq "after it: the operator's directory" accepted "$(result "$out")"
eq "after it: one action" 1 "$(outbox "$state")"
out=$(post "$main" tornado "$(completed job-2)" HOOKBOX_DIR="$tmp/data/")
eq "the same HOOKBOX_DIR is fine" accepted "$(result "$out")"

# A data directory whose state.db is a symbolic link is refused.
link="$tmp/link"
mkdir "$link"
cp "$tmp/data/config.db" "$link/config.db"
ln -s "$state" "$link/state.db"
chown -R "$user" "$link"
start link -d "$link" -w 1
out=$(post "$tmp/run/link.sock" tornado "$(completed job-3)")
eq "symlinked state.db: 503" 503 "$(status "$out")"
contains "symlinked state.db: Retry-After" "Retry-After:" "$out"
eq "symlinked state.db: nothing written" 2 "$(outbox "$state")"
kill "$pid"; wait "$pid"

# ---- 8. what an unauthenticated name puts into the log ----
out=$(post "$main" "$(printf 'x\302\2333m\342\200\256gnp')" "{}")
eq "hostile endpoint name: 404" 404 "$(status "$out")"
log=$(cat "$tmp/main.log")
contains "C1 control escaped" '\xc2\x9b' "$log"
contains "bidi override escaped" '\xe2\x80\xae' "$log"
case "$log" in
*"$(printf '\302\233')"* | *"$(printf '\342\200\256')"*)
	fail "raw C1 or bidi bytes in the log" ;;
*) pass ;;
esac

# ---- 9. the file under the running responder ----
chmod 0444 "$state"
out=$(post "$main" tornado "$(completed job-4)")
eq "read-only state.db: 503" 503 "$(status "$out")"
eq "read-only state.db: health 503" 503 "$(status "$(get "$main" _health)")"
chmod 0600 "$state"
out=$(post "$main" tornado "$(completed job-4)")
eq "writable again: accepted" accepted "$(result "$out")"
eq "writable again: health" 200 "$(healthy "$main")"
eq "writable again: in the file" 3 "$(outbox "$state")"

sqlite3 "$state" 'PRAGMA wal_checkpoint(TRUNCATE)' >/dev/null
mv "$state" "$tmp/data/moved.db"
out=$(post "$main" tornado "$(completed job-5)")
eq "state.db removed: 503" 503 "$(status "$out")"
contains "state.db removed: Retry-After" "Retry-After:" "$out"
eq "state.db removed: health 503" 503 "$(status "$(get "$main" _health)")"
eq "state.db removed: nothing in the moved file" 3 \
    "$(outbox "$tmp/data/moved.db")"
mv "$tmp/data/moved.db" "$state"
out=$(post "$main" tornado "$(completed job-5)")
eq "state.db back: accepted" accepted "$(result "$out")"

# Renamed over by a copy (a restore): the new file gets the next action.
sqlite3 "$state" 'PRAGMA wal_checkpoint(TRUNCATE)' >/dev/null
cp -p "$state" "$tmp/data/restored.db"
mv "$tmp/data/restored.db" "$state"
out=$(post "$main" tornado "$(completed job-6)")
eq "state.db replaced: accepted" accepted "$(result "$out")"
eq "state.db replaced: into the file at the path" 5 "$(outbox "$state")"
eq "health after all that" 200 "$(healthy "$main")"

# config.db renamed over (a restore): the next request sees the new one.
cp -p "$tmp/data/config.db" "$tmp/data/config.new"
HOOKBOX_DIR="$tmp/data" "$HB" job remove job-7 --tenant acme 2>/dev/null ||
    sqlite3 "$tmp/data/config.db" "DELETE FROM jobs WHERE job_id = 'job-7'"
mv "$tmp/data/config.new" "$tmp/data/config.db"
out=$(post "$main" tornado "$(completed job-7)")
eq "config.db replaced: the new file's job" accepted "$(result "$out")"

mainpid=$(printf '%s' "$pids" | awk '{print $1}')
kill "$mainpid"
wait "$mainpid"

# ---- 14. a supervisor whose fork failed tries again by itself ----
# A soft RLIMIT_NPROC of 2 for the test user: the supervisor and one
# worker.  The first responder is stopped: its processes would count too.
# The hard limit stays high, so that the user itself may lift the soft one.
gone() { ! pgrep -u "$user" >/dev/null; }
until_true 60 gone
prlimit --nproc=2:64 setpriv --reuid="$user" --regid="$user" --clear-groups \
    -- "$FCGI" -d "$tmp/data" -s "$tmp/run/nproc.sock" -w 3 \
    2> "$tmp/nproc.log" &
sup=$!
pids="$pids $sup"
until_true 60 test -S "$tmp/run/nproc.sock"
# Until both failed forks are logged (the slots are tried every second).
i=0
while [ "$(grep -c 'fork' "$tmp/nproc.log")" -lt 2 ] && [ $i -lt 200 ]; do
	sleep 0.1; i=$((i + 1))
done
eq "fork limited: one worker" 1 "$(pgrep -P "$sup" | wc -l)"
contains "fork failure logged" "fork" "$(cat "$tmp/nproc.log")"
# The one worker could not start its threads either (they count too):
# it serves on one thread rather than not at all.
contains "no threads: serves on one" "serving on one thread" \
    "$(cat "$tmp/nproc.log")"
out=$(post "$tmp/run/nproc.sock" tornado "$(completed job-9)")
eq "and that one thread serves" accepted "$(result "$out")"
setpriv --reuid="$user" --regid="$user" --clear-groups -- \
    prlimit --pid "$sup" --nproc=64:64
three() { [ "$(pgrep -P "$sup" | wc -l)" -ge 3 ]; }
until_true 60 three
eq "limit lifted: all three workers, no signal needed" 3 \
    "$(pgrep -P "$sup" | wc -l)"
out=$(post "$tmp/run/nproc.sock" tornado "$(completed job-8)")
eq "and they serve" accepted "$(result "$out")"
kill "$sup"
wait "$sup" 2>/dev/null

finish trust
