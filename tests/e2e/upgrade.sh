#!/bin/sh
# tests/e2e/upgrade.sh BUILD_DIR: an upgrade from release v0.9.0 to the build
# in BUILD_DIR, as an administrator makes it (hookbox-fcgi(8),
# UPGRADING).
#
# The files: config.db and state.db as v0.9.0 wrote them, restored with
# sqlite3 from tests/fixtures/v0.9.0/*.sql (made by
# tests/fixtures/make-v0.9.0.sh; no git tag needed), are opened by the
# new build:
#  - three `hookbox status` at once, the first opens of state.db, agree
#    on what v0.9.0 left (3 pending, 2 delivered, 1 conflict) and leave
#    its user_version at the one a file the new build makes has;
#  - `hookbox init` upgrades config.db to the new build's version;
#  - a second open changes neither schema nor version;
#  - list and conflicts show the old rows; the responder answers the old
#    callbacks as duplicates and accepts new ones for the old job and the
#    mapped endpoint's subject; the dispatcher delivers every pending
#    action, old and new, to a sink;
#  - v0.9.0's own programs (when the tag is here to build them) refuse a
#    file of a schema newer than theirs, or open it when the schema did
#    not change, and change nothing.
# The running service (root, systemd-nspawn and the tag v0.9.0 needed;
# skipped otherwise): v0.9.0's `make install` is booted in a container
# as tests/e2e/units.sh boots the new one, with its units enabled and state
# on the fixtures; the new build's `make install` goes over it; the
# running responder and dispatcher are still v0.9.0's deleted programs
# until `hookbox init`, scripts/setup-server.sh, `systemctl
# daemon-reload` and `systemctl restart hookbox.service
# hookbox-dispatch.service`; then the new build answers, logs its
# version, and delivers.
#
# v0.9.0 is built from its tag, once, into BUILD_DIR/v0.9.0 (see
# tests/fixtures/build-release.sh; `make clean` removes it).
set -u
build=$(cd "${1:?usage: upgrade.sh BUILD_DIR}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/helpers/lib.sh"
. "$top/tests/helpers/nspawn.sh"
. "$top/tests/fixtures/v0.9.0.sh"
HB="$build/hookbox"
FCGI="$build/hookbox-fcgi"
fixtures="$top/tests/fixtures/v0.9.0"

tmp=$(mktemp -d)
chmod 0755 "$tmp"
pids=""
cleanup_local() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
}
cleanup() { cleanup_local; rm -rf "$tmp"; }
trap cleanup EXIT

# uv FILE: its PRAGMA user_version.
uv() { sqlite3 "file:$1?mode=ro" 'PRAGMA user_version'; }
# schema DIR: both files' schema and versions, to compare two opens.
schema() {
	for _f in config state; do
		echo "$_f $(uv "$1/$_f.db")"
		sqlite3 "file:$1/$_f.db?mode=ro" \
		    'SELECT type, name, sql FROM sqlite_master ORDER BY name'
	done
}
# restore DIR: the v0.9.0 fixtures as config.db and state.db in DIR.
restore() {
	mkdir -p "$1" &&
	    sqlite3 "$1/config.db" < "$fixtures/config.sql" &&
	    sqlite3 "$1/state.db" < "$fixtures/state.sql"
}
# The versions in the fixtures, and those of a file the new build makes.
old_state=$(sed -n 's/^PRAGMA user_version=\([0-9]*\);$/\1/p' \
    "$fixtures/state.sql")
old_config=$(sed -n 's/^PRAGMA user_version=\([0-9]*\);$/\1/p' \
    "$fixtures/config.sql")
"$HB" -d "$tmp/fresh" init > /dev/null || fail "init of a fresh directory"
new_state=$(uv "$tmp/fresh/state.db")
new_config=$(uv "$tmp/fresh/config.db")
echo "upgrade: state.db $old_state -> $new_state," \
    "config.db $old_config -> $new_config"
for v in "$old_state" "$old_config" "$new_state" "$new_config"; do
	case $v in
	''|*[!0-9]*) fail "a version that is no number: '$v'" ;;
	esac
done
eq "the new state schema is not older" 1 \
    "$([ "${new_state:-0}" -ge "${old_state:-1}" ] && echo 1)"
eq "the new config schema is not older" 1 \
    "$([ "${new_config:-0}" -ge "${old_config:-1}" ] && echo 1)"

