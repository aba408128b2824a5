#!/bin/sh
# tests/e2e/providers.sh BUILD_DIR: every preset through a real nginx,
# against the requests its provider's own library signed
# (tests/providers/fixtures/, tests/providers/README.md says what signed
# each).
#
# 1. The responder runs at the time the fixtures were signed (libfaketime):
#    each fixture is accepted, its action carries the provider's body as
#    its payload's data, and the same request with one byte of the body
#    changed is refused, 401.
# 2. The responder at the real time, days later: a timed scheme refuses
#    the old request (401, the time named), an untimed one answers it a
#    duplicate (its receipt is the replay protection).
# 3. Where node and npm are installed, the libraries run live: the script
#    signs every request again now, each library checking its own, and
#    each is taken (a duplicate of the first: the same events).
# 4. hookbox disorder passes on each preset's endpoint, its sample the
#    preset's.
set -u
build=$(cd "${1:?usage: providers.sh BUILD_DIR}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/helpers/lib.sh"
HB="$build/hookbox"
FCGI="$build/hookbox-fcgi"
fx="$top/tests/providers/fixtures"

# The presets that declare their signature (and hookbox(1)'s worked
# example, Sanity, which is not a preset), and the two on a built-in
# authentication (its flags after the name).
declared="apivideo bitmovin cloudflare-stream cloudinary github livepeer
shopify slack square standardwebhooks standardwebhooks-v1a stripe twilio zoom
sanity"
# Timed: a request older than the tolerance is refused.
timed="cloudflare-stream cloudinary livepeer slack standardwebhooks
standardwebhooks-v1a stripe zoom sanity mux replicate"

tmp=$(mktemp -d)
export HOOKBOX_DIR="$tmp/data"
fcgi_pid=""
cleanup() {
	[ -f "$tmp/nginx/nginx.pid" ] && kill "$(cat "$tmp/nginx/nginx.pid")" 2>/dev/null
	[ -z "$fcgi_pid" ] || kill "$fcgi_pid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# fjson FIXTURE SQL_EXPR: a value of the fixture, read with sqlite3's JSON
# functions ($f the fixture's text).
fjson() {
	sqlite3 :memory: "SELECT $2 FROM (SELECT readfile('$1') AS f)"
}

"$HB" init > /dev/null
"$HB" tenant add acme
"$HB" destination add downstream --tenant acme --url http://127.0.0.1:9/x \
    > /dev/null
for p in $declared mux replicate; do
	f="$fx/$p.json"
	fjson "$f" "writefile('$tmp/$p.secret', json_extract(f, '$.secret'))" \
	    > /dev/null
	chmod 600 "$tmp/$p.secret"
	case $p in
	mux) flags="--header Mux-Signature" ;;
	replicate) flags="--auth standard" ;;
	*) flags="" ;;
	esac
	# hookbox(1)'s worked example has no preset: its mapping is a test's.
	map="$top/presets/$p.json"
	[ "$p" = sanity ] && map="$top/tests/providers/sanity.json"
	# shellcheck disable=SC2086
	out=$("$HB" endpoint add "$p" --tenant acme --mapping "$map" $flags \
	    --secret-file "$tmp/$p.secret" 2>&1)
	eq "$p: endpoint add ($out)" 0 $?
done
eq "the declared presets are auth scheme" "$(echo $declared | wc -w)" \
    "$(sqlite3 "$HOOKBOX_DIR/config.db" \
    "SELECT count(*) FROM endpoints WHERE auth = 'scheme'")"
# A mapping set with a scheme whose keys the endpoint's secrets are not:
# done, and said.
"$HB" endpoint add swap --tenant acme --mapping "$top/presets/stripe.json" \
    --secret-file "$tmp/stripe.secret" > /dev/null
out=$("$HB" endpoint set swap \
    --mapping "$top/presets/standardwebhooks-v1a.json" 2>&1)
eq "set to another scheme: done ($out)" 0 $?
contains "set to another scheme: its secret is said not to fit" \
    "1 of its 1 active secrets are not keys" "$out"
