#!/bin/sh
# bench/scheme.sh [BUILD_DIR] [SECONDS] [ROUNDS]
#
# What a declared signature scheme costs against the built-in one of the
# same shape, through nginx on loopback, in one sitting.  Two mapped
# endpoints read Mux's video.asset.ready (presets/mux.json):
#   builtin   hmac on Mux-Signature (endpoint add --header Mux-Signature)
#   declared  the same mapping with the same scheme declared in its
#             "signature" member (t=,v1= over {t}.{body}, HMAC-SHA256)
# Each gets its request signed by hookbox sign once, accepted once, then
# sent again and again by wrk: authenticated, parsed, answered
# "duplicate".  The two run in turn, ROUNDS times (default 3), so that
# the machine's drift falls on both; each row is one run, with the
# responder's CPU per request (user + system, ms, from /proc), and the
# last lines give the medians and declared / builtin.  First, the
# verification alone (bench/verify.c, the same body, 200000 times each).
set -eu
build=$(cd "${1:-build}" && pwd)
secs=${2:-10}
rounds=${3:-3}
conns=${CONNS:-16}
top=$(cd "$(dirname "$0")/.." && pwd)
HB="$build/hookbox"
. "$top/bench/setup.sh"
bench_need wrk wrk
bench_load
pkgs="libsodium libcjson sqlite3 libcurl libpq"
# shellcheck disable=SC2046
cc -O2 -Wall -Wextra -I"$top/lib" $(pkg-config --cflags $pkgs) \
    -o "$build/bench-verify" "$top/bench/verify.c" "$build/libhookbox.a" \
    $(pkg-config --libs $pkgs) -pthread -lm
"$build/bench-verify" "$top/presets/mux-asset-ready.json" 200000

tmp=$(mktemp -d)
cleanup() {
	nginx_stop "$tmp/nginx"
	[ -n "${fcgi:-}" ] && kill "$fcgi" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
export HOOKBOX_DIR="$tmp/data"
"$HB" init > /dev/null
"$HB" tenant add bench > /dev/null
"$HB" destination add downstream --tenant bench \
    --url http://127.0.0.1:9/sink > /dev/null
od -An -N24 -tx1 /dev/urandom | tr -d ' \n' > "$tmp/secret"
chmod 600 "$tmp/secret"
# The preset, and the preset with Mux's scheme declared.
sed 's|"video.upload.asset_created"\]}|"video.upload.asset_created"],\
 "signature": {"header": "Mux-Signature",\
  "parts": {"separator": ",", "assign": "=", "signature": "v1"},\
  "timestamp": {"part": "t"}, "signed": "{timestamp}.{body}",\
  "algorithm": "hmac-sha256", "encoding": "hex"}}|' \
    "$top/presets/mux.json" > "$tmp/declared.json"
grep -q '"signature"' "$tmp/declared.json" ||
    { echo "bench/scheme.sh: presets/mux.json is not as expected" >&2; exit 1; }
# The whole hour: the requests signed now stay in time.
"$HB" endpoint add builtin --tenant bench --mapping "$top/presets/mux.json" \
    --header Mux-Signature --tolerance 3600 --secret-file "$tmp/secret" \
    > /dev/null
"$HB" endpoint add declared --tenant bench --mapping "$tmp/declared.json" \
    --tolerance 3600 --secret-file "$tmp/secret" > /dev/null

sock="$tmp/hookbox.sock"
"$build/hookbox-fcgi" -s "$sock" 2>/dev/null &
fcgi=$!
wait_for test -S "$sock"
port=$(bench_port)
nginx_start "$tmp/nginx" "$port" "$sock" "$HOOKBOX_DIR"
base="http://127.0.0.1:$port"
wait_for curl -sf "$base/hooks/_health"

body=$(cat "$top/presets/mux-asset-ready.json")
for ep in builtin declared; do
	sig=$(printf '%s' "$body" | "$HB" sign --endpoint "$ep" |
	    sed 's/^[^:]*: //')
	code=$(curl -s -o /dev/null -w '%{http_code}' \
	    -H 'Content-Type: application/json' -H "Mux-Signature: $sig" \
	    --data-binary "$body" "$base/hooks/$ep")
	[ "$code" = 200 ] ||
	    { echo "bench/scheme.sh: $ep: the first request: $code" >&2; exit 1; }
	lua=$(printf '%s' "$body" | sed 's/\\/\\\\/g; s/"/\\"/g')
	cat > "$tmp/$ep.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Mux-Signature"] = "$sig"
wrk.body = "$lua"
LUA
done

printf '%-9s %6s %10s %10s %8s %8s\n' scheme round req/s p99 non-2xx cpu-ms
for r in $(seq "$rounds"); do
	for ep in builtin declared; do
		# shellcheck disable=SC2046
		set -- $(rps_cpu "$fcgi" "$base/hooks/$ep" "$tmp/$ep.lua")
		printf '%-9s %6s %10s %10s %8s %8s\n' "$ep" "$r" "$1" "$2" \
		    "$3" "$6"
		echo "$ep $1 $6" >> "$tmp/rows"
	done
done
median() {
	awk -v ep="$1" -v col="$2" '$1 == ep { print $col }' "$tmp/rows" |
	    sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
br=$(median builtin 2)
dr=$(median declared 2)
bc_=$(median builtin 3)
dc=$(median declared 3)
echo
echo "medians: builtin $br req/s, $bc_ cpu-ms; declared $dr req/s," \
    "$dc cpu-ms"
printf 'declared / builtin: req/s %.3f, cpu-ms %.3f\n' \
    "$(echo "$dr / $br" | bc -l)" "$(echo "$dc / $bc_" | bc -l)"
echo "connections: $conns, duration: ${secs}s each, $rounds rounds"
