#!/bin/sh
# tests/e2e/cli.sh: the hookbox tool end to end, on real files.
# Usage: tests/e2e/cli.sh PATH_TO_HOOKBOX
set -u
HB=$(readlink -f "${1:?usage: cli.sh HOOKBOX}")
here=$(dirname "$0")
. "$here/../helpers/lib.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HOOKBOX_DIR="$tmp/data"

# Set-up: every admin command, secrets from a file and from stdin.
"$HB" init >/dev/null; eq "init" 0 $?
"$HB" init >/dev/null; eq "init twice is harmless" 0 $?
"$HB" tenant add acme; eq "tenant add" 0 $?
"$HB" tenant add acme 2>/dev/null; eq "tenant add twice refused" 1 $?
printf 'hmac-secret-1234\n' > "$tmp/secret"
chmod 600 "$tmp/secret"
"$HB" endpoint add tornado --tenant acme --secret-file "$tmp/secret"
eq "endpoint add (file)" 0 $?
printf 'the-shared-key' | "$HB" endpoint add keyed --tenant acme \
    --auth key --header X-Api-Key --secret-file -
eq "endpoint add (stdin, key mode)" 0 $?
"$HB" endpoint add nokey --tenant acme 2>/dev/null
eq "endpoint add without a secret is a usage error" 2 $?
"$HB" endpoint add bad --tenant nobody --secret-file "$tmp/secret" 2>/dev/null
eq "endpoint of an unknown tenant refused" 1 $?
"$HB" endpoint list --json | grep -q '"name":	"bad"'
eq "refused endpoint left nothing behind" 1 $?
"$HB" destination add sink --tenant acme --url http://127.0.0.1:9/sink
eq "destination add" 0 $?
"$HB" job add job-1 --tenant acme --attempt att-42 --step analyze-v1 \
    --destination sink --source-url https://src.example/a.mp4
eq "job add" 0 $?
"$HB" job add job-9 --tenant acme --attempt att-1 --step s \
    --destination missing 2>/dev/null
eq "job with an unknown destination refused" 1 $?
"$HB" job add job-8 --tenant acme --attempt a:b --step s \
    --destination sink 2>/dev/null
eq "attempt with ':' refused" 1 $?
"$HB" tenant add 'a:b' 2>/dev/null
eq "tenant with ':' refused" 1 $?
"$HB" job add job-8 --tenant acme --attempt att-8 --step 'a b' \
    --destination sink 2>/dev/null
eq "step with a space refused" 1 $?
"$HB" destination add evil --tenant acme --url 'file:///etc/passwd' \
    2>/dev/null
eq "destination URL must be http(s)" 1 $?
for i in 1 2 3 4 5 6 7; do
	printf 'rotation-secret-%s' $i |
	    "$HB" endpoint secret tornado --secret-file - ||
	    fail "secret $i"
done
printf "ninth-rotation-secret" |
    "$HB" endpoint secret tornado --secret-file - 2>"$tmp/err"
eq "a ninth secret refused" 1 $?
contains "and why" "remove one" "$(cat "$tmp/err")"

list=$("$HB" endpoint list --json)
contains "endpoint list shows secrets count" '"secrets":	1' "$list"
lacks "endpoint list never shows a secret" "hmac-secret-123" "$list"
lacks "endpoint list never shows a key" "the-shared-key" "$list"
if grep -q 'the-shared-key' "$HOOKBOX_DIR/config.db"; then
	fail "key-mode secret stored in clear"
else
	pass
fi
if grep -q 'hmac-secret-123' "$HOOKBOX_DIR/config.db"; then pass; else
	fail "hmac secret not stored as configured"
fi
mode=$(stat -c %a "$HOOKBOX_DIR/state.db")
eq "state.db mode" 600 "$mode"
mode=$(stat -c %a "$HOOKBOX_DIR/config.db")
eq "config.db mode" 640 "$mode"

