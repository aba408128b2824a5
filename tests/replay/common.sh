# tests/replay/common.sh: shared by the replay scenarios (sourced).
#
# Every scenario runs against any running hookbox behind nginx:
#     tests/replay/NAME.sh BASE_URL ENDPOINT [ORG_ENDPOINT]
# with HOOKBOX_DIR naming the instance's data directory (the scripts sign
# with `hookbox sign` and register fresh jobs of their own with
# `hookbox job add`) and HOOKBOX the tool (default: hookbox on PATH, or
# build/hookbox).  ENDPOINT must be an hmac tornado-job endpoint;
# ORG_ENDPOINT an hmac tornado-org endpoint of the same tenant.
# Each exits 0 when every assertion held and prints "NAME: N passed, N failed".

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"

base=${1:?usage: $0 BASE_URL ENDPOINT [ORG_ENDPOINT]}
endpoint=${2:?usage: $0 BASE_URL ENDPOINT [ORG_ENDPOINT]}
org_endpoint=${3:-}
: "${HOOKBOX_DIR:?set HOOKBOX_DIR to the instance's data directory}"
export HOOKBOX_DIR
if [ -z "${HOOKBOX:-}" ]; then
	if command -v hookbox >/dev/null 2>&1; then HOOKBOX=hookbox
	else HOOKBOX="$here/../../build/hookbox"; fi
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# The endpoint's tenant, from the tool's own listing.
tenant_of() {
	"$HOOKBOX" endpoint list --json | tr -d '\t\n ' |
	    sed 's/},{/}\n{/g' | grep "\"name\":\"$1\"" |
	    sed 's/.*"tenant":"\([^"]*\)".*/\1/'
}
tenant=$(tenant_of "$endpoint")
[ -n "$tenant" ] || { echo "no endpoint $endpoint" >&2; exit 2; }

# A fresh job of the tenant: prints its id.  Its action is
# tenant:att-JOB:replay-v1 going to the destination replay-sink.
new_job() {
	_t=${1:-$tenant}
	"$HOOKBOX" destination add replay-sink --tenant "$_t" \
	    --url "$base/sink" 2>/dev/null || true
	_j="replay-$(date +%s)-$$-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')"
	"$HOOKBOX" job add "$_j" --tenant "$_t" --attempt "att-$_j" \
	    --step replay-v1 --destination replay-sink >/dev/null || exit 2
	echo "$_j"
}

# post ENDPOINT BODY [SIGN_ARGS...]: signs BODY for ENDPOINT and POSTs it.
# Sets $code (HTTP status), $result and $reply (the JSON body).
post() {
	_ep=$1 _body=$2
	shift 2
	printf '%s' "$_body" > "$scratch/body"
	"$HOOKBOX" sign --endpoint "$_ep" "$@" < "$scratch/body" \
	    > "$scratch/headers" || exit 2
	set --
	while IFS= read -r _h; do set -- "$@" -H "$_h"; done < "$scratch/headers"
	raw_post "$_ep" "$@"
}

# raw_post ENDPOINT [CURL_ARGS...]: POSTs $scratch/body as it is, as
# $ctype (default application/json).
raw_post() {
	_ep=$1
	shift
	code=$(curl -s -o "$scratch/reply" -w '%{http_code}' \
	    -H "Content-Type: ${ctype:-application/json}" \
	    --data-binary "@$scratch/body" \
	    "$@" "$base/hooks/$_ep")
	reply=$(cat "$scratch/reply")
	result=$(jget result "$reply")
}

# What to watch: the tool's status document.
pending() { jget outbox.pending "$("$HOOKBOX" status --json)"; }
conflicts() { jget conflicts_open "$("$HOOKBOX" status --json)"; }

# Receipts recorded so far, from the metrics endpoint.
receipts() {
	curl -s "$base/hooks/_metrics" |
	    awk '/^hookbox_receipts\{/ { n += $2 } END { print n + 0 }'
}

completed() {
	printf '{"type":"job_completed","job_id":"%s","status":"completed",'\
'"key":"out/%s.mp4","url":"https://cdn.example/out/%s.mp4"}' "$1" "$1" "$1"
}
