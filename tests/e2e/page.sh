#!/bin/sh
# tests/e2e/page.sh BUILD_DIR: the status page, in a real browser.
#
# A live instance (the responder behind nginx, two destinations served by
# tests/sink, the dispatcher run once) gets known traffic; then Debian's
# headless Chromium loads /hooks/_status.  The figures the page shows
# must equal `hookbox status --json` and the counters of /hooks/_metrics;
# the page must log no console error and load nothing but itself; names
# and error texts holding markup must show as text.  The screenshot is
# kept as BUILD_DIR/status-page.png.  Two controls prove that the console
# and network checks can fail: a page with a script that logs an error,
# and one that asks for an image from another host.
set -u
build=$(cd "${1:?usage: page.sh BUILD_DIR}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/helpers/lib.sh"
HB="$build/hookbox"
FCGI="$build/hookbox-fcgi"
SINK="$build/tests/sink"
export HOOKBOX="$HB"

browser=$(command -v chromium || command -v chromium-browser) || {
	fail "chromium is not installed (make deps installs it)"
	finish page
	exit 1
}

tmp=$(mktemp -d)
export HOOKBOX_DIR="$tmp/data"
pids=""
cleanup() {
	[ -f "$tmp/nginx/nginx.pid" ] &&
	    kill "$(cat "$tmp/nginx/nginx.pid")" 2>/dev/null
	for p in $pids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# sink NAME SCRIPT: a destination server; sets $port.
sink() {
	"$SINK" -p 0 -l "$tmp/$1.log" -s "$2" > "$tmp/$1.port" &
	pids="$pids $!"
	until_true 60 test -s "$tmp/$1.port" || fail "sink $1 did not start"
	port=$(head -n1 "$tmp/$1.port")
}

# ---- the instance ----
"$HB" init >/dev/null
"$HB" tenant add acme >/dev/null
printf 'hmac-secret-for-tests' |
    "$HB" endpoint add tornado --tenant acme --secret-file - >/dev/null
sink ok 204
"$HB" destination add ok --tenant acme \
    --url "http://127.0.0.1:$port/ok" >/dev/null
sink down 500
"$HB" destination add down --tenant acme --max-attempts 1 \
    --url "http://127.0.0.1:$port/down" >/dev/null
for j in 1 2 3; do
	"$HB" job add "job-$j" --tenant acme --attempt "att-$j" \
	    --step analyze-v1 --destination ok >/dev/null
done
"$HB" job add job-4 --tenant acme --attempt att-4 --step analyze-v1 \
    --destination down >/dev/null

sock="$tmp/hookbox.sock"
"$FCGI" -s "$sock" -w 1 2> "$tmp/fcgi.log" &
pids="$pids $!"
until_true 60 test -S "$sock" ||
    { echo "responder did not start"; cat "$tmp/fcgi.log"; exit 1; }
nginx_start "$sock" "$HOOKBOX_DIR"
until_true 60 curl -sf "$base/hooks/_health" >/dev/null

# post JOB [SIGNATURE]: one callback for JOB, signed unless one is given.
post() {
	printf '{"type":"job_completed","job_id":"%s","status":"completed",'\
'"key":"k/%s"}' "$1" "$1" > "$tmp/body"
	if [ $# -gt 1 ]; then
		set -- -H "X-Tornado-Signature: $2"
	else
		set -- -H "$("$HB" sign --endpoint tornado < "$tmp/body")"
	fi
	curl -s -o /dev/null -w '%{http_code}\n' -H \
	    'Content-Type: application/json' --data-binary "@$tmp/body" \
	    "$@" "$base/hooks/tornado"
}

# Known traffic: 4 accepted, 2 duplicates, 1 unauthorized, 1 unknown job.
# The last, a duplicate, commits the counts the two refusals left in the
# responder's memory, so that the tool reads them too.
codes=$( (post job-1; post job-2; post job-1 "t=1,v1=00"; post job-9;
    post job-3; post job-4; post job-1; post job-2) | paste -sd, -)
eq "the traffic's answers" "200,200,401,422,200,200,200,200" "$codes"
"$HB" dispatch --once >/dev/null 2>&1
# A destination paused, and one that failed once: both in the circuits.
"$HB" destination pause --tenant acme ok >/dev/null
# A row no tool would write: a name and an error holding markup, as a
# database shared with other software might hold one.
sqlite3 "$HOOKBOX_DIR/state.db" "INSERT INTO accepted(action_id, tenant,
    attempt, step, job_id, accepted_at) VALUES ('acme:x:y', 'acme', 'x',
    'y', 'job-x', 1); INSERT INTO outbox(action_id, tenant, destination,
    payload, state, attempts, next_at, created_at, updated_at, last_error)
    VALUES ('acme:x:y', 'acme', '<b id=\"planted\">bold</b>', '{}', 'dead',
    1, 0, 1000, 2000, '<script>document.title=\"owned\"</script><img
    src=\"http://198.51.100.7/x.png\">')" ||
    fail "the planted row could not be written"
# And one whose outcome is unknown, as an expired lease leaves it.
sqlite3 "$HOOKBOX_DIR/state.db" "INSERT INTO accepted(action_id, tenant,
    attempt, step, job_id, accepted_at) VALUES ('acme:x:z', 'acme', 'x',
    'z', 'job-x', 1); INSERT INTO outbox(action_id, tenant, destination,
    payload, state, attempts, next_at, created_at, updated_at, last_error)
    VALUES ('acme:x:z', 'acme', 'down', '{}', 'unknown', 1, 0, 1000, 2000,
    'lease expired')" || fail "the unknown row could not be written"

# ---- the page, as the browser sees it ----
# chrome URL OUTDIR [EXTRA...]: loads URL headless with a profile of its
# own; OUTDIR/dom is the DOM after load, OUTDIR/console the console's
# messages, OUTDIR/urls every URL the network stack was asked for.
chrome() {
	_url=$1 _o=$2
	shift 2
	mkdir -p "$_o/profile"
	timeout 120 "$browser" --headless --no-sandbox --disable-gpu \
	    --no-first-run --disable-background-networking \
	    --disable-component-update --disable-sync \
	    --disable-default-apps --user-data-dir="$_o/profile" \
	    --enable-logging=stderr --v=0 \
	    --log-net-log="$_o/netlog.json" --window-size=1280,1800 \
	    "$@" --dump-dom "$_url" > "$_o/dom" 2> "$_o/stderr"
	grep -i 'CONSOLE' "$_o/stderr" > "$_o/console"
	grep -o '"url":"[^"]*"' "$_o/netlog.json" | sed 's/^"url":"//;
	    s/"$//' | sort -u > "$_o/urls"
	# What the page asked for: a request the browser makes for itself
	# (its updater, its clock) has no initiator ("not an origin").
	# The log holds one event a line.
	grep '"initiator":' "$_o/netlog.json" |
	    grep -v '"initiator":"not an origin"' |
	    sed -n 's/.*"url":"\([^"]*\)".*/\1/p' | sort -u > "$_o/loads"
}
# Not our page's: what no test page should have.
foreign() { grep -v "^$base/" "$1/loads" | grep -v '^data:' ; }

# The controls: the same checks find a console error and a foreign load.
chrome 'data:text/html,<p>x</p><script>console.error("probe-7")</script>' \
    "$tmp/c1"
contains "control: a console error is seen" "probe-7" "$(cat "$tmp/c1/console")"
chrome 'data:text/html,<img src="http://198.51.100.7/x.png">' "$tmp/c2"
contains "control: a foreign load is seen" "198.51.100.7" "$(foreign "$tmp/c2")"

chrome "$base/hooks/_status" "$tmp/p" --screenshot="$build/status-page.png"
# --dump-dom and --screenshot in one run: the DOM is what was drawn.
[ -s "$tmp/p/dom" ] || chrome "$base/hooks/_status" "$tmp/p"
dom=$(cat "$tmp/p/dom")
contains "the page is served" "hookbox status" "$dom"
eq "no console message" "" "$(cat "$tmp/p/console")"
eq "nothing loaded from elsewhere" "" "$(foreign "$tmp/p")"
contains "the page itself was loaded" "$base/hooks/_status" \
    "$(cat "$tmp/p/urls")"
if [ -s "$build/status-page.png" ]; then
	pass "screenshot"
	echo "page: screenshot kept as $build/status-page.png"
else
	fail "no screenshot"
fi

# An element's text by id (the DOM as Chromium serialised it).
el() {
	printf '%s\n' "$dom" | tr '\n' ' ' |
	    sed -n "s/.*id=\"$1\"[^>]*>\([^<]*\)<.*/\1/p"
}

json=$("$HB" status --json)
for s in pending leased delivered dead unknown; do
	eq "outbox $s as status --json" "$(jget "outbox.$s" "$json")" \
	    "$(el "outbox-$s")"
done
eq "three delivered in the table" 3 "$(el outbox-delivered)"
eq "dead as status --json" 2 "$(el outbox-dead)"
eq "the unknown outcome listed, as status --json" \
    "acme:x:z acme:x:z lease expired" "$(jget 'unknown[0].action' "$json") \
$(el unknown-0-action) $(el unknown-0-error)"
contains "and what to run for it" "hookbox reconcile --delivered ACTION" \
    "$dom"
eq "open conflicts" "$(jget conflicts_open "$json")" "$(el conflicts-open)"
eq "unknown outcomes" "$(jget outbox.unknown "$json")" \
    "$(el unknown-outcomes)"
n=$(jget 'destinations' "$json" | sed 's/[^{]//g' | tr -d '\n' | wc -c)
eq "three destinations" 3 "$n"
i=0
while [ "$i" -lt "$n" ]; do
	for f in backlog dead unknown; do
		eq "destination $i $f" \
		    "$(jget "destinations[$i].$f" "$json")" \
		    "$(el "dest-$i-$f")"
	done
	i=$((i + 1))
done
eq "down's error shown" "HTTP 500" \
    "$(el dest-1-error | sed 's/ *$//;s/ *(.*//')"
n=$(jget 'circuits' "$json" | sed 's/[^{]//g' | tr -d '\n' | wc -c)
eq "two circuits listed" 2 "$n"
i=0
while [ "$i" -lt "$n" ]; do
	eq "circuit $i name" "$(jget "circuits[$i].destination" "$json")" \
	    "$(el "circuit-$i-name")"
	eq "circuit $i state" "$(jget "circuits[$i].circuit" "$json")" \
	    "$(el "circuit-$i-state")"
	for f in failures in_flight; do
		eq "circuit $i $f" "$(jget "circuits[$i].$f" "$json")" \
		    "$(el "circuit-$i-$(echo $f | tr _ -)")"
	done
	i=$((i + 1))
done
eq "down counts its failure" "down 1 closed" "$(el circuit-0-name)\
 $(el circuit-0-failures) $(el circuit-0-state)"
# A paused one's cell holds when (a <time>), a running one's "no".
eq "ok is paused, down is not" "ok  no" "$(el circuit-1-name) \
$(el circuit-1-paused) $(el circuit-0-paused)"
contains "paused, as the metrics say" \
    'hookbox_destination_paused{tenant="acme",destination="ok"} 1' \
    "$(curl -s "$base/hooks/_metrics")"

# The chart's totals: the counters, less the operator's own routes.
metrics=$(curl -s "$base/hooks/_metrics")
total() {
	printf '%s\n' "$metrics" | grep "^hookbox_$1_total{" |
	    grep -v 'endpoint="_' | grep "$2=\"$3\"" |
	    awk '{ s += $NF } END { print s + 0 }'
}
for w in accepted duplicate unauthorized unknown_job; do
	eq "requests $w: the counters" "$(total requests result "$w")" \
	    "$(el "requests-$w")"
	eq "requests $w: status --json" \
	    "$(jget "last_hour.requests.$w" "$json")" "$(el "requests-$w")"
done
eq "four accepted" 4 "$(el requests-accepted)"
for w in delivered dead; do
	eq "deliveries $w: the counters" \
	    "$(total deliveries outcome "$w")" "$(el "deliveries-$w")"
done
eq "three delivered" 3 "$(el deliveries-delivered)"

# Markup in a name and an error is text: escaped, never an element.
contains "the planted name as text" '&lt;b id="planted"&gt;bold&lt;/b&gt;' \
    "$dom"
lacks "no planted element" '<b id="planted">' "$dom"
contains "the planted script as text" '&lt;script&gt;document.title' "$dom"
lacks "the title untouched" '<title>owned' "$dom"
lacks "no request for the planted image" "198.51.100.7" \
    "$(cat "$tmp/p/urls")"

# The headers: nothing allowed but the page's own style.
hdr=$(curl -s -D - -o /dev/null "$base/hooks/_status" | tr -d '\r')
contains "CSP: nothing by default" \
    "Content-Security-Policy: default-src 'none'; style-src 'sha256-" "$hdr"
contains "HTML" "Content-Type: text/html; charset=utf-8" "$hdr"
eq "POST is refused" 405 "$(curl -s -o /dev/null -w '%{http_code}' \
    -X POST "$base/hooks/_status")"
eq "a forwarded request is refused" 403 "$(curl -s -o /dev/null \
    -w '%{http_code}' -H 'X-Forwarded-For: 203.0.113.9' \
    "$base/hooks/_status")"

finish page