# Usage and help.
"$HB" >/dev/null 2>&1; eq "no command is a usage error" 2 $?
"$HB" frobnicate 2>/dev/null; eq "unknown command" 2 $?
"$HB" job add --help >/dev/null 2>&1; eq "--help exits 0" 0 $?

# Every form of help: standard output, exit 0, nothing on standard error.
# help_ok WHAT NEEDLE ARGS...
help_ok() {
	_what=$1
	_needle=$2
	shift 2
	_out=$("$HB" "$@" 2>"$tmp/err"); _rc=$?
	eq "$_what exits 0" 0 $_rc
	eq "$_what: nothing on stderr" "" "$(cat "$tmp/err")"
	contains "$_what on stdout" "$_needle" "$_out"
}
help_ok "--help" "commands:" --help
help_ok "-h" "commands:" -h
help_ok "help" "commands:" help
help_ok "help lists the groups" \
    "endpoint {add|set|secret|list|show|remove}" help
help_ok "help VERB" "--max-attempts N" help destination add
help_ok "help GROUP" "tenant remove ID" help tenant
help_ok "help of a one-word command" "--workers N" help dispatch
help_ok "VERB --help" "--timeout-ms N" destination add --help
help_ok "VERB -h" "--tolerance S" endpoint add -h
help_ok "--help after arguments" "--state S" list --limit 5 --help
for g in tenant endpoint destination job; do
	help_ok "$g alone" "hookbox [-d DIR] $g list" $g
done
# The defaults the help documents are the ones the commands use.
out=$("$HB" help endpoint add)
contains "endpoint tolerance default" "(default 300)" "$out"
contains "endpoint kind default" "(default tornado-job)" "$out"
contains "endpoint auth default" "(default hmac)" "$out"
out=$("$HB" destination add --help)
contains "destination timeout default" "1..600000 (default 10000)" "$out"
contains "destination attempts default" "(default none: the horizon alone)" \
    "$out"
contains "destination horizon default" "(default 259200s, three days)" "$out"
contains "destination circuit default" "(0: never; default 10)" "$out"
for o in --tenant --url --idempotent --status-url --secret-file; do
	contains "destination add help lists $o" "$o" "$out"
done
out=$("$HB" help poll)
contains "poll limit default" "(default 100)" "$out"
contains "poll timeout default" "(default 10000)" "$out"
out=$("$HB" help prune)
contains "prune receipts default" "(default 7)" "$out"
contains "prune actions default" "(default 90)" "$out"
out=$("$HB" help job add)
for o in --tenant --attempt --step --destination --source-url --output \
    "-d DIR"; do
	contains "job add help lists $o" "$o" "$out"
