#!/bin/sh
# scripts/run.sh BUILD_DIR: the demo `make run` starts.
# Creates a demo data directory under ./run (a tenant, an HMAC endpoint,
# a destination and a registered job) and shows its status.
set -eu
build=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
HB="$top/$build/hookbox"
export HOOKBOX_DIR="$top/run/data"

if [ ! -f "$HOOKBOX_DIR/config.db" ]; then
	mkdir -p "$top/run"
	"$HB" init
	"$HB" tenant add demo
	# A random secret, kept in a file only the owner can read.
	umask 077
	head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' \
	    > "$top/run/endpoint.secret"
	"$HB" endpoint add tornado-demo --tenant demo --kind tornado-job \
	    --auth hmac --secret-file "$top/run/endpoint.secret"
	"$HB" destination add sink --tenant demo --idempotent \
	    --url http://127.0.0.1:8089/sink
	"$HB" job add job-demo-1 --tenant demo --attempt att-1 \
	    --step analyze-v1 --destination sink
fi
echo "data directory: $HOOKBOX_DIR"
"$HB" status
echo
echo "try:"
echo "  echo '{\"id\":\"job-demo-1\",\"status\":\"Completed\"}' |" \
    "HOOKBOX_DIR=$HOOKBOX_DIR $HB observe --tenant demo"
