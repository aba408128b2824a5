#!/bin/sh
# tests/e2e/admin.sh: configuring hookbox with its tool, on a real config.db:
# what add refuses (and how it says so), set, an endpoint's secrets by id
# (add, list, revoke, --retire-others-after) and that a revoked or
# expired secret is refused by the responder itself; endpoints of kind
# mapped (a mapping file checked, stored, shown back, replaced); and a
# config.db of the previous schema, upgraded by init (one made by hand,
# and one made by the previous release).
# Usage: tests/e2e/admin.sh PATH_TO_HOOKBOX (hookbox-fcgi is looked for beside
# it; the previous release's tool in $HOOKBOX_OLD is optional: with it,
# a config.db that release made is configured with this one, and read
# back by it).
set -u
HB=$(readlink -f "${1:?usage: admin.sh HOOKBOX}")
FCGI=$(dirname "$HB")/hookbox-fcgi
OLD=${HOOKBOX_OLD:-}
here=$(dirname "$0")
. "$here/../helpers/lib.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HOOKBOX_DIR="$tmp/data"
db="$HOOKBOX_DIR/config.db"
q() { sqlite3 "$db" "$1"; }

# refused WHAT CODE NEEDLE COMMAND...: the command exits CODE and says
# NEEDLE on standard error.
refused() {
	_what=$1 _code=$2 _needle=$3
	shift 3
	"$@" >/dev/null 2>"$tmp/err"
	eq "$_what: exit" "$_code" $?
	contains "$_what: said" "$_needle" "$(cat "$tmp/err")"
}

# Secrets in files only the owner reads (so no warning), and one that
# others may read.
umask 077
printf 'an-hmac-secret-of-32-bytes-12345' > "$tmp/hmac"
printf 'a-second-hmac-secret-0123456789' > "$tmp/hmac2"
printf 'a-third-hmac-secret-0123456789a' > "$tmp/hmac3"
printf 'fifteen-bytes-x' > "$tmp/short"
printf 'whsec_%s' "$(head -c 24 /dev/urandom | base64)" > "$tmp/whsec"
printf 'whsec_c2hvcnQ=' > "$tmp/whsec-short"	# "short": 5 bytes
printf 'whsec_not base64!' > "$tmp/whsec-bad"
printf 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' > "$tmp/bare"	# base64, no prefix
printf 'a-shared-key' > "$tmp/key"
cp "$tmp/hmac" "$tmp/open"
chmod 644 "$tmp/open"
umask 022

"$HB" init >/dev/null; eq "init" 0 $?
"$HB" tenant add acme; eq "tenant add" 0 $?

# ---- 8. validation at add time ----
refused "--status-base ftp" 1 \
    '--status-base "ftp://x": expected http://HOST... or https://HOST...' \
    "$HB" tenant add t1 --status-base ftp://x
refused "--status-base without a host" 1 '--status-base "https://":' \
    "$HB" tenant add t1 --status-base https://
refused "--status-base with a space" 1 '--status-base "http://a b":' \
    "$HB" tenant add t1 --status-base 'http://a b'
eq "refused tenants left nothing" 0 "$(q "SELECT count(*) FROM tenants
    WHERE id = 't1'")"
"$HB" tenant add t2 --status-base https://user@api.example:8443/v1
eq "a URL with user and port" 0 $?
refused "tenant ID with ':'" 1 'tenant ID "a:b": expected 1..128 of' \
    "$HB" tenant add a:b
printf 'a key' | "$HB" tenant add t3 --api-key-file - 2>"$tmp/err"
eq "API key with a space: exit" 1 $?
contains "API key with a space: said" \
    '--api-key-file "-": expected printable ASCII' "$(cat "$tmp/err")"

refused "--url ftp" 1 \
    '--url "ftp://x": expected http://HOST... or https://HOST...' \
    "$HB" destination add d1 --tenant acme --url ftp://x
refused "--url without a host" 1 '--url "http:///path": expected' \
    "$HB" destination add d1 --tenant acme --url http:///path
refused "--url with only a port" 1 '--url "http://:80/": expected' \
    "$HB" destination add d1 --tenant acme --url http://:80/
refused "--status-url" 1 '--status-url "mailto:x@y": expected http' \
    "$HB" destination add d1 --tenant acme --url http://127.0.0.1:9/ \
    --status-url mailto:x@y
refused "destination of an unknown tenant" 1 \
    'destination add: tenant "nosuch" does not exist' \
    "$HB" destination add d1 --tenant nosuch --url http://127.0.0.1:9/
refused "destination secret not base64" 1 \
    '--secret-file "'"$tmp/short"'": expected whsec_ and base64' \
    "$HB" destination add d1 --tenant acme --url http://127.0.0.1:9/ \
    --secret-file "$tmp/short"
refused "destination secret that decodes short" 1 \
    'expected whsec_ and base64 of at least 16 bytes' \
    "$HB" destination add d1 --tenant acme --url http://127.0.0.1:9/ \
    --secret-file "$tmp/whsec-short"
eq "refused destinations left nothing" 0 \
    "$(q "SELECT count(*) FROM destinations")"
"$HB" destination add sink --tenant acme --url http://127.0.0.1:9/sink \
    --secret-file "$tmp/whsec"
eq "destination with a whsec_ secret" 0 $?
"$HB" destination add bare --tenant acme --url https://example.org/h \
    --secret-file "$tmp/bare"
eq "destination with a bare base64 secret" 0 $?

# ---- destinations at internal addresses ----
# Link-local and cloud metadata addresses, however the URL spells them,
# are refused unless the destination allows them; the message names the
# option, the URL, the address libcurl reads from it, and the way out.
why="refused unless the destination allows internal addresses (--allow-internal)"
for u in http://169.254.169.254/latest/meta-data/ http://2852039166/ \
    http://0xa9fea9fe/ http://0251.0376.0251.0376/ http://169.254.43518/; do
	refused "--url $u" 1 \
	    "--url \"$u\": 169.254.169.254 is a cloud metadata service: $why" \
	    "$HB" destination add meta --tenant acme --url "$u"
done
for h in '[::ffff:169.254.169.254]' '[::ffff:a9fe:a9fe]'; do
	refused "--url http://$h/" 1 \
	    "--url \"http://$h/\": $h is a cloud metadata service: $why" \
	    "$HB" destination add meta --tenant acme --url "http://$h/"
done
refused "--url link-local" 1 \
    '--url "http://169.254.77.1:8080/h": 169.254.77.1 is a link-local address (169.254.0.0/16, fe80::/10)' \
    "$HB" destination add meta --tenant acme --url http://169.254.77.1:8080/h
refused "--url IPv6 link-local" 1 \
    '--url "http://[fe80::1%25eth0]/": [fe80::1] is a link-local address' \
    "$HB" destination add meta --tenant acme --url 'http://[fe80::1%25eth0]/'
refused "--url AWS IPv6" 1 '[fd00:ec2::254] is a cloud metadata service' \
    "$HB" destination add meta --tenant acme --url 'http://[fd00:ec2::254]/'