done
# Unknown commands and help topics: named on stderr, usage exit code.
out=$("$HB" help nosuchverb 2>"$tmp/err"); rc=$?
eq "help of an unknown topic" 2 $rc
contains "and named" "nosuchverb" "$(cat "$tmp/err")"
eq "and nothing on stdout" "" "$out"
"$HB" nosuchverb >/dev/null 2>"$tmp/err"; eq "unknown verb" 2 $?
contains "and named" "unknown command: nosuchverb" "$(cat "$tmp/err")"
"$HB" tenant frob >/dev/null 2>"$tmp/err"; eq "unknown verb of a group" 2 $?
contains "and named" "tenant frob" "$(cat "$tmp/err")"
"$HB" help tenant frob >/dev/null 2>&1; eq "help of an unknown verb" 2 $?
# Version: one string, from lib/base/hb.h unless make overrides it.
out=$("$HB" --version 2>"$tmp/err"); rc=$?
eq "--version exits 0" 0 $rc
eq "--version: nothing on stderr" "" "$(cat "$tmp/err")"
case $out in
"hookbox "[0-9]*.[0-9]*) pass ;;
*) fail "--version: '$out'" ;;
esac
eq "version" "$out" "$("$HB" version)"
eq "-V" "$out" "$("$HB" -V)"
# -d after the command as well as before it.
dir2="$tmp/data2"
env -u HOOKBOX_DIR "$HB" init -d "$dir2" >/dev/null; eq "init -d after" 0 $?
env -u HOOKBOX_DIR "$HB" tenant add zeta -d "$dir2"
eq "tenant add -d after" 0 $?
out=$(env -u HOOKBOX_DIR "$HB" tenant list --json -d "$dir2"); rc=$?
eq "tenant list -d after" 0 $rc
contains "reads that directory" '"zeta"' "$out"
out=$(env -u HOOKBOX_DIR "$HB" -d "$dir2" tenant list --json)
contains "-d before reads the same" '"zeta"' "$out"
out=$("$HB" -d "$tmp/nowhere" tenant list --json -d"$dir2"); rc=$?
eq "-dDIR after the command wins" 0 $rc
contains "and reads it" '"zeta"' "$out"
env -u HOOKBOX_DIR "$HB" tenant list -d 2>/dev/null
eq "-d without its value" 2 $?
"$HB" status --bogus 2>/dev/null; eq "unknown option" 2 $?
env -u HOOKBOX_DIR "$HB" status 2>/dev/null; eq "no data directory" 2 $?
HOOKBOX_SYNC=fast "$HB" status 2>"$tmp/err"; eq "HOOKBOX_SYNC typo refused" 2 $?
contains "and named" "HOOKBOX_SYNC" "$(cat "$tmp/err")"
HOOKBOX_BUSY_MS=soon "$HB" status 2>/dev/null
eq "HOOKBOX_BUSY_MS not a number refused" 2 $?
# The dispatcher's timings are read with the rest (lib/run/settings.c).
for v in HOOKBOX_BACKOFF_MS HOOKBOX_BACKOFF_MAX_MS HOOKBOX_LEASE_MARGIN_MS \
    HOOKBOX_RECHECK_MS; do
	env "$v=0" "$HB" dispatch --once 2>"$tmp/err"
	eq "$v=0 refused" 2 $?
	eq "$v=0: named" \
	    "hookbox: $v: not a number of milliseconds from 1" \
	    "$(cat "$tmp/err")"
	env "$v=soon" "$HB" status 2>/dev/null
	eq "$v not a number refused by every command" 2 $?
done
"$HB" -d "$tmp/nowhere" status 2>/dev/null; eq "missing data directory" 1 $?

# The same completed status twice: one pending row.
doc='{"id":"job-1","status":"Completed","step":"Finished"}'
out=$(printf '%s' "$doc" | "$HB" observe --tenant acme); rc=$?
eq "observe accepted exit" 0 $rc
eq "observe accepted" accepted "$(jget result "$out")"
eq "observe action" "acme:att-42:analyze-v1" "$(jget action "$out")"
out=$(printf '%s' "$doc" | "$HB" observe --tenant acme); rc=$?
eq "observe duplicate exit" 0 $rc
eq "observe duplicate" duplicate "$(jget result "$out")"
st=$("$HB" status --json)
eq "one pending after two observes" 1 "$(jget outbox.pending "$st")"
eq "no conflicts" 0 "$(jget conflicts_open "$st")"
for k in outbox.leased outbox.delivered outbox.dead outbox.unknown \
    oldest_pending_age_s; do
	v=$(jget "$k" "$st")
	[ -n "$v" ] && pass || fail "status --json lacks $k"
done

out=$(printf '%s' '{"id":"job-1","status":"Failed"}' |
    "$HB" observe --tenant acme); rc=$?
eq "completed then failed: exit 0" 0 $rc
eq "completed then failed: conflict" conflict "$(jget result "$out")"
st=$("$HB" status --json)
eq "conflict counted" 1 "$(jget conflicts_open "$st")"
eq "still one pending" 1 "$(jget outbox.pending "$st")"
# requeue says what it did in one line; a refused one says nothing there.
a=acme:att-42:analyze-v1
out=$("$HB" requeue "$a" 2>/dev/null); eq "requeue of a pending action" 1 $?
eq "a refused requeue prints nothing" "" "$out"
sqlite3 "$HOOKBOX_DIR/state.db" \
    "UPDATE outbox SET state = 'dead' WHERE action_id = '$a'"
