#!/bin/sh
# scripts/setup-server.sh [-u USER] [-w WEBGROUP] [-d DIR] [-b BINDIR]
#
# Sets up a server for hookbox, as root, and can be run again at any
# time (it changes only what is not as it should be):
#   - the system user and group USER (default hookbox), which runs the
#     responder and the dispatcher;
#   - the data directory DIR (default /var/lib/hookbox), root:USER 1770:
#     USER may create state.db's -wal and -shm there, and the sticky bit
#     keeps it from removing or renaming files it does not own (config.db);
#   - `hookbox init` there when it has no databases yet;
#   - config.db root:USER 0640: USER reads it (secrets included), only
#     root writes it;
#   - state.db, -wal, -shm USER:USER 0600.
# WEBGROUP (default www-data) is only checked to exist: it gets the
# socket (systemd/hookbox.socket), never the data directory.
set -eu
user=hookbox web=www-data dir=/var/lib/hookbox bindir=""
while getopts u:w:d:b: ch; do
	case $ch in
	u) user=$OPTARG ;;
	w) web=$OPTARG ;;
	d) dir=$OPTARG ;;
	b) bindir=$OPTARG ;;
	*) echo "usage: setup-server.sh [-u USER] [-w WEBGROUP] [-d DIR]" \
	    "[-b BINDIR]" >&2; exit 2 ;;
	esac
done
hb=${bindir:+$bindir/}hookbox
say() { echo "setup-server: $*"; }
die() { echo "setup-server: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "run as root"
case $dir in /*) ;; *) die "$dir: give an absolute path" ;; esac
command -v "$hb" >/dev/null 2>&1 || die "$hb: not found (-b BINDIR)"
getent group "$web" >/dev/null || die "$web: no such group (-w WEBGROUP)"

if ! getent group "$user" >/dev/null; then
	groupadd --system "$user"
	say "group $user created"
fi
if ! getent passwd "$user" >/dev/null; then
	useradd --system --gid "$user" --no-create-home --home-dir "$dir" \
	    --shell /usr/sbin/nologin "$user"
	say "user $user created"
fi

[ -e "$dir" ] && [ ! -d "$dir" ] && die "$dir: not a directory"
install -d -o root -g "$user" -m 1770 "$dir"
if [ ! -e "$dir/config.db" ] && [ ! -e "$dir/state.db" ]; then
	HOOKBOX_DIR="$dir" "$hb" init >/dev/null
	say "$dir initialised"
fi
[ -f "$dir/config.db" ] && [ -f "$dir/state.db" ] ||
    die "$dir: one database is missing; restore it, or move both away"
chown root:"$user" "$dir/config.db"
chmod 0640 "$dir/config.db"
for f in "$dir/state.db" "$dir/state.db-wal" "$dir/state.db-shm"; do
	[ -e "$f" ] || continue
	chown "$user:$user" "$f"
	chmod 0600 "$f"
done
say "$dir: config.db root:$user 0640, state.db $user:$user 0600;" \
    "run the responder and the dispatcher as $user"
