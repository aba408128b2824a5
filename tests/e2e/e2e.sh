#!/bin/sh
# tests/e2e/e2e.sh BUILD_DIR: the responder end to end, through a real nginx.
#
# Starts hookbox-fcgi on its own unix socket with three workers, and nginx
# on a loopback port with the site snippet from nginx/, then checks every
# row of the HTTP contract, runs every replay scenario, and exercises CGI
# mode, spawn-fcgi mode and a write-locked state file.
set -u
build=$(cd "${1:?usage: e2e.sh BUILD_DIR}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/helpers/lib.sh"
HB="$build/hookbox"
FCGI="$build/hookbox-fcgi"
export HOOKBOX="$HB"

tmp=$(mktemp -d)
export HOOKBOX_DIR="$tmp/data"
pids=""
cleanup() {
	[ -f "$tmp/nginx/nginx.pid" ] && kill "$(cat "$tmp/nginx/nginx.pid")" 2>/dev/null
	for p in $pids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# ---- set-up: two tenants, one endpoint of every kind and scheme ----
"$HB" init >/dev/null
"$HB" tenant add acme
"$HB" tenant add other
printf 'hmac-secret-for-tests' > "$tmp/hmac.secret"
chmod 600 "$tmp/hmac.secret"
"$HB" endpoint add tornado --tenant acme --secret-file "$tmp/hmac.secret"
"$HB" endpoint add tornado-org --tenant acme --kind tornado-org \
    --secret-file "$tmp/hmac.secret"
printf 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' |
    "$HB" endpoint add std --tenant acme --auth standard --secret-file -
printf 'a-long-shared-key' |
    "$HB" endpoint add keyed --tenant acme --auth key \
    --header X-Hook-Key --secret-file -
"$HB" endpoint add other-hook --tenant other --secret-file "$tmp/hmac.secret"
"$HB" endpoint add mux --tenant acme --header Mux-Signature \
    --secret-file "$tmp/hmac.secret"
"$HB" destination add sink --tenant acme --url http://127.0.0.1:9/sink
"$HB" destination add sink --tenant other --url http://127.0.0.1:9/sink
for j in job-1 job-2 job-3 job-4 job-k job-s job-m; do
	"$HB" job add $j --tenant acme --attempt "att-$j" --step analyze-v1 \
	    --destination sink
done
# job-twin shares job-1's attempt and step: the same action id.  The tool
# refuses such a second job; a config.db written before it did may hold
# one, so it goes in with sqlite3.
sqlite3 "$HOOKBOX_DIR/config.db" "INSERT INTO jobs(tenant, job_id, attempt,
    step, destination, created_at) VALUES ('acme', 'job-twin', 'att-job-1',
    'analyze-v1', 'sink', 0)"
"$HB" job add job-x --tenant other --attempt att-x --step analyze-v1 \
    --destination sink

# ---- the responder on its own socket, then nginx in front ----
sock="$tmp/hookbox.sock"
HOOKBOX_BUSY_MS=400 "$FCGI" -s "$sock" -w 3 2> "$tmp/fcgi.log" &
fcgi_pid=$!
pids="$pids $fcgi_pid"
until_true 60 test -S "$sock" ||
    { echo "responder did not start"; cat "$tmp/fcgi.log"; exit 1; }

nginx_start "$sock" "$HOOKBOX_DIR"
until_true 60 curl -sf "$base/hooks/_health" >/dev/null

workers() { pgrep -P "$fcgi_pid" | sort | tr '\n' ' '; }
workers_before=$(workers)
n=$(echo $workers_before | wc -w)
eq "three workers" 3 "$n"

scratch="$tmp/s"
mkdir -p "$scratch"

# req METHOD ENDPOINT BODY [CURL_ARGS...]: sets code, reply, result, headers.
req() {
	_m=$1 _ep=$2
	printf '%s' "$3" > "$scratch/body"
	shift 3
	code=$(curl -s -X "$_m" -D "$scratch/hdr" -o "$scratch/reply" \
	    -w '%{http_code}' "$@" "$base/hooks/$_ep")
	reply=$(cat "$scratch/reply")
	result=$(jget result "$reply")
}

# signed ENDPOINT BODY [SIGN_ARGS]: a POST signed for ENDPOINT.
signed() {
	_ep=$1
	printf '%s' "$2" > "$scratch/sbody"
	shift 2
	"$HB" sign --endpoint "$_ep" "$@" < "$scratch/sbody" > "$scratch/sh"
	set --
	while IFS= read -r _h; do set -- "$@" -H "$_h"; done < "$scratch/sh"
	req POST "$_ep" "$(cat "$scratch/sbody")" \
	    -H 'Content-Type: application/json' --data-binary "@$scratch/body" "$@"
}

completed() {
	printf '{"type":"job_completed","job_id":"%s","status":"completed","key":"k/%s"}' "$1" "$1"
}
receipts() {
	sqlite3 "file:$HOOKBOX_DIR/state.db?mode=ro" \
	    'SELECT count(*) FROM receipts' 2>/dev/null
}
pending() { jget outbox.pending "$("$HB" status --json)"; }

# ---- every row of the contract ----
signed tornado "$(completed job-1)"
eq "200 accepted" "200 accepted" "$code $result"
eq "action" "acme:att-job-1:analyze-v1" "$(jget action "$reply")"
contains "JSON content type" "application/json" "$(cat "$scratch/hdr")"
signed tornado "$(completed job-1)"
eq "200 duplicate" "200 duplicate" "$code $result"
signed tornado '{"type":"job_progress","job_id":"job-2","stage":"muxing"}'
eq "200 recorded" "200 recorded" "$code $result"
signed tornado '{"type":"job_progress","job_id":"job-2","step":"downloading"}'
eq "200 stale" "200 stale" "$code $result"
signed tornado '{"type":"job_failed","job_id":"job-1","status":"failed","error":"x"}'
eq "200 conflict" "200 conflict" "$code $result"
signed tornado '{"type":"job_archived","job_id":"job-1"}'
eq "200 ignored" "200 ignored" "$code $result"
signed tornado '{"type":"job_completed","job_id":'
eq "400 malformed" "400 malformed" "$code $result"
r0=$(receipts)
req POST tornado "$(completed job-3)" -H 'Content-Type: application/json' \
    --data-binary "@$scratch/body" \
    -H "X-Tornado-Signature: t=$(date +%s),v1=$(printf '%064d' 0)"
eq "401 unauthorized" "401 unauthorized" "$code $result"
signed tornado "$(completed job-3)" --timestamp $(( $(date +%s) - 301 ))
eq "401 stale timestamp" "401 unauthorized" "$code $result"
# 20 s past the edge: the clock moves on between signing and checking.
signed tornado "$(completed job-3)" --timestamp $(( $(date +%s) + 320 ))
eq "401 future timestamp" "401 unauthorized" "$code $result"
eq "unauthenticated requests write nothing" "$r0" "$(receipts)"
signed tornado "$(completed job-3)" --timestamp $(( $(date +%s) - 200 ))
eq "within tolerance" "200 accepted" "$code $result"
req POST nosuch "$(completed job-3)" -H 'Content-Type: application/json' \
    --data-binary "@$scratch/body"
eq "404 unknown_endpoint" "404 unknown_endpoint" "$code $result"
req GET tornado ""
eq "405 method" "405" "$code"
contains "405 Allow header" "Allow: POST" "$(cat "$scratch/hdr")"
req POST tornado "" -H 'Content-Type: application/json'
eq "411 no length" "411 length_required" "$code $result"
head -c 70000 /dev/zero | tr '\0' 'x' > "$scratch/big"
code=$(curl -s -o "$scratch/reply" -w '%{http_code}' \
    -H 'Content-Type: application/json' --data-binary "@$scratch/big" \
    "$base/hooks/tornado")
eq "413 too large (nginx)" "413 payload_too_large" \
    "$code $(jget result "$(cat "$scratch/reply")")"
req POST tornado "$(completed job-3)" -H 'Content-Type: text/plain' \
    --data-binary "@$scratch/body"
eq "415 not JSON" "415 unsupported_media_type" "$code $result"
signed tornado "$(completed job-twin)"
eq "409 action_conflict" "409 action_conflict" "$code $result"
signed tornado "$(completed job-x)"
eq "422 unknown_job" "422 unknown_job" "$code $result"

# A refusal stays a refusal: the provider's retry of a 409'd delivery, or
# another body reusing its delivery id, is not acknowledged.
dlv='{"delivery_id":"dlv-409","type":"job_completed","data":{"job_id":"job-twin","status":"completed"}}'
signed tornado-org "$dlv"
eq "org delivery: 409" "409 action_conflict" "$code $result"
signed tornado-org "$dlv"
eq "its retry: 409 again" "409 action_conflict" "$code $result"
signed tornado-org '{"delivery_id":"dlv-409","type":"job_completed","data":{"job_id":"job-3","status":"completed"}}'
eq "another body, same delivery id: 409" "409 action_conflict" "$code $result"

# What a signed body may not carry: raw control bytes inside a string
# (a NUL would cut job-4<NUL>-x to job-4), or a key twice.
# bad_body NAME PRINTF_FORMAT: signs and sends the bytes printf makes.
bad_body() {
	printf "$2" > "$scratch/raw"
	"$HB" sign --endpoint tornado < "$scratch/raw" > "$scratch/sh"
	code=$(curl -s -o "$scratch/reply" -w '%{http_code}' \
	    -H 'Content-Type: application/json' -H "$(cat "$scratch/sh")" \
	    --data-binary "@$scratch/raw" "$base/hooks/tornado")
	eq "$1" "400 malformed" "$code $(jget result "$(cat "$scratch/reply")")"
}
r0=$(receipts)
bad_body "raw NUL in job_id" '{"type":"job_completed","job_id":"job-4\000-x","status":"completed"}'
bad_body "raw CR LF in key" '{"type":"job_completed","job_id":"job-4","status":"completed","key":"k\r\nX: 1"}'
bad_body "raw ESC in error" '{"type":"job_failed","job_id":"job-4","status":"failed","error":"\033[2J"}'
bad_body "escaped ESC in job_id" '{"type":"job_completed","job_id":"job-4\\u001b","status":"completed"}'
bad_body "duplicate key" '{"type":"job_completed","job_id":"job-4","job_id":"job-5","status":"completed"}'
bad_body "duplicate key in data" '{"type":"job_completed","job_id":"job-4","status":"completed","status":"failed"}'
eq "malformed bodies write nothing" "$r0" "$(receipts)"

# ---- the other schemes ----
signed std "$(completed job-s)"
eq "Standard Webhooks" "200 accepted" "$code $result"
req POST keyed "$(completed job-k)" -H 'Content-Type: application/json' \
    --data-binary "@$scratch/body" -H 'X-Hook-Key: wrong'
eq "key mode, wrong key" "401 unauthorized" "$code $result"
req POST keyed "$(completed job-k)" -H 'Content-Type: application/json' \
    --data-binary "@$scratch/body" -H 'X-Hook-Key: a-long-shared-key'
eq "key mode, right key" "200 accepted" "$code $result"

signed mux "$(completed job-m)"
eq "hmac on another header (Mux-Signature)" "200 accepted" "$code $result"
contains "sign names that header" "Mux-Signature: t=" "$(cat "$scratch/sh")"

# ---- health and metrics ----
req GET _health ""
eq "health" "200" "$code"
req GET _metrics ""
eq "metrics" "200" "$code"
contains "metrics: pending" "hookbox_outbox_actions{state=\"pending\"} $(pending)" "$reply"
contains "metrics: conflicts (terminal and action)" "hookbox_conflicts_open 2" "$reply"
contains "metrics: receipts" 'hookbox_receipts{result="accepted"}' "$reply"
contains "metrics: content type" "text/plain; version=0.0.4" "$(cat "$scratch/hdr")"
# A proxy on this host makes the internet's requests come from loopback:
# the snippet refuses what it marks as forwarded, there only.
req GET _health "" -H 'X-Forwarded-For: 203.0.113.9'
eq "health, forwarded by a proxy: refused" "403" "$code"
req GET _metrics "" -H 'Forwarded: for=203.0.113.9'
eq "metrics, forwarded by a proxy: refused" "403" "$code"
# A proxy that sets only X-Real-IP, or an X-Forwarded-For left empty.
req GET _health "" -H 'X-Real-IP: 203.0.113.9'
eq "health, X-Real-IP alone: refused" "403" "$code"
req GET _status "" -H 'X-Forwarded-For;'
eq "status page, an empty X-Forwarded-For: refused" "403" "$code"
req POST tornado "$(completed job-1)" -H 'Content-Type: application/json' \
    --data-binary "@$scratch/body" -H 'X-Forwarded-For: 203.0.113.9'
eq "a forwarded callback still reaches the responder" \
    "401 unauthorized" "$code $result"

# ---- busy: state.db write-locked past the busy timeout ----
mkfifo "$tmp/lock"
(sqlite3 "$HOOKBOX_DIR/state.db" < "$tmp/lock" >/dev/null 2>&1) &
exec 3> "$tmp/lock"
# A busy timeout: the holder must get the lock even if a probe has it.
printf '.timeout 10000\nBEGIN IMMEDIATE; SELECT 1;\n' >&3
wait_locked "$HOOKBOX_DIR/state.db"
r0=$(receipts)
signed tornado "$(completed job-4)"
eq "503 while locked" "503 unavailable" "$code $result"
contains "Retry-After" "Retry-After:" "$(cat "$scratch/hdr")"
req GET _health ""
eq "health 503 while locked" "503" "$code"
echo "ROLLBACK;" >&3
exec 3>&-
wait $! 2>/dev/null
eq "nothing written while locked" "$r0" "$(receipts)"
signed tornado "$(completed job-4)"
eq "the retry is accepted" "200 accepted" "$code $result"

# ---- the replay scenarios, against this instance ----
for s in "$top"/tests/replay/*.sh; do
	case "$s" in */common.sh) continue ;; esac
	if out=$(sh "$s" "$base" tornado tornado-org 2>&1); then
		pass
	else
		fail "replay $(basename "$s"): $out"
	fi
