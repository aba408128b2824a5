#!/bin/sh
# tests/e2e/units.sh BUILD_DIR: the systemd units as `make install` puts them,
# started by a real systemd and used.
#
# This machine's own OS is booted in a container (systemd-nspawn
# --volatile=yes: a fresh /etc and /var in memory, /usr from the host,
# read-only, with the staged `make install` laid over it), to a target
# that wants hookbox.socket, hookbox-dispatch.service,
# hookbox-poll.timer and hookbox-registrar.socket, as `systemctl enable`
# would.  The units run as
# they are installed: their own User=, sandbox and system call filters,
# applied by systemd.  The data directory is made by
# scripts/setup-server.sh for a user made for the test, which the
# container knows as "hookbox".  The container has a network of its
# own; nginx (the site snippet), tests/helpers/sink.c and curl run in it.  Then:
#  - a signed callback through nginx and hookbox.socket is accepted;
#  - the dispatcher delivers it to the sink, by a name with an IPv4 and
#    an IPv6 address (getaddrinfo() without AF_NETLINK);
#  - an application's user (setup-server.sh -r) registers a job with
#    `hookbox job add` through hookbox-registrar.socket, whose service,
#    root without a capability, writes config.db; adding a tenant is
#    refused; the next callback for the job is accepted;
#  - hookbox-poll.service, started, polls a status document and the
#    action it accepts is delivered too;
#  - the dispatcher does not reach a destination on a link-local address
#    (IPAddressDeny=) that the same network reaches from outside the unit;
#  - the running responder and dispatcher hold no capability, run as
#    the user with no_new_privs and a seccomp filter;
#  - a probe run under each service's own [Service] lines (ExecStart=
#    replaced) finds what the unit file says: the user, no capability,
#    the address families RestrictAddressFamilies= lists and no other,
#    /usr and /etc read-only and the data directory writable, EPERM for
#    chown (@privileged), setpriority (@resources) and a writable and
#    executable mapping (MemoryDenyWriteExecute=), PID 1 and /proc's
#    other files out of sight, a user namespace of two users;
#  - with hookbox.socket on TCP instead (a drop-in), the responder, whose
#    unit is unchanged, still answers.
# Not covered: a host booted with systemd (here PID 1 is the container's;
# on such a host nspawn gets its scope from it, a path this machine does
# not run), the lines no probe looks at one by one (ProtectKernel*=,
# ProtectClock=, ProtectHostname=, PrivateDevices=, RestrictNamespaces=,
# RestrictRealtime=, LockPersonality=, RemoveIPC=: systemd applies them,
# tests/e2e/install.sh rates them), hookbox-poll.timer firing (only seen
# active), and PostgreSQL, over TCP or not.  Needs root; skipped
# otherwise.
set -u
build=$(cd "${1:?usage: units.sh BUILD_DIR}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/helpers/lib.sh"
. "$top/tests/helpers/nspawn.sh"

if ! ct_can units ip nginx cgi-fcgi curl perl; then
	finish units
	exit
fi

user=hookbox-ut
app=hookbox-ua		# an application's user, a registrar
name=hookbox-units-$$
tmp=$(mktemp -d)
chmod 0755 "$tmp"
dest="$tmp/dest"
data="$tmp/data"
cleanup() {
	for f in "$tmp/nginx/nginx.pid" "$tmp/sink.pid" "$tmp/ll.pid"; do
		[ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null
	done
	ct_stop
	wait 2>/dev/null
	for u in "$user" "$app"; do
		userdel "$u" 2>/dev/null
		groupdel "$u" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
for u in "$user" "$app"; do
	userdel "$u" 2>/dev/null
	groupdel "$u" 2>/dev/null
done
useradd --system --no-create-home --home-dir /nonexistent \
    --shell /usr/sbin/nologin --user-group "$app"

# as CMD...: runs CMD as the service user, with its own groups only.
as() {
	setpriv --reuid="$user" --regid="$user" --init-groups -- "$@"
}

# ---- the staged install, the user and the data directory ----
if ! make -C "$top" install DESTDIR="$dest" PREFIX=/usr O="$build" \
    > "$tmp/make.log" 2>&1; then
	fail "make install failed: $(cat "$tmp/make.log")"
	finish units
	exit
fi
HB="$dest/usr/bin/hookbox"
sysunits="$dest/usr/lib/systemd/system"
sh "$top/scripts/setup-server.sh" -u "$user" -d "$data" -b "$dest/usr/bin" \
    > "$tmp/setup.log" 2>&1
rc=$?
eq "setup-server.sh ($(cat "$tmp/setup.log"))" 0 $rc
uid=$(id -u "$user")

# Ports in the container's own network, where nothing else listens.
ngx=8600 sinkport=8601 llport=8602 ll=169.254.7.7
printf 'hmac-secret-for-units' > "$tmp/hmac.secret"
chmod 600 "$tmp/hmac.secret"
"$HB" -d "$data" tenant add acme
"$HB" -d "$data" endpoint add tornado --tenant acme \
    --secret-file "$tmp/hmac.secret"
"$HB" -d "$data" destination add sink --tenant acme \
    --url "http://sink.test:$sinkport/hook"
# Allowed by hookbox itself, so that what stops it is the unit's
# IPAddressDeny= alone.
"$HB" -d "$data" destination add meta --tenant acme --allow-internal \
    --url "http://$ll:$llport/hook"
"$HB" -d "$data" job add job-1 --tenant acme --attempt att-1 \
    --step deliver-v1 --destination sink
"$HB" -d "$data" job add job-ll --tenant acme --attempt att-ll \
    --step deliver-v1 --destination meta
printf 'provider-api-key' | "$HB" -d "$data" tenant add prov \
    --status-base "http://127.0.0.1:$ngx/status" --api-key-file -
"$HB" -d "$data" destination add sink --tenant prov \
    --url "http://sink.test:$sinkport/hook"
"$HB" -d "$data" job add job-p --tenant prov --attempt att-p \
    --step deliver-v1 --destination sink
# The commands above ran as root: the script puts the owners back, and
# names the registrar.
sh "$top/scripts/setup-server.sh" -u "$user" -d "$data" -b "$dest/usr/bin" \
    -r "$app:acme" > "$tmp/setup.log" 2>&1
eq "setup-server.sh again ($(cat "$tmp/setup.log"))" 0 $?

# ---- what the container sees in /etc ----
mkdir -p "$tmp/etc" "$tmp/units" "$tmp/run"
# The test user is "hookbox" in there, as the units name it.
grep -v "^hookbox:" /etc/passwd | sed "s/^$user:/hookbox:/" \
    > "$tmp/etc/passwd"
grep -v "^hookbox:" /etc/group | sed "s/^$user:/hookbox:/" > "$tmp/etc/group"
printf 'passwd: files\ngroup: files\nhosts: files\n' \
    > "$tmp/etc/nsswitch.conf"
# sink.test has an address of each family (the sink listens on IPv4).
printf '127.0.0.1 localhost\n127.0.0.1 sink.test\n::1 sink.test\n' \
    > "$tmp/etc/hosts"
cat > "$tmp/units/hookbox-test.target" <<'EOF'
[Unit]
Description=the hookbox units, as enabled
Wants=hookbox.socket hookbox-dispatch.service hookbox-poll.timer
Wants=hookbox-registrar.socket
EOF
# An empty /etc is a first boot: no questions on a console nobody reads.
ln -s /dev/null "$tmp/units/systemd-firstboot.service"

# probe-U.service: U's own unit file, [Service] and all, with ExecStart=
# running the probe below (as a oneshot, its output in /run/hookbox).
for u in hookbox hookbox-dispatch hookbox-poll; do
	out=truncate:/run/hookbox/probe-$u.out
	sed -e "s|^ExecStart=.*|ExecStart=/usr/bin/perl /etc/hookbox-probe.pl|" \
	    -e '/^StandardInput=/d' -e '/^StandardOutput=/d' \
	    -e '/^StandardError=/d' -e '/^Type=/d' -e '/^Restart/d' \
	    -e '/^Requires=/d' -e '/^\[Install\]/,$d' \
	    -e "s|^\[Service\]|&\nType=oneshot\nStandardOutput=$out|" \
	    "$sysunits/$u.service" > "$tmp/units/probe-$u.service"
done
# Each line: what=outcome, the outcome "ok" or the errno's name.
cat > "$tmp/probe.pl" <<'EOF'
use strict;
use warnings;
use POSIX qw(:errno_h uname);
use Socket;
my %name = (EPERM() => "EPERM", EROFS() => "EROFS", EACCES() => "EACCES",
    EAFNOSUPPORT() => "EAFNOSUPPORT", ENOENT() => "ENOENT");
sub res { return $_[0] ? "ok" : ($name{$! + 0} // "errno" . ($! + 0)); }
$| = 1;
print "uid=$<\n";
open(my $st, "<", "/proc/self/status") or die;
while (<$st>) {
	print "$1=$2\n" if /^(CapBnd|CapEff|NoNewPrivs|Seccomp):\s+(\S+)/;
}
open(my $um, "<", "/proc/self/uid_map") or die;
my @um = <$um>;
print "uid_map_lines=", scalar(@um), "\n";
for my $f (["AF_INET", AF_INET, SOCK_STREAM],
    ["AF_INET6", AF_INET6, SOCK_STREAM], ["AF_UNIX", AF_UNIX, SOCK_STREAM],
    ["AF_NETLINK", 16, SOCK_RAW], ["AF_PACKET", 17, SOCK_RAW]) {
	my $s;
	print "socket_$f->[0]=", res(socket($s, $f->[1], $f->[2], 0)), "\n";
	close($s) if $s;
}
for my $d ("/var/lib/hookbox", "/etc", "/usr", "/tmp") {
	my $p = "$d/probe-$$";
	my $ok = open(my $fh, ">", $p);
	print "write_$d=", res($ok), "\n";
	if ($ok) { close($fh); unlink($p); }
}
open(my $fh, ">", "/tmp/probe-own-$$") or die;
print "chown_own_file=", res(chown($<, $( + 0, "/tmp/probe-own-$$")), "\n";
unlink("/tmp/probe-own-$$");
print "setpriority=", res(setpriority(0, 0, 10)), "\n";
if ((uname())[4] eq "x86_64") {
	# mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
	#     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
	my $r = syscall(9, 0, 4096, 7, 0x22, -1, 0);
	print "mmap_wx=", res($r != -1), "\n";
}
print "proc_1=", (-e "/proc/1" ? "visible" : "hidden"), "\n";
print "proc_cpuinfo=", (-e "/proc/cpuinfo" ? "visible" : "hidden"), "\n";
print "done=yes\n";
EOF

# ---- boot ----
ct_boot "$name" "$tmp/boot.log" -D / --volatile=yes \
    --overlay-ro="/usr:$dest/usr:/usr" \
    --bind-ro="$tmp/etc/passwd:/etc/passwd" \
    --bind-ro="$tmp/etc/group:/etc/group" \
    --bind-ro="$tmp/etc/hosts:/etc/hosts" \
    --bind-ro="$tmp/etc/nsswitch.conf:/etc/nsswitch.conf" \
    --bind-ro="$tmp/units:/etc/systemd/system" \
    --bind-ro="$tmp/probe.pl:/etc/hookbox-probe.pl" \
    --bind="$data:/var/lib/hookbox" --bind="$tmp/run:/run/hookbox" \
    -b -- systemd.unit=hookbox-test.target
# start UNIT: starts it and waits for its start (a oneshot's run), for at
# most 60 s: a oneshot has no start timeout of its own.
start() { timeout 60 nsenter -t "$ct_leader" -a systemctl start "$1"; }
if ! ct_up 60 hookbox-test.target; then
	fail "the container did not boot: $(tail -n 40 "$tmp/boot.log")"
	finish units
	exit
fi
pass
eq "units started" "active active active active" "$(in_ct systemctl \
    is-active hookbox.socket hookbox-dispatch.service hookbox-poll.timer \
    hookbox-registrar.socket | tr '\n' ' ' | sed 's/ $//')"

# ---- the container's network: nginx, the sinks ----
in_net ip addr add "$ll/32" dev lo
in_net "$build/tests/sink" -p "$sinkport" -l "$tmp/sink.log" \
    -r "$tmp/sink.pid" > "$tmp/sink.port" 2> "$tmp/sink.err" &
in_net "$build/tests/sink" -a "$ll" -p "$llport" -l "$tmp/ll.log" \
    -r "$tmp/ll.pid" > "$tmp/ll.port" 2> "$tmp/ll.err" &
conf=$(sh "$top/scripts/nginx-conf.sh" "$tmp/nginx" "$ngx" \
    "$tmp/run/hookbox.sock" /var/lib/hookbox)
in_net nginx -p "$tmp/nginx" -c "$conf" -e "$tmp/nginx/error.log" \
    2> "$tmp/nginx.start" || fail "nginx: $(cat "$tmp/nginx.start")"
until_true 20 test -s "$tmp/sink.port" || fail "sink: $(cat "$tmp/sink.err")"
until_true 20 test -s "$tmp/ll.port" || fail "sink on $ll: $(cat "$tmp/ll.err")"
base="http://127.0.0.1:$ngx"

# ---- the responder: hookbox.socket starts it for nginx ----
# signed JOB: posts JOB's completion, signed, through nginx; prints
# "STATUS RESULT".
signed() {
	printf '{"type":"job_completed","job_id":"%s","status":"completed","key":"k/%s"}' \
	    "$1" "$1" > "$tmp/body"
	set --
	while IFS= read -r _h; do set -- "$@" -H "$_h"; done <<EOF
$("$HB" -d "$data" sign --endpoint tornado < "$tmp/body")
EOF
	_code=$(in_net curl -s -o "$tmp/reply" -w '%{http_code}' \
	    -H 'Content-Type: application/json' --data-binary "@$tmp/body" \
	    "$@" "$base/hooks/tornado")
	echo "$_code $(jget result "$(cat "$tmp/reply")")"
}
eq "health through nginx" 200 "$(in_net curl -s -o /dev/null \
    -w '%{http_code}' "$base/hooks/_health")"
out=$(signed job-1)
eq "a signed callback is accepted ($(ct_journal hookbox.service))" \
    "200 accepted" "$out"
eq "hookbox.service started by its socket" active \
    "$(in_ct systemctl is-active hookbox.service)"

# ---- the dispatcher delivers it ----
delivered() { grep -q "	POST	/hook	$1	" "$tmp/sink.log" 2>/dev/null; }
if until_true 30 delivered acme:att-1:deliver-v1; then
	pass
else
	fail "not delivered: $(ct_journal hookbox-dispatch.service)"
fi
eq "delivered, by the state" 1 "$(jget outbox.delivered \
    "$(as "$HB" -d "$data" status --json)")"

# ---- a registrar, through hookbox-registrar.socket ----
# The application's user registers a job with the tool as root would;
# the service, root without a capability, writes config.db; the next
# callback for the job is accepted.  Its own user, and its journal's,
# stay root's.
out=$(in_ct setpriv --reuid="$app" --regid="$app" --init-groups -- \
    env -i PATH=/usr/bin:/bin hookbox job add --tenant acme \
    --attempt att-r --step deliver-v1 --destination sink job-r 2>&1)
eq "registrar: job add through the socket ($(ct_journal \
    'hookbox-registrar@*'))" "job job-r of tenant acme added" "$out"
out=$(in_ct setpriv --reuid="$app" --regid="$app" --init-groups -- \
    env -i PATH=/usr/bin:/bin HOOKBOX_DIR=/var/lib/hookbox \
    hookbox tenant add evil 2>&1)
contains "registrar: tenant add refused" "permission denied" "$out"
eq "registrar: the next callback is accepted" "200 accepted" \
    "$(signed job-r)"
eq "registrar: config.db still root's, no journal left" "root " \
    "$(stat -c %U "$data/config.db") $(ls "$data" | grep -c journal |
    sed 's/^0$//')"
contains "registrar: the service logged the request" \
    "registrar $app: job add: exit 0" "$(ct_journal 'hookbox-registrar@*')"

# ---- the poller: started as its timer would ----
mkdir -p "$tmp/nginx/status/jobs"
printf '{"id":"job-p","status":"Completed","step":"Finished","finished_at":1764500000000}' \
    > "$tmp/nginx/status/jobs/job-p"
start hookbox-poll.service
rc=$?
eq "hookbox-poll.service ran ($(ct_journal hookbox-poll.service))" 0 $rc
contains "poll asked and was answered" \
    "event=poll_summary asked=1 answered=1 failed=0" \
    "$(ct_journal hookbox-poll.service)"
if until_true 30 delivered prov:att-p:deliver-v1; then
	pass
else
	fail "polled action not delivered: $(ct_journal hookbox-dispatch.service)"
fi

# ---- no link-local destination ----
eq "callback for the link-local destination" "200 accepted" \
    "$(signed job-ll)"
tried() {
	test "$(as "$HB" -d "$data" attempts --json acme:att-ll:deliver-v1 |
	    grep -o '"n":' | wc -l)" -ge 1
}
until_true 30 tried || fail "no attempt for the link-local destination"
eq "link-local: nothing reached it" "" "$(grep "	POST	" "$tmp/ll.log")"
eq "link-local: reachable outside the unit" 204 "$(in_net curl -s \
    -o /dev/null -w '%{http_code}' -X POST "http://$ll:$llport/control")"

# ---- the running programs ----
# status_of UNIT: its main process's uid and confinement, one line.
status_of() {
	_pid=$(in_ct systemctl show -P MainPID "$1")
	in_ct cat "/proc/$_pid/status" | awk '
	    /^(Uid|CapBnd|CapEff|NoNewPrivs|Seccomp):/ { printf "%s%s ", $1, $2 }'
}
for u in hookbox.service hookbox-dispatch.service; do
	eq "$u: its process" \
	    "Uid:$uid CapEff:0000000000000000 CapBnd:0000000000000000 NoNewPrivs:1 Seccomp:2 " \
	    "$(status_of "$u")"
done

# ---- the probe, under each service's own lines ----
# Each line of the unit that the probe can see, and what it must see.
# Every service must have every line: dropping one fails here as well
# as (perhaps) in tests/e2e/install.sh's rating.
cat > "$tmp/effects" <<EOF
User=hookbox|uid=$uid
CapabilityBoundingSet=|CapBnd=0000000000000000 CapEff=0000000000000000
NoNewPrivileges=yes|NoNewPrivs=1
SystemCallFilter=@system-service|Seccomp=2
SystemCallFilter=~@privileged @resources|chown_own_file=EPERM setpriority=EPERM
SystemCallErrorNumber=EPERM|done=yes
ProtectSystem=strict|write_/usr=EROFS write_/etc=EROFS
ReadWritePaths=/var/lib/hookbox|write_/var/lib/hookbox=ok
PrivateTmp=yes|write_/tmp=ok
PrivateUsers=yes|uid_map_lines=2
ProtectProc=invisible|proc_1=hidden
ProcSubset=pid|proc_cpuinfo=hidden
MemoryDenyWriteExecute=yes|$([ "$(uname -m)" = x86_64 ] && echo mmap_wx=EPERM)
EOF
# unit_has UNIT KEY WORD: KEY= in the installed UNIT lists WORD.
unit_has() {
	grep "^$2=" "$sysunits/$1.service" | tr '= ' '  ' | tr ' ' '\n' | grep -qx "$3"
}
for u in hookbox hookbox-dispatch hookbox-poll; do
	start "probe-$u.service"
	rc=$?
	eq "probe-$u ran ($(ct_journal "probe-$u.service"))" 0 $rc
	p=$(cat "$tmp/run/probe-$u.out" 2>/dev/null)
	while IFS='|' read -r line wants; do
		if grep -qxF "$line" "$sysunits/$u.service"; then
			pass
		else
			fail "$u.service: no '$line'"
		fi
		for want in $wants; do
			contains "probe-$u, $line" "$want" "$p"
		done
	done < "$tmp/effects"
	# The families RestrictAddressFamilies= lists, and no other.
	grep -q "^RestrictAddressFamilies=" "$sysunits/$u.service" ||
	    fail "$u.service: no RestrictAddressFamilies="
	for af in AF_INET AF_INET6 AF_UNIX AF_NETLINK AF_PACKET; do
		if unit_has "$u" RestrictAddressFamilies "$af"; then
			contains "probe-$u" "socket_$af=ok" "$p"
		else
			contains "probe-$u" "socket_$af=EAFNOSUPPORT" "$p"
		fi
	done
done

# ---- hookbox.socket on TCP: the responder's unit unchanged ----
in_ct sh -c 'mkdir -p /run/systemd/system/hookbox.socket.d &&
    printf "[Socket]\nListenStream=\nListenStream=127.0.0.1:9000\n" \
    > /run/systemd/system/hookbox.socket.d/tcp.conf &&
    systemctl daemon-reload &&
    systemctl stop hookbox.socket hookbox.service &&
    systemctl start hookbox.socket'
eq "hookbox.socket on TCP" 0 $?
out=$(env -i REQUEST_METHOD=GET DOCUMENT_URI=/hooks/_health \
    HOOKBOX_DIR=/var/lib/hookbox nsenter -t "$ct_leader" -n \
    cgi-fcgi -bind -connect 127.0.0.1:9000 2>&1 | tr -d '\r')
contains "health over TCP ($(ct_journal hookbox.service))" '{"status":"ok"}' \
    "$out"
eq "the responder still has no network" "yes 0.0.0.0/0 ::/0" \
    "$(in_ct systemctl show -P PrivateNetwork hookbox.service) $(in_ct \
    systemctl show -P IPAddressDeny hookbox.service | tr ' ' '\n' | sort |
    tr '\n' ' ' | sed 's/ $//')"

finish units
