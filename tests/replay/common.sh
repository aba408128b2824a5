# tests/replay/common.sh: shared by the replay scenarios (sourced).
#
# Every scenario runs against any running hookbox behind nginx, with or
# without a dispatcher delivering at the same time:
#     tests/replay/NAME.sh BASE_URL
# with HOOKBOX_DIR naming the instance's data directory (the scripts
# change config.db with the tool and read state.db with sqlite3) and
# HOOKBOX the tool (default: hookbox on PATH, or build/hookbox).  Further
# arguments (the ENDPOINT [ORG_ENDPOINT] of earlier versions) are ignored.
#
# Each scenario registers a tenant of its own, replay-XXXXXXXX, with an
# hmac tornado-job endpoint of the same name, a tornado-org endpoint
# NAME-org, a destination and its jobs, and asserts only what it did: its
# own actions, receipts and conflicts, whatever else the instance does
# meanwhile.  On exit, whatever happened, it removes all of it: its rows
# in state.db (so that no action of a replay is left to go dead, or to
# wait for a destination that is gone), then its jobs, destination,
# endpoints and tenant.  Each exits 0 when every assertion held and
# prints "NAME: N passed, N failed".
#
# The destination is REPLAY_SINK_URL if set, else BASE_URL/sink when that
# answers a POST with 2xx (the `make run` demo's nginx does), else a
# loopback port nothing listens on: there the action stays pending (the
# destination is idempotent, so an unanswered attempt is retried) until
# the scenario removes it.

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../helpers/lib.sh"

usage="usage: $0 BASE_URL (with HOOKBOX_DIR set)"
base=${1:?$usage}
: "${HOOKBOX_DIR:?set HOOKBOX_DIR to the data directory of the instance}"
export HOOKBOX_DIR
if [ -z "${HOOKBOX:-}" ]; then
	if command -v hookbox >/dev/null 2>&1; then HOOKBOX=hookbox
	else HOOKBOX="$here/../../build/hookbox"; fi
fi
command -v sqlite3 >/dev/null 2>&1 ||
    { echo "$0: the sqlite3 program is needed (apt-get install sqlite3)" >&2;
    exit 2; }

scratch=$(mktemp -d)
tenant="replay-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')"
endpoint=$tenant
org_endpoint="$tenant-org"
# What this scenario made, for the clean-up: "tenant T", "endpoint E",
# "destination T D", "job T J", one a line, in the order made.
made="$scratch/made"
: > "$made"

# sql QUERY: runs QUERY on state.db and prints the result.
sql() {
	sqlite3 "$HOOKBOX_DIR/state.db" ".timeout 5000" "$1"
}

# Removes what the scenario made: its state.db rows first (every table
# that names a tenant; attempts through their action), once none of them
# is leased (a delivery in flight is let finish, for at most 10 s), then
# its config.db rows in the reverse order of their making.
cleanup() {
	_ts=$(sed -n 's/^tenant //p' "$made" | sed "s/.*/'&'/" |
	    paste -sd, -)
	if [ -n "$_ts" ]; then
		_i=0
		while [ "$(sql "SELECT count(*) FROM outbox WHERE tenant IN ($_ts)
		    AND state = 'leased'" 2>/dev/null)" != 0 ] &&
		    [ $_i -lt 100 ]; do
			sleep 0.1; _i=$((_i + 1))
		done
		sql "BEGIN IMMEDIATE;
		    DELETE FROM attempts WHERE action_id IN
		        (SELECT action_id FROM outbox WHERE tenant IN ($_ts));
		    DELETE FROM outbox WHERE tenant IN ($_ts);
		    DELETE FROM accepted WHERE tenant IN ($_ts);
		    DELETE FROM receipts WHERE tenant IN ($_ts);
		    DELETE FROM job_state WHERE tenant IN ($_ts);
		    DELETE FROM conflicts WHERE tenant IN ($_ts);
		    DELETE FROM polls WHERE tenant IN ($_ts);
		    COMMIT;" >/dev/null ||
		    echo "$0: could not remove the rows of $_ts from state.db" >&2
	fi
	sed '1!G;h;$!d' "$made" | while read -r _kind _a _b; do
		case "$_kind" in
		job) "$HOOKBOX" job remove "$_b" --tenant "$_a" ;;
		destination) "$HOOKBOX" destination remove "$_b" --tenant "$_a" ;;
		endpoint) "$HOOKBOX" endpoint remove "$_a" ;;
		tenant) "$HOOKBOX" tenant remove "$_a" ;;
		esac >/dev/null || echo "$0: could not remove $_kind $_a $_b" >&2
	done
	rm -rf "$scratch"
}
trap 'cleanup' EXIT
trap 'exit 2' INT TERM