done

# ---- poll: the status API, static JSON served by nginx ----
printf 'provider-api-key' | "$HB" tenant add poller \
    --status-base "$base/status" --api-key-file -
"$HB" endpoint add poller-hook --tenant poller --secret-file "$tmp/hmac.secret"
"$HB" destination add sink --tenant poller --url http://127.0.0.1:9/sink
for j in job-p1 job-p2 job-p3; do
	"$HB" job add $j --tenant poller --attempt "att-$j" --step analyze-v1 \
	    --destination sink
done
mkdir -p "$tmp/nginx/status/jobs"
printf '{"id":"job-p1","status":"Completed","step":"Finished","finished_at":1764500000000}' \
    > "$tmp/nginx/status/jobs/job-p1"
printf '{"id":"job-p2","status":"Processing","step":"Muxing"}' \
    > "$tmp/nginx/status/jobs/job-p2"
# job-p3 has no document: a 404 must not stop the others.
out=$("$HB" poll 2>"$tmp/poll.err"); rc=$?
eq "poll exits 0" 0 $rc
eq "poll: completed job accepted" accepted \
    "$(jget result "$(echo "$out" | grep '	job-p1	' | cut -f3)")"
eq "poll: running job recorded" recorded \
    "$(jget result "$(echo "$out" | grep '	job-p2	' | cut -f3)")"