refused "--url metadata name" 1 \
    'metadata.google.internal is a cloud metadata service' \
    "$HB" destination add meta --tenant acme \
    --url http://metadata.google.internal/computeMetadata/v1/
refused "--status-url" 1 \
    "--status-url \"http://169.254.169.254/s\": 169.254.169.254 is a cloud metadata service: $why" \
    "$HB" destination add meta --tenant acme --url http://127.0.0.1:9/ \
    --status-url http://169.254.169.254/s
eq "refused internal destinations left nothing" 0 \
    "$(q "SELECT count(*) FROM destinations WHERE name = 'meta'")"
# Loopback is not internal.
for u in http://127.0.0.1:9/lo 'http://[::1]:9/lo' http://localhost:9/lo; do
	"$HB" destination add lo --tenant acme --url "$u" --status-url "$u"
	eq "loopback $u: taken" "1|0" "$(q "SELECT count(*) || '|' ||
	    max(allow_internal) FROM destinations WHERE name = 'lo'")"
	"$HB" destination remove --tenant acme lo
done
# Allowed: stored, listed, and kept by set until it is taken away.
"$HB" destination add meta --tenant acme --url http://169.254.169.254/latest \
    --status-url http://169.254.169.254/s --allow-internal
eq "--allow-internal: taken" 0 $?
eq "--allow-internal: stored" 1 \
    "$(q "SELECT allow_internal FROM destinations WHERE name = 'meta'")"
contains "--allow-internal: listed" "INTERNAL" "$("$HB" destination list)"
contains "--allow-internal: listed as JSON" '"allow_internal":	true' \
    "$("$HB" destination list --json)"
"$HB" destination set --tenant acme meta --timeout-ms 1234
eq "set keeps it allowed" "1|1234" "$(q "SELECT allow_internal || '|' ||
    timeout_ms FROM destinations WHERE name = 'meta'")"
refused "set --no-allow-internal with its URL internal" 1 \
    "--url \"http://169.254.169.254/latest\": 169.254.169.254 is a cloud metadata service: $why" \
    "$HB" destination set --tenant acme meta --no-allow-internal
refused "set --no-allow-internal with its status URL internal" 1 \
    "--status-url \"http://169.254.169.254/s\": 169.254.169.254" \
    "$HB" destination set --tenant acme meta --no-allow-internal \
    --url http://127.0.0.1:9/m
eq "refused sets changed nothing" "1|http://169.254.169.254/latest" \
    "$(q "SELECT allow_internal || '|' || url FROM destinations
    WHERE name = 'meta'")"
"$HB" destination set --tenant acme meta --no-allow-internal \
    --url http://127.0.0.1:9/m --no-status-url
eq "set --no-allow-internal once nothing is internal" 0 \
    "$(q "SELECT allow_internal FROM destinations WHERE name = 'meta'")"
refused "set --url internal" 1 "$why" \
    "$HB" destination set --tenant acme meta --url http://0xa9fe0101/
"$HB" destination set --tenant acme meta --allow-internal
eq "set --allow-internal alone is a change" "0|1" "$?|$(q "SELECT
    allow_internal FROM destinations WHERE name = 'meta'")"
refused "set --allow-internal --no-allow-internal" 2 "one or the other" \
    "$HB" destination set --tenant acme meta --allow-internal \
    --no-allow-internal
"$HB" destination remove --tenant acme meta

refused "HMAC secret of 15 bytes" 1 \
    '--secret-file "'"$tmp/short"'": expected an HMAC secret of at least 16 bytes' \
    "$HB" endpoint add e1 --tenant acme --secret-file "$tmp/short"
refused "standard secret without whsec_" 1 \
    'expected whsec_ and base64 of at least 16 bytes' \
    "$HB" endpoint add e1 --tenant acme --auth standard \
    --secret-file "$tmp/bare"
refused "standard secret that is not base64" 1 \
    'expected whsec_ and base64' \
    "$HB" endpoint add e1 --tenant acme --auth standard \
    --secret-file "$tmp/whsec-bad"
refused "standard secret that decodes short" 1 \
    'expected whsec_ and base64 of at least 16 bytes' \
    "$HB" endpoint add e1 --tenant acme --auth standard \
    --secret-file "$tmp/whsec-short"
refused "_health is the responder's" 1 \
    "endpoint NAME \"_health\": reserved: names starting with '_'" \
    "$HB" endpoint add _health --tenant acme --secret-file "$tmp/hmac"
refused "_metrics is the responder's" 1 'endpoint NAME "_metrics": reserved' \
    "$HB" endpoint add _metrics --tenant acme --secret-file "$tmp/hmac"
refused "any _name is reserved" 1 'endpoint NAME "_x": reserved' \
    "$HB" endpoint add _x --tenant acme --secret-file "$tmp/hmac"
refused "unknown is the metrics' label" 1 'endpoint NAME "unknown": reserved' \
    "$HB" endpoint add unknown --tenant acme --secret-file "$tmp/hmac"
refused "a name with a slash" 1 'endpoint NAME "a/b": expected 1..128' \
    "$HB" endpoint add a/b --tenant acme --secret-file "$tmp/hmac"
refused "a name starting with a dot" 1 'endpoint NAME "..": expected' \
    "$HB" endpoint add .. --tenant acme --secret-file "$tmp/hmac"
refused "endpoint of an unknown tenant" 1 \
    'endpoint add: tenant "nosuch" does not exist' \
    "$HB" endpoint add e1 --tenant nosuch --secret-file "$tmp/hmac"
now=$(date +%s)
refused "--expires in the past (unix)" 1 \
    '--expires "1000": in the past (expected a time after now)' \
    "$HB" endpoint add e1 --tenant acme --secret-file "$tmp/hmac" \
    --expires 1000
refused "--expires in the past (date)" 1 '--expires "2020-01-01": in the past' \
    "$HB" endpoint add e1 --tenant acme --secret-file "$tmp/hmac" \
    --expires 2020-01-01
refused "--expires +0 is now, not after" 1 '--expires "+0": in the past' \
    "$HB" endpoint add e1 --tenant acme --secret-file "$tmp/hmac" \
    --expires +0
refused "--expires not a time" 2 \
    '--expires "tomorrow": expected UNIXTIME, YYYY-MM-DD, YYYY-MM-DDTHH:MM:SSZ' \
    "$HB" endpoint add e1 --tenant acme --secret-file "$tmp/hmac" \
    --expires tomorrow
refused "--expires not a date" 2 '--expires "2030-02-30": expected' \
    "$HB" endpoint add e1 --tenant acme --secret-file "$tmp/hmac" \
    --expires 2030-02-30
eq "refused endpoints left nothing" 0 "$(q "SELECT count(*) FROM endpoints")"
eq "nor secrets" 0 "$(q "SELECT count(*) FROM secrets")"

"$HB" endpoint add tornado --tenant acme --secret-file "$tmp/hmac" \
    2>"$tmp/err"
