#!/bin/sh
# tests/e2e/internal.sh BUILD_DIR: destinations at internal addresses, end to
# end, with the real dispatcher, a real resolver and a real HTTP server
# (tests/helpers/sink.c) listening on a link-local address.  A name that resolves
# to a link-local address is refused when the dispatcher connects (the
# server gets nothing, the attempt is recorded, the row is dead at once)
# unless its destination allows internal addresses; a connection kept
# alive for a destination that allows them never carries a request of one
# that does not; a status URL is judged the same way.
#
# It runs in user, network and mount namespaces of its own (unshare
# -rnm), where it may put 169.254.77.1 on its own loopback interface and
# bind a hosts file of its own over /etc/hosts: nothing of the machine's
# network or files is touched, and nothing leaves the namespace.  Where
# namespaces are not permitted it says so and runs nothing.
set -u
build=$(cd "${1:?usage: internal.sh BUILD_DIR}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)

if [ "${HOOKBOX_TEST_NS:-}" != 1 ]; then
	if ! unshare -rnm true 2>/dev/null; then
		echo "internal: unshare -rnm is not permitted here: not run"
		exit 0
	fi
	exec unshare -rnm env HOOKBOX_TEST_NS=1 sh "$0" "$build"
fi

. "$top/tests/helpers/lib.sh"
HB="$build/hookbox"
SINK="$build/tests/sink"
LL=169.254.77.1

tmp=$(mktemp -d)
export HOOKBOX_DIR="$tmp/data"
export HOOKBOX_BACKOFF_MS=1
export HOOKBOX_RECHECK_MS=1000
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	umount /etc/hosts 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

if ! ip link set lo up || ! ip addr add "$LL/32" dev lo; then
	echo "internal: cannot add $LL to this namespace's lo"
	exit 1
fi
printf '%s\n' "127.0.0.1 localhost" "::1 localhost" \
    "$LL meta.hookbox.test" "fe80::1 ll6.hookbox.test" > "$tmp/hosts"
mount --bind "$tmp/hosts" /etc/hosts ||
    { echo "internal: cannot bind a hosts file of its own"; exit 1; }
eq "the name resolves to the link-local address" "$LL" \
    "$(getent ahostsv4 meta.hookbox.test | awk '{ print $1; exit }')"

# sink NAME [-k]: a sink on the link-local address (-k: keeping
# connections alive); sets $port.
sink() {
	: > "$tmp/$1.log"
	# shellcheck disable=SC2086
	"$SINK" -a "$LL" -p 0 -l "$tmp/$1.log" -s 204 ${2:-} \
	    > "$tmp/$1.port" 2>"$tmp/$1.err" &
	pids="$pids $!"
	until_true 20 test -s "$tmp/$1.port" || fail "sink $1 did not start"
	port=$(head -n 1 "$tmp/$1.port")
}
n=0
# action DEST: a job going to DEST, its completion accepted; sets $a.
action() {
	n=$((n + 1))
	"$HB" job add "job-$n" --tenant acme --attempt "att-$n" \
	    --step deliver-v1 --destination "$1" || exit 1
	printf '{"id":"job-%s","status":"Completed"}' "$n" |
	    "$HB" observe --tenant acme >/dev/null || exit 1
	a="acme:att-$n:deliver-v1"
}
sq() { sqlite3 "file:$HOOKBOX_DIR/state.db?mode=ro" "$1"; }
state_of() { sq "SELECT state FROM outbox WHERE action_id = '$1'"; }
is_state() { test "$(state_of "$1")" = "$2"; }
requests() { grep -c "	$2	" "$tmp/$1.log"; }
keys() { awk -F'\t' '$2 == "POST" { print $4 }' "$tmp/$1.log" | sort -u |
    tr '\n' ' '; }
# attempt_of ACTION: "n|http_status|error" of its attempts, one a line.
attempt_of() { sq "SELECT n || '|' || coalesce(http_status, 0) || '|' ||
    coalesce(error, '') FROM attempts WHERE action_id = '$1' ORDER BY id"; }
refusal="refused to connect to $LL, a link-local address (169.254.0.0/16, fe80::/10): not sent; the destination does not allow internal addresses (--allow-internal)"

"$HB" init >/dev/null
"$HB" tenant add acme

# ---- a name resolving to a link-local address: refused, dead at once ----
sink guarded
"$HB" destination add guarded --tenant acme --max-attempts 5 \
    --url "http://meta.hookbox.test:$port/hook"
eq "a name is not judged when it is added" 0 $?
action guarded
"$HB" dispatch --once 2>"$tmp/guarded.err"
eq "refused: the server got nothing" 0 "$(requests guarded POST)"
eq "refused: dead at once, not retried" dead "$(state_of "$a")"
eq "refused: one attempt, recorded with why" "1|0|$refusal" "$(attempt_of "$a")"
eq "refused: the row says why" "$refusal" \
    "$(sq "SELECT last_error FROM outbox WHERE action_id = '$a'")"
contains "refused: logged" "event=delivery action=$a tenant=acme destination=guarded attempt=1 outcome=dead status=0" \
    "$(cat "$tmp/guarded.err")"
contains "refused: logged dead, with why" "event=dead action=$a" \
    "$(cat "$tmp/guarded.err")"

# ---- an IPv6 link-local name: the same ----
"$HB" destination add ll6 --tenant acme \
    --url "http://ll6.hookbox.test:$port/hook"
action ll6
"$HB" dispatch --once 2>/dev/null
eq "IPv6 link-local: dead at once" dead "$(state_of "$a")"
contains "IPv6 link-local: why" "refused to connect to fe80::1, a link-local" \
    "$(attempt_of "$a")"

# ---- allowed: delivered to the link-local address ----
sink allowed
"$HB" destination add allowed --tenant acme --allow-internal \
    --url "http://meta.hookbox.test:$port/hook"
action allowed
"$HB" dispatch --once 2>/dev/null
eq "allowed: delivered" delivered "$(state_of "$a")"
eq "allowed: one POST, with its key" "$a " "$(keys allowed)"
eq "allowed: recorded" "1|204|" "$(attempt_of "$a")"

# ---- a literal address written behind the tool's back ----
# (say by the previous release, which did not judge URLs): the
# dispatcher refuses it all the same, in its IPv4-mapped spelling too.
sink literal
"$HB" destination add literal --tenant acme --allow-internal \
    --url "http://$LL:$port/hook"
action literal
sqlite3 "$HOOKBOX_DIR/config.db" ".timeout 10000" "UPDATE destinations
    SET allow_internal = 0, url = 'http://[::ffff:$LL]:$port/hook'
    WHERE name = 'literal'"
"$HB" dispatch --once 2>/dev/null
eq "literal, mapped: the server got nothing" 0 "$(requests literal POST)"
eq "literal, mapped: dead" dead "$(state_of "$a")"
contains "literal, mapped: why" "refused to connect to ::ffff:$LL, a link-local" \
    "$(attempt_of "$a")"
# An operator who means it allows it, and requeues.
"$HB" destination set --tenant acme literal --allow-internal
"$HB" requeue "$a"
"$HB" dispatch --once 2>/dev/null
eq "allowed, requeued: delivered" delivered "$(state_of "$a")"
eq "allowed, requeued: one POST" 1 "$(requests literal POST)"

# ---- a kept-alive connection never crosses over ----
# Two destinations that honour Idempotency-Key share kept-alive
# connections; the one that allows internal addresses opens one to the
# link-local address, and the other's request, to the same host and port,
# must not go out on it.  One running dispatcher, so that the connection
# is there to be taken.
sink kept -k
"$HB" destination add kept-allowed --tenant acme --idempotent \
    --allow-internal --url "http://meta.hookbox.test:$port/a"
"$HB" destination add kept-guarded --tenant acme --idempotent \
    --url "http://meta.hookbox.test:$port/g"
"$HB" dispatch 2>"$tmp/kept.err" & d=$!
pids="$pids $d"
action kept-allowed
until_true 20 is_state "$a" delivered
eq "kept: the allowed one delivered" delivered "$(state_of "$a")"
first=$a
action kept-guarded
until_true 20 is_state "$a" dead
eq "kept: the other refused on the kept connection too" dead \
    "$(state_of "$a")"
eq "kept: only the allowed one's POST arrived" "$first " "$(keys kept)"
contains "kept: why" "refused to connect to $LL, a link-local" \
    "$(attempt_of "$a")"
kill -TERM $d; wait $d

# ---- a status URL at the link-local address ----
# An unknown outcome (as a timed-out request leaves it) is asked about at
# the status URL only when the destination allows internal addresses.
sink recon
"$HB" destination add recon --tenant acme --allow-internal \
    --url "http://meta.hookbox.test:$port/hook"
action recon
sqlite3 "$HOOKBOX_DIR/config.db" ".timeout 10000" "UPDATE destinations
    SET url = 'http://127.0.0.1:9/hook', allow_internal = 0,
    status_url = 'http://meta.hookbox.test:$port/status'
    WHERE name = 'recon'"
sqlite3 "$HOOKBOX_DIR/state.db" ".timeout 10000" "UPDATE outbox
    SET state = 'unknown', attempts = 1, next_at = 0
    WHERE action_id = '$a'"
"$HB" dispatch --once 2>/dev/null
eq "status URL refused: not asked" 0 "$(requests recon GET)"
eq "status URL refused: still unknown" unknown "$(state_of "$a")"
contains "status URL refused: why" "status URL refused, an internal address" \
    "$(sq "SELECT last_error FROM outbox WHERE action_id = '$a'")"
"$HB" destination set --tenant acme recon --allow-internal \
    --url "http://meta.hookbox.test:$port/hook"
sqlite3 "$HOOKBOX_DIR/state.db" ".timeout 10000" "UPDATE outbox
    SET next_at = 0 WHERE action_id = '$a'"
"$HB" dispatch --once 2>/dev/null
eq "status URL allowed: asked" 1 "$(requests recon GET)"
eq "status URL allowed: not found there, resent and delivered" delivered \
    "$(state_of "$a")"

# ---- the provider's job API (poll): judged as destinations are ----
# The tenant's API key goes with every poll: a status base at an internal
# address is refused when it is given, and, written behind the tool's
# back, when the poller connects.
out=$("$HB" tenant add meta --status-base http://169.254.169.254/v1 2>&1)
eq "status base: refused at tenant add" 1 $?
contains "status base: says why" "169.254.169.254 is a cloud metadata" "$out"
"$HB" tenant add pollee
out=$("$HB" tenant set pollee --status-base http://0xa9fea9fe/ 2>&1)
eq "status base: refused at tenant set" 1 $?
contains "status base: refused however it is spelled" \
    "169.254.169.254 is a cloud metadata" "$out"
sink jobs
"$HB" destination add pd --tenant pollee --url "http://127.0.0.1:9/hook"
"$HB" job add job-p --tenant pollee --attempt att-p --step deliver-v1 \
    --destination pd
sqlite3 "$HOOKBOX_DIR/config.db" ".timeout 10000" "UPDATE tenants
    SET status_base = 'http://meta.hookbox.test:$port' WHERE id = 'pollee'"
out=$("$HB" poll 2>&1)
eq "status base behind the tool's back: not asked" 0 "$(requests jobs GET)"
contains "status base behind the tool's back: refused, with why" \
    "refused to connect to $LL" "$out"

# ---- a proxy in the environment: never used ----
# The dispatcher's environment may carry http_proxy or ALL_PROXY by
# accident; libcurl would send the request to the proxy, and the guard
# would judge only the proxy's address.  A proxy is used only when one is
# configured for hookbox (HOOKBOX_PROXY), and the start line names it.
"$SINK" -a 127.0.0.1 -p 0 -l "$tmp/proxy.log" -s 204 > "$tmp/proxy.port" \
    2>"$tmp/proxy.err" &
pids="$pids $!"
until_true 20 test -s "$tmp/proxy.port" || fail "the proxy did not start"
pport=$(head -n 1 "$tmp/proxy.port")
sink viaenv
"$HB" destination add viaenv --tenant acme \
    --url "http://meta.hookbox.test:$port/hook"
action viaenv
http_proxy="http://127.0.0.1:$pport" ALL_PROXY="http://127.0.0.1:$pport" \
    HTTP_PROXY="http://127.0.0.1:$pport" "$HB" dispatch --once \
    2>"$tmp/viaenv.err"
eq "a proxy in the environment: not used" 0 "$(grep -c . "$tmp/proxy.log")"
eq "a proxy in the environment: the guard judged the address: dead" dead \
    "$(state_of "$a")"
contains "a proxy in the environment: refused, with why" "$refusal" \
    "$(attempt_of "$a")"
contains "a proxy in the environment: the start line says none" "proxy=none" \
    "$(cat "$tmp/viaenv.err")"
# Configured: used, and named at start (its password masked).
sink viaproxy
"$HB" destination add viaproxy --tenant acme --allow-internal \
    --url "http://meta.hookbox.test:$port/hook"
action viaproxy
HOOKBOX_PROXY="http://u:secret@127.0.0.1:$pport" "$HB" dispatch --once \
    2>"$tmp/viaproxy.err"
eq "HOOKBOX_PROXY: the request went to the proxy" 1 \
    "$(grep -c "	POST	" "$tmp/proxy.log")"
eq "HOOKBOX_PROXY: not to the destination itself" 0 \
    "$(requests viaproxy POST)"
contains "HOOKBOX_PROXY: named at start" "proxy=http://***@127.0.0.1:$pport" \
    "$(cat "$tmp/viaproxy.err")"
lacks "HOOKBOX_PROXY: never its password" "secret" "$(cat "$tmp/viaproxy.err")"

finish internal