contains "poll: missing job reported" "job-p3" "$out"
contains "poll summary" \
    " event=poll_summary asked=3 answered=2 failed=1 unavailable=0" \
    "$(cat "$tmp/poll.err")"
m=$(curl -s "$base/hooks/_metrics")
contains "metrics: polls answered" 'hookbox_polls_total{outcome="answered"} 2' "$m"
contains "metrics: polls failed" 'hookbox_polls_total{outcome="failed"} 1' "$m"
signed poller-hook "$(completed job-p1)"
eq "webhook after poll: duplicate" "200 duplicate" "$code $result"
out=$("$HB" poll 2>/dev/null)
lacks "finished jobs are not asked again" "job-p1" "$out"
# Least recently asked first: two unfinished jobs take turns.
o1=$("$HB" poll --limit 1 2>/dev/null | cut -f2)
o2=$("$HB" poll --limit 1 2>/dev/null | cut -f2)
o3=$("$HB" poll --limit 1 2>/dev/null | cut -f2)
eq "poll --limit 1 takes turns" "job-p2 job-p3 job-p2" "$o1 $o2 $o3"

# ---- the log: one line per request, with its keys; never a secret or a body ----
# rid: the X-Request-Id of the last answer; logline RID: the responder's
# lines for it.
rid() { tr -d '\r' < "$scratch/hdr" | sed -n 's/^[Xx]-[Rr]equest-[Ii]d: //p'; }
logline() { grep " request_id=$1\( \|\$\)" "$tmp/fcgi.log"; }
# key_in WHAT KEY=VALUE LINE: the pair is in the line, as a whole key.
key_in() {
	case " $3 " in
	*" $2 "*) pass ;;
	*) fail "$1: '$2' not in '$3'" ;;
	esac
}
"$HB" job add job-log --tenant acme --attempt att-log --step analyze-v1 \
    --destination sink
marker="marker-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
signed tornado "{\"type\":\"job_completed\",\"job_id\":\"job-log\",\"status\":\"completed\",\"key\":\"$marker\"}"
eq "log: accepted" "200 accepted" "$code $result"
sig_ok=$(sed -n 's/.*v1=//p' "$scratch/sh")
r=$(rid)
eq "log: nginx's \$request_id answered" 32 "${#r}"
l=$(logline "$r")
eq "log: accepted: one line" 1 "$(printf '%s\n' "$l" | grep -c .)"
for kv in level=info event=request method=POST endpoint=tornado tenant=acme \
    result=accepted status=200 action=acme:att-log:analyze-v1 \
    request_id="$r"; do
	key_in "log: accepted: $kv" "$kv" "$l"
done
contains "log: accepted: a time first" "ts=20" "$(printf '%s' "$l" | cut -c1-5)"
contains "log: accepted: duration" " duration_ms=" "$l"
badsig=$(printf '%s' "$marker" | sha256sum | cut -c1-64)
req POST tornado "{\"job_id\":\"$marker\"}" -H 'Content-Type: application/json' \
    --data-binary "@$scratch/body" \
    -H "X-Tornado-Signature: t=$(date +%s),v1=$badsig"