out=$("$HB" requeue "$a"); eq "requeue of a dead action" 0 $?
eq "requeue says so" "action $a requeued" "$out"
eq "requeued: pending again" 1 "$(jget outbox.pending "$("$HB" status --json)")"

out=$(printf '%s' '{"id":"job-x","status":"Completed"}' |
    "$HB" observe --tenant acme); rc=$?
eq "unknown job exit" 1 $rc
eq "unknown job" unknown_job "$(jget result "$out")"
out=$(printf 'not json' | "$HB" observe --tenant acme); rc=$?
eq "malformed exit" 1 $rc
eq "malformed" malformed "$(jget result "$out")"
head -c 70000 /dev/zero | tr '\0' ' ' | "$HB" observe --tenant acme \
    >/dev/null 2>&1
eq "oversized input refused" 1 $?

# Eight concurrent observe processes for a new job: one action.
"$HB" job add job-2 --tenant acme --attempt att-43 --step analyze-v1 \
    --destination sink
doc='{"id":"job-2","status":"Completed"}'
i=0
while [ $i -lt 8 ]; do
	(printf '%s' "$doc" | "$HB" observe --tenant acme > "$tmp/out.$i" \
	    2> "$tmp/err.$i"; echo $? > "$tmp/rc.$i") &
	i=$((i + 1))
done
wait
acc=0; dup=0; i=0
while [ $i -lt 8 ]; do
	eq "concurrent observe $i exit ($(cat "$tmp/out.$i" "$tmp/err.$i"))" \
	    0 "$(cat "$tmp/rc.$i")"
	case $(jget result "$(cat "$tmp/out.$i")") in
	accepted) acc=$((acc + 1)) ;;
	duplicate) dup=$((dup + 1)) ;;
	esac
	i=$((i + 1))
done
eq "exactly one accepted" 1 $acc
eq "seven duplicates" 7 $dup
st=$("$HB" status --json)
eq "two pending after the race" 2 "$(jget outbox.pending "$st")"

# A write-locked state file: observe answers unavailable with exit 75.
"$HB" job add job-3 --tenant acme --attempt att-44 --step analyze-v1 \
    --destination sink
fifo="$tmp/lock"
mkfifo "$fifo"
(sqlite3 "$HOOKBOX_DIR/state.db" < "$fifo" >/dev/null 2>&1) &
exec 3> "$fifo"
# A busy timeout: the holder must get the lock even if a probe has it.
printf '.timeout 10000\nBEGIN IMMEDIATE; SELECT 1;\n' >&3
wait_locked "$HOOKBOX_DIR/state.db"
out=$(printf '%s' '{"id":"job-3","status":"Completed"}' |
    HOOKBOX_BUSY_MS=200 "$HB" observe --tenant acme 2>/dev/null); rc=$?
eq "busy exit code" 75 $rc
eq "busy result" unavailable "$(jget result "$out")"
echo "ROLLBACK;" >&3
exec 3>&-
wait
st=$("$HB" status --json)
eq "nothing written while busy" 2 "$(jget outbox.pending "$st")"
out=$(printf '%s' '{"id":"job-3","status":"Completed"}' |
    "$HB" observe --tenant acme)
eq "accepted once the lock is gone" accepted "$(jget result "$out")"

# Removal: referenced rows are refused, the rest go.
"$HB" tenant remove acme 2>/dev/null; eq "tenant with endpoints kept" 1 $?
"$HB" job remove job-9 --tenant acme 2>/dev/null
eq "removing a missing job" 1 $?
"$HB" job remove job-1 --tenant acme; eq "job remove" 0 $?
"$HB" job remove job-1 2>/dev/null; eq "job remove needs --tenant" 2 $?
"$HB" endpoint remove keyed; eq "endpoint remove" 0 $?

# The data directory: each way of getting it wrong is named, with the
# directory, before anything is opened; init alone may make the files.
ver=$("$HB" --version | cut -d' ' -f2)
HOOKBOX_DIR= "$HB" status 2> "$tmp/err"; eq "empty HOOKBOX_DIR refused" 2 $?
contains "empty HOOKBOX_DIR: said" "give -d DIR or set HOOKBOX_DIR" \
    "$(cat "$tmp/err")"