# ---- v0.9.0's programs, built from the tag when it is here ----
old="$build/v0.9.0"
sh "$top/tests/fixtures/build-release.sh" v0.9.0 0.9.0 "$old" \
    2> "$tmp/old.err"
case $? in
0) have_old=1 ;;
3) have_old=0; echo "upgrade: $(cat "$tmp/old.err"): v0.9.0's" \
    "programs are not run" ;;
*) have_old=0; fail "building v0.9.0: $(cat "$tmp/old.err")" ;;
esac

# ---- the files: first opens, migrated once ----
d="$tmp/data"
restore "$d" || fail "restoring the fixtures"
eq "restored as v0.9.0 wrote it" "$old_state $old_config" \
    "$(uv "$d/state.db") $(uv "$d/config.db")"
# The backup hookbox-fcgi(8) asks for first: the way back.
mkdir "$tmp/bak"
for f in config state; do
	sqlite3 "$d/$f.db" ".backup '$tmp/bak/$f.db'" || fail "backup of $f.db"
done
# rows DIR: the actions and receipts, which the migration leaves as they are.
rows() {
	sqlite3 "file:$1/state.db?mode=ro" 'SELECT * FROM receipts ORDER BY id;
	    SELECT * FROM accepted ORDER BY action_id;
	    SELECT action_id, payload FROM outbox ORDER BY action_id'
}
rows "$d" > "$tmp/rows.0"
for i in 1 2 3; do
	"$HB" -d "$d" status --json > "$tmp/status.$i" 2>&1 &
	eval "st$i=\$!"
done
# shellcheck disable=SC2154
for i in 1 2 3; do
	eval "wait \$st$i"
	rc=$?
	eq "first open $i ($(cat "$tmp/status.$i"))" "0 3 2 1" "$rc $(jget \
	    outbox.pending "$(cat "$tmp/status.$i")") $(jget outbox.delivered \
	    "$(cat "$tmp/status.$i")") $(jget conflicts_open \
	    "$(cat "$tmp/status.$i")")"
done
eq "state.db's user_version after the first open" "$new_state" \
    "$(uv "$d/state.db")"
rows "$d" > "$tmp/rows.1"
eq "the migration keeps every action and receipt" "" \
    "$(diff "$tmp/rows.0" "$tmp/rows.1")"
eq "a subject's state from before namespaces: every namespace's" \
    "/a-1|2" "$(sqlite3 "file:$d/state.db?mode=ro" \
    "SELECT subject, version FROM subjects")"
"$HB" -d "$d" init > "$tmp/init.log" 2>&1
eq "init upgrades config.db ($(cat "$tmp/init.log"))" 0 $?
eq "config.db's user_version after init" "$new_config" "$(uv "$d/config.db")"
schema "$d" > "$tmp/schema.1"
contains "init says config.db was upgraded" \
    "configuration schema version $old_config to $new_config" \
    "$(cat "$tmp/init.log")"
"$HB" -d "$d" status > /dev/null 2>&1 && "$HB" -d "$d" init > "$tmp/init.2" 2>&1
eq "a second open and init" 0 $?
eq "and init says it changed nothing" \
    "$d: initialised already, its schemas current; nothing changed" \
    "$(cat "$tmp/init.2")"
# init as the first open: both schemas, each said.
restore "$tmp/data2" || fail "restoring the fixtures again"
eq "init first: says so of each" "upgraded $tmp/data2/config.db:\
 configuration schema version $old_config to $new_config
upgraded $tmp/data2/state.db: state schema version $old_state to $new_state" \
    "$("$HB" -d "$tmp/data2" init 2>&1)"
schema "$d" > "$tmp/schema.2"
eq "a second open changes no schema nor version" "" \
    "$(diff "$tmp/schema.1" "$tmp/schema.2")"
# What a file the new build makes has, the migrated one has too.
(cd "$tmp/fresh" && schema .) | sed '/^sqlite_autoindex/d' | sort \
    > "$tmp/schema.fresh"
sed '/^sqlite_autoindex/d' "$tmp/schema.2" | sort > "$tmp/schema.mig"
eq "the migrated files have every table and index of a new one" "" \
    "$(comm -23 "$tmp/schema.fresh" "$tmp/schema.mig" | cut -d'|' -f1,2)"