eq "log: 401" "401 unauthorized" "$code $result"
l=$(logline "$(rid)")
eq "log: 401: one line" 1 "$(printf '%s\n' "$l" | grep -c .)"
for kv in level=warn event=request method=POST endpoint=tornado tenant=acme \
    result=unauthorized status=401; do
	key_in "log: 401: $kv" "$kv" "$l"
done
req PUT tornado "{}" -H 'Content-Type: application/json' --data-binary "{}"
eq "log: 405" 405 "$code"
l=$(logline "$(rid)")
eq "log: 405: one line" 1 "$(printf '%s\n' "$l" | grep -c .)"
for kv in event=request method=PUT endpoint=tornado result=method_not_allowed \
    status=405; do
	key_in "log: 405: $kv" "$kv" "$l"
done
req GET _health ""
l=$(logline "$(rid)")
key_in "log: health logged" "endpoint=_health" "$l"
# A hostile name: quoted and escaped, on one line.
req POST 'no%20such%22one' "{}" -H 'Content-Type: application/json' \
    --data-binary "{}"
l=$(logline "$(rid)")
key_in "log: a name with a space and a quote, escaped" \
    'endpoint="no such\"one"' "$l"
log=$(cat "$tmp/fcgi.log")
lacks "log: no body" "$marker" "$log"
lacks "log: no signature (accepted)" "$sig_ok" "$log"
lacks "log: no signature (refused)" "$badsig" "$log"
lacks "log: no secret" "hmac-secret-for-tests" "$log"
lacks "log: no key" "a-long-shared-key" "$log"
eq "log: every line structured" 0 \
    "$(grep -vc '^ts=[0-9T:.-]*Z level=[a-z]* event=[a-z_]*' "$tmp/fcgi.log")"

# ---- configuration changed with the tool: in force for the next request ----
# Each of the three workers serves from a snapshot of its own, and no
# answer comes from it unless the version read with the request is its
# own: every change below is in force for the next request, whichever
# worker takes it (each step is sent three times).
printf 'second-hmac-secret-for-tests' > "$tmp/hmac2.secret"
chmod 600 "$tmp/hmac2.secret"
# with SECRET_FILE ENDPOINT BODY: a POST signed with that secret.
with() {
	_t=$(date +%s)
	_mac=$(printf '%s.%s' "$_t" "$3" |
	    openssl dgst -sha256 -hmac "$(cat "$1")" -r | cut -d' ' -f1)
	req POST "$2" "$3" -H 'Content-Type: application/json' \
	    --data-binary "@$scratch/body" \
	    -H "X-Tornado-Signature: t=$_t,v1=$_mac"
}
# thrice WHAT WANT SECRET_FILE ENDPOINT BODY
thrice() {
	_what=$1 _want=$2
	shift 2
	for _i in 1 2 3; do
		with "$@"
		eq "$_what ($_i)" "$_want" "$code $result"
	done
}
for j in job-c1 job-c2 job-c3 job-c4; do
	"$HB" job add $j --tenant acme --attempt "att-$j" --step analyze-v1 \
	    --destination sink
done
thrice "a secret not added yet" "401 unauthorized" "$tmp/hmac2.secret" \
    tornado "$(completed job-c1)"
"$HB" endpoint secret add --secret-file "$tmp/hmac2.secret" tornado
with "$tmp/hmac2.secret" tornado "$(completed job-c1)"
eq "a secret added: the next request" "200 accepted" "$code $result"
thrice "and every one after" "200 duplicate" "$tmp/hmac2.secret" tornado \
    "$(completed job-c1)"
old_id=$("$HB" endpoint secret list --json tornado |
    sed -n 's/^[^0-9]*"id":[ \t]*\([0-9]*\).*/\1/p' | head -n 1)
"$HB" endpoint secret revoke tornado "$old_id"
thrice "a secret revoked: refused" "401 unauthorized" "$tmp/hmac.secret" \
    tornado "$(completed job-c2)"
with "$tmp/hmac2.secret" tornado "$(completed job-c2)"
eq "the other still accepted" "200 accepted" "$code $result"
"$HB" job remove --tenant acme job-c3
thrice "a job removed" "422 unknown_job" "$tmp/hmac2.secret" tornado \
    "$(completed job-c3)"
"$HB" endpoint add late --tenant acme --secret-file "$tmp/hmac2.secret"
with "$tmp/hmac2.secret" late "$(completed job-c3)"
eq "an endpoint added" "422 unknown_job" "$code $result"
"$HB" endpoint remove late
thrice "an endpoint removed" "404 unknown_endpoint" "$tmp/hmac2.secret" \
    late "$(completed job-c3)"
"$HB" tenant set --inactive acme
thrice "a tenant made inactive" "404 unknown_endpoint" \
    "$tmp/hmac2.secret" tornado "$(completed job-c4)"
"$HB" tenant set --active acme
with "$tmp/hmac2.secret" tornado "$(completed job-c4)"
eq "and active again" "200 accepted" "$code $result"
sqlite3 "$HOOKBOX_DIR/config.db" "DELETE FROM secrets
    WHERE endpoint = 'tornado'"
thrice "plain SQL behind the tool's back" "401 unauthorized" \
    "$tmp/hmac2.secret" tornado "$(completed job-c4)"
sqlite3 "$HOOKBOX_DIR/config.db" "INSERT INTO secrets(endpoint, secret,
    created_at) VALUES ('tornado', CAST('hmac-secret-for-tests' AS BLOB), 0)"
signed tornado "$(completed job-c4)"
eq "and back" "200 duplicate" "$code $result"

eq "no worker died" "$workers_before" "$(workers)"

