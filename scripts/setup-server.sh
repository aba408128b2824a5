#!/bin/sh
# scripts/setup-server.sh [-h] [-u USER] [-w WEBGROUP] [-d DIR] [-b BINDIR]
#     [-r APPUSER:TENANT]...
#
# Sets up a server for hookbox, as root, and can be run again at any
# time (it changes only what is not as it should be):
#   - the system user and group USER (default hookbox), which runs the
#     responder and the dispatcher;
#   - the data directory DIR (default /var/lib/hookbox), root:USER 1770:
#     USER may create state.db's -wal and -shm there, and the sticky bit
#     keeps it from removing or renaming files it does not own (config.db);
#   - `hookbox init` there: it makes the databases when there are none
#     yet, and upgrades those an older hookbox made;
#   - config.db root:USER 0640: USER reads it (secrets included), only
#     root writes it, and a journal of config.db's that is not root's
#     (one USER planted, which SQLite would play into config.db at root's
#     next write) stops the script;
#   - state.db, -wal, -shm USER:USER 0600;
#   - each -r APPUSER:TENANT: APPUSER, the system user an application runs
#     as, may register, list and remove TENANT's jobs through the registrar
#     service (hookbox-registrar.socket; hookbox(1), REGISTRARS), and
#     nothing else; a user in group USER, who reads the secrets, is refused.
# WEBGROUP (default www-data) is only checked to exist: it gets the
# socket (systemd/hookbox.socket), never the data directory.
#
# USER may create, rename and remove its own entries in DIR, so nothing
# here follows a name USER could have put there: a symbolic link (or
# anything but a plain file) at a database's name stops the script; an
# entry of root's, which USER can neither rename nor replace (the sticky
# bit), is changed as root, its mode before its owner; an entry of USER's
# is changed as USER, who can change nothing it does not own.  Each change
# is made on the file opened, after a look at that file (one name, the
# owner looked for): a name USER makes a second name of another file
# between the script's look and its change (a hard link, where
# fs.protected_hardlinks is 0) is refused, not changed.
set -eu
user=hookbox web=www-data dir=/var/lib/hookbox bindir="" registrars=""
usage() {
	echo "usage: setup-server.sh [-h] [-u USER] [-w WEBGROUP] [-d DIR]" \
	    "[-b BINDIR] [-r APPUSER:TENANT]..."
	echo "  -u USER      the service user and group (default hookbox)"
	echo "  -w WEBGROUP  the web server's group, checked to exist" \
	    "(default www-data)"
	echo "  -d DIR       the data directory (default /var/lib/hookbox)"
	echo "  -b BINDIR    where hookbox is (default: on PATH)"
	echo "  -r APPUSER:TENANT  APPUSER may register TENANT's jobs" \
	    "(repeatable)"
	echo "  -h, --help   print this and exit"
}
[ "${1:-}" = --help ] && { usage; exit 0; }
# The leading ':' leaves the messages to us: the usage, not "Illegal
# option".
while getopts :hu:w:d:b:r: ch; do
	case $ch in
	h) usage; exit 0 ;;
	u) user=$OPTARG ;;
	w) web=$OPTARG ;;
	d) dir=$OPTARG ;;
	b) bindir=$OPTARG ;;
	r) registrars="$registrars $OPTARG" ;;
	:) echo "setup-server.sh: -$OPTARG needs a value" >&2
	   usage >&2; exit 2 ;;
	*) echo "setup-server.sh: unknown option -$OPTARG" >&2
	   usage >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || { usage >&2; exit 2; }
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
uid=$(id -u "$user")

# plain NAME: stops unless DIR/NAME is absent or a plain file with one
# name, never looking through a link.
plain() {
	_f=$dir/$1
	[ -L "$_f" ] && die "$_f is a symbolic link, which only $user could" \
	    "have made: check what it points to and remove it"
	[ -e "$_f" ] || return 0
	[ -f "$_f" ] || die "$_f is not a plain file: move it away"
	[ "$(stat -c %h -- "$_f")" -eq 1 ] ||
	    die "$_f has other names (hard links): copy it, then remove them"
}