# The destination's URL: see the top.
sink_url() {
	if [ -n "${REPLAY_SINK_URL:-}" ]; then
		echo "$REPLAY_SINK_URL"
		return
	fi
	case $(curl -s -o /dev/null -w '%{http_code}' --max-time 5 \
	    -H 'Content-Type: application/json' --data-binary '{}' \
	    "$base/sink") in
	2??) echo "$base/sink" ;;
	*) echo "http://127.0.0.1:9/replay-sink" ;;
	esac
}

# add_tenant T: a tenant of the scenario's own, with the destination
# replay-sink.
add_tenant() {
	"$HOOKBOX" tenant add "$1" >/dev/null || exit 2
	echo "tenant $1" >> "$made"
	"$HOOKBOX" destination add replay-sink --tenant "$1" --idempotent \
	    --url "$sink" >/dev/null || exit 2
	echo "destination $1 replay-sink" >> "$made"
}

sink=$(sink_url)
add_tenant "$tenant"
# A random secret, readable by its owner only.
(umask 077; od -An -N24 -tx1 /dev/urandom | tr -d ' \n' > "$scratch/secret")
"$HOOKBOX" endpoint add "$endpoint" --tenant "$tenant" \
    --secret-file "$scratch/secret" >/dev/null || exit 2
echo "endpoint $endpoint" >> "$made"
"$HOOKBOX" endpoint add "$org_endpoint" --tenant "$tenant" \
    --kind tornado-org --secret-file "$scratch/secret" >/dev/null || exit 2
echo "endpoint $org_endpoint" >> "$made"

# new_job [TENANT]: a fresh job of TENANT (default the scenario's): prints
# its id.  Its action is TENANT:att-JOB:replay-v1, to replay-sink.
new_job() {
	_t=${1:-$tenant}
	_j="replay-$(date +%s)-$$-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')"
	"$HOOKBOX" job add "$_j" --tenant "$_t" --attempt "att-$_j" \
	    --step replay-v1 --destination replay-sink >/dev/null || exit 2
	echo "job $_t $_j" >> "$made"
	echo "$_j"
}

# action_of JOB: the action id a job of the scenario's tenant makes.
action_of() { echo "$tenant:att-$1:replay-v1"; }

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

# What the scenario's tenant has in state.db: actions (outbox rows, in
# any state), receipts, open conflicts.
actions() { sql "SELECT count(*) FROM outbox WHERE tenant = '$tenant'"; }
receipts() { sql "SELECT count(*) FROM receipts WHERE tenant = '$tenant'"; }
conflicts() {
	sql "SELECT count(*) FROM conflicts WHERE tenant = '$tenant'
	    AND resolved_at IS NULL"
}

# live WHAT ACTION: asserts ACTION has its outbox row, pending or on its
# way (leased) or delivered: whether a dispatcher runs or not.
live() {
	_s=$(sql "SELECT state FROM outbox WHERE action_id = '$2'")
	case "$_s" in
	pending|leased|delivered) pass ;;
	*) fail "$1: action $2 is '${_s:-missing}', not pending or delivered" ;;
	esac
}

completed() {
	printf '{"type":"job_completed","job_id":"%s","status":"completed",'\
'"key":"out/%s.mp4","url":"https://cdn.example/out/%s.mp4"}' "$1" "$1" "$1"
}