# ---- CGI mode: the same binary, one request from the environment ----
body=$(completed job-2)
sig=$(printf '%s' "$body" | "$HB" sign --endpoint tornado | sed 's/^[^:]*: //')
out=$(printf '%s' "$body" | env -i HOOKBOX_DIR="$HOOKBOX_DIR" \
    GATEWAY_INTERFACE=CGI/1.1 REQUEST_METHOD=POST PATH_INFO=/hooks/tornado \
    CONTENT_TYPE=application/json CONTENT_LENGTH=${#body} \
    HTTP_X_TORNADO_SIGNATURE="$sig" "$FCGI" 2>/dev/null)
contains "CGI status line" "Status: 200 OK" "$out"
contains "CGI body" '"result":"accepted"' "$out"

# ---- spawn-fcgi: the listening socket on fd 0 ----
sock2="$tmp/spawned.sock"
spawn-fcgi -s "$sock2" -P "$tmp/spawned.pid" -- "$FCGI" -d "$HOOKBOX_DIR" \
    >/dev/null 2>&1
until_true 60 test -S "$sock2"
pids="$pids $(cat "$tmp/spawned.pid" 2>/dev/null)"
body=$(completed job-2)
out=$(printf '%s' "$body" | env -i REQUEST_METHOD=POST \
    DOCUMENT_URI=/hooks/tornado CONTENT_TYPE=application/json \
    CONTENT_LENGTH=${#body} HTTP_X_TORNADO_SIGNATURE="$sig" \
    cgi-fcgi -bind -connect "$sock2" 2>/dev/null)
contains "spawn-fcgi answers" '"result":"duplicate"' "$out"

# ---- an endpoint whose format is declared (hookbox(1), MAPPED ENDPOINTS) ----
printf '%s\n' '{"destination": "sink", "event_id": "/id",' \
    ' "subject": "/data/asset_id", "version": "/data/version",' \
    ' "type": "/type", "occurred": "/created_at",' \
    ' "steps": {"publish": ["asset.approved", "asset.replaced"]},' \
    ' "undo": {"unpublish": ["asset.unpublished"]},' \
    ' "ignore": ["asset.viewed"]}' > "$tmp/cms.json"
"$HB" endpoint add cms --tenant acme --kind mapped --mapping "$tmp/cms.json" \
    --header Cms-Signature --secret-file "$tmp/hmac.secret" >/dev/null
# cms ID TYPE TIME VERSION: one event of asset a-1, signed and sent.
cms() {
	signed cms "$(printf '{"id":"%s","type":"%s","created_at":"%s",%s%s}}' \
	    "$1" "$2" "$3" '"data":{"asset_id":"a-1","version":' "$4")"
}
cms e-1 asset.approved 2026-12-01T10:00:00Z 2
eq "mapped: approved v2" "200 accepted acme:cms/a-1:2:publish" \
    "$code $result $(jget action "$reply")"
cms e-2 asset.approved 2026-12-01T11:00:00Z 3
eq "mapped: approved v3" "200 accepted acme:cms/a-1:3:publish" \
    "$code $result $(jget action "$reply")"
cms e-3 asset.replaced 2026-12-01T12:00:00Z 2
eq "mapped: v2 after v3 is stale" "200 stale" "$code $result"
cms e-1 asset.approved 2026-12-01T10:00:00Z 2
eq "mapped: the same event id again" "200 duplicate" "$code $result"
cms e-4 asset.unpublished 2026-12-01T13:00:00Z 3
eq "mapped: unpublish v3" "200 accepted acme:cms/a-1:3:unpublish" \
    "$code $result $(jget action "$reply")"
cms e-5 asset.approved 2026-12-01T12:30:00Z 3
eq "mapped: an approval older than the unpublish" "200 stale" "$code $result"
cms e-6 asset.viewed 2026-12-01T14:00:00Z 3
eq "mapped: an ignored type" "200 ignored" "$code $result"
cms e-7 asset.approved 2026-12-01T15:00:00Z '"three"'
eq "mapped: a version that is no integer" "400 malformed" "$code $result"
contains "mapped: the field named" "version: not an integer" "$reply"
req POST cms '{"id":"e-8"}' -H 'Content-Type: application/json' \
    --data-binary "@$scratch/body"
eq "mapped: unsigned" "401 unauthorized" "$code $result"
eq "mapped: the subject's state, as the unpublish left it" "3|undo|unpublish" \
    "$(sqlite3 "file:$HOOKBOX_DIR/state.db?mode=ro" "SELECT version, effect,
    step FROM subjects WHERE tenant = 'acme' AND subject = 'cms/a-1'")"
eq "mapped: three actions, each with its version" "3" \
    "$(sqlite3 "file:$HOOKBOX_DIR/state.db?mode=ro" "SELECT count(*) FROM
    outbox WHERE json_extract(payload, '$.subject') = 'a-1' AND
    json_extract(payload, '$.version') IN (2, 3)")"

# ---- two mapped endpoints of one tenant: each its subjects' namespace ----
# A second provider of acme's, on a shared key, sends what it likes about
# asset a-1.  It can neither freeze cms's a-1 (a version of 2^53 - 1) nor
# take cms's next action (its a-78 v1 first): its events are its namespace's.
sed 's/"sink"/"minor-sink"/' "$tmp/cms.json" > "$tmp/minor.json"
"$HB" destination add minor-sink --tenant acme \
    --url http://127.0.0.1:9/minor >/dev/null
printf 'a-minor-shared-key' | "$HB" endpoint add minor --tenant acme \
    --kind mapped --mapping "$tmp/minor.json" --auth key \
    --header X-Minor-Key --secret-file - >/dev/null
# ev ID TYPE TIME VERSION [ASSET]: an event's body, of asset a-1 or ASSET.
ev() {
	printf '{"id":"%s","type":"%s","created_at":"%s","data":{%s"%s",%s%s}}' \
	    "$1" "$2" "$3" '"asset_id":' "${5:-a-1}" '"version":' "$4"
}
# minor ID TYPE TIME VERSION [ASSET]: that event, with minor's key.
minor() {
	req POST minor "$(ev "$@")" -H 'Content-Type: application/json' \
	    -H 'X-Minor-Key: a-minor-shared-key' --data-binary "@$scratch/body"
}
minor m-1 asset.approved 2026-12-01T16:00:00Z 9007199254740991
eq "namespaces: the other endpoint's highest version" \
    "200 accepted acme:minor/a-1:9007199254740991:publish" \
    "$code $result $(jget action "$reply")"
signed cms "$(ev e-8 asset.approved 2026-12-01T17:00:00Z 4)"
eq "namespaces: cms's v4 after the other's 2^53 - 1" \
    "200 accepted acme:cms/a-1:4:publish" "$code $result $(jget action "$reply")"
minor m-2 asset.approved 2026-12-01T17:00:00Z 1 a-78
eq "namespaces: the other endpoint's a-78 v1 first" \
    "200 accepted acme:minor/a-78:1:publish" "$code $result $(jget action "$reply")"
signed cms "$(ev e-9 asset.approved 2026-12-01T17:00:00Z 1 a-78)"
eq "namespaces: cms's own a-78 v1 after it" \
    "200 accepted acme:cms/a-78:1:publish" "$code $result $(jget action "$reply")"
eq "namespaces: each action to its endpoint's destination" "sink minor-sink" \
    "$(sqlite3 "file:$HOOKBOX_DIR/state.db?mode=ro" "SELECT destination FROM
    outbox WHERE action_id IN ('acme:cms/a-78:1:publish',
    'acme:minor/a-78:1:publish') ORDER BY action_id" | tr '\n' ' ' |
    sed 's/ $//')"
# A second route of cms's provider shares its subjects when its mapping
# names the namespace.
sed 's/"destination"/"namespace": "cms", "destination"/' "$tmp/cms.json" \
    > "$tmp/cms2.json"
"$HB" endpoint add cms-2 --tenant acme --kind mapped --mapping \
    "$tmp/cms2.json" --header Cms-Signature --secret-file "$tmp/hmac.secret" \
    >/dev/null
contains "namespaces: named in the mapping" '"namespace":"cms"' \
    "$("$HB" endpoint show --mapping cms-2)"
signed cms-2 "$(ev r-1 asset.approved 2026-12-01T17:00:00Z 4)"
eq "namespaces: cms's v4 through the second route" \
    "200 duplicate acme:cms/a-1:4:publish" "$code $result $(jget action "$reply")"
signed cms-2 "$(ev r-2 asset.approved 2026-12-01T15:00:00Z 3)"
eq "namespaces: and an older one, stale" "200 stale" "$code $result"

# ---- a fan-out: one event, a step to each destination, each once ----
# hookbox(1), MAPPED ENDPOINTS: a replacement publishes on the site and
# purges the CDN; each action is delivered, by a real dispatcher to a
# real HTTP server, to its own destination alone, once.
SINK="$build/tests/sink"
for d in site cdn; do
	"$SINK" -p 0 -l "$tmp/$d.log" > "$tmp/$d.port" 2>/dev/null &
	pids="$pids $!"
	until_true 60 test -s "$tmp/$d.port" || fail "sink $d did not start"
	"$HB" destination add "$d" --tenant acme --idempotent --url \
	    "http://127.0.0.1:$(head -n 1 "$tmp/$d.port")/hook" >/dev/null
done
printf '%s\n' '{"destination": "site", "event_id": "/id",' \
    ' "subject": "/data/asset_id", "version": "/data/version",' \
    ' "type": "/type", "occurred": "/created_at",' \
    ' "steps": {"publish": ["asset.approved", "asset.replaced"],' \
    '  "purge": {"types": ["asset.replaced"], "destination": "cdn"}}}' \
    > "$tmp/fan.json"
eq "fan-out: the endpoint names both destinations" \
    "endpoint fan added: kind mapped, its actions to destination site, cdn" \
    "$("$HB" endpoint add fan --tenant acme --kind mapped --mapping \
    "$tmp/fan.json" --header Cms-Signature --secret-file "$tmp/hmac.secret")"
"$HB" destination remove --tenant acme cdn 2> "$scratch/err"
eq "fan-out: a step's destination is not removed under it" \
    "1 hookbox: destination cdn of tenant acme: still referenced by endpoint fan" \
    "$? $(cat "$scratch/err")"
signed fan "$(ev f-1 asset.replaced 2026-12-01T10:00:00Z 1)"
eq "fan-out: one event, an action a step" \
    '200 accepted ["acme:fan/a-1:1:publish","acme:fan/a-1:1:purge"]' \
    "$code $result $(jget actions "$reply")"
signed fan "$(ev f-2 asset.replaced 2026-12-01T10:00:00Z 1)"
eq "fan-out: the same event under another id" "200 duplicate" \
    "$code $result"
signed fan "$(ev f-3 asset.approved 2026-12-01T11:00:00Z 2)"
eq "fan-out: a type of one step, one action" \
    "200 accepted acme:fan/a-1:2:publish " \
    "$code $result $(jget action "$reply") $(jget actions "$reply")"
# fan_sent: a dispatcher's pass, then whether all three are delivered.
fan_sent() {
	"$HB" dispatch --once >/dev/null 2>&1
	test "$(sqlite3 "file:$HOOKBOX_DIR/state.db?mode=ro" "SELECT count(*)
	    FROM outbox WHERE action_id LIKE 'acme:fan/%' AND
	    state = 'delivered'")" = 3
}
if until_true 30 fan_sent; then pass; else
	fail "fan-out: not all three delivered"
fi
# posted SINK: the actions its log holds, each "path step", sorted.
posted() {
	awk -F'\t' '$2 == "POST" { print $3, $10 }' "$tmp/$1.log" |
	    sed 's/ .*"step":"\([^"]*\)".*/ \1/' | sort | tr '\n' ' '
}
eq "fan-out: each delivered once to its own destination" \
    "site: /hook publish /hook publish  cdn: /hook purge " \
    "site: $(posted site) cdn: $(posted cdn)"

# ---- the Mux preset: its mapping and sample bodies from presets/ ----
presets="$(dirname "$0")/../../presets"
"$HB" destination add downstream --tenant acme \
    --url http://127.0.0.1:9/sink >/dev/null
"$HB" endpoint add mux-assets --tenant acme --kind mapped \
    --mapping "$presets/mux.json" --header Mux-Signature \
    --secret-file "$tmp/hmac.secret" >/dev/null
ready=$(cat "$presets/mux-asset-ready.json")
asset=tb8pTuaWwzsDRWOXM2fhRzqjkkqBvrcT
# Mux numbers nothing: the occurrence (ms) is the version.
signed mux-assets "$ready"
eq "mux preset: asset ready" "200 accepted acme:mux-assets/$asset:1796119205000:publish" \
    "$code $result $(jget action "$reply")"
contains "mux preset: signed on Mux-Signature" "Mux-Signature: t=" \
    "$(cat "$scratch/sh")"
signed mux-assets "$ready"
eq "mux preset: the same delivery again" "200 duplicate" "$code $result"
signed mux-assets "$(cat "$presets/mux-asset-deleted.json")"
eq "mux preset: asset deleted" \
    "200 accepted acme:mux-assets/$asset:1796124600000:unpublish" \
    "$code $result $(jget action "$reply")"
# A ready event sent late under a new id, older than the deletion.
renamed() { printf '%s' "$ready" | sed "s/\"id\":\"3a56ac3d/\"id\":\"$1/${2:-}"; }
signed mux-assets "$(renamed 3a56ac3e)"
eq "mux preset: a late ready after the deletion" "200 stale" "$code $result"
signed mux-assets "$(renamed 3a56ac3f '; s/asset.ready/asset.created/')"
eq "mux preset: asset created is ignored" "200 ignored" "$code $result"

# ---- the Replicate preset: Standard Webhooks, the event id a header ----
# Replicate signs with webhook-id, webhook-timestamp, webhook-signature;
# webhook-id is the same when a delivery is retried, so it is the event
# id.  Replicate numbers nothing: the prediction's created_at (ms) is the
# version.
printf 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' |
    "$HB" endpoint add replicate --tenant acme --auth standard \
    --kind mapped --mapping "$presets/replicate.json" --secret-file - \
    >/dev/null
pred=q6mzv1t8hdrm80ckq3vbkc3pa0
signed replicate "$(cat "$presets/replicate-prediction-processing.json")"
eq "replicate preset: processing is ignored" "200 ignored" "$code $result"
signed replicate "$(cat "$presets/replicate-prediction-succeeded.json")"
eq "replicate preset: succeeded" \
    "200 accepted acme:replicate/$pred:1796031672345:ingest" \
    "$code $result $(jget action "$reply")"
contains "replicate preset: signed as Standard Webhooks" \
    "webhook-signature: v1," "$(cat "$scratch/sh")"
# Retried by Replicate: the same webhook-id, the same signed request.
set --
while IFS= read -r _h; do set -- "$@" -H "$_h"; done < "$scratch/sh"
req POST replicate "$(cat "$scratch/sbody")" \
    -H 'Content-Type: application/json' --data-binary "@$scratch/body" "$@"
eq "replicate preset: the delivery retried" "200 duplicate" "$code $result"
# Another webhook (another webhook-id) with the same prediction.
signed replicate "$(cat "$presets/replicate-prediction-succeeded.json")"
eq "replicate preset: succeeded again under another id" "200 duplicate" \
    "$code $result"
eq "replicate preset: one action, its payload the prediction's" "1" \
    "$(sqlite3 "file:$HOOKBOX_DIR/state.db?mode=ro" "SELECT count(*) FROM
    outbox WHERE json_extract(payload, '$.subject') = '$pred' AND
    json_extract(payload, '$.type') = 'succeeded' AND
    destination = 'downstream'")"
# The prediction travels with it, as Replicate sent it: its output URLs.
eq "replicate preset: the payload's data is the body as sent" \
    "$(cat "$presets/replicate-prediction-succeeded.json")" \
    "$(sqlite3 "file:$HOOKBOX_DIR/state.db?mode=ro" "SELECT
    json_extract(payload, '$.data') FROM outbox WHERE
    json_extract(payload, '$.subject') = '$pred'")"
eq "mux preset: the payload's data holds the playback ids" \
    "OpEr8gUrA5YBHDbx9ytF5OXVWVSWEq4z" \
    "$(sqlite3 "file:$HOOKBOX_DIR/state.db?mode=ro" "SELECT
    json_extract(payload, '$.data.data.playback_ids[0].id') FROM outbox
    WHERE action_id = 'acme:mux-assets/$asset:1796119205000:publish'")"

# ---- the disorder tester against this instance (and this build) ----
for ep in "tornado" "mux-assets --sample $presets/mux-asset-ready.json
    --undo $presets/mux-asset-deleted.json" \
    "replicate --sample $presets/replicate-prediction-succeeded.json"; do
	rc=0
	# shellcheck disable=SC2086
	"$HB" disorder --url "$base" --at-once 4 --endpoint $ep \
	    > "$scratch/disorder" 2>&1 || rc=$?
	eq "disorder ${ep%% *}: exit ($(cat "$scratch/disorder"))" 0 "$rc"
	contains "disorder ${ep%% *}: every case consistent" \
	    "0 of " "$(tail -n 1 "$scratch/disorder" | cut -c1-5)"
done
eq "disorder: no tenant of its own left" "" "$("$HB" tenant list |
    grep disorder-)"
