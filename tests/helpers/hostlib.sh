# tests/helpers/hostlib.sh: what tests/e2e/hosts.sh and tests/e2e/pgfail.sh share
# (sourced after tests/helpers/lib.sh and tests/helpers/pglib.sh): a private PostgreSQL
# with an admin and a serving role, responders on their own sockets, signed
# POSTs fired many at a time, and queries as the admin.
#
# Needs $build, $top and $tmp.  Sets HB, FCGI, SINK; after pg_up: admin
# (the admin's conninfo) and serve (the serving role's).

HB="$build/hookbox"
FCGI="$build/hookbox-fcgi"
SINK="$build/tests/sink"
# The tests name their location on each command line or in HOOKBOX_DB.
unset HOOKBOX_DIR HOOKBOX_DB
PGCONNECT_TIMEOUT=10
export PGCONNECT_TIMEOUT

# readme_roles: the SQL hookbox(7)'s "More than one server" section has a
# superuser run to make the database and its two roles, as written there
# (its example block, the page's escapes undone).
readme_roles() {
	sed -n '/^As a PostgreSQL superuser/,/^and let both roles in/p' \
	    "$top/man/hookbox.7" | sed -n '/^\.nf/,/^\.fi/p' |
	    sed -e '/^\./d' -e 's/\\-/-/g' -e 's/\\e/\\/g'
}

# pg_up: the server in $tmp/pg; the database and the roles hookbox_admin
# (its owner, no superuser) and hookbox_serve made by hookbox(7)'s own
# lines (no grants yet: `hookbox init --grant` gives them); and $admin,
# $serve, $super (the server's superuser).
pg_up() {
	chmod 0755 "$tmp"
	# fsync off (nosync): what these tests kill are processes, never the
	# machine, and a stop is clean; flushes would only slow them down.
	pg_start "$tmp/pg" nosync ||
	    { fail "PostgreSQL did not start"; return 1; }
	super="host=$pg_host user=postgres dbname=postgres"
	admin="host=$pg_host user=hookbox_admin dbname=hookbox"
	serve="host=$pg_host user=hookbox_serve dbname=hookbox"
	[ -n "$(readme_roles)" ] ||
	    { fail "hookbox(7)'s roles: no SQL found"; return 1; }
	psql "$super" -X -q -v ON_ERROR_STOP=1 -c "DROP DATABASE hookbox" \
	    >/dev/null &&
	    readme_roles | psql "$super" -X -q -v ON_ERROR_STOP=1 >/dev/null ||
	    { fail "hookbox(7)'s roles could not be made"; return 1; }
}

# q SQL: runs SQL as the admin; prints the rows, fields |-separated.
q() { psql "$admin" -X -Atq -v ON_ERROR_STOP=1 -c "$1"; }
# qs SQL: the same as the server's superuser.
qs() { psql "$super" -X -Atq -v ON_ERROR_STOP=1 -c "$1"; }

# pg_restart: starts the stopped server again, as pg_start left it.
pg_restart() {
	pg_as "$(pg_bindir)/pg_ctl" -D "$tmp/pg/data" -l "$tmp/pg/server.log" \
	    -w -t 60 -o "-k $tmp/pg -c listen_addresses='' -c fsync=off" \
	    start >/dev/null 2>&1
}

# pg_halt: stops the server (fast: sessions are cut, as a crash would).
pg_halt() {
	pg_as "$(pg_bindir)/pg_ctl" -D "$tmp/pg/data" -m fast -w stop \
	    >/dev/null 2>&1
}

# lines_ge FILE N: FILE has N lines or more (read again at each call).
lines_ge() { test "$(wc -l < "$1")" -ge "$2"; }

# responder NAME LOCATION [ARGS...]: hookbox-fcgi on $tmp/NAME.sock with
# LOCATION in HOOKBOX_DB, its log in $tmp/NAME.log; sets $rpid.
responder() {
	_n=$1 _loc=$2
	shift 2
	rm -f "$tmp/$_n.sock"
	HOOKBOX_DB=$_loc HOOKBOX_BUSY_MS=${BUSY_MS:-2000} \
	    "$FCGI" -s "$tmp/$_n.sock" "$@" 2>>"$tmp/$_n.log" &
	rpid=$!
	until_true 20 test -S "$tmp/$_n.sock" ||
	    { fail "responder $_n did not start"; cat "$tmp/$_n.log"; }
}

# A signed POST, as a script xargs can run many of at once:
#   post.sh URL BODYFILE SIGFILE TAG
# prints "TAG CODE RESULT RETRY_AFTER" ("-" for what is missing).
cat > "$tmp/post.sh" <<'EOF'
#!/bin/sh
url=$1 body=$2 sig=$3 tag=$4
out=$(mktemp) hdr=$(mktemp)
set --
while IFS= read -r h; do set -- "$@" -H "$h"; done < "$sig"
code=$(curl -s -m 30 -o "$out" -D "$hdr" -w '%{http_code}' \
    -H 'Content-Type: application/json' "$@" --data-binary "@$body" "$url")
res=$(sed -n 's/.*"result":"\([a-z_]*\)".*/\1/p' "$out")
ra=$(awk -F': *' 'tolower($1) == "retry-after" { print $2 }' "$hdr" |
    tr -d '\r')
echo "$tag $code ${res:--} ${ra:--}"
rm -f "$out" "$hdr"
EOF

# sign NAME ENDPOINT BODY: writes $tmp/NAME.body and its signature's
# header line to $tmp/NAME.sig, the way `hookbox sign` does (hmac over
# "t.body" with $tmp/hmac.secret, every endpoint's here): a process less
# than the tool, which connects to the database for each one.  The tests
# check once that the tool signs the same.
sign() {
	printf '%s' "$3" > "$tmp/$1.body"
	_t=$(date +%s)
	_v=$({ printf '%s.' "$_t"; cat "$tmp/$1.body"; } |
	    openssl dgst -sha256 -hmac "$(cat "$tmp/hmac.secret")" -r |
	    cut -d' ' -f1)
	echo "X-Tornado-Signature: t=$_t,v1=$_v" > "$tmp/$1.sig"
}

# post BASE ENDPOINT NAME TAG: one signed POST of $tmp/NAME.body.
post() {
	sh "$tmp/post.sh" "$1/hooks/$2" "$tmp/$3.body" "$tmp/$3.sig" "$4"
}

completed() {
	printf '{"type":"job_completed","job_id":"%s","status":"completed","key":"k/%s"}' "$1" "$1"
}
org_completed() {
	printf '{"delivery_id":"dlv-%s","type":"job_completed","data":{"job_id":"%s","status":"completed","key":"k/%s"}}' "$1" "$1" "$1"
}

# jobs PREFIX N DEST: registers jobs PREFIX1..PREFIXN (attempt
# att-PREFIXi, step deliver-v1) for tenant acme, in one import.
jobs() {
	_i=1
	while [ $_i -le "$2" ]; do
		printf '{"tenant":"acme","job_id":"%s%d","attempt":"att-%s%d","step":"deliver-v1","destination":"%s"}\n' \
		    "$1" $_i "$1" $_i "$3"
		_i=$((_i + 1))
	done | "$HB" -d "$admin" job import - >/dev/null ||
	    fail "job import $1"
}

# kill9 PID: SIGKILL to PID and its children (a responder's workers, a
# dispatcher's), by their ids.
kill9() {
	for _c in $(pgrep -P "$1"); do kill -9 "$_c" 2>/dev/null; done
	kill -9 "$1" 2>/dev/null
}