lacks "empty HOOKBOX_DIR: never /state.db" "/state.db" "$(cat "$tmp/err")"
: > "$tmp/afile"
"$HB" -d "$tmp/afile" status 2> "$tmp/err"; eq "a file as DIR" 1 $?
eq "a file as DIR: said" "hookbox: $tmp/afile: not a directory" \
    "$(cat "$tmp/err")"
"$HB" -d "$tmp/nowhere" tenant list 2> "$tmp/err"; eq "a missing DIR" 1 $?
eq "a missing DIR: said" "hookbox: $tmp/nowhere: no such directory" \
    "$(cat "$tmp/err")"
mkdir "$tmp/blank"
"$HB" -d "$tmp/blank" status 2> "$tmp/err"; eq "an uninitialised DIR" 1 $?
eq "an uninitialised DIR: said" \
    "hookbox: $tmp/blank: not initialised, run \`hookbox init\`" \
    "$(cat "$tmp/err")"
"$HB" -d "$tmp/blank" tenant add acme 2> "$tmp/err"
eq "uninitialised DIR: config verbs too" 1 $?
contains "uninitialised DIR: config verbs say so" "not initialised" \
    "$(cat "$tmp/err")"
"$HB" -d "$tmp/blank" dispatch --once 2> "$tmp/err"
eq "uninitialised DIR: dispatch refused" 1 $?
contains "uninitialised DIR: dispatch says so" "not initialised" \
    "$(cat "$tmp/err")"
"$HB" -d "$tmp/blank" init >/dev/null; eq "init makes the files" 0 $?
contains "status: no dispatcher yet" \
    "dispatcher: none has recorded yet (hookbox dispatch)" \
    "$("$HB" -d "$tmp/blank" status)"
"$HB" -d "$tmp/blank" dispatch --once 2> "$tmp/err"
eq "dispatch --once on a new DIR" 0 $?
# Its heartbeat, as one that stopped two minutes ago left it.
sqlite3 "$tmp/blank/state.db" "UPDATE metrics SET value = value - 120000
    WHERE name = 'heartbeat_ms'"
contains "status: a dispatcher gone quiet" \
    "s ago: none is recording (hookbox dispatch, or its unit)" \
    "$("$HB" -d "$tmp/blank" status)"
contains "dispatch start line" \
    " level=info event=start program=\"hookbox dispatch\" version=$ver dir=$tmp/blank " \
    "$(cat "$tmp/err")"

# ---- each add and set says what it did, in one line; a failure, nothing ----
c="$tmp/confirm"
"$HB" -d "$c" init >/dev/null
# confirm WHAT EXPECTED ARGS...: the command succeeds and prints EXPECTED.
confirm() {
	_what=$1 _want=$2
	shift 2
	_out=$("$HB" -d "$c" "$@"); eq "$_what: exit" 0 $?
	eq "$_what: says so" "$_want" "$_out"
}
# silent WHAT RC ARGS...: the command fails with RC and prints nothing.
silent() {
	_what=$1 _want=$2
	shift 2
	_out=$("$HB" -d "$c" "$@" 2>/dev/null); eq "$_what: exit" "$_want" $?
	eq "$_what: prints nothing" "" "$_out"
}
confirm "tenant add" "tenant t1 added" tenant add t1
silent "tenant add twice" 1 tenant add t1
silent "tenant add without an ID" 2 tenant add
confirm "tenant set" "tenant t1 updated" tenant set --inactive t1
silent "tenant set of no tenant" 1 tenant set --active nobody
silent "tenant set with nothing to change" 2 tenant set t1
confirm "endpoint add" "endpoint e1 added" endpoint add e1 --tenant t1 \
    --secret-file "$tmp/secret"
silent "endpoint add twice" 1 endpoint add e1 --tenant t1 \
    --secret-file "$tmp/secret"