eq "disorder: no row of its own left" 0 \
    "$(sqlite3 "file:$HOOKBOX_DIR/state.db?mode=ro" "SELECT
    (SELECT count(*) FROM receipts WHERE tenant LIKE 'disorder-%') +
    (SELECT count(*) FROM outbox WHERE tenant LIKE 'disorder-%') +
    (SELECT count(*) FROM subjects WHERE tenant LIKE 'disorder-%')")"
eq "disorder: no counter of its own left, for an alert to read" "0 0" \
    "$(sqlite3 "file:$HOOKBOX_DIR/state.db?mode=ro" "SELECT count(*) FROM
    metrics WHERE name <> 'minute' AND l1 LIKE 'disorder-%'") $(curl -s \
    "$base/hooks/_metrics" | grep -c 'disorder-')"

# ---- shutdown: SIGTERM stops the workers and removes the socket ----
kill "$fcgi_pid"
wait "$fcgi_pid"
eq "responder exits cleanly" 0 $?
contains "stop line" " level=info event=stop program=hookbox-fcgi exit=0" \
    "$(cat "$tmp/fcgi.log")"
[ -e "$sock" ] && fail "socket left behind" || pass

# ---- the responder down: nginx answers as the contract says ----
# Every route under /hooks/ is answered 503, in JSON, with Retry-After,
# nothing committed; never nginx's own 502 page.  First with the
# responder stopped (no socket), then killed (a socket nobody serves).
down() {	# WHAT: callbacks, health and the status page, each 503 JSON
	req POST tornado "$(completed job-1)" \
	    -H 'Content-Type: application/json' --data-binary "@$scratch/body"
	eq "$1: a callback, 503 unavailable" "503 unavailable" "$code $result"
	contains "$1: Retry-After" "Retry-After: 5" "$(cat "$scratch/hdr")"
	contains "$1: JSON" "Content-Type: application/json" \
	    "$(cat "$scratch/hdr")"
	req GET _health ""
	eq "$1: health, 503" 503 "$code"
	eq "$1: health, unavailable" unavailable "$(jget status "$reply")"
	contains "$1: health, Retry-After" "Retry-After: 5" \
	    "$(cat "$scratch/hdr")"
	req GET _status ""
	eq "$1: the status page, 503" 503 "$code"
	req GET nosuch ""
	eq "$1: any route, 503 JSON" "503 unavailable" "$code $result"
}
down "responder stopped"
HOOKBOX_BUSY_MS=400 "$FCGI" -s "$sock" -w 2 2> "$tmp/fcgi-killed.log" &
killed=$!
until_true 60 test -S "$sock"
until_true 60 curl -sf "$base/hooks/_health" >/dev/null
pkill -KILL -P "$killed"
kill -KILL "$killed"
wait "$killed" 2>/dev/null
until_true 20 sh -c "! pgrep -P $killed >/dev/null"
down "responder killed"
rm -f "$sock"

