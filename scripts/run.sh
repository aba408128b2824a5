#!/bin/sh
# scripts/run.sh BUILD_DIR: the demo `make run` starts, in the foreground.
#
# A demo data directory (a tenant, an HMAC endpoint, a destination), a
# fresh job registered on every run, the responder on a unix socket, nginx
# on 127.0.0.1:$HOOKBOX_PORT (default 8088) with its own configuration and
# nothing that needs root, and the dispatcher delivering to nginx's /sink
# (a 204).  Ctrl-C (or SIGTERM) stops it all and exits 0 (under `make
# run`, make, interrupted too, exits 130); anything that fails, at start
# or later, stops it all and exits 1.
#
#   HOOKBOX_PORT      the loopback port (default 8088); it must be free
#   HOOKBOX_RUN_DIR   where the demo lives (default ./run); delete it to
#                     start afresh
#   HOOKBOX_NGINX     the nginx to run (default: nginx on PATH, else in
#                     /usr/sbin, /usr/local/sbin or /sbin)
set -eu
build=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
case "$build" in /*) ;; *) build="$top/$build" ;; esac
HB="$build/hookbox"
FCGI="$build/hookbox-fcgi"
port=${HOOKBOX_PORT:-8088}
run=${HOOKBOX_RUN_DIR:-$top/run}
me="make run"

die() {
	echo "$me: $*" >&2
	exit 1
}

case "$port" in
''|*[!0-9]*) die "HOOKBOX_PORT=$port is not a port number" ;;
esac
[ "$port" -ge 1 ] && [ "$port" -le 65535 ] ||
    die "HOOKBOX_PORT=$port is not a port number (1..65535)"
for p in "$HB" "$FCGI"; do
	[ -x "$p" ] || die "$p is missing: build it first (make)"
done
command -v curl >/dev/null 2>&1 ||
    die "curl is missing: install it (apt-get install curl, or make deps)"

# nginx: a user's PATH often lacks /usr/sbin, where Debian puts it.
if [ -n "${HOOKBOX_NGINX:-}" ]; then
	nginx=$HOOKBOX_NGINX
	[ -x "$nginx" ] || die "nginx not found: HOOKBOX_NGINX=$nginx is not" \
	    "an executable file; unset it to look on PATH and in /usr/sbin," \
	    "or install nginx with \`sudo apt-get install nginx-light\`"
else
	nginx=$(command -v nginx 2>/dev/null || true)
	for d in /usr/sbin /usr/local/sbin /sbin; do
		[ -n "$nginx" ] && break
		[ -x "$d/nginx" ] && nginx="$d/nginx"
	done
	[ -n "$nginx" ] || die "nginx is not installed (not on PATH, nor in" \
	    "/usr/sbin, /usr/local/sbin, /sbin): install it with" \
	    "\`sudo apt-get install nginx-light\` (or \`make deps\`)," \
	    "or set HOOKBOX_NGINX to its path"
fi
[ -f /etc/nginx/fastcgi_params ] || die "/etc/nginx/fastcgi_params is" \
    "missing: install nginx's configuration (apt-get install nginx-common)"

# The port must be free before anything starts: whatever answers there
# is not ours, however much it looks like hookbox.  curl exits 7 when
# nothing accepts the connection.
port_free() {
	_rc=0
	curl -s -o /dev/null --connect-timeout 2 --max-time 3 \
	    "http://127.0.0.1:$1/" 2>/dev/null || _rc=$?
	[ "$_rc" -eq 7 ]
}
if ! port_free "$port"; then
	msg="port $port on 127.0.0.1 is already in use by another server"
	if [ -f "$run/nginx/nginx.pid" ] &&
	    kill -0 "$(cat "$run/nginx/nginx.pid")" 2>/dev/null; then
		msg="$msg (the nginx of an earlier demo in $run still runs,"
		msg="$msg pid $(cat "$run/nginx/nginx.pid"))"
	elif command -v ss >/dev/null 2>&1; then
		who=$(ss -Hltnp "sport = :$port" 2>/dev/null |
		    sed -n 's/.*users:((\("[^"]*",pid=[0-9]*\).*/\1/p' |
		    head -n 1)
		[ -z "$who" ] || msg="$msg ($who)"
	fi
	die "$msg; stop it or choose another port: HOOKBOX_PORT=8089 make run"
fi

