#!/bin/sh
# scripts/run.sh BUILD_DIR: the demo `make run` starts, in the foreground.
#
# A demo data directory under ./run (a tenant, an HMAC endpoint, a
# registered job, a destination), the responder on a unix socket with two
# workers, nginx on 127.0.0.1:$HOOKBOX_PORT (default 8088) with its own
# configuration and nothing that needs root, and the dispatcher delivering
# to nginx's /sink (a 204).  Ctrl-C stops it all.
set -eu
build=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
HB="$top/$build/hookbox"
FCGI="$top/$build/hookbox-fcgi"
port=${HOOKBOX_PORT:-8088}
run="$top/run"
export HOOKBOX_DIR="$run/data"

if [ ! -f "$HOOKBOX_DIR/config.db" ]; then
	mkdir -p "$run"
	"$HB" init
	"$HB" tenant add demo
	# A random secret in a file only the owner can read.
	(umask 077; head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' \
	    > "$run/endpoint.secret")
	"$HB" endpoint add tornado-demo --tenant demo --kind tornado-job \
	    --auth hmac --secret-file "$run/endpoint.secret"
	"$HB" destination add sink --tenant demo --idempotent \
	    --url "http://127.0.0.1:$port/sink"
	"$HB" job add job-demo-1 --tenant demo --attempt att-1 \
	    --step analyze-v1 --destination sink
fi

pids=""
stop() {
	trap - INT TERM EXIT
	echo
	echo "stopping"
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	exit 0
}
trap stop INT TERM EXIT

sock="$run/hookbox.sock"
rm -f "$sock"
"$FCGI" -s "$sock" &
pids="$pids $!"
i=0
while [ ! -S "$sock" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done

conf=$(sh "$top/scripts/nginx-conf.sh" "$run/nginx" "$port" "$sock" \
    "$HOOKBOX_DIR")
nginx -p "$run/nginx" -c "$conf" -e "$run/nginx/error.log" \
    -g 'daemon off;' &
pids="$pids $!"
i=0
until curl -sf "http://127.0.0.1:$port/hooks/_health" >/dev/null; do
	i=$((i + 1))
	if [ $i -ge 50 ]; then
		echo "nginx did not come up on 127.0.0.1:$port" \
		    "(set HOOKBOX_PORT); see $run/nginx/error.log" >&2
		exit 1
	fi
	sleep 0.1
done

"$HB" dispatch 2> "$run/dispatch.log" &
pids="$pids $!"

body='{"type":"job_completed","job_id":"job-demo-1","status":"completed","key":"out/demo.mp4","url":"https://cdn.example/out/demo.mp4"}'
sig=$(printf '%s' "$body" | "$HB" sign --endpoint tornado-demo)
cat <<EOT

hookbox is listening on http://127.0.0.1:$port/hooks/tornado-demo
data directory: $HOOKBOX_DIR

Paste this (signed now; valid for 5 minutes):

  curl -s -H 'Content-Type: application/json' -H '$sig' --data-binary '$body' http://127.0.0.1:$port/hooks/tornado-demo

or sign at send time:

  body='$body'
  curl -s -H 'Content-Type: application/json' -H "\$(printf %s "\$body" | HOOKBOX_DIR=$HOOKBOX_DIR $HB sign --endpoint tornado-demo)" --data-binary "\$body" http://127.0.0.1:$port/hooks/tornado-demo

then watch the action go pending -> delivered (the dispatcher is running):
  HOOKBOX_DIR=$HOOKBOX_DIR $HB status
  HOOKBOX_DIR=$HOOKBOX_DIR $HB list --state delivered
Ctrl-C stops everything.
EOT
wait