eq "endpoint add (0600 file)" 0 $?
eq "no warning for a 0600 file" "" "$(cat "$tmp/err")"
"$HB" endpoint add open --tenant acme --secret-file "$tmp/open" 2>"$tmp/err"
eq "a secret file others can read: added" 0 $?
contains "but warned" \
    "warning: --secret-file \"$tmp/open\": readable by others" \
    "$(cat "$tmp/err")"
"$HB" endpoint add piped --tenant acme --secret-file - < "$tmp/open" \
    2>"$tmp/err"
eq "standard input: added" 0 $?
eq "standard input: never warned" "" "$(cat "$tmp/err")"
"$HB" endpoint add std --tenant acme --auth standard \
    --secret-file "$tmp/whsec"
eq "standard endpoint with whsec_" 0 $?
"$HB" endpoint add keyed --tenant acme --auth key --header X-Key \
    --secret-file "$tmp/key"
eq "key endpoint: a key shorter than 16 bytes is fine" 0 $?
"$HB" endpoint add dated --tenant acme --secret-file "$tmp/hmac" \
    --expires 2099-12-31
eq "--expires YYYY-MM-DD" 0 $?
eq "stored as midnight UTC" 4102358400 \
    "$(q "SELECT expires_at FROM secrets s JOIN endpoints e
    ON s.endpoint = e.name WHERE e.name = 'dated'")"
"$HB" endpoint add dated2 --tenant acme --secret-file "$tmp/hmac" \
    --expires 2099-12-31T12:30:05Z
eq "--expires YYYY-MM-DDTHH:MM:SSZ" 4102403405 \
    "$(q "SELECT expires_at FROM secrets WHERE endpoint = 'dated2'")"
"$HB" endpoint add dated3 --tenant acme --secret-file "$tmp/hmac" \
    --expires +30d
v=$(q "SELECT expires_at - $now FROM secrets WHERE endpoint = 'dated3'")
[ "$v" -ge 2592000 ] && [ "$v" -le 2592060 ] && pass ||
    fail "--expires +30d: $v seconds from now"
"$HB" endpoint add dated4 --tenant acme --secret-file "$tmp/hmac" \
    --expires $((now + 3600))
eq "--expires UNIXTIME" $((now + 3600)) \
    "$(q "SELECT expires_at FROM secrets WHERE endpoint = 'dated4'")"

refused "--output not JSON" 1 '--output "{nope": expected a JSON object' \
    "$HB" job add j0 --tenant acme --attempt a0 --step s --destination sink \
    --output '{nope'
refused "--output an array" 1 '--output "[1,2]": expected a JSON object' \
    "$HB" job add j0 --tenant acme --attempt a0 --step s --destination sink \
    --output '[1,2]'
refused "--output a string" 1 '--output "\x22x\x22": expected a JSON object' \
    "$HB" job add j0 --tenant acme --attempt a0 --step s --destination sink \
    --output '"x"'
refused "job of an unknown destination" 1 \
    'job add: destination "nosuch" of tenant acme does not exist' \
    "$HB" job add j0 --tenant acme --attempt a0 --step s \
    --destination nosuch
refused "job of an unknown tenant" 1 'job add: tenant "nosuch" does not exist' \
    "$HB" job add j0 --tenant nosuch --attempt a0 --step s --destination sink
refused "--attempt with ':'" 1 '--attempt "a:b": expected 1..128' \
    "$HB" job add j0 --tenant acme --attempt a:b --step s --destination sink
"$HB" job add j1 --tenant acme --attempt att-1 --step analyze-v1 \
    --destination sink --output '{"format":"mp4"}'
eq "job add" 0 $?
refused "a second job for the same action" 1 \
    'job add: attempt att-1 and step analyze-v1 of tenant acme already belong to job j1' \
    "$HB" job add j2 --tenant acme --attempt att-1 --step analyze-v1 \
    --destination sink
"$HB" job add j2 --tenant acme --attempt att-1 --step transcribe-v1 \
    --destination sink
eq "another step of the attempt is another action" 0 $?
"$HB" tenant add beta
"$HB" destination add sink --tenant beta --url http://127.0.0.1:9/sink
"$HB" job add j1 --tenant beta --attempt att-1 --step analyze-v1 \
    --destination sink
eq "the same attempt and step for another tenant" 0 $?
refused "the same job id twice, another attempt" 1 \
    'job j1 of tenant acme exists already with attempt "att-1", not "att-9"' \
    "$HB" job add j1 --tenant acme --attempt att-9 --step s \
    --destination sink
out=$("$HB" job add j1 --tenant acme --attempt att-1 --step analyze-v1 \
    --destination sink --output '{"format":"mp4"}' 2>&1)
eq "the same job twice, the same: fine" 0 $?
eq "and says so" "job j1 of tenant acme present already, the same" "$out"
eq "jobs" 3 "$(q "SELECT count(*) FROM jobs")"

# Removals: still referenced, or nothing there, each names the row.
refused "tenant still referenced" 1 \
    'tenant acme: still referenced by endpoint' "$HB" tenant remove acme
refused "destination still referenced" 1 \
    'destination sink of tenant beta: still referenced by job j1' \
    "$HB" destination remove --tenant beta sink
refused "removing a missing tenant" 1 \
    'tenant remove: tenant "nosuch" does not exist' \
    "$HB" tenant remove nosuch
refused "removing a missing job" 1 \
    'job remove: job "j9" of tenant acme does not exist' \
    "$HB" job remove --tenant acme j9
"$HB" job remove --tenant beta j1 && "$HB" destination remove --tenant beta \
    sink
eq "once free, the destination goes" 0 $?
"$HB" destination add only --tenant beta --url http://127.0.0.1:9/
refused "a tenant held by a destination" 1 \
    'tenant beta: still referenced by destination only' \
    "$HB" tenant remove beta
"$HB" destination remove --tenant beta only
"$HB" tenant remove beta; eq "and then the tenant" 0 $?

# ---- 9. set ----
refused "tenant set without a change" 2 "usage:" "$HB" tenant set acme
refused "tenant set of a missing tenant" 1 \
    'tenant set: tenant "nosuch" does not exist' \
    "$HB" tenant set nosuch --inactive
refused "tenant set --active --inactive" 2 "one or the other" \
    "$HB" tenant set acme --active --inactive
refused "tenant set validates like add" 1 '--status-base "ftp://x": expected' \
    "$HB" tenant set acme --status-base ftp://x
"$HB" tenant set acme --inactive; eq "tenant set --inactive" 0 $?
eq "inactive" 0 "$(q "SELECT active FROM tenants WHERE id = 'acme'")"
"$HB" tenant set acme --status-base https://api.example/v2
eq "tenant set --status-base" "0|https://api.example/v2" \
    "$(q "SELECT active, status_base FROM tenants WHERE id = 'acme'")"
printf 'new-provider-key' | "$HB" tenant set acme --active --api-key-file -
eq "tenant set --active --api-key-file" "1|https://api.example/v2|new-provider-key" \
    "$(q "SELECT active, status_base, CAST(api_key AS TEXT) FROM tenants
    WHERE id = 'acme'")"