export HOOKBOX_DIR="$run/data"
mkdir -p "$run"
if [ ! -f "$HOOKBOX_DIR/config.db" ]; then
	"$HB" init
	"$HB" tenant add demo
	# A random secret in a file only the owner can read.
	(umask 077; head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' \
	    > "$run/endpoint.secret")
	"$HB" endpoint add tornado-demo --tenant demo --kind tornado-job \
	    --auth hmac --secret-file "$run/endpoint.secret"
fi
# One destination per port, so that a run on another port delivers to
# its own nginx.
dest="sink-$port"
if [ ! -f "$run/$dest.added" ]; then
	"$HB" destination add "$dest" --tenant demo --idempotent \
	    --url "http://127.0.0.1:$port/sink"
	: > "$run/$dest.added"
fi
# A fresh job every run, so that the printed callback is accepted again.
job="job-demo-$(date +%Y%m%d-%H%M%S)-$$"
"$HB" job add "$job" --tenant demo --attempt "att-$job" --step analyze-v1 \
    --destination "$dest"

pids=""
ngx=""
# stop STATUS: stops what was started, nginx first (no new callback
# arrives while the responder stops), then exits STATUS.
stop() {
	trap - INT TERM EXIT
	echo
	echo "stopping"
	[ -z "$ngx" ] || kill "$ngx" 2>/dev/null || true
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	exit "$1"
}
trap 'stop 0' INT TERM
trap 'stop $?' EXIT

sock="$run/hookbox.sock"
rm -f "$sock"
"$FCGI" -d "$HOOKBOX_DIR" -s "$sock" 2> "$run/responder.log" &
fcgi=$!
pids="$pids $fcgi"
i=0
while [ ! -S "$sock" ]; do
	kill -0 "$fcgi" 2>/dev/null || die "the responder did not start:" \
	    "$(tail -n 5 "$run/responder.log")"
	i=$((i + 1))
	[ $i -lt 100 ] || die "the responder did not create $sock;" \
	    "see $run/responder.log"
	sleep 0.1
done

conf=$(sh "$top/scripts/nginx-conf.sh" "$run/nginx" "$port" "$sock" \
    "$HOOKBOX_DIR")
rm -f "$run/nginx/nginx.pid"
"$nginx" -p "$run/nginx" -c "$conf" -e "$run/nginx/error.log" \
    -g 'daemon off;' 2> "$run/nginx/start.log" &
ngx=$!
# Up means: our nginx still runs, its pid file names it, and what answers
# on the port is hookbox's health document.
i=0
while :; do
	if ! kill -0 "$ngx" 2>/dev/null; then
		ngx=""
		die "nginx did not start on 127.0.0.1:$port:" \
		    "$(tail -n 3 "$run/nginx/start.log" "$run/nginx/error.log" \
		    2>/dev/null | grep -v '^==> \|^$' | tail -n 2)"
	fi
	h=$(curl -s --max-time 2 "http://127.0.0.1:$port/hooks/_health" || true)
	if [ "$h" = '{"status":"ok"}' ] && [ -f "$run/nginx/nginx.pid" ] &&
	    [ "$(cat "$run/nginx/nginx.pid")" = "$ngx" ]; then
		break
	fi
	i=$((i + 1))
	[ $i -lt 100 ] || die "nginx (pid $ngx) did not answer" \
	    "http://127.0.0.1:$port/hooks/_health with {\"status\":\"ok\"}" \
	    "(last answer: ${h:-none}); see $run/nginx/error.log and" \
	    "$run/responder.log"
	sleep 0.1
done

"$HB" dispatch -d "$HOOKBOX_DIR" 2> "$run/dispatch.log" &
disp=$!
pids="$pids $disp"

body="{\"type\":\"job_completed\",\"job_id\":\"$job\",\"status\":\"completed\",\"key\":\"out/$job.mp4\",\"url\":\"https://cdn.example/out/$job.mp4\"}"
sig=$(printf '%s' "$body" | "$HB" sign --endpoint tornado-demo)
cat <<EOT

hookbox is listening on http://127.0.0.1:$port/hooks/tornado-demo
data directory: $HOOKBOX_DIR
job registered for this run: $job

Paste this (signed now; valid for 5 minutes):

  curl -s -H 'Content-Type: application/json' -H '$sig' --data-binary '$body' http://127.0.0.1:$port/hooks/tornado-demo

or sign at send time:

  body='$body'
  curl -s -H 'Content-Type: application/json' -H "\$(printf %s "\$body" | HOOKBOX_DIR=$HOOKBOX_DIR $HB sign --endpoint tornado-demo)" --data-binary "\$body" http://127.0.0.1:$port/hooks/tornado-demo

then watch the action go pending -> delivered (the dispatcher is running):
  HOOKBOX_DIR=$HOOKBOX_DIR $HB status
  HOOKBOX_DIR=$HOOKBOX_DIR $HB list --state delivered
or in a browser, the status page:
  http://127.0.0.1:$port/hooks/_status
Ctrl-C stops everything.
EOT

# Until a signal, or until one of the three stops by itself.  The sleep
# runs in the background so that a signal is handled at once.
while :; do
	kill -0 "$fcgi" 2>/dev/null ||
	    die "the responder stopped; see $run/responder.log"
	if ! kill -0 "$ngx" 2>/dev/null; then
		ngx=""
		die "nginx stopped; see $run/nginx/error.log"
	fi
	kill -0 "$disp" 2>/dev/null ||
	    die "the dispatcher stopped; see $run/dispatch.log"
	sleep 1 &
	wait $! 2>/dev/null || true
done