# ---- a stop sent the moment the socket exists is never lost ----
# The window is between the bind and the point where the responder takes
# its stops: libfcgi catches SIGTERM into a flag of its own there.  A
# supervisor, and a single process (-t 1), each tried many times; one
# that outlives its stop by 20 s is stuck: it is killed, and the tries
# end there.
early_stop() {
	_lost=0
	for _i in $(seq 40); do
		rm -f "$tmp/early.sock"
		"$FCGI" -s "$tmp/early.sock" "$@" 2>> "$tmp/early.log" &
		_pid=$!
		until [ -S "$tmp/early.sock" ] || ! kill -0 "$_pid" 2>/dev/null
		do :; done
		kill "$_pid"
		if ! until_true 20 eval '! kill -0 "$_pid" 2>/dev/null'; then
			_lost=$((_lost + 1))
			pkill -KILL -P "$_pid"
			kill -KILL "$_pid"
			wait "$_pid" 2>/dev/null
			break
		fi
		wait "$_pid" 2>/dev/null
	done
	eq "stop right after the bind ($*): stuck processes" 0 "$_lost"
}
early_stop -w 1
early_stop -w 1 -t 1
rm -f "$tmp/early.sock"

# ---- counters: persisted with commits that happen anyway; kept across a restart ----
# One worker, so that one process holds every count not yet committed.
start_one() {
	"$FCGI" -s "$sock" -w 1 2>> "$tmp/fcgi2.log" &
	fcgi_pid=$!
	pids="$pids $fcgi_pid"
	until_true 60 test -S "$sock"
}
# counts: every request counter but metrics' own, sorted.
counts() { curl -s "$base/hooks/_metrics" | grep '^hookbox_requests_total{' |
    grep -v 'endpoint="_metrics"' | sort; }