refused "endpoint set without a change" 2 "usage:" "$HB" endpoint set tornado
refused "endpoint set of a missing endpoint" 1 \
    'endpoint set: endpoint "nosuch" does not exist' \
    "$HB" endpoint set nosuch --tolerance 60
refused "endpoint set --tolerance 0" 2 "--tolerance" \
    "$HB" endpoint set tornado --tolerance 0
refused "endpoint set --header on a standard endpoint" 1 \
    '--header "X-Sig": a standard endpoint takes none' \
    "$HB" endpoint set std --header X-Sig
"$HB" endpoint set tornado --tolerance 60; eq "endpoint set --tolerance" 0 $?
eq "tolerance" "60|" \
    "$(q "SELECT tolerance_s, key_header FROM endpoints WHERE name = 'tornado'")"
"$HB" endpoint set tornado --header Mux-Signature
eq "endpoint set --header" "60|Mux-Signature" \
    "$(q "SELECT tolerance_s, key_header FROM endpoints WHERE name = 'tornado'")"
"$HB" endpoint set keyed --header 'X Bad' 2>"$tmp/err"
eq "endpoint set: a header with a space refused" 1 $?
contains "and named" "header name" "$(cat "$tmp/err")"
"$HB" endpoint set tornado --header X-Tornado-Signature --tolerance 300

refused "destination set without --tenant" 2 "usage:" \
    "$HB" destination set sink --timeout-ms 5
refused "destination set without a change" 2 "usage:" \
    "$HB" destination set --tenant acme sink
refused "destination set of a missing one" 1 \
    'destination set: destination "nosuch" of tenant acme does not exist' \
    "$HB" destination set --tenant acme nosuch --timeout-ms 5
refused "destination set validates --url" 1 '--url "ftp://x": expected' \
    "$HB" destination set --tenant acme sink --url ftp://x
refused "destination set validates --secret-file" 1 \
    'expected whsec_ and base64' \
    "$HB" destination set --tenant acme sink --secret-file "$tmp/short"
refused "--status-url and --no-status-url" 2 "one or the other" \
    "$HB" destination set --tenant acme sink --status-url http://a/ \
    --no-status-url