# ---- the old rows, read by the new build ----
eq "list: v0.9.0's pending actions" \
    "acme:a-1:2:publish acme:att-job-3:deliver-v1 acme:att-job-4:deliver-v1" \
    "$("$HB" -d "$d" list --state pending --json |
    grep -o '"acme:[^"]*"' | tr -d '"' | sort | tr '\n' ' ' | sed 's/ $//')"
contains "list: v0.9.0's delivered actions" "acme:att-job-2:deliver-v1" \
    "$("$HB" -d "$d" list --state delivered)"
contains "conflicts: v0.9.0's" "job-1" "$("$HB" -d "$d" conflicts)"
contains "tenant list" "acme" "$("$HB" -d "$d" tenant list)"
contains "endpoint list: the mapped endpoint" "cms" \
    "$("$HB" -d "$d" endpoint list)"

# ---- the new responder on the old files ----
sock="$tmp/fcgi.sock"
"$FCGI" -d "$d" -s "$sock" -w 2 2> "$tmp/fcgi.log" &
pids="$pids $!"
until_true 60 test -S "$sock" || fail "responder: $(cat "$tmp/fcgi.log")"
# post ENDPOINT BODY-NAME: the body signed, through the FastCGI socket;
# prints the result.
post() {
	_b=$(fixture_body "$2")
	_h=$(printf '%s' "$_b" | "$HB" -d "$d" sign --endpoint "$1")
	printf '%s' "$_b" | env -i REQUEST_METHOD=POST \
	    DOCUMENT_URI="/hooks/$1" CONTENT_TYPE=application/json \
	    CONTENT_LENGTH=${#_b} \
	    "HTTP_$(printf '%s' "${_h%%:*}" | tr 'a-z-' 'A-Z_')=${_h#*: }" \
	    cgi-fcgi -bind -connect "$sock" 2>/dev/null |
	    sed -n 's/.*"result":"\([a-z_]*\)".*/\1/p'
}
for b in completed-1 completed-2 completed-3 completed-4; do
	eq "v0.9.0's $b again" duplicate "$(post tornado "$b")"
done
eq "v0.9.0's mapped event again" duplicate "$(post cms approved-a1)"
eq "v0.9.0's conflicting failure again" conflict "$(post tornado failed-1)"
eq "the conflict is the same one, seen twice" "1|2" "$(sqlite3 \
    "file:$d/state.db?mode=ro" "SELECT count(*), max(seen) FROM conflicts")"
eq "a new callback for v0.9.0's job" accepted "$(post tornado completed-5)"
eq "a new version of v0.9.0's subject" accepted \
    "$(post cms approved-a1-v3)"
eq "recorded in the endpoint's namespace" "/a-1|2 cms/a-1|3" \
    "$(sqlite3 "file:$d/state.db?mode=ro" "SELECT subject, version
    FROM subjects ORDER BY subject" | tr '\n' ' ' | sed 's/ $//')"

# ---- the new dispatcher delivers the old and the new ----
"$build/tests/sink" -p 0 -l "$tmp/sink.log" -r "$tmp/sink.pid" \
    > "$tmp/sink.port" 2> "$tmp/sink.err" &
pids="$pids $!"
until_true 60 test -s "$tmp/sink.port" || fail "sink: $(cat "$tmp/sink.err")"
"$HB" -d "$d" destination set --tenant acme \
    --url "http://127.0.0.1:$(head -n 1 "$tmp/sink.port")/hook" sink
eq "destination set on the upgraded config.db" 0 $?
# v0.9.0 gave it 10 attempts: kept, with the policy's defaults beside.
eq "its max attempts kept, a horizon and a circuit added" "10|259200|10|30" \
    "$(sqlite3 "file:$d/config.db?mode=ro" "SELECT max_attempts, retry_for_s,
    circuit_failures, cooldown_s FROM destinations WHERE name = 'sink'")"
"$HB" -d "$d" dispatch --once > "$tmp/dispatch.log" 2>&1
eq "dispatch --once ($(tail -n 3 "$tmp/dispatch.log"))" 0 $?
for a in acme:att-job-3:deliver-v1 acme:att-job-4:deliver-v1 \
    acme:a-1:2:publish acme:att-job-5:deliver-v1 acme:cms/a-1:3:publish; do
	if grep -q "	POST	/hook	$a	" "$tmp/sink.log"; then
		pass
	else
		fail "$a not delivered: $(cat "$tmp/sink.log")"
	fi
done
eq "every action delivered" "0 7" "$(jget outbox.pending \
    "$("$HB" -d "$d" status --json)") $(jget outbox.delivered \
    "$("$HB" -d "$d" status --json)")"
cleanup_local
pids=""

# ---- back to v0.9.0: a newer file refused, or opened when the same ----
if [ "$have_old" = 1 ]; then
	schema "$d" > "$tmp/schema.1"
	"$old/hookbox" -d "$d" status > "$tmp/old.out" 2>&1
	rc=$?
	if [ "$new_state" -gt "$old_state" ]; then
		eq "v0.9.0 refuses a newer state.db" 1 $rc
		contains "v0.9.0 names the file it refuses" "state.db" \
		    "$(cat "$tmp/old.out")"
	else
		eq "v0.9.0 opens state.db ($(cat "$tmp/old.out"))" 0 $rc
	fi
	# Its responder answers 503 (the provider sends again), or serves.
	r=$(fixture_cgi "$HB" "$old/hookbox-fcgi" "$d" tornado \
	    "$(fixture_body completed-5)")
	if [ "$new_state" -gt "$old_state" ]; then
		eq "v0.9.0's responder: unavailable" unavailable "$r"
	else
		eq "v0.9.0's responder: a duplicate" duplicate "$r"
	fi
	"$old/hookbox" -d "$d" tenant list > "$tmp/old.out" 2>&1
	rc=$?
	if [ "$new_config" -gt "$old_config" ]; then
		eq "v0.9.0 refuses a newer config.db" 1 $rc
		contains "v0.9.0 names the file it refuses" "config.db" \
		    "$(cat "$tmp/old.out")"
	else
		eq "v0.9.0 opens config.db ($(cat "$tmp/old.out"))" 0 $rc
	fi
	schema "$d" > "$tmp/schema.2"
	eq "v0.9.0 changed no schema nor version" "" \
	    "$(diff "$tmp/schema.1" "$tmp/schema.2")"
	# The backup, copied back, is v0.9.0's again.
	"$old/hookbox" -d "$tmp/bak" status --json > "$tmp/old.out" 2>&1
	eq "v0.9.0 opens the backup ($(cat "$tmp/old.out"))" "0 3" \
	    "$? $(jget outbox.pending "$(cat "$tmp/old.out")")"
	eq "v0.9.0's responder on the backup" duplicate \
	    "$(fixture_cgi "$old/hookbox" "$old/hookbox-fcgi" "$tmp/bak" \
	    tornado "$(fixture_body completed-1)")"
fi

# ---- the running service: v0.9.0 booted, the new build installed ----
# As tests/e2e/units.sh boots the new build: this machine's OS in a container
# (systemd-nspawn --volatile=yes), here with the staged /usr/local bound
# in (PREFIX=/usr/local, as `make install` defaults to), so that the
# install on this side replaces what the container runs, as on a
# server.  The test user is "hookbox" in there; the data directory is
# the fixtures, set up by scripts/setup-server.sh.
user=hookbox-up
name=hookbox-upgrade-$$
service_cleanup() {
	[ -f "$tmp/sink.pid" ] && kill "$(cat "$tmp/sink.pid")" 2>/dev/null
	ct_stop
	wait 2>/dev/null
	userdel "$user" 2>/dev/null
	groupdel "$user" 2>/dev/null
}

# service: the whole of it; returns at the first failure that stops it.
service() {
	userdel "$user" 2>/dev/null
	groupdel "$user" 2>/dev/null
	local_="$tmp/dest/usr/local"
	srv="$tmp/srv"
	sinkport=8701
	if ! mkdir -p "$local_" "$tmp/run" "$tmp/etc" "$tmp/units" ||
	    ! cp -a "$old/stage/usr/local/." "$local_/"; then
		fail "staging v0.9.0's install"
		return
	fi
	restore "$srv" || { fail "restoring the fixtures"; return; }
	# The pending actions go to the sink, in the container's network.
	"$old/hookbox" -d "$srv" destination set --tenant acme \
	    --url "http://127.0.0.1:$sinkport/hook" sink ||
	    { fail "destination set"; return; }
	sh "$top/scripts/setup-server.sh" -u "$user" -d "$srv" \
	    -b "$local_/bin" > "$tmp/setup.log" 2>&1 ||
	    { fail "setup-server.sh: $(cat "$tmp/setup.log")"; return; }
	grep -v "^hookbox:" /etc/passwd | sed "s/^$user:/hookbox:/" \
	    > "$tmp/etc/passwd"
	grep -v "^hookbox:" /etc/group | sed "s/^$user:/hookbox:/" \
	    > "$tmp/etc/group"
	printf 'passwd: files\ngroup: files\nhosts: files\n' \
	    > "$tmp/etc/nsswitch.conf"
	printf '[Unit]\nDescription=hookbox, as enabled\n%s\n' \
	    'Wants=hookbox.socket' > "$tmp/units/hookbox-test.target"
	ln -s /dev/null "$tmp/units/systemd-firstboot.service"

	ct_boot "$name" "$tmp/boot.log" -D / --volatile=yes \
	    --bind="$local_:/usr/local" \
	    --bind-ro="$tmp/etc/passwd:/etc/passwd" \
	    --bind-ro="$tmp/etc/group:/etc/group" \
	    --bind-ro="$tmp/etc/nsswitch.conf:/etc/nsswitch.conf" \
	    --bind-ro="$tmp/units:/etc/systemd/system" \
	    --bind="$srv:/var/lib/hookbox" --bind="$tmp/run:/run/hookbox" \
	    -b -- systemd.unit=hookbox-test.target
	if ! ct_up 60 hookbox-test.target; then
		fail "the container did not boot: $(tail -n 40 "$tmp/boot.log")"
		return
	fi
	# started UNIT: the version its last start line logged.
	started() {
		in_ct journalctl --no-pager -o cat -u "$1" 2>/dev/null |
		    sed -n 's/.* event=start .*version=\([^ ]*\).*/\1/p' |
		    tail -n 1 | tr -d '"'
	}
	# exe UNIT: its main process's program, as readlink shows it.
	pid_of() { in_ct systemctl show -P MainPID "$1"; }
	exe() { in_ct readlink "/proc/$(pid_of "$1")/exe"; }
	# runs UNIT PROGRAM: the unit's main process runs PROGRAM's bytes.
	runs() { in_ct cat "/proc/$(pid_of "$1")/exe" | cmp -s - "$2"; }
	in_net "$build/tests/sink" -p "$sinkport" -l "$tmp/sink.log" \
	    -r "$tmp/sink.pid" > "$tmp/sink.port" 2> "$tmp/sink.err" &
	until_true 20 test -s "$tmp/sink.port" ||
	    fail "sink: $(cat "$tmp/sink.err")"
	sock="$tmp/run/hookbox.sock"
	# health: the responder's answer to /hooks/_health, its first line.
	health() {
		env -i REQUEST_METHOD=GET DOCUMENT_URI=/hooks/_health \
		    cgi-fcgi -bind -connect "$sock" 2>/dev/null | tr -d '\r' |
		    grep -o '{"status":"[a-z]*"}'
	}
	d="$srv"
	delivered() { grep -q "	POST	/hook	$1	" "$tmp/sink.log"; }

	# v0.9.0 running: the responder by its socket, the dispatcher.
	in_ct systemctl start hookbox-dispatch.service
	eq "v0.9.0: health ($(ct_journal hookbox.service))" '{"status":"ok"}' \
	    "$(health)"
	eq "v0.9.0 answers a duplicate" duplicate "$(post tornado completed-1)"
	for a in acme:att-job-3:deliver-v1 acme:a-1:2:publish; do
		until_true 30 delivered "$a" ||
		    fail "v0.9.0 did not deliver $a: $(ct_journal \
		    hookbox-dispatch.service)"
	done
	for u in hookbox.service hookbox-dispatch.service; do
		eq "$u: v0.9.0 started" 0.9.0 "$(started "$u")"
	done
	runs hookbox.service "$old/hookbox-fcgi" ||
	    fail "hookbox.service does not run v0.9.0's hookbox-fcgi"
	runs hookbox-dispatch.service "$old/hookbox" ||
	    fail "hookbox-dispatch.service does not run v0.9.0's hookbox"
	fcgi_pid=$(pid_of hookbox.service)
	disp_pid=$(pid_of hookbox-dispatch.service)

	# The new build installed over it: what runs is the old, deleted.
	make -C "$top" install DESTDIR="$tmp/dest" PREFIX=/usr/local \
	    O="$build" > "$tmp/make.log" 2>&1
	eq "make install over v0.9.0 ($(tail -n 3 "$tmp/make.log"))" 0 $?
	eq "the container sees the new hookbox" \
	    "$("$build/hookbox" --version)" \
	    "$(in_ct /usr/local/bin/hookbox --version)"
	eq "after install: the same responder" "$fcgi_pid" \
	    "$(pid_of hookbox.service)"
	eq "after install: the responder runs a deleted program" \
	    "/usr/local/bin/hookbox-fcgi (deleted)" "$(exe hookbox.service)"
	eq "after install: the dispatcher runs a deleted program" \
	    "/usr/local/bin/hookbox (deleted)" \
	    "$(exe hookbox-dispatch.service)"
	eq "after install: the running responder is v0.9.0" \
	    "hookbox-fcgi 0.9.0" "$(in_ct "/proc/$fcgi_pid/exe" -V)"
	eq "after install: the running dispatcher is v0.9.0" "hookbox 0.9.0" \
	    "$(in_ct "/proc/$disp_pid/exe" --version)"

	# The upgrade, as hookbox-fcgi(8) says: init (config.db's upgrade,
	# if any) as root, the owners put back, the units reloaded, the
	# responder and the dispatcher restarted.
	in_ct /usr/local/bin/hookbox -d /var/lib/hookbox init \
	    > "$tmp/init.log" 2>&1
	eq "init after install ($(cat "$tmp/init.log"))" 0 $?
	sh "$top/scripts/setup-server.sh" -u "$user" -d "$srv" \
	    -b "$local_/bin" > "$tmp/setup.log" 2>&1
	eq "setup-server.sh after init ($(cat "$tmp/setup.log"))" 0 $?
	in_ct systemctl daemon-reload &&
	    in_ct systemctl restart hookbox.service hookbox-dispatch.service
	eq "daemon-reload, restart" 0 $?
	eq "restarted: health ($(ct_journal hookbox.service))" \
	    '{"status":"ok"}' "$(health)"
	new_fcgi=$(pid_of hookbox.service)
	new_disp=$(pid_of hookbox-dispatch.service)
	eq "restarted: new processes" 1 "$([ "$new_fcgi" != "$fcgi_pid" ] &&
	    [ "$new_disp" != "$disp_pid" ] && echo 1)"
	eq "restarted: the responder's program" /usr/local/bin/hookbox-fcgi \
	    "$(exe hookbox.service)"
	eq "restarted: the dispatcher's program" /usr/local/bin/hookbox \
	    "$(exe hookbox-dispatch.service)"
	runs hookbox.service "$build/hookbox-fcgi" ||
	    fail "hookbox.service does not run the new hookbox-fcgi"
	runs hookbox-dispatch.service "$build/hookbox" ||
	    fail "hookbox-dispatch.service does not run the new hookbox"
	eq "restarted: the running responder's version" \
	    "$("$build/hookbox-fcgi" -V)" \
	    "$(in_ct "/proc/$new_fcgi/exe" -V)"
	newv=$("$build/hookbox" --version | sed 's/^hookbox //')
	for u in hookbox.service hookbox-dispatch.service; do
		eq "$u: the version it logged at start" "$newv" \
		    "$(started "$u")"
	done
	eq "a new callback, answered by the new responder" accepted \
	    "$(post tornado completed-5)"
	until_true 30 delivered acme:att-job-5:deliver-v1 ||
	    fail "the new dispatcher did not deliver: $(ct_journal \
	    hookbox-dispatch.service)"
	eq "state.db, migrated by the new programs" "$new_state" \
	    "$(uv "$srv/state.db")"
	eq "config.db, upgraded by init" "$new_config" "$(uv "$srv/config.db")"
	eq "the service user reads the upgraded files" 1 "$(jget \
	    outbox.delivered "$(setpriv --reuid="$user" --regid="$user" \
	    --init-groups -- "$local_/bin/hookbox" -d "$srv" status --json)" |
	    awk '{ print ($1 >= 5) }')"
}
if [ "$(id -u)" -ne 0 ]; then
	echo "upgrade: the running service skipped (needs root)"
elif [ "$have_old" != 1 ]; then
	echo "upgrade: the running service skipped (no v0.9.0 build)"
elif ! command -v systemd-nspawn > /dev/null 2>&1 ||
    ! command -v cgi-fcgi > /dev/null 2>&1; then
	fail "systemd-nspawn or cgi-fcgi not found (make deps installs them)"
else
	trap 'service_cleanup; cleanup' EXIT
	service
fi

finish upgrade
