#!/bin/sh
# tests/setup.sh BUILD_DIR: scripts/setup-server.sh, as root, with real
# users made for the test (removed after): the files' owners and modes,
# and what the service user can and cannot do with them.  Skipped (with a
# line saying so) when not root.
set -u
build=$(cd "${1:?usage: setup.sh BUILD_DIR}" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/lib.sh"

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
lacks "not initialised twice" "initialised" "$out"
contains "config.db kept" "acme" "$("$build/hookbox" -d "$data" tenant list)"
eq "state.db owner put back" "$user" "$(stat -c %U "$data/state.db")"

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
contains "service user: secret add says why" "permission denied" "$out"

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