msample() { curl -s "$base/hooks/_metrics" | awk -v s="$1" '$1 == s { print $2; f = 1 } END { if (!f) print 0 }'; }
files() { cat "$HOOKBOX_DIR/state.db" "$HOOKBOX_DIR/state.db-wal" 2>/dev/null | cksum; }
start_one
u0=$(msample 'hookbox_requests_total{endpoint="tornado",result="unauthorized"}')
before=$(files)
for i in $(seq 1 30); do
	req POST tornado "$(completed job-3)" -H 'Content-Type: application/json' \
	    --data-binary "@$scratch/body" -H "X-Tornado-Signature: t=1,v1=00"
done
eq "30 refused requests: 401" "401 unauthorized" "$code $result"
eq "30 refused requests wrote nothing (state.db and its WAL unchanged)" \
    "$before" "$(files)"
eq "they are counted (from memory)" $((u0 + 30)) \
    "$(msample 'hookbox_requests_total{endpoint="tornado",result="unauthorized"}')"
eq "metrics wrote nothing either" "$before" "$(files)"
"$HB" job add job-restart --tenant acme --attempt att-restart \
    --step analyze-v1 --destination sink
t0=$(date +%s)
signed tornado "$(completed job-restart)"
eq "an accepted request commits the counts with it" "200 accepted" "$code $result"
c1=$(counts)
contains "counted before the restart" \
    "hookbox_requests_total{endpoint=\"tornado\",result=\"unauthorized\"} $((u0 + 30))" "$c1"
kill "$fcgi_pid"; wait "$fcgi_pid"
start_one
eq "counts after a restart = counts before" "$c1" "$(counts)"
# The secret the request was signed with, and when: a gauge that a
# rotation watches go still before it revokes the old secret.
sid=$(sqlite3 "$HOOKBOX_DIR/config.db" \
    "SELECT max(id) FROM secrets WHERE endpoint = 'tornado'")
used=$(msample "hookbox_endpoint_secret_last_used_timestamp_seconds{endpoint=\"tornado\",secret=\"$sid\"}")
eq "the secret's last use, kept across the restart ($used)" 1 \
    "$(awk -v v="$used" -v t="$t0" 'BEGIN { print (v >= t && v < t + 60) }')"
# E2E_SAMPLE=DIR keeps what an operator would see after the suite: the
# responder's log and the metrics page.
if [ -n "${E2E_SAMPLE:-}" ]; then
	mkdir -p "$E2E_SAMPLE"
	cat "$tmp/fcgi.log" "$tmp/fcgi2.log" > "$E2E_SAMPLE/responder.log"
	curl -s "$base/hooks/_metrics" > "$E2E_SAMPLE/metrics.txt"
fi
kill "$fcgi_pid"; wait "$fcgi_pid"

finish e2e