contains "set to another scheme: why" "Ed25519 public key" "$out"
out=$("$HB" endpoint set swap --mapping "$top/presets/stripe.json" 2>&1)
lacks "set back: nothing said" "not keys" "$out"
"$HB" endpoint remove swap > /dev/null
show=$("$HB" endpoint show cloudinary)
eq "endpoint show marks a weak algorithm" "sha1 1 1 x-cld-timestamp" \
    "$(jget signature.algorithm "$show") $(jget signature.weak "$show")\
 $(jget signature.timed "$show") $(jget 'signature.signs[0]' "$show")"
show=$("$HB" endpoint show github)
eq "a strong one is not marked" "hmac-sha256 0 0" \
    "$(jget signature.algorithm "$show") $(jget signature.weak "$show")\
 $(jget signature.timed "$show")"

# start [FAKETIME_ARGS]: the responder (at the time given) and nginx.
sock="$tmp/hookbox.sock"
start() {
	rm -f "$sock"
	"$@" "$FCGI" -s "$sock" -w 2 2>> "$tmp/fcgi.log" &
	fcgi_pid=$!
	until_true 60 test -S "$sock" ||
	    { echo "responder did not start"; cat "$tmp/fcgi.log"; exit 1; }
	[ -n "${base:-}" ] || nginx_start "$sock" "$HOOKBOX_DIR"
	until_true 60 curl -sf "$base/hooks/_health" > /dev/null
}
stop() {
	kill "$fcgi_pid"
	wait "$fcgi_pid" 2>/dev/null
	fcgi_pid=""
}

# send FIXTURE ENDPOINT [BODY_FILE]: POSTs the fixture's request (its body,
# or BODY_FILE) to the endpoint; sets code, reply and result.
send() {
	fjson "$1" "writefile('$tmp/body', json_extract(f, '$.body'))" \
	    > /dev/null
	set -- "$1" "$2" "${3:-$tmp/body}"
	sqlite3 :memory: "SELECT key || ': ' || value FROM
	    json_each(json_extract(readfile('$1'), '$.headers'))
	    UNION ALL SELECT 'Content-Type: ' ||
	    json_extract(readfile('$1'), '$.content_type')" > "$tmp/hdrs"
	_b=$3
	_ep=$2
	set --
	while IFS= read -r _h; do set -- "$@" -H "$_h"; done < "$tmp/hdrs"
	code=$(curl -s -o "$tmp/reply" -w '%{http_code}' "$@" \
	    --data-binary "@$_b" "$base/hooks/$_ep")
	reply=$(cat "$tmp/reply")
	result=$(jget result "$reply")
}

