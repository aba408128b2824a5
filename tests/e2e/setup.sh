#!/bin/sh
# tests/e2e/setup.sh BUILD_DIR: scripts/setup-server.sh, as root, with real
# users made for the test (removed after): the files' owners and modes,
# and what the service user can and cannot do with them.  Skipped (with a
# line saying so) when not root.
set -u
build=$(cd "${1:?usage: setup.sh BUILD_DIR}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/helpers/lib.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "setup: skipped (needs root to make users)"
	finish setup
	exit
fi
user=hookbox-st web=hookbox-stweb
tmp=$(mktemp -d)
chmod 0755 "$tmp"
cleanup() {
	userdel "$user" 2>/dev/null
	groupdel "$user" 2>/dev/null
	groupdel "$web" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
cleanup
tmp=$(mktemp -d)
chmod 0755 "$tmp"
groupadd --system "$web"
data="$tmp/data"

# as CMD...: runs CMD as the service user, with its own groups only.
as() {
	setpriv --reuid="$user" --regid="$user" --init-groups -- "$@"
}

# -h and --help: the usage on standard output, exit 0, nothing done; an
# unknown option: the usage on standard error, exit 2.
for h in -h --help; do
	out=$(sh "$top/scripts/setup-server.sh" $h 2>"$tmp/err"); rc=$?
	eq "$h: exit 0" 0 $rc
	contains "$h: the usage" "usage: setup-server.sh [-h] [-u USER]" "$out"
	contains "$h: the options explained" "-d DIR       the data directory" \
	    "$out"
	eq "$h: nothing on standard error" "" "$(cat "$tmp/err")"
done
out=$(sh "$top/scripts/setup-server.sh" -x 2>"$tmp/err"); rc=$?
eq "-x: exit 2" 2 $rc
eq "-x: nothing on standard output" "" "$out"
contains "-x: says which" "unknown option -x" "$(cat "$tmp/err")"
contains "-x: the usage on standard error" "usage: setup-server.sh" \
    "$(cat "$tmp/err")"
lacks "-x: not the shell's words" "llegal" "$(cat "$tmp/err")"
sh "$top/scripts/setup-server.sh" -d 2>"$tmp/err"
eq "-d without a value: exit 2" 2 $?
contains "-d without a value: says so" "-d needs a value" "$(cat "$tmp/err")"
[ -e "$data" ]; eq "no option above made anything" 1 $?

out=$(sh "$top/scripts/setup-server.sh" -u "$user" -w "$web" -d "$data" \
    -b "$build" 2>&1)
eq "set up" 0 $?
contains "user made" "user $user created" "$out"
contains "initialised" "initialised" "$out"
eq "directory" "root $user 1770" "$(stat -c '%U %G %a' "$data")"
eq "config.db" "root $user 640" "$(stat -c '%U %G %a' "$data/config.db")"
eq "state.db" "$user $user 600" "$(stat -c '%U %G %a' "$data/state.db")"
lacks "the web group has nothing here" "$web" \
    "$(stat -c '%G' "$data" "$data"/*)"

# What the responder and the dispatcher need, as their user.
eq "reads config.db" 1 "$(as sqlite3 "$data/config.db" \
    "SELECT count(*) FROM sqlite_master WHERE name = 'tenants'" 2>&1)"
out=$(as sqlite3 "$data/config.db" "INSERT INTO tenants(id, active,
    created_at) VALUES ('x', 1, 0)" 2>&1)
contains "cannot write config.db" "readonly" "$out"
eq "writes state.db" 0 "$(as sqlite3 "$data/state.db" \
    "PRAGMA journal_mode=WAL; CREATE TABLE setup_t(x); INSERT INTO setup_t
    VALUES (1); DROP TABLE setup_t; SELECT count(*) FROM sqlite_master
    WHERE name = 'setup_t';" 2>&1 | tail -1)"
# SQLite removes -wal and -shm when its last connection closes: that the
# user may make them again is what the directory's mode must allow.
as touch "$data/state.db-shm" 2>/dev/null
eq "makes state.db's -shm" "$user" "$(stat -c %U "$data/state.db-shm" \
    2>/dev/null || echo none)"
rm -f "$data/state.db-shm"
eq "reads through the tool" 0 "$(HOOKBOX_DIR="$data" as "$build/hookbox" \
    status >/dev/null 2>&1; echo $?)"
as mv "$data/config.db" "$data/config.old" 2>/dev/null
eq "cannot rename config.db (sticky directory)" "root" \
    "$(stat -c %U "$data/config.db" 2>/dev/null || echo gone)"
as rm -f "$data/config.db" 2>/dev/null
eq "cannot remove config.db" yes "$([ -f "$data/config.db" ] && echo yes)"

# Run again: nothing made, state.db and config.db kept, owners fixed.
"$build/hookbox" -d "$data" tenant add acme >/dev/null 2>&1
chown root:root "$data/state.db"
out=$(sh "$top/scripts/setup-server.sh" -u "$user" -w "$web" -d "$data" \
    -b "$build" 2>&1)
eq "set up again" 0 $?
lacks "no user made twice" "created" "$out"
lacks "not initialised twice" "$data initialised" "$out"
contains "init says the schemas are current" \
    "setup-server: $data: initialised already, its schemas current; nothing changed" \
    "$out"
contains "config.db kept" "acme" "$("$build/hookbox" -d "$data" tenant list)"
eq "state.db owner put back" "$user" "$(stat -c %U "$data/state.db")"

# The service user may create entries in the data directory: a link it
# plants where the script looks is never followed, not even by a run
# racing a user that swaps links in as fast as it can.
victim="$tmp/victim"
printf 'root only\n' > "$victim"
chmod 0644 "$victim"
vstat() { stat -c '%U %G %a %s' "$victim"; }
for f in state.db-wal state.db-shm state.db; do
	[ "$f" = state.db ] && mv "$data/state.db" "$tmp/state.keep"
	as ln -s "$victim" "$data/$f"
	out=$(sh "$top/scripts/setup-server.sh" -u "$user" -w "$web" \
	    -d "$data" -b "$build" 2>&1)
	eq "a link at $f: refused" 1 $?
	contains "a link at $f: says so" "$f is a symbolic link" "$out"
	eq "a link at $f: its target untouched" "root root 644 10" "$(vstat)"
	rm -f "$data/$f"
	[ "$f" = state.db ] && mv "$tmp/state.keep" "$data/state.db"
done
# config.db lost (restored later by hand): a link in its place is refused.
mv "$data/config.db" "$tmp/config.keep"
as ln -s "$victim" "$data/config.db"
out=$(sh "$top/scripts/setup-server.sh" -u "$user" -w "$web" -d "$data" \
    -b "$build" 2>&1)
eq "a link at config.db: refused" 1 $?
contains "a link at config.db: says so" "config.db is a symbolic link" "$out"
eq "a link at config.db: its target untouched" "root root 644 10" "$(vstat)"
rm -f "$data/config.db"
# A config.db of the service user's own: never given to root.
as touch "$data/config.db"
out=$(sh "$top/scripts/setup-server.sh" -u "$user" -w "$web" -d "$data" \
    -b "$build" 2>&1)
eq "config.db of the service user: refused" 1 $?
contains "config.db of the service user: says so" \
    "config.db belongs to $user" "$out"
eq "config.db of the service user: left as it is" "$user" \
    "$(stat -c %U "$data/config.db")"
rm -f "$data/config.db"
mv "$tmp/config.keep" "$data/config.db"
# A state file of the user's with a wider mode is narrowed, as that user.
as chmod 0644 "$data/state.db"
sh "$top/scripts/setup-server.sh" -u "$user" -w "$web" -d "$data" \
    -b "$build" >/dev/null 2>&1
eq "state.db's mode put back" "$user 600" "$(stat -c '%U %a' "$data/state.db")"
# The race: the user swaps a link to the victim in and out of every name
# the script fixes while it runs, many times over.
setpriv --reuid="$user" --regid="$user" --init-groups -- \
    sh -c 'while :; do for f in state.db-wal state.db-shm; do
	ln -s "$1" "$2/$f.tmp" 2>/dev/null; mv -f "$2/$f.tmp" "$2/$f"
	rm -f "$2/$f"; : > "$2/$f"; done; done' racer "$victim" "$data" &
racer=$!
i=0
while [ $i -lt 20 ]; do
	sh "$top/scripts/setup-server.sh" -u "$user" -w "$web" -d "$data" \
	    -b "$build" >/dev/null 2>&1
	i=$((i + 1))
done
kill "$racer"
wait "$racer" 2>/dev/null
eq "racing links: the target never touched" "root root 644 10" "$(vstat)"
eq "racing links: its content neither" "root only" "$(cat "$victim")"
rm -f "$data/state.db-wal" "$data/state.db-shm" "$data"/*.tmp

# The same with a hard link, where fs.protected_hardlinks is 0 and the
# user may link a file of root's: a first run's `hookbox init` runs
# between the script's look at the names and its changes, and in that
# window state.db-shm appears as a second name of the victim (here made
# by a hookbox that does so after init, as the user could). The change
# is made on the file opened, after a look at it: never on the victim.
chmod 0666 "$victim"
mkdir "$tmp/bin"
cat > "$tmp/bin/hookbox" <<EOF
#!/bin/sh
"$build/hookbox" "\$@"
rc=\$?
case " \$* " in *" init "*) ln "$victim" "$data/state.db-shm" ;; esac
exit \$rc
EOF
chmod 0755 "$tmp/bin/hookbox"
mv "$data/config.db" "$tmp/config.keep"
mv "$data/state.db" "$tmp/state.keep"
out=$(sh "$top/scripts/setup-server.sh" -u "$user" -w "$web" -d "$data" \
    -b "$tmp/bin" 2>&1)
eq "a hard link after init: refused" 1 $?
contains "a hard link after init: says so" "state.db-shm has other names" \
    "$out"
eq "a hard link after init: the victim unchanged" "root root 666 10" \
    "$(vstat)"
rm -f "$data/config.db" "$data/state.db" "$data/state.db-shm"
mv "$tmp/config.keep" "$data/config.db"
mv "$tmp/state.keep" "$data/state.db"
chmod 0644 "$victim"

# `hookbox init` again as root, a link planted at state.db: refused, and
# nothing made where it points.
mv "$data/state.db" "$tmp/state.keep"
as ln -s "$tmp/nologin" "$data/state.db"
out=$("$build/hookbox" -d "$data" init 2>&1)
eq "init through a link: refused" 1 $?
contains "init through a link: says so" "state.db: a symbolic link: refused" \
    "$out"
eq "init through a link: nothing made" no \
    "$([ -e "$tmp/nologin" ] && echo yes || echo no)"
rm -f "$data/state.db"
mv "$tmp/state.keep" "$data/state.db"
# In a directory of its own: the config.db that run made goes with it.
mkdir "$tmp/fresh" && chown "$user" "$tmp/fresh"
as ln -s "$tmp/nologin" "$tmp/fresh/state.db"
"$build/hookbox" -d "$tmp/fresh" init >/dev/null 2>&1
eq "a refused init: refused" 1 $?
eq "a refused init: no config.db left behind" no \
    "$([ -e "$tmp/fresh/config.db" ] && echo yes || echo no)"
mv "$data/config.db" "$tmp/config.keep"
as ln -s "$tmp/nologin" "$data/config.db"
"$build/hookbox" -d "$data" init >/dev/null 2>&1
eq "init through a link at config.db: refused" 1 $?
eq "init through a link at config.db: nothing made" no \
    "$([ -e "$tmp/nologin" ] && echo yes || echo no)"
rm -f "$data/config.db"
mv "$tmp/config.keep" "$data/config.db"

# The service user may read its endpoints' secrets' ids, not add one.
printf 'an-hmac-secret-0123456789' > "$tmp/secret"
chmod 600 "$tmp/secret"
"$build/hookbox" -d "$data" endpoint add --tenant acme \
    --secret-file "$tmp/secret" tornado-acme >/dev/null 2>&1
out=$(as "$build/hookbox" -d "$data" endpoint secret list tornado-acme 2>&1)
eq "service user: secret list" 0 $?
contains "service user: the secret's row" "never" "$out"
out=$(as "$build/hookbox" -d "$data" endpoint secret add \
    --secret-file - tornado-acme < "$tmp/secret" 2>&1)
eq "service user: secret add refused" 1 $?
contains "service user: secret add says why" \
    "$data/config.db is read-only for user $user, who may not change the configuration" \
    "$out"

# A hot journal the service user plants beside config.db, whose pages add
# a tenant: a real one, made by SQLite from a copy of config.db that has
# the tenant, in a transaction that removes it, copied while it runs.
# Neither the script nor root's tool plays it into config.db.
mkdir "$tmp/forge" && chown "$user" "$tmp/forge"
as cp "$data/config.db" "$tmp/forge/c.db"
as sqlite3 "$tmp/forge/c.db" "INSERT INTO tenants(id, active, created_at)
    VALUES ('planted', 1, 0)"
printf '%s\n' "PRAGMA synchronous=OFF;" "BEGIN;" \
    "DELETE FROM tenants WHERE id = 'planted';" \
    ".shell cp $tmp/forge/c.db-journal $data/config.db-journal" \
    "ROLLBACK;" | as sqlite3 "$tmp/forge/c.db" >/dev/null 2>&1
eq "a planted journal: there, the service user's" "$user" \
    "$(stat -c %U "$data/config.db-journal" 2>/dev/null || echo none)"
sum=$(sha256sum < "$data/config.db")
out=$(sh "$top/scripts/setup-server.sh" -u "$user" -w "$web" -d "$data" \
    -b "$build" 2>&1)
eq "a planted journal: the script refuses" 1 $?
contains "a planted journal: the script says so" \
    "config.db-journal belongs to $user" "$out"
out=$("$build/hookbox" -d "$data" tenant add acme2 2>&1)
eq "a planted journal: root's tool refuses" 1 $?
contains "a planted journal: root's tool names it" \
    "config.db-journal belongs to user $user" "$out"
"$build/hookbox" -d "$data" tenant list >/dev/null 2>&1
eq "a planted journal: root's read-out refuses too" 1 $?
eq "a planted journal: config.db unchanged" "$sum" \
    "$(sha256sum < "$data/config.db")"
rm -f "$data/config.db-journal"
out=$("$build/hookbox" -d "$data" tenant list 2>&1)
lacks "a planted journal: never played in" "planted" "$out"
contains "a planted journal: gone, the configuration as it was" "acme" "$out"

# Refusals.
out=$(sh "$top/scripts/setup-server.sh" -u "$user" -w nosuchgroup-st \
    -d "$data" -b "$build" 2>&1)
contains "unknown web group" "nosuchgroup-st: no such group" "$out"
: > "$tmp/file"
out=$(sh "$top/scripts/setup-server.sh" -u "$user" -w "$web" \
    -d "$tmp/file" -b "$build" 2>&1)
contains "not a directory" "not a directory" "$out"
mkdir "$tmp/half" && cp -p "$data/config.db" "$tmp/half/"
out=$(sh "$top/scripts/setup-server.sh" -u "$user" -w "$web" \
    -d "$tmp/half" -b "$build" 2>&1)
contains "one database missing" "one database is missing" "$out"

finish setup
