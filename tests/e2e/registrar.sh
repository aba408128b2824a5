#!/bin/sh
# tests/e2e/registrar.sh BUILD_DIR: applications register their jobs
# without root, tried as the real users.
#
# A data directory made by scripts/setup-server.sh for a service user made
# for the test, a registrar user and a user that is none, and the
# registrar service (`hookbox registrar serve --listen`) as root:
#  - as the registrar, job add, import, list and remove work through the
#    service, with job add's answers (the same twice: fine; another:
#    refused, naming the field), and a callback that follows is accepted
#    by the responder, run as the service user;
#  - as the registrar, another tenant's job is refused, and so is adding a
#    tenant, an endpoint, a secret or a destination, each with a message
#    that says why; its job list holds its tenants alone;
#  - the service user (who reads the secrets) and a user that is no
#    registrar are refused by the service;
#  - the service opens no file a request names, refuses to listen where
#    something not its own is, and the client refuses a socket planted by
#    another user, or a link;
#  - on PostgreSQL, with hookbox(7)'s roles (hookbox_registrar among
#    them): the service connects as hookbox_registrar, a registration is
#    seen by the responder connected as hookbox_serve, and the role itself
#    can write nothing but jobs.
# Needs root; skipped otherwise.
set -u
build=$(cd "${1:?usage: registrar.sh BUILD_DIR}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/helpers/lib.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "registrar: skipped (needs root to make its users)"
	finish registrar
	exit
fi
svc=hookbox-rgs app=hookbox-rga nobody=hookbox-rgn
for u in "$svc" "$app" "$nobody"; do
	id "$u" >/dev/null 2>&1 ||
	    useradd --system --no-create-home --home-dir /nonexistent \
	    --shell /usr/sbin/nologin --user-group "$u" ||
	    { fail "cannot create $u"; finish registrar; exit; }
done

tmp=$(mktemp -d)
chmod 0755 "$tmp"
. "$top/tests/helpers/pglib.sh"
. "$top/tests/helpers/hostlib.sh"
mkdir -m 0755 "$tmp/bin" "$tmp/run" "$tmp/fcgi"
chown "$svc" "$tmp/fcgi"
# The users may not reach the build tree: copies of their own.
cp "$build/hookbox" "$build/hookbox-fcgi" "$tmp/bin/"
HB="$tmp/bin/hookbox"
FCGI="$tmp/bin/hookbox-fcgi"
export HOOKBOX_REGISTRAR=""	# root's commands: never the service
sock="$tmp/run/registrar.sock"
data="$tmp/data"
export HOOKBOX_DIR="$data"
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	pkill -u "$svc" 2>/dev/null
	[ -n "${pg_host:-}" ] && pg_stop "$tmp/pg"
	rm -rf "$tmp"
}
trap cleanup EXIT