before=$(q "SELECT hex(secret) FROM destinations WHERE name = 'sink'
    AND tenant = 'acme'")
"$HB" destination set --tenant acme sink --url https://hooks.example/in \
    --timeout-ms 2500 --max-attempts 3 --idempotent \
    --status-url https://hooks.example/status
eq "destination set: exit" 0 $?
eq "destination set: the fields" \
    "https://hooks.example/in|2500|3|1|https://hooks.example/status" \
    "$(q "SELECT url, timeout_ms, max_attempts, idempotent, status_url
    FROM destinations WHERE name = 'sink' AND tenant = 'acme'")"
eq "destination set: the secret unchanged" "$before" \
    "$(q "SELECT hex(secret) FROM destinations WHERE name = 'sink'
    AND tenant = 'acme'")"
"$HB" destination set --tenant acme sink --not-idempotent --no-status-url \
    --secret-file "$tmp/bare"
eq "destination set: back" "https://hooks.example/in|2500|3|0|" \
    "$(q "SELECT url, timeout_ms, max_attempts, idempotent,
    coalesce(status_url, '') FROM destinations WHERE name = 'sink'
    AND tenant = 'acme'")"
eq "destination set: the new secret" "$(cat "$tmp/bare")" \
    "$(q "SELECT CAST(secret AS TEXT) FROM destinations WHERE name = 'sink'
    AND tenant = 'acme'")"

# ---- 10. rotation: secret add, list, revoke, --retire-others-after ----
# The responder, as a CGI program: 401 for a signature no active secret
# makes, 422 (unknown job, after authentication) for one that passes.
# cgi_post ENDPOINT SECRET_FILE BODY: the status of BODY posted to
# ENDPOINT, signed with the secret; the responder's log in $tmp/hook.log.
cgi_post() {
	_t=$(date +%s)
	_mac=$(printf '%s.%s' "$_t" "$3" |
	    openssl dgst -sha256 -hmac "$(cat "$2")" -r | cut -d' ' -f1)
	printf '%s' "$3" | env -i HOOKBOX_DIR="$HOOKBOX_DIR" \
	    GATEWAY_INTERFACE=CGI/1.1 REQUEST_METHOD=POST \
	    PATH_INFO="/hooks/$1" CONTENT_TYPE=application/json \
	    CONTENT_LENGTH=${#3} \
	    HTTP_X_TORNADO_SIGNATURE="t=$_t,v1=$_mac" "$FCGI" \
	    2>"$tmp/hook.log" | sed -n 's/^Status: \([0-9]*\).*/\1/p'
}
hook_status() {	# SECRET_FILE [JOB]: the status of a POST signed with it
	cgi_post tornado "$1" \
	    '{"type":"job_completed","job_id":"'"${2:-nosuch}"'","status":"completed"}'
}
# last_used ID: secret ID's last_used_at in secret list --json ("" for null).
last_used() {
	sqlite3 :memory: "SELECT json_extract(value, '\$.last_used_at') FROM
	    json_each('$("$HB" endpoint secret list --json tornado)')
	    WHERE json_extract(value, '\$.id') = $1"
}
eq "the first secret authenticates" 422 "$(hook_status "$tmp/hmac")"
eq "a secret never added does not" 401 "$(hook_status "$tmp/hmac2")"

out=$("$HB" endpoint secret list tornado); rc=$?
eq "secret list: exit" 0 $rc
contains "secret list: a header" "ID" "$out"
eq "secret list: the secret's row ends never, active, never used" 1 \
    "$(printf '%s\n' "$out" | grep -c ' never  *yes  *-$')"
lacks "secret list: never the secret" "an-hmac-secret" "$out"
out=$("$HB" endpoint secret list --json tornado)
eq "secret list --json: one" 1 \
    "$(sqlite3 :memory: "SELECT json_array_length('$out')")"
eq "secret list --json: active" 1 \
    "$(sqlite3 :memory: "SELECT json_extract('$out', '\$[0].active')")"
eq "secret list --json: no expiry" "" \
    "$(sqlite3 :memory: "SELECT json_extract('$out', '\$[0].expires_at')")"
eq "secret list --json: created_at in unix ms, as every JSON time" 1 \
    "$(sqlite3 :memory: "SELECT abs(json_extract('$out',
    '\$[0].created_at') - $(date +%s)000) < 86400000")"
lacks "secret list --json: never the secret" "an-hmac-secret" "$out"
refused "secret list of a missing endpoint" 1 \
    'endpoint "nosuch" does not exist' "$HB" endpoint secret list nosuch
old=$(q "SELECT id FROM secrets WHERE endpoint = 'tornado'")

refused "secret add validates like endpoint add" 1 \
    'expected an HMAC secret of at least 16 bytes' \
    "$HB" endpoint secret add --secret-file "$tmp/short" tornado
refused "--retire-others-after not a duration" 2 \
    '--retire-others-after "soon": expected N followed by s, m, h or d' \
    "$HB" endpoint secret add --secret-file "$tmp/hmac2" \
    --retire-others-after soon tornado
eq "refused adds changed nothing" "1|0" \
    "$(q "SELECT count(*), count(expires_at) FROM secrets
    WHERE endpoint = 'tornado'")"

now=$(date +%s)
out=$("$HB" endpoint secret add --secret-file "$tmp/hmac2" \
    --retire-others-after 24h tornado); rc=$?
eq "secret add --retire-others-after 24h: exit" 0 $rc
contains "secret add: says which id" "secret " "$out"
contains "secret add: says what retires" "1 other secret now expires at" "$out"
v=$(q "SELECT expires_at - $now FROM secrets WHERE id = $old")
[ "$v" -ge 86400 ] && [ "$v" -le 86460 ] && pass ||
    fail "the old secret expires in $v s, not 24 h"
eq "the new one never expires" "" \
    "$(q "SELECT expires_at FROM secrets WHERE endpoint = 'tornado'
    AND id <> $old")"
eq "both authenticate meanwhile (old)" 422 "$(hook_status "$tmp/hmac")"
eq "both authenticate meanwhile (new)" 422 "$(hook_status "$tmp/hmac2")"
out=$("$HB" endpoint secret list tornado)
eq "secret list: two rows" 3 "$(printf '%s\n' "$out" | wc -l)"

# Which secret each request was signed with, while both are active: its
# id in the request's log line, and each one's last use in secret list
# (committed with the request it answered).
new=$(q "SELECT max(id) FROM secrets WHERE endpoint = 'tornado'")
"$HB" destination add rot --tenant acme --url http://127.0.0.1:9/ \
    >/dev/null && "$HB" job add rot-1 --tenant acme --attempt rot-1 \
    --step s --destination rot >/dev/null && "$HB" job add rot-2 \
    --tenant acme --attempt rot-2 --step s --destination rot >/dev/null
eq "rotation: jobs for the old and the new secret" 0 $?
eq "rotation: nothing used yet" "|" "$(last_used "$old")|$(last_used "$new")"
contains "rotation: LAST USED, not yet" " -" \
    "$("$HB" endpoint secret list tornado | grep "^ *$old ")"
t0=$(date +%s)
eq "rotation: signed with the old secret" 200 \
    "$(hook_status "$tmp/hmac" rot-1)"
contains "rotation: the log names the old secret" \
    " secret=$old result=accepted" "$(cat "$tmp/hook.log")"
eq "rotation: the old one's last use, not the new one's" "1|" \
    "$(last_used "$old" | awk -v t="$t0" '{ print ($1 >= t * 1000) }')|$(
    last_used "$new")"
eq "rotation: signed with the new secret" 200 \
    "$(hook_status "$tmp/hmac2" rot-2)"
contains "rotation: the log names the new secret" \
    " secret=$new result=accepted" "$(cat "$tmp/hook.log")"
eq "rotation: the new one's last use too" 1 \
    "$(last_used "$new" | awk -v t="$t0" '{ print ($1 >= t * 1000) }')"
contains "rotation: LAST USED in the table" "$(date -u +%Y-%m-%d)" \
    "$("$HB" endpoint secret list tornado | grep "^ *$new ")"
lacks "rotation: an unauthenticated request names no secret" "secret=" \
    "$(hook_status "$tmp/short" rot-1 >/dev/null; cat "$tmp/hook.log")"

# A secret that already expires sooner keeps its expiry.
"$HB" endpoint secret add --secret-file "$tmp/hmac3" --expires +1h tornado \
    >/dev/null
soon=$(q "SELECT max(id) FROM secrets WHERE endpoint = 'tornado'")
exp_soon=$(q "SELECT expires_at FROM secrets WHERE id = $soon")
"$HB" endpoint secret add --secret-file "$tmp/hmac" \
    --retire-others-after 2d tornado >/dev/null
eq "retiring never lengthens a secret's life" "$exp_soon" \
    "$(q "SELECT expires_at FROM secrets WHERE id = $soon")"
v=$(q "SELECT expires_at - $now FROM secrets WHERE id = $old")
[ "$v" -le 86460 ] && pass || fail "retire lengthened the old one to $v s"

# --retire-others-after 0: the others stop at once.
new=$(q "SELECT max(id) FROM secrets WHERE endpoint = 'tornado'")
"$HB" endpoint secret add --secret-file "$tmp/hmac2" \
    --retire-others-after 0 tornado >/dev/null
eq "retire 0: exit" 0 $?
newest=$(q "SELECT max(id) FROM secrets WHERE endpoint = 'tornado'")
sleep 1
eq "an expired secret is refused by the responder" 401 \
    "$(hook_status "$tmp/hmac")"
eq "the newest authenticates" 422 "$(hook_status "$tmp/hmac2")"
out=$("$HB" endpoint secret list --json tornado)
eq "list shows the retired as inactive" 0 \
    "$(sqlite3 :memory: "SELECT json_extract(value, '\$.active') FROM
    json_each('$out') WHERE json_extract(value, '\$.id') = $new")"

# Revoke: by id; never the last active one; a revoked one is refused.
refused "revoke a missing id" 1 "endpoint tornado has no secret 999" \
    "$HB" endpoint secret revoke tornado 999
refused "revoke: the id is a number" 2 "secret ID" \
    "$HB" endpoint secret revoke tornado abc
refused "revoke the only active secret" 1 \
    "is the only active secret of endpoint tornado" \
    "$HB" endpoint secret revoke tornado "$newest"
printf 'one-more-hmac-secret-0123456' > "$tmp/hmac4"
chmod 600 "$tmp/hmac4"
"$HB" endpoint secret --secret-file "$tmp/hmac4" tornado >/dev/null
eq "the older spelling adds too" 0 $?
eq "the older spelling: a secret more" 1 \
    "$(q "SELECT count(*) FROM secrets WHERE endpoint = 'tornado'
    AND id > $newest")"
eq "before revoke, it authenticates" 422 "$(hook_status "$tmp/hmac2")"
out=$("$HB" endpoint secret revoke tornado "$newest"); rc=$?
eq "revoke: exit" 0 $rc
contains "revoke: said" "secret $newest revoked" "$out"
eq "revoke deletes the row" 0 \
    "$(q "SELECT count(*) FROM secrets WHERE id = $newest")"
eq "a revoked secret is refused by the responder" 401 \
    "$(hook_status "$tmp/hmac2")"
eq "the other still authenticates" 422 "$(hook_status "$tmp/hmac4")"
refused "revoke on a missing endpoint" 1 'endpoint "nosuch" does not exist' \
    "$HB" endpoint secret revoke nosuch 1
# An expired one may go even when one active is left.
"$HB" endpoint secret revoke tornado "$old" >/dev/null
eq "revoke an expired one" 0 $?

# Usage errors, exit 2.
refused "revoke without an id" 2 "usage:" "$HB" endpoint secret revoke tornado
refused "revoke with an option" 2 "usage:" \
    "$HB" endpoint secret revoke --all tornado 1
refused "list of two endpoints" 2 "usage:" "$HB" endpoint secret list a b
refused "secret add without a file" 2 "usage:" \
    "$HB" endpoint secret add tornado
refused "--retire-others-after takes no '+'" 2 "--retire-others-after" \
    "$HB" endpoint secret add --secret-file "$tmp/hmac4" \
    --retire-others-after +24h tornado
refused "--retire-others-after in weeks" 2 "--retire-others-after \"1w\"" \
    "$HB" endpoint secret add --secret-file "$tmp/hmac4" \
    --retire-others-after 1w tornado
refused "set with an unknown option" 2 "usage:" \
    "$HB" destination set --tenant acme sink --frobnicate

# ---- sign with two active secrets: the newest (the last added) ----
# v1 as a provider holding only SECRET_FILE would make it, for t=$t.
t=1700000000
mac_of() {
	printf '%s.%s' "$t" '{"k":1}' |
	    openssl dgst -sha256 -hmac "$(cat "$1")" -r | cut -d' ' -f1
}
signed() {	# the v1 of `hookbox sign --endpoint signer`, for t=$t
	printf '%s' '{"k":1}' | "$HB" sign --endpoint signer --timestamp "$t" |
	    sed -n 's/^X-Tornado-Signature: t=[0-9]*,v1=//p'
}
"$HB" endpoint add signer --tenant acme --secret-file "$tmp/hmac" >/dev/null
eq "one secret: sign uses it" "$(mac_of "$tmp/hmac")" "$(signed)"
# The newer one signs although it expires and the older does not.
"$HB" endpoint secret add --secret-file "$tmp/hmac3" --expires +1h signer \
    >/dev/null
eq "two active: sign uses the newest" "$(mac_of "$tmp/hmac3")" "$(signed)"
[ "$(mac_of "$tmp/hmac")" != "$(signed)" ]
eq "two active: not the older" 0 $?
"$HB" endpoint secret revoke signer \
    "$(q "SELECT max(id) FROM secrets WHERE endpoint = 'signer'")" >/dev/null
eq "the newest revoked: the older signs again" "$(mac_of "$tmp/hmac")" \
    "$(signed)"
"$HB" endpoint remove signer >/dev/null

# ---- help: the new commands are in the table ----
out=$("$HB" help endpoint secret)
for o in --retire-others-after --expires --json revoke list; do
	contains "endpoint secret help: $o" "$o" "$out"
done
for v in add list revoke; do
	out=$("$HB" help endpoint secret $v); rc=$?
	eq "help endpoint secret $v: exit" 0 $rc
	contains "help endpoint secret $v: its options" "--retire-others-after" \
	    "$out"
done
out=$("$HB" help destination set)
for o in --not-idempotent --no-status-url --secret-file --timeout-ms \
    --allow-internal --no-allow-internal; do
	contains "destination set help: $o" "$o" "$out"
done
contains "destination add help" "--allow-internal" \
    "$("$HB" help destination add)"

# ---- a config.db made before a destination could allow internal ----
# addresses: read as it is (nothing allowed), and the first write adds
# the column; the schema's version unchanged (the column came within one).
export HOOKBOX_DIR="$tmp/before"
db="$HOOKBOX_DIR/config.db"
"$HB" init >/dev/null
"$HB" tenant add acme
"$HB" destination add sink --tenant acme --url http://127.0.0.1:9/s
q "ALTER TABLE destinations DROP COLUMN allow_internal"
cols() { q "SELECT count(*) FROM pragma_table_info('destinations')
    WHERE name = 'allow_internal'"; }
eq "before: no column" 0 "$(cols)"
contains "before: listed, nothing allowed" '"allow_internal":	false' \
    "$("$HB" destination list --json)"
eq "before: a read adds nothing" 0 "$(cols)"
"$HB" destination set --tenant acme sink --url http://169.254.169.254/ \
    --allow-internal
eq "before: the first write adds it, and is stored" "1|1|5" \
    "$(cols)|$(q "SELECT allow_internal FROM destinations")|$(q \
    "PRAGMA user_version")"
export HOOKBOX_DIR="$tmp/data"
db="$HOOKBOX_DIR/config.db"
contains "tenant set help" "--inactive" "$("$HB" help tenant set)"
contains "endpoint set help" "--tolerance" "$("$HB" help endpoint set)"
contains "help: --expires forms" "+30d" "$("$HB" help endpoint add)"

# ---- endpoints of kind mapped: a declared format ----
# The mapping is read from a file, checked (exit 2 with the file and what
# is wrong), its destination the tenant's (exit 1 otherwise), stored
# canonical and shown back; endpoint set replaces it; the destination
# it names is kept; the responder does not serve one yet (503).
export HOOKBOX_DIR="$tmp/mapped"
db="$HOOKBOX_DIR/config.db"
"$HB" init >/dev/null
"$HB" tenant add media
"$HB" destination add cms --tenant media --url http://127.0.0.1:9/cms
cat > "$tmp/cms.json" <<'JSON'
{
  "destination": "cms",
  "event_id":  {"header": "webhook-id"},
  "subject":   "/data/asset_id",
  "version":   "/data/version",
  "type":      "/type",
  "occurred":  "/data/updated_at",
  "steps":  {"publish":   ["asset.approved", "asset.replaced"]},
  "undo":   {"unpublish": ["asset.unpublished", "asset.deleted"]},
  "ignore": ["asset.viewed"]
}
JSON
sed 's/"cms"/"cms2"/' "$tmp/cms.json" > "$tmp/cms2.json"
sed 's/"cms"/"nope"/' "$tmp/cms.json" > "$tmp/nope.json"
sed 's/"asset.replaced"/7/' "$tmp/cms.json" > "$tmp/bad.json"
printf 'not json' > "$tmp/notjson.json"
{ printf '{"destination": "cms", "pad": "'; head -c 16400 /dev/zero |
    tr '\0' x; printf '"}'; } > "$tmp/big.json"

# Its event id is the webhook-id header, which Standard Webhooks signs.
out=$("$HB" endpoint add cms-hook --tenant media --kind mapped \
    --auth standard --mapping "$tmp/cms.json" --secret-file "$tmp/whsec")
rc=$?
eq "mapped: add" 0 $rc
eq "mapped: add says so, in a line" \
    "endpoint cms-hook added: kind mapped, its actions to destination cms" \
    "$out"
eq "mapped: stored as mapped" "mapped" \
    "$(q "SELECT kind FROM endpoints WHERE name = 'cms-hook'")"
canon=$("$HB" endpoint show --mapping cms-hook); rc=$?
eq "mapped: show --mapping" 0 $rc
eq "mapped: shown as stored, canonical" \
    "$(q "SELECT mapping FROM endpoints WHERE name = 'cms-hook'")" "$canon"
contains "mapped: canonical is compact JSON" \
    '{"destination":"cms","event_id":{"header":"webhook-id"}' "$canon"
printf '%s\n' "$canon" > "$tmp/canon.json"
"$HB" endpoint set cms-hook --mapping "$tmp/canon.json" >/dev/null
eq "mapped: its canonical form is taken back, unchanged" "$canon" \
    "$("$HB" endpoint show --mapping cms-hook)"
out=$("$HB" endpoint show cms-hook); rc=$?
eq "mapped: show" 0 $rc
contains "mapped: show, the kind" '"kind":	"mapped"' "$out"
contains "mapped: show, the mapping as JSON" '"destination":	"cms"' "$out"
eq "mapped: list --json has the mapping" "cms" \
    "$(sqlite3 :memory: "SELECT json_extract('$("$HB" endpoint list \
    --json)', '\$[0].mapping.destination')")"
# The same name again.
refused "mapped: add again" 1 "cms-hook: already exists" \
    "$HB" endpoint add cms-hook --tenant media --mapping "$tmp/cms.json" \
    --auth standard --secret-file "$tmp/whsec"
# A header hmac does not sign deciding the event: exit 2, named.
refused "mapped: a field from a header hmac does not sign" 1 \
    "event_id comes from header webhook-id, which hmac authentication does\
 not sign" \
    "$HB" endpoint add m0 --tenant media --mapping "$tmp/cms.json" \
    --secret-file "$tmp/hmac"
# Bad mappings: exit 2, the file and what is wrong.
refused "mapped: a member of the wrong type" 2 \
    "--mapping \"$tmp/bad.json\": steps.publish[1]" \
    "$HB" endpoint add m1 --tenant media --kind mapped \
    --mapping "$tmp/bad.json" --secret-file "$tmp/hmac"
refused "mapped: not JSON" 2 "--mapping \"$tmp/notjson.json\": " \
    "$HB" endpoint add m1 --tenant media --kind mapped \
    --mapping "$tmp/notjson.json" --secret-file "$tmp/hmac"
refused "mapped: over 16 KiB" 2 \
    "--mapping \"$tmp/big.json\": longer than 16384 bytes" \
    "$HB" endpoint add m1 --tenant media --kind mapped \
    --mapping "$tmp/big.json" --secret-file "$tmp/hmac"
refused "mapped: no such file" 1 "--mapping \"$tmp/none.json\": No such" \
    "$HB" endpoint add m1 --tenant media --kind mapped \
    --mapping "$tmp/none.json" --secret-file "$tmp/hmac"
# A destination the tenant lacks: exit 1, named.
refused "mapped: an unknown destination" 1 \
    "--mapping \"$tmp/nope.json\": destination \"nope\" is not one of tenant\
 media's destinations" \
    "$HB" endpoint add m1 --tenant media --kind mapped --auth standard \
    --mapping "$tmp/nope.json" --secret-file "$tmp/whsec"
# A step's own destination too (a fan-out, hookbox(1)).
sed 's/"publish":   \[\(.*\)\]}/"publish": [\1], "purge": {"types":\
 ["asset.replaced"], "destination": "cdn9"}}/' "$tmp/cms.json" \
    > "$tmp/fan.json"
refused "mapped: a step's unknown destination" 1 \
    "--mapping \"$tmp/fan.json\": destination \"cdn9\" is not one of tenant\
 media's destinations" \
    "$HB" endpoint add m1 --tenant media --kind mapped --auth standard \
    --mapping "$tmp/fan.json" --secret-file "$tmp/whsec"
# Kind and mapping go together.
refused "mapped: --kind mapped without --mapping" 2 \
    "--kind mapped needs --mapping FILE" \
    "$HB" endpoint add m1 --tenant media --kind mapped \
    --secret-file "$tmp/hmac"
refused "mapped: --mapping for another kind" 2 \
    "--mapping: only for --kind mapped, not tornado-org" \
    "$HB" endpoint add m1 --tenant media --kind tornado-org \
    --mapping "$tmp/cms.json" --secret-file "$tmp/hmac"
refused "mapped: an unknown kind" 2 \
    "expected tornado-job, tornado-org or mapped" \
    "$HB" endpoint add m1 --tenant media --kind tornado \
    --secret-file "$tmp/hmac"
refused "mapped: auth as for any endpoint" 1 \
    "expected whsec_ and base64 of at least 16 bytes" \
    "$HB" endpoint add m1 --tenant media --mapping "$tmp/cms.json" \
    --auth standard --secret-file "$tmp/whsec-short"
eq "mapped: nothing added by a refusal" 1 \
    "$(q "SELECT count(*) FROM endpoints")"
# Standard Webhooks auth, the mapping read from standard input; --mapping
# alone says the kind.
out=$("$HB" endpoint add m-std --tenant media --auth standard \
    --secret-file "$tmp/whsec" --mapping - < "$tmp/cms.json"); rc=$?
eq "mapped: standard auth, mapping on stdin" 0 $rc
eq "mapped: standard, mapped" "mapped|standard" \
    "$(q "SELECT kind || '|' || auth FROM endpoints WHERE name = 'm-std'")"
"$HB" endpoint add tornado --tenant media --secret-file "$tmp/hmac"
# endpoint set --mapping.
refused "mapped: set on a tornado endpoint" 1 \
    "endpoint tornado is of kind tornado-job: only kind mapped has a mapping" \
    "$HB" endpoint set tornado --mapping "$tmp/cms.json"
refused "mapped: set to a destination not there yet" 1 \
    "destination \"cms2\" is not one of tenant media's destinations" \
    "$HB" endpoint set cms-hook --mapping "$tmp/cms2.json"
refused "mapped: set, a bad mapping" 2 "steps.publish[1]" \
    "$HB" endpoint set cms-hook --mapping "$tmp/bad.json"
refused "mapped: set, no such endpoint" 1 \
    'endpoint "nosuch" does not exist' \
    "$HB" endpoint set nosuch --mapping "$tmp/cms.json"
eq "mapped: refused sets changed nothing" "$canon" \
    "$("$HB" endpoint show --mapping cms-hook)"
"$HB" destination add cms2 --tenant media --url http://127.0.0.1:9/cms2
out=$("$HB" endpoint set cms-hook --mapping "$tmp/cms2.json"); rc=$?
eq "mapped: set" 0 $rc
eq "mapped: set says so" \
    "endpoint cms-hook: mapping replaced, its actions to destination cms2" \
    "$out"
contains "mapped: set, stored" '"destination":"cms2"' \
    "$("$HB" endpoint show --mapping cms-hook)"
"$HB" endpoint set cms-hook --tolerance 60
eq "mapped: set --tolerance leaves the mapping" '"cms2"' \
    "$(q "SELECT json_extract(mapping, '\$.destination') FROM endpoints
    WHERE name = 'cms-hook'" | sed 's/.*/"&"/')"
# show.
refused "mapped: show --mapping of a tornado endpoint" 1 \
    "endpoint tornado is of kind tornado-job: it has no mapping" \
    "$HB" endpoint show --mapping tornado
refused "mapped: show, no such endpoint" 1 'endpoint "nosuch" does not exist' \
    "$HB" endpoint show nosuch
refused "mapped: show takes one name" 2 "usage:" "$HB" endpoint show a b
# The destination a mapping names stays.
refused "mapped: its destination is kept" 1 \
    "still referenced by endpoint cms-hook" \
    "$HB" destination remove --tenant media cms2
refused "mapped: and the other's" 1 "still referenced by endpoint m-std" \
    "$HB" destination remove --tenant media cms
"$HB" endpoint remove m-std
"$HB" destination remove --tenant media cms
eq "mapped: one no mapping names goes" 0 $?
# The responder reads a mapped endpoint's body with its mapping: one
# without the mapped fields is malformed, once it authenticated (an hmac
# endpoint whose mapping reads the body alone).
sed 's|{"header": "webhook-id"}|"/id"|' "$tmp/cms2.json" |
    "$HB" endpoint add cms-body --tenant media --mapping - \
    --secret-file "$tmp/hmac" >/dev/null
mapped_status() {	# ENDPOINT SECRET_FILE
	cgi_post "$1" "$2" '{"type":"asset.approved"}'
}
eq "mapped: a body without the mapped fields, 400" 400 \
    "$(mapped_status cms-body "$tmp/hmac")"
eq "mapped: unauthenticated, 401 still" 401 \
    "$(mapped_status cms-body "$tmp/hmac2")"
# Help.
out=$("$HB" help endpoint add)
for o in --mapping mapped "16 KiB"; do
	contains "mapped: endpoint add help: $o" "$o" "$out"
done
contains "mapped: endpoint set help" "--mapping" "$("$HB" help endpoint set)"
out=$("$HB" help endpoint show); rc=$?
eq "mapped: help endpoint show" 0 $rc
contains "mapped: endpoint show help" "--mapping" "$out"

# ---- a config.db of the previous schema (version 1), made by hand: ----
# refused by the tool and the responder until init upgrades it.
export HOOKBOX_DIR="$tmp/v1"
db="$HOOKBOX_DIR/config.db"
"$HB" init >/dev/null
"$HB" tenant add acme
"$HB" endpoint add tornado --tenant acme --secret-file "$tmp/hmac"
q "PRAGMA foreign_keys=OFF; BEGIN;
    CREATE TABLE e1(name TEXT PRIMARY KEY,
     tenant TEXT NOT NULL REFERENCES tenants(id),
     kind TEXT NOT NULL CHECK(kind IN ('tornado-job','tornado-org')),
     auth TEXT NOT NULL CHECK(auth IN ('hmac','key','standard')),
     key_header TEXT,
     tolerance_s INTEGER NOT NULL DEFAULT 300 CHECK(tolerance_s > 0),
     created_at INTEGER NOT NULL);
    INSERT INTO e1 SELECT name, tenant, kind, auth, key_header, tolerance_s,
     created_at FROM endpoints;
    DROP TABLE endpoints; ALTER TABLE e1 RENAME TO endpoints;
    DROP TABLE registrars; PRAGMA user_version=1; COMMIT;"
refused "v1: the tool says to run init" 1 "run \`hookbox init\` to upgrade it" \
    "$HB" endpoint list
eq "v1: the responder answers 503" 503 "$(hook_status "$tmp/hmac")"
out=$("$HB" init); rc=$?
eq "v1: init" 0 $rc
contains "v1: init says it upgraded" \
    "configuration schema version 1 to 5" "$out"
eq "v1: upgraded, its triggers again" "5 3" "$(q "PRAGMA user_version") \
$(q "SELECT count(*) FROM sqlite_master WHERE type = 'trigger'
    AND name LIKE 'endpoints_version_%'")"
eq "v1: the responder authenticates" 422 "$(hook_status "$tmp/hmac")"
lacks "v1: init again upgrades nothing" "upgraded" "$("$HB" init)"

# ---- a config.db made by the previous release ----
# Its schema, version 1, is opened by neither this release's tool nor its
# responder until `hookbox init` upgrades it, every row kept; after, the
# previous release no longer opens it.
if [ -n "$OLD" ] && [ -x "$OLD" ]; then
	export HOOKBOX_DIR="$tmp/old"
	db="$HOOKBOX_DIR/config.db"
	"$OLD" init >/dev/null
	"$OLD" tenant add acme
	"$OLD" endpoint add tornado --tenant acme --secret-file "$tmp/hmac"
	"$OLD" destination add sink --tenant acme --url http://127.0.0.1:9/s
	"$OLD" job add j1 --tenant acme --attempt a1 --step s \
	    --destination sink
	eq "old config.db: schema version 1" 1 "$(q "PRAGMA user_version")"
	refused "old config.db: the tool says to run init" 1 \
	    "run \`hookbox init\` to upgrade it" \
	    "$HB" endpoint secret list tornado
	eq "old config.db: the responder answers 503" 503 \
	    "$(hook_status "$tmp/hmac")"
	out=$("$HB" init); rc=$?
	eq "old config.db: init" 0 $rc
	contains "old config.db: init upgrades it" \
	    "configuration schema version 1 to 5" "$out"
	# The version and its triggers, made again with the endpoints.
	eq "old config.db: upgraded, the version kept" "5 1 9" \
	    "$(q "PRAGMA user_version") $(q "SELECT count(*)
	    FROM config_version") $(q "SELECT count(*)
	    FROM sqlite_master WHERE type = 'trigger'
	    AND name LIKE '%_version_%'")"
	eq "old config.db: the responder authenticates" 422 \
	    "$(hook_status "$tmp/hmac")"
	eq "old config.db: and refuses" 401 "$(hook_status "$tmp/hmac2")"
	out=$("$HB" endpoint secret list --json tornado); rc=$?
	eq "old config.db: secret list" 0 $rc
	eq "old config.db: the secret's id" 1 \
	    "$(sqlite3 :memory: "SELECT json_extract('$out', '\$[0].id')")"
	"$HB" endpoint secret add --secret-file "$tmp/hmac2" \
	    --retire-others-after 24h tornado >/dev/null
	eq "old config.db: rotation" 0 $?
	eq "both secrets active" 2 "$(q "SELECT count(*) FROM secrets
	    WHERE expires_at IS NULL OR expires_at > unixepoch()")"
	"$HB" destination set --tenant acme sink --timeout-ms 1234
	eq "old config.db: set" 1234 \
	    "$(q "SELECT timeout_ms FROM destinations")"
	refused "old config.db: duplicate action" 1 "already belong to job j1" \
	    "$HB" job add j2 --tenant acme --attempt a1 --step s \
	    --destination sink
	"$HB" endpoint add m --tenant acme --mapping "$tmp/cms.json" \
	    --secret-file "$tmp/hmac" 2>/dev/null
	eq "old config.db: a mapped endpoint's destination is checked" 1 $?
	"$OLD" endpoint list >/dev/null 2>&1
	eq "the previous release no longer opens it" 1 $?
else
	echo "admin: HOOKBOX_OLD not set: a previous release's config.db not tried"
fi

finish admin