# The change of one file, for perl (Debian's essential perl-base): FILE
# UID MODE OWNER GROUP.  It opens FILE without following a link or
# waiting on a FIFO, looks at the file it opened (a plain file of one
# name, still UID's) and changes that file, by its descriptor, to MODE and
# OWNER:GROUP (names or numbers): whatever the name became since the
# script looked at it, nothing else is changed.
change='
use Fcntl;
my ($f, $uid, $mode, $owner, $group) = @ARGV;
my $u = $owner =~ /^\d+$/ ? $owner : getpwnam($owner);
my $g = $group =~ /^\d+$/ ? $group : getgrnam($group);
defined $u && defined $g or die "$f: no such owner or group\n";
sysopen(my $h, $f, O_RDONLY | O_NOFOLLOW | O_NONBLOCK) or die "$f: $!\n";
my @s = stat($h) or die "$f: $!\n";
-f _ or die "$f is not a plain file: move it away\n";
$s[3] == 1 or die "$f has other names (hard links): copy it, then" .
    " remove them\n";
$s[4] == $uid or die "$f changed owner under the script: run it again\n";
chmod(oct($mode), $h) or die "$f: $!\n";
chown($s[4] == $u ? -1 : $u, $g, $h) or die "$f: $!\n";
'
# fix CMD...: runs CMD (perl with $change, as root or as USER), and
# stops the script with what it said when it refused.
fix() {
	_m=$("$@" 2>&1) || die "${_m:-$*: failed}"
}
# own NAME OWNER GROUP MODE: DIR/NAME (checked by plain) to OWNER:GROUP
# MODE, by root while root owns it, by USER while USER does (who can
# change nothing it does not own).
own() {
	_f=$dir/$1
	[ -e "$_f" ] || return 0
	case $(stat -c %u -- "$_f") in
	0)
		fix perl -e "$change" -- "$_f" 0 "$4" "$2" "$3"
		;;
	"$uid")
		[ "$2" = "$user" ] || die "$_f belongs to $user: only root may" \
		    "own it; restore it from a copy you trust"
		fix setpriv --reuid="$user" --regid="$user" --init-groups -- \
		    perl -e "$change" -- "$_f" "$uid" "$4" "$2" "$3"
		;;
	*)
		die "$_f belongs to $(stat -c %U -- "$_f"), neither root nor $user"
		;;
	esac
}

for f in config.db config.db-journal config.db-wal config.db-shm \
    state.db state.db-journal state.db-wal state.db-shm; do
	plain "$f"
done
# config.db's journal is root's alone (while root writes, or after root's
# write was cut): one of anyone else's would be played into config.db at
# root's next write.
for f in config.db-journal config.db-wal config.db-shm; do
	[ -e "$dir/$f" ] || continue
	[ "$(stat -c %u -- "$dir/$f")" -eq 0 ] ||
	    die "$dir/$f belongs to $(stat -c %U -- "$dir/$f"): SQLite would" \
	    "play it into config.db at root's next write; look at it, then" \
	    "remove it"
done
if [ ! -e "$dir/config.db" ] && [ ! -e "$dir/state.db" ]; then
	"$hb" -d "$dir" init >/dev/null
	say "$dir initialised"
else
	[ -f "$dir/config.db" ] && [ -f "$dir/state.db" ] ||
	    die "$dir: one database is missing; restore it, or move both away"
	# Databases an older hookbox made are upgraded to this one's
	# schemas (init says which, or that nothing changed): by root, so
	# only once config.db is known to be root's.
	own config.db root "$user" 0640
	_m=$("$hb" -d "$dir" init 2>&1) || die "hookbox init: $_m"
	printf '%s\n' "$_m" | while IFS= read -r _l; do say "$_l"; done
fi
own config.db root "$user" 0640
for f in state.db state.db-wal state.db-shm; do
	own "$f" "$user" "$user" 0600
done
say "$dir: config.db root:$user 0640, state.db $user:$user 0600;" \
    "run the responder and the dispatcher as $user"

# The registrars: an application's own user, never one that reads the
# secrets (the responder's group), which must not write what it trusts.
for r in $registrars; do
	ru=${r%%:*} rt=${r#*:}
	[ -n "$ru" ] && [ -n "$rt" ] && [ "$ru" != "$r" ] ||
	    die "-r $r: give APPUSER:TENANT"
	getent passwd "$ru" >/dev/null || die "-r $r: no such user $ru"
	id -nG "$ru" | tr ' ' '\n' | grep -qx "$user" &&
	    die "-r $r: $ru is in group $user, which reads the secrets and" \
	    "runs the responder: give the application a user of its own"
	_m=$("$hb" -d "$dir" registrar add --tenant "$rt" "$ru" \
	    2>&1) || die "-r $r: ${_m:-refused}"
	say "$ru may register the jobs of tenant $rt (through" \
	    "hookbox-registrar.socket)"
done