# ---- 1. at the time the fixtures were signed ----
# libfaketime preloaded into the responder itself (the faketime command
# would fork it, and its pid would not be the responder's).
now=$(fjson "$fx/stripe.json" "json_extract(f, '$.now')")
lib=""
for l in /usr/lib/*/faketime/libfaketimeMT.so.1; do
	[ -f "$l" ] && lib=$l
done
[ -n "$lib" ] ||
    { echo "libfaketime is not installed (scripts/install-deps.sh check)"; exit 1; }
start env TZ=UTC LD_PRELOAD="$lib" \
    FAKETIME="@$(date -u -d "@$now" '+%Y-%m-%d %H:%M:%S')"
for p in $declared mux replicate; do
	send "$fx/$p.json" "$p"
	eq "$p: the library's request is accepted ($reply)" "200 accepted" \
	    "$code $result"
	action=$(jget action "$reply")
	# A JSON body as it is; a form (Twilio's) as a string.
	same="json(json_extract(payload, '$.data')) = json(readfile('$tmp/body'))"
	[ "$p" = twilio ] && same="json_extract(payload, '$.data') =
	    CAST(readfile('$tmp/body') AS TEXT)"
	eq "$p: its action carries the provider's body" 1 \
	    "$(sqlite3 "file:$HOOKBOX_DIR/state.db?mode=ro" ".timeout 5000" \
	    "SELECT $same FROM outbox WHERE action_id = '$action'")"
	# One byte of the body changed, half way.
	n=$(wc -c < "$tmp/body")
	head -c $((n / 2)) "$tmp/body" > "$tmp/bad"
	printf '~' >> "$tmp/bad"
	tail -c $((n - n / 2 - 1)) "$tmp/body" >> "$tmp/bad"
	eq "$p: one byte changed is the same length" "$n" "$(wc -c < "$tmp/bad")"
	send "$fx/$p.json" "$p" "$tmp/bad"
	eq "$p: one byte changed is refused" "401 unauthorized" "$code $result"
done
stop

# ---- 2. at the real time, days later ----
start
for p in $declared mux replicate; do
	send "$fx/$p.json" "$p"
	case " $(echo $timed) " in
	*" $p "*)
		eq "$p: an old request is refused" "401 unauthorized" \
		    "$code $result"
		contains "$p: for its time" "timestamp" "$reply"
		;;
	*)
		eq "$p: untimed, the request again is a duplicate" \
		    "200 duplicate" "$code $result"
		;;
	esac
done

# A form, authentic, to an endpoint that reads JSON: 400, said so.
printf 'a=1&b=2' > "$tmp/form"
h=$("$HB" sign --endpoint stripe < "$tmp/form")
code=$(curl -s -o "$tmp/reply" -w '%{http_code}' -H "$h" \
    -H 'Content-Type: application/x-www-form-urlencoded' \
    --data-binary "@$tmp/form" "$base/hooks/stripe")
eq "a form to a JSON endpoint: 400 malformed" "400 malformed" \
    "$code $(jget result "$(cat "$tmp/reply")")"
contains "a form to a JSON endpoint: why" "a form, where this endpoint" \
    "$(cat "$tmp/reply")"

# ---- 3. the libraries live ----
if command -v node > /dev/null && command -v npm > /dev/null; then
	mkdir -p "$tmp/live/tests/providers" "$tmp/live/presets"
	cp "$top/tests/providers/package.json" \
	    "$top/tests/providers/package-lock.json" \
	    "$top/tests/providers/make-fixtures.mjs" "$tmp/live/tests/providers/"
	cp "$top"/presets/*-*.json "$top"/presets/*.form "$tmp/live/presets/"
	cp "$top/tests/providers/sanity-video.json" "$tmp/live/tests/providers/"
	ok=0
	for try in 1 2 3; do
		if (cd "$tmp/live/tests/providers" &&
		    npm ci --no-audit --no-fund --loglevel=error \
		    > "$tmp/npm.log" 2>&1); then
			ok=1
			break
		fi
		sleep 5
	done
	eq "npm ci of the providers' libraries ($(tail -n 3 "$tmp/npm.log"))" \
	    1 "$ok"
	live=$(date +%s)
	rc=0
	node "$tmp/live/tests/providers/make-fixtures.mjs" --now "$live" \
	    --out "$tmp/live/fx" > "$tmp/live.log" 2>&1 || rc=$?
	eq "the libraries sign and verify now ($(tail -n 3 "$tmp/live.log"))" \
	    0 "$rc"
	for p in $declared mux replicate; do
		[ -f "$tmp/live/fx/$p.json" ] || { fail "$p: no live fixture"; continue; }
		send "$tmp/live/fx/$p.json" "$p"
		case "$code $result" in
		"200 duplicate"|"200 accepted") pass ;;
		*) fail "$p: signed now by its library: $code $reply" ;;
		esac
	done
else
	echo "providers: node and npm are not installed: the libraries" \
	    "were not run live (the committed fixtures were)"
fi

# ---- 4. hookbox disorder on each preset ----
sample_of() {
	fjson "$fx/$1.json" "json_extract(f, '$.sample')"
}
for p in $declared; do
	rc=0
	"$HB" disorder --endpoint "$p" --url "$base" \
	    --sample "$top/$(sample_of "$p")" > "$tmp/dis.out" 2>&1 || rc=$?
	eq "disorder, $p: exit status ($(tail -n 12 "$tmp/dis.out"))" 0 "$rc"
	lacks "disorder, $p: none inconsistent" INCONSISTENT \
	    "$(cat "$tmp/dis.out")"
done

finish providers