confirm "endpoint set" "endpoint e1 updated" endpoint set --tolerance 60 e1
silent "endpoint set of no endpoint" 1 endpoint set --tolerance 60 nobody
confirm "destination add" "destination d1 of tenant t1 added" \
    destination add d1 --tenant t1 --url http://127.0.0.1:9/d1
silent "destination add of a bad URL" 1 destination add d2 --tenant t1 \
    --url ftp://x
confirm "destination set" "destination d1 of tenant t1 updated" \
    destination set d1 --tenant t1 --timeout-ms 500
silent "destination set of no destination" 1 destination set nobody \
    --tenant t1 --timeout-ms 500
confirm "job add" "job j1 of tenant t1 added" job add j1 --tenant t1 \
    --attempt a1 --step s1 --destination d1
silent "job add of a taken action" 1 job add j2 --tenant t1 --attempt a1 \
    --step s1 --destination d1
confirm "endpoint secret add" "endpoint e1: secret 2 added, expires never" \
    endpoint secret add --secret-file "$tmp/secret" e1
confirm "endpoint secret revoke" "endpoint e1: secret 1 revoked" \
    endpoint secret revoke e1 1
silent "endpoint secret revoke of the last" 1 endpoint secret revoke e1 2
contains "a confirmed job is there" "j1" "$("$HB" -d "$c" job list)"

# ---- disorder: its refusals, before anything is made ----
d="$tmp/blank"
"$HB" -d "$d" disorder --endpoint x 2> "$tmp/err"
eq "disorder without --url: usage" 2 $?
"$HB" -d "$d" disorder --endpoint x --url http://127.0.0.1:9 --at-once 1 \
    2> "$tmp/err"
eq "disorder --at-once 1: usage" 2 $?
"$HB" -d "$d" disorder --endpoint nosuch --url http://127.0.0.1:9 \
    2> "$tmp/err"
eq "disorder, no such endpoint: exit" 1 $?
eq "disorder, no such endpoint: said" \
    "hookbox: endpoint nosuch: not found" "$(cat "$tmp/err")"
"$HB" -d "$d" disorder --endpoint x --url http://127.0.0.1:9 \
    --sample "$tmp/nowhere.json" 2> "$tmp/err"
eq "disorder, a sample that is not there: exit" 1 $?
contains "disorder, a sample that is not there: named" \
    "--sample \"$tmp/nowhere.json\"" "$(cat "$tmp/err")"
eq "disorder: no tenant made" "" "$("$HB" -d "$d" tenant list |
    grep disorder-)"

# libpq: loaded for a PostgreSQL location, not linked, so a SQLite site
# runs where it is missing, and a PostgreSQL location there says what is.
for p in "$HB" "$(dirname "$HB")/hookbox-fcgi"; do
	readelf -d "$p" | grep -q 'NEEDED.*libpq'
	eq "$(basename "$p") does not link libpq" 1 $?
done
pq=$(ldconfig -p | awk '$1 == "libpq.so.5" { print $NF; exit }')
if [ -z "$pq" ] || ! unshare -rm true 2>/dev/null; then
	echo "cli: no libpq.so.5, or unshare -rm not permitted: libpq" \
	    "hidden not tried"
else
	# shellcheck disable=SC2016
	nopq='mount --bind /dev/null "$1" && shift && exec "$@"'
	unshare -rm sh -c "$nopq" sh "$pq" "$HB" tenant list \
	    > "$tmp/out" 2>&1
	eq "libpq hidden: SQLite still served" 0 $?
	contains "libpq hidden: SQLite's tenants listed" acme "$(cat "$tmp/out")"
	unshare -rm sh -c "$nopq" sh "$pq" "$HB" \
	    -d "host=$tmp dbname=hookbox" tenant list 2> "$tmp/err"
	eq "libpq hidden: PostgreSQL refused" 1 $?
	contains "libpq hidden: says what is missing" \
	    "PostgreSQL needs libpq (Debian package libpq5)" "$(cat "$tmp/err")"
fi

finish cli