# as USER CMD...: CMD as USER, with nothing of root's environment but
# PATH and the registrar's socket.
as() {
	_u=$1
	shift
	setpriv --reuid="$_u" --regid="$_u" --init-groups -- \
	    env -i PATH=/usr/bin:/bin HOOKBOX_REGISTRAR="$sock" \
	    HOOKBOX_DIR="$data" "$@"
}
# serve LOCATION: the registrar service as root on $sock; sets $served.
serve() {
	"$HB" -d "$1" registrar serve --listen "$sock" 2>"$tmp/serve.log" &
	served=$!
	pids="$pids $served"
	until_true 60 test -S "$sock" ||
	    fail "the service did not start: $(cat "$tmp/serve.log")"
}
stop_serving() {
	kill "$served" 2>/dev/null
	wait "$served" 2>/dev/null
	rm -f "$sock"
}
# call SOCK BODY: a signed callback straight to the responder's socket.
call() {
	_sig=$(printf '%s' "$2" | "$HB" sign --endpoint tornado |
	    sed 's/^[^:]*: //')
	printf '%s' "$2" | env -i REQUEST_METHOD=POST \
	    DOCUMENT_URI=/hooks/tornado CONTENT_TYPE=application/json \
	    CONTENT_LENGTH=${#2} HTTP_X_TORNADO_SIGNATURE="$_sig" \
	    cgi-fcgi -bind -connect "$1" 2>/dev/null | tr -d '\r'
}
result() { jget result "$(printf '%s\n' "$1" | tail -n 1)"; }
# respond NAME LOCATION USER: a responder as USER on $tmp/fcgi/NAME.sock.
respond() {
	setpriv --reuid="$3" --regid="$3" --init-groups -- \
	    "$FCGI" -d "$2" -s "$tmp/fcgi/$1.sock" 2>"$tmp/$1.log" &
	pids="$pids $!"
	until_true 60 test -S "$tmp/fcgi/$1.sock" ||
	    fail "responder $1 did not start: $(cat "$tmp/$1.log")"
}

# ---- the server, as setup-server.sh makes it ----
out=$(sh "$top/scripts/setup-server.sh" -u "$svc" -w "$svc" -d "$data" \
    -b "$tmp/bin" 2>&1)
eq "setup-server: exit ($out)" 0 $?
umask 077
printf 'the-operators-secret-0123456789' > "$tmp/hmac.secret"
"$HB" tenant add acme
"$HB" tenant add other
"$HB" destination add sink --tenant acme --url http://127.0.0.1:9/sink
"$HB" destination add sink --tenant other --url http://127.0.0.1:9/sink
"$HB" endpoint add tornado --tenant acme --secret-file "$tmp/hmac.secret"
umask 022
# Run again, it names the registrar, and refuses the service user.
out=$(sh "$top/scripts/setup-server.sh" -u "$svc" -w "$svc" -d "$data" \
    -b "$tmp/bin" -r "$app:acme" 2>&1)
eq "setup-server -r: exit ($out)" 0 $?
out=$(sh "$top/scripts/setup-server.sh" -u "$svc" -w "$svc" -d "$data" \
    -b "$tmp/bin" -r "$svc:acme" 2>&1); rc=$?
eq "setup-server -r the service user: exit" 1 $rc
contains "... said" "reads the secrets" "$out"
eq "setup-server named the registrar" "$app|acme" \
    "$(sqlite3 "file:$data/config.db?mode=ro" \
    'SELECT name, tenant FROM registrars')"
contains "registrar list" "$app" "$("$HB" registrar list)"
serve "$data"

# ---- the registrar's jobs ----
out=$(as "$app" "$HB" job add --tenant acme --attempt att-1 --step s1 \
    --destination sink job-1 2>&1)
eq "registrar: job add ($out)" "job job-1 of tenant acme added" "$out"
out=$(as "$app" "$HB" job add --tenant acme --attempt att-1 --step s1 \
    --destination sink job-1 2>&1)
eq "registrar: the same again: fine" \
    "job job-1 of tenant acme present already, the same" "$out"
out=$(as "$app" "$HB" job add --tenant acme --attempt att-1 --step s2 \
    --destination sink job-1 2>&1); rc=$?
eq "registrar: the same id with another step: exit" 1 $rc
contains "registrar: ... names the difference" \
    'exists already with step "s1", not "s2"' "$out"
respond main "$data" "$svc"
a=$(call "$tmp/fcgi/main.sock" "$(completed job-1)")
eq "the next callback is accepted" accepted "$(result "$a")"
eq "one action, in the outbox" 1 \
    "$(sqlite3 "file:$data/state.db?mode=ro" 'SELECT count(*) FROM outbox')"
contains "the service logs the request" "registrar $app: job add: exit 0" \
    "$(cat "$tmp/serve.log")"

# hookbox(7)'s application side, as the page writes it (its escapes
# undone): the shell line, and the Python over the socket where there is
# a python3.
snippet() {
	man_block "$1" "$2" | sed -e '/^\./d' -e 's/\\-/-/g' \
	    -e 's/\\e/\\/g' -e 's/\\\\/\\/g' -e 's/\\&//'
}
man_block() {
	sed -n "/^$1/,/^$2/p" "$top/man/hookbox.7"
}
sh_side=$(snippet 'hookbox job add .*"\$attempt"' '.*"\$job_id" ')
contains "hookbox(7)'s shell side found" "job add" "$sh_side"
out=$(as "$app" env attempt=att-sh job_id=job-sh PATH="$tmp/bin:/usr/bin" \
    sh -c "sed 's/--destination app/--destination sink/' <<EOF | sh
$sh_side
EOF" 2>&1)
eq "hookbox(7)'s shell side, as the registrar ($out)" \
    "job job-sh of tenant acme added" "$out"
if command -v python3 >/dev/null 2>&1; then
	py=$(snippet 'import json, socket' '    raise RuntimeError' |
	    sed -e "s|/run/hookbox/registrar.sock|$sock|" \
	    -e 's/"app"/"sink"/')
	contains "hookbox(7)'s Python side found" "socket.AF_UNIX" "$py"
	printf 'attempt, job_id = "att-py", "job-py"\n%s\nprint(r["stdout"], end="")\n' \
	    "$py" > "$tmp/side.py"
	chmod 0644 "$tmp/side.py"
	out=$(as "$app" python3 "$tmp/side.py" 2>&1)
	eq "hookbox(7)'s Python side, as the registrar" \
	    "job job-py of tenant acme added" "$out"
	out=$(sed 's/"acme"/"other"/' "$tmp/side.py" | as "$app" python3 - 2>&1)
	contains "... and refused for another tenant" \
	    "not a tenant whose jobs this registrar may register" "$out"
else
	echo "registrar: no python3: hookbox(7)'s Python side not run"
fi

# Import, the file read by the client as the user.
printf '%s\n' '{"tenant":"acme","job_id":"job-2","attempt":"att-2","step":"s1","destination":"sink"}' \
    '{"tenant":"other","job_id":"job-3","attempt":"att-3","step":"s1","destination":"sink"}' \
    > "$tmp/jobs.jsonl"
chmod 0644 "$tmp/jobs.jsonl"
out=$(as "$app" "$HB" job import "$tmp/jobs.jsonl" 2>&1); rc=$?
eq "import: one bad line: exit" 1 $rc
contains "import: the good line taken" \
    "imported 1 jobs, 0 already present, 1 bad lines" "$out"
contains "import: another tenant's line refused, said" \
    "line 2: job job-3: other: not a tenant whose jobs this registrar may register" \
    "$out"
out=$(as "$app" "$HB" job import < "$tmp/jobs.jsonl" 2>&1)
contains "import from standard input" "0 jobs, 1 already present" "$out"
# A file the user may not read is not read for it by root.
printf '%s\n' '{"tenant":"acme","job_id":"job-9","attempt":"att-9","step":"s1","destination":"sink"}' \
    > "$tmp/root-only.jsonl"
chmod 0600 "$tmp/root-only.jsonl"
out=$(as "$app" "$HB" job import "$tmp/root-only.jsonl" 2>&1); rc=$?
eq "import of a file the user cannot read: exit" 1 $rc
contains "... refused by the client, as the user" "Permission denied" "$out"
# A request naming a file itself (not through the client) is refused.
out=$(printf '{"argv":["job","import","%s"]}\n' "$tmp/root-only.jsonl" |
    as "$app" perl -MIO::Socket::UNIX -e '
my $s = IO::Socket::UNIX->new(Peer => $ARGV[0]) or die "$!\n";
local $/; print $s <STDIN>; shutdown($s, 1); print <$s>;' "$sock")
contains "a request naming a file: refused" "reads standard input alone" \
    "$out"
eq "... and nothing of it registered" 0 \
    "$("$HB" job list --json | grep -c '"job-9"')"

# Requests straight to the socket, as any local program could send them.
raw() {
	as "$app" perl -MIO::Socket::UNIX -e '
my $s = IO::Socket::UNIX->new(Peer => $ARGV[0]) or die "$!\n";
local $/; $SIG{PIPE} = "IGNORE"; print $s <STDIN>; shutdown($s, 1);
print <$s>;' "$sock"
}
out=$(printf 'not json\n' | raw)
contains "raw: not JSON: refused" "a request is a line of JSON" "$out"
out=$(head -c 70000 /dev/zero | tr '\0' 'x' | raw)
contains "raw: a line past 64 KiB: refused" "a request is a line of JSON" \
    "$out"
out=$(printf '{"argv":"job add"}\n' | raw)
contains "raw: argv not a list: refused" "a request is a line of JSON" "$out"
out=$( (printf '{"argv":["job","list"'; i=0; while [ $i -lt 70 ]; do
	printf ',"--json"'; i=$((i + 1)); done; printf ']}\n') | raw)
contains "raw: 72 words: refused" "a request is a line of JSON" "$out"
out=$(printf '{"argv":["tenant","add","evil"]}\n' | raw)
contains "raw: another command: refused" \
    "a registrar runs job add, list, import and remove, and nothing else" \
    "$out"
out=$(printf '{"argv":["job","list","-d","/tmp"]}\n' | raw)
contains "raw: -d: refused" "keeps its own configuration: no -d" "$out"
out=$(printf '{"argv":["registrar","add","--tenant","other","%s"]}\n' \
    "$app" | raw)
contains "raw: registrar add: refused" "and nothing else" "$out"
eq "raw: nothing of it written" "2|1" \
    "$(sqlite3 "file:$data/config.db?mode=ro" "SELECT
    (SELECT count(*) FROM tenants), (SELECT count(*) FROM registrars)")"

# The registrar's list: its tenants alone.
"$HB" job add --tenant other --attempt o1 --step s1 --destination sink job-o
out=$(as "$app" "$HB" job list --json)
contains "list: its jobs" '"job_id":	"job-2"' "$out"
lacks "list: not another tenant's" "job-o" "$out"
out=$(as "$app" "$HB" job list --tenant other 2>&1)
lacks "list --tenant other: nothing of it" "job-o" "$out"

# Refusals, each said.
out=$(as "$app" "$HB" job add --tenant other --attempt a --step s \
    --destination sink job-x 2>&1); rc=$?
eq "another tenant's job: exit" 1 $rc
contains "... said" "other: not a tenant whose jobs this registrar may register (registrar $app)" "$out"
out=$(as "$app" "$HB" job remove --tenant other job-o 2>&1); rc=$?
eq "another tenant's job removed: exit" 1 $rc
contains "... said" "not a tenant whose jobs" "$out"
for c in "tenant add evil" \
    "endpoint add evil --tenant acme --secret-file /dev/null" \
    "endpoint secret add --secret-file /dev/null tornado" \
    "destination add evil --tenant acme --url http://127.0.0.1:9/x" \
    "registrar add --tenant other $app"; do
	# shellcheck disable=SC2086
	out=$(as "$app" "$HB" $c 2>&1); rc=$?
	eq "registrar: $c: exit" 1 $rc
	contains "registrar: $c: said" "permission denied for user $app" "$out"
done
eq "nothing of theirs was written" "2|0|1" \
    "$(sqlite3 "file:$data/config.db?mode=ro" "SELECT
    (SELECT count(*) FROM tenants), (SELECT count(*) FROM endpoints WHERE
    name = 'evil'), (SELECT count(*) FROM registrars)")"
out=$(as "$app" "$HB" job remove --tenant acme job-2 2>&1)
eq "remove its own job ($out)" 0 $?
eq "... gone" 0 "$(sqlite3 "file:$data/config.db?mode=ro" \
    "SELECT count(*) FROM jobs WHERE job_id = 'job-2'")"

# Users the service refuses.
out=$(as "$svc" "$HB" job add --tenant acme --attempt a --step s \
    --destination sink job-s 2>&1); rc=$?
eq "the service user: exit" 1 $rc
contains "the service user: said" "it reads the configuration's secrets" \
    "$out"
out=$(as "$nobody" "$HB" job list 2>&1); rc=$?
eq "no registrar: exit" 1 $rc
contains "no registrar: said" "user $nobody may register no tenant's jobs" \
    "$out"
eq "none of theirs registered" 0 \
    "$(sqlite3 "file:$data/config.db?mode=ro" \
    "SELECT count(*) FROM jobs WHERE job_id IN ('job-s', 'job-x')")"
stop_serving

# ---- planted files ----
# The service listens only where nothing is, or a socket of its own.
: > "$sock"
"$HB" registrar serve --listen "$sock" 2>"$tmp/err"; rc=$?
eq "a file at the socket's name: exit" 1 $rc
contains "... said" "not a socket of this user's" "$(cat "$tmp/err")"
rm -f "$sock"
ln -s /etc/passwd "$sock"
"$HB" registrar serve --listen "$sock" 2>"$tmp/err"; rc=$?
eq "a link at the socket's name: exit" 1 $rc
contains "... said" "a symbolic link" "$(cat "$tmp/err")"
eq "the link's target untouched" root "$(stat -c %U /etc/passwd)"
rm -f "$sock"
# The client speaks only to root's socket in a directory only root writes.
mkdir -m 1777 "$tmp/open"
setpriv --reuid="$nobody" --regid="$nobody" --init-groups -- \
    perl -MIO::Socket::UNIX -e '
my $s = IO::Socket::UNIX->new(Local => $ARGV[0], Listen => 1) or die;
sleep 30;' "$tmp/open/registrar.sock" &
pids="$pids $!"
until_true 60 test -S "$tmp/open/registrar.sock"
out=$(setpriv --reuid="$app" --regid="$app" --init-groups -- env -i \
    HOOKBOX_REGISTRAR="$tmp/open/registrar.sock" "$HB" job list 2>&1); rc=$?
eq "a socket another user planted: exit" 1 $rc
contains "... refused, said" "not a socket of root's" "$out"
ln -s "$sock" "$tmp/run/link.sock"
serve "$data"
out=$(setpriv --reuid="$app" --regid="$app" --init-groups -- env -i \
    HOOKBOX_REGISTRAR="$tmp/run/link.sock" "$HB" job list 2>&1); rc=$?
eq "a link to the socket: exit" 1 $rc
contains "... refused" "not a socket of root's" "$out"
stop_serving

# ---- PostgreSQL, with hookbox(7)'s roles ----
unset HOOKBOX_DIR
if pg_up; then
	reg="host=$pg_host user=hookbox_registrar dbname=hookbox"
	out=$("$HB" -d "$admin" init --grant hookbox_serve \
	    --grant-registrar hookbox_registrar 2>&1)
	contains "pg: init grants the registrar's role ($out)" \
	    "granted hookbox_registrar: register jobs" "$out"
	"$HB" -d "$admin" tenant add acme
	"$HB" -d "$admin" tenant add other
	for t in acme other; do
		"$HB" -d "$admin" destination add sink --tenant $t \
		    --url http://127.0.0.1:9/sink
	done
	umask 077
	"$HB" -d "$admin" endpoint add tornado --tenant acme \
	    --secret-file "$tmp/hmac.secret"
	umask 022
	"$HB" -d "$admin" registrar add --tenant acme "$app" >/dev/null
	serve "$reg"
	out=$(as "$app" "$HB" job add --tenant acme --attempt att-1 \
	    --step s1 --destination sink job-1 2>&1)
	eq "pg: registrar: job add ($out)" "job job-1 of tenant acme added" \
	    "$out"
	out=$(as "$app" "$HB" job add --tenant other --attempt a --step s \
	    --destination sink job-x 2>&1); rc=$?
	eq "pg: another tenant's job: exit" 1 $rc
	contains "pg: ... said" "other: not a tenant whose jobs" "$out"
	respond pg "$serve" root
	HOOKBOX_DB=$admin
	export HOOKBOX_DB
	a=$(call "$tmp/fcgi/pg.sock" "$(completed job-1)")
	unset HOOKBOX_DB
	eq "pg: the next callback is accepted" accepted "$(result "$a")"
	# The role itself, whatever connects as it, writes jobs alone.
	for sql in "INSERT INTO hookbox_config.tenants(id, created_at) VALUES ('evil', 0)" \
	    "SELECT secret FROM hookbox_config.secrets" \
	    "SELECT api_key FROM hookbox_config.tenants" \
	    "SELECT secret FROM hookbox_config.destinations" \
	    "UPDATE hookbox_config.jobs SET destination = 'x'" \
	    "INSERT INTO hookbox_config.registrars VALUES ('x', 'other', 0)" \
	    "SELECT count(*) FROM hookbox_state.outbox"; do
		out=$(psql "$reg" -X -Atq -v ON_ERROR_STOP=1 -c "$sql" 2>&1)
		contains "pg: hookbox_registrar may not: $sql" \
		    "permission denied" "$out"
	done
	eq "pg: the role reads the jobs" 1 "$(psql "$reg" -X -Atq \
	    -c "SELECT count(*) FROM hookbox_config.jobs")"
	out=$(as "$app" "$HB" job remove --tenant acme job-1 2>&1)
	eq "pg: remove its own job ($out)" 0 $?
	eq "pg: ... gone" 0 "$(psql "$admin" -X -Atq -c \
	    "SELECT count(*) FROM hookbox_config.jobs")"
	stop_serving
fi
finish registrar
