#!/bin/sh
# tests/e2e/deb.sh BUILD_DIR: the Debian package, built, checked by
# lintian, and installed, upgraded, removed and purged by apt on this OS
# booted with systemd as PID 1.
#
# `make deb` (scripts/deb.sh) builds the package twice from this tree:
# this version, and the next one (its last number plus one), as a
# release would.  lintian finds no error and no warning in the first.
# The container is this machine's own OS, its /usr, /etc and /var each
# an overlay whose changes go to memory (so apt and dpkg work on a copy
# of this machine's package database, with hookbox's dependencies
# installed, and change nothing here), booted by systemd-nspawn
# (tests/helpers/nspawn.sh) with a network of its own.  In it, as an
# administrator would (README.Debian, hookbox(7)):
#  - apt install: the user, the directory and the databases made, their
#    owners and modes as SERVER SET-UP says, nothing enabled or running,
#    the package saying what to do next;
#  - a tenant, an endpoint and a destination (tests/helpers/sink.c in the
#    container's network), the nginx snippet included in nginx's default
#    site, the units enabled: a signed callback through nginx is
#    accepted and delivered;
#  - the same package again (apt install --reinstall): nothing changes;
#  - the next version over it, the snippet edited by the operator: the
#    data kept, the edit kept, the schemas checked, the running
#    responder and dispatcher restarted on the new programs (no deleted
#    program running, the new version logged), and a new callback
#    delivered;
#  - databases of release v0.9.0 (tests/fixtures) in place of those, and
#    dpkg-reconfigure: the postinst upgrades them, owners and modes kept;
#  - apt remove: every unit stopped, the programs gone, the data and the
#    snippet kept;
#  - apt purge: the snippet, the run directory and the units' links
#    gone, the databases kept and said so, the user kept; purge again
#    does nothing.
# Needs root; skipped otherwise.
set -u
build=$(cd "${1:?usage: deb.sh BUILD_DIR}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/helpers/lib.sh"
. "$top/tests/helpers/nspawn.sh"

if ! ct_can deb dpkg-buildpackage dh lintian nginx curl sqlite3; then
	finish deb
	exit
fi

tmp=$(mktemp -d)
chmod 0755 "$tmp"
root="$tmp/root"
up="$tmp/up"
mounted=""
cleanup() {
	[ -f "$tmp/sink.pid" ] && kill "$(cat "$tmp/sink.pid")" 2>/dev/null
	ct_stop
	wait 2>/dev/null
	for m in $mounted; do umount "$m" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT

# What scripts/install-deps.sh deb installs is what the build needs.
for p in dpkg-dev build-essential debhelper libfcgi-dev libpq-dev; do
	contains "install-deps.sh's deb set: $p" " $p " \
	    " $(sh "$top/scripts/install-deps.sh" -l deb | tr '\n' ' ')"
done

# ---- the two packages ----
v1=$(sed -n 's/^#define HB_VERSION[[:space:]]*"\(.*\)"$/\1/p' \
    "$top/lib/base/hb.h")
v2=$(echo "$v1" | awk -F. '{ $NF = $NF + 1; print }' OFS=.)
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
# Both at once: each build is mostly one compiler at a time.
for v in "$v1" "$v2"; do
	make -s -C "$top" deb O="$tmp/$v" HB_VERSION="$v" \
	    > "$tmp/deb-$v.log" 2>&1 &
done
wait
for v in "$v1" "$v2"; do
	if [ -f "$tmp/$v/deb/hookbox_${v}_$arch.deb" ]; then
		pass
	else
		fail "make deb $v: $(tail -n 20 "$tmp/deb-$v.log")"
		finish deb
		exit
	fi
done
deb1="hookbox_${v1}_$arch.deb"
deb2="hookbox_${v2}_$arch.deb"

# ---- lintian ----
lintian --fail-on error,warning "$tmp/$v1/deb/hookbox_${v1}_$arch.changes" \
    > "$tmp/lintian.log" 2>&1
rc=$?
eq "lintian: no error, no warning ($(cat "$tmp/lintian.log"))" 0 $rc
eq "lintian: nothing to say" "" "$(grep '^[EW]:' "$tmp/lintian.log")"

# What the package holds, where Debian expects it.
dpkg -c "$tmp/$v1/deb/$deb1" | awk '{ print $6 }' > "$tmp/contents"
for f in ./usr/bin/hookbox ./usr/bin/hookbox-fcgi \
    ./usr/lib/systemd/system/hookbox.service \
    ./usr/lib/systemd/system/hookbox.socket \
    ./usr/lib/systemd/system/hookbox-dispatch.service \
    ./usr/lib/sysusers.d/hookbox.conf ./usr/lib/tmpfiles.d/hookbox.conf \
    ./usr/share/hookbox/setup-server.sh ./usr/share/hookbox/presets/mux.json \
    ./usr/share/man/man1/hookbox.1.gz ./usr/share/man/man7/hookbox.7.gz \
    ./usr/share/man/man8/hookbox-fcgi.8.gz \
    ./usr/share/bash-completion/completions/hookbox \
    ./usr/share/doc/hookbox/copyright ./usr/share/doc/hookbox/README.Debian \
    ./etc/nginx/snippets/hookbox.conf; do
	if grep -qxF "$f" "$tmp/contents"; then
		pass
	else
		fail "the package lacks $f"
	fi
done
eq "the snippet is a configuration file" /etc/nginx/snippets/hookbox.conf \
    "$(dpkg-deb --ctrl-tarfile "$tmp/$v1/deb/$deb1" | tar -xOf - ./conffiles)"
# The programs load libpq themselves (lib/db/pg.c), so dpkg-shlibdeps does
# not see it: debian/control names it.
dpkg-deb -f "$tmp/$v1/deb/$deb1" Depends | grep -q 'libpq5 (>= 14)'
eq "the package depends on libpq5 (pipeline mode: 14)" 0 $?

# ---- the container: this OS, its changes in memory ----
mkdir -p "$root" "$up"
mount -t tmpfs -o mode=0755 tmpfs "$up" && mounted="$up"
for d in usr etc var; do
	mkdir -p "$up/$d" "$up/$d.work" "$root/$d"
	if mount -t overlay overlay \
	    -o "lowerdir=/$d,upperdir=$up/$d,workdir=$up/$d.work" "$root/$d"
	then
		mounted="$root/$d $mounted"
	else
		fail "overlay of /$d"
		finish deb
		exit
	fi
done
for l in bin sbin lib lib64; do
	[ -L "/$l" ] && ln -s "$(readlink "/$l")" "$root/$l"
done
mkdir -p "$root/root" "$root/tmp" "$root/run" "$root/proc" "$root/sys" \
    "$root/dev"
cp "$tmp/$v1/deb/$deb1" "$tmp/$v2/deb/$deb2" "$root/root/"
# A target that starts nothing of this machine's own (its nginx,
# PostgreSQL): what the test needs, it starts.
printf '[Unit]\nDescription=the package test\n' \
    > "$root/etc/systemd/system/hookbox-deb-test.target"
ln -sf /dev/null "$root/etc/systemd/system/systemd-firstboot.service"
# A container image's policy-rc.d (exit 101: no service started or
# stopped by a package), which deb-systemd-invoke obeys: a server has
# none.  And no man-db index rebuilt at every apt run (its trigger
# reads this flag), which costs seconds and tests nothing of ours.
rm -f "$root/usr/sbin/policy-rc.d" "$root/var/lib/man-db/auto-update"
ct_boot "hookbox-deb-$$" "$tmp/boot.log" -D "$root" \
    -b -- systemd.unit=hookbox-deb-test.target
if ! ct_up 60 hookbox-deb-test.target; then
	fail "the container did not boot: $(tail -n 40 "$tmp/boot.log")"
	finish deb
	exit
fi
pass

# ct CMD...: CMD in the container, as root with a clean environment.
ct() {
	in_ct env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
	    DEBIAN_FRONTEND=noninteractive "$@"
}
HB="hookbox -d /var/lib/hookbox"
# perms: the data directory's entries, owner, group and mode, one line.
perms() {
	ct stat -c '%n %U:%G %a' /var/lib/hookbox /var/lib/hookbox/config.db \
	    /var/lib/hookbox/state.db | sed 's|/var/lib/hookbox/||' |
	    tr '\n' ' ' | sed 's/ $//'
}
want_perms="/var/lib/hookbox root:hookbox 1770 config.db root:hookbox 640 state.db hookbox:hookbox 600"
# active UNIT...: each one's state, one line.
active() { ct systemctl is-active "$@" | tr '\n' ' ' | sed 's/ $//'; }
units="hookbox.socket hookbox.service hookbox-dispatch.service hookbox-poll.timer"

# ---- apt install ----
out=$(ct apt-get install -y "/root/$deb1" 2>&1)
eq "apt install ($(echo "$out" | tail -n 5))" 0 $?
contains "install: says nothing is started, and what to do" \
    "hookbox: installed, nothing started." "$out"
contains "install: the data directory initialised" \
    "setup-server: /var/lib/hookbox initialised" "$out"
eq "install: the user, from sysusers.d" \
    "hookbox:/var/lib/hookbox:/usr/sbin/nologin" \
    "$(ct getent passwd hookbox | cut -d: -f1,6,7)"
eq "install: the files' owners and modes" "$want_perms" "$(perms)"
eq "install: the run directory, from tmpfiles.d" "root:root 755" \
    "$(ct stat -c '%U:%G %a' /run/hookbox)"
eq "install: nothing enabled" "disabled disabled disabled disabled" \
    "$(ct systemctl is-enabled $units | tr '\n' ' ' | sed 's/ $//')"
eq "install: nothing running" "inactive inactive inactive inactive" \
    "$(active $units)"
eq "install: the programs' version" "hookbox $v1" \
    "$(ct hookbox --version | head -n 1)"

# ---- configured as README.Debian says; nginx; the units enabled ----
port=8701
in_net "$build/tests/sink" -p "$port" -l "$tmp/sink.log" \
    -r "$tmp/sink.pid" > "$tmp/sink.port" 2> "$tmp/sink.err" &
until_true 20 test -s "$tmp/sink.port" || fail "sink: $(cat "$tmp/sink.err")"
printf 'hmac-secret-for-the-package' > "$root/root/tornado.secret"
chmod 600 "$root/root/tornado.secret"
ct sh -c "$HB tenant add acme &&
    $HB endpoint add tornado --tenant acme --secret-file /root/tornado.secret &&
    $HB destination add sink --tenant acme --url http://127.0.0.1:$port/hook &&
    $HB job add job-1 --tenant acme --attempt att-1 --step deliver \
        --destination sink &&
    $HB job add job-2 --tenant acme --attempt att-2 --step deliver \
        --destination sink &&
    sh /usr/share/hookbox/setup-server.sh" > "$tmp/conf.log" 2>&1
eq "configured ($(cat "$tmp/conf.log"))" 0 $?
ct sed -i 's|^\(\s*server_name _;\)$|\1\n\tinclude snippets/hookbox.conf;|' \
    /etc/nginx/sites-available/default
out=$(ct sh -c 'nginx -t 2>&1 && systemctl start nginx &&
    systemctl enable --now hookbox.socket hookbox-dispatch.service \
    hookbox-poll.timer 2>&1')
eq "nginx and the units started ($out)" 0 $?
eq "the units running" "active inactive active active" "$(active $units)"

# signed JOB: posts JOB's completion, signed, through nginx; prints
# "STATUS RESULT".
signed() {
	printf '{"type":"job_completed","job_id":"%s","status":"completed","key":"k/%s"}' \
	    "$1" "$1" > "$root/root/body"
	set --
	while IFS= read -r _h; do set -- "$@" -H "$_h"; done <<EOF
$(ct sh -c "$HB sign --endpoint tornado < /root/body")
EOF
	_code=$(in_net curl -s -o "$tmp/reply" -w '%{http_code}' \
	    -H 'Content-Type: application/json' \
	    --data-binary "@$root/root/body" "$@" \
	    http://127.0.0.1/hooks/tornado)
	echo "$_code $(jget result "$(cat "$tmp/reply")")"
}
delivered() { grep -q "	POST	/hook	$1	" "$tmp/sink.log" 2>/dev/null; }
eq "a signed callback through nginx ($(ct_journal hookbox.service))" \
    "200 accepted" "$(signed job-1)"
if until_true 30 delivered acme:att-1:deliver; then
	pass
else
	fail "not delivered: $(ct_journal hookbox-dispatch.service)"
fi

# ---- the same package again: nothing changes ----
# snapshot: what the package and its scripts set, one line each.
snapshot() {
	perms
	ct getent passwd hookbox
	ct systemctl is-enabled $units
	ct sh -c "$HB tenant list; $HB destination list; ls /var/lib/hookbox"
}
snapshot > "$tmp/before"
out=$(ct apt-get install -y --reinstall "/root/$deb1" 2>&1)
eq "reinstall ($(echo "$out" | tail -n 5))" 0 $?
snapshot > "$tmp/after"
eq "reinstall: nothing changed" "$(cat "$tmp/before")" "$(cat "$tmp/after")"
contains "reinstall: the schemas checked" \
    "initialised already, its schemas current; nothing changed" "$out"

# ---- the next version, over the running one ----
# mainpid UNIT: its main process; exe UNIT: the program it runs.
mainpid() { ct systemctl show -P MainPID "$1"; }
exe() { ct readlink "/proc/$(mainpid "$1")/exe"; }
echo "# edited by the operator" >> "$root/etc/nginx/snippets/hookbox.conf"
before="$(mainpid hookbox.service) $(mainpid hookbox-dispatch.service)"
out=$(ct apt-get install -y "/root/$deb2" 2>&1)
eq "upgrade to $v2 ($(echo "$out" | tail -n 5))" 0 $?
contains "upgrade: the schemas checked" \
    "initialised already, its schemas current; nothing changed" "$out"
eq "upgrade: the data kept" "acme" \
    "$(ct sh -c "$HB tenant list --json" | grep -o '"acme"' | tr -d '"')"
eq "upgrade: the delivered action kept" 1 \
    "$(jget outbox.delivered "$(ct sh -c "$HB status --json")")"
eq "upgrade: the operator's snippet kept" "# edited by the operator" \
    "$(tail -n 1 "$root/etc/nginx/snippets/hookbox.conf")"
eq "upgrade: the owners and modes" "$want_perms" "$(perms)"
eq "upgrade: the programs' version" "hookbox $v2" \
    "$(ct hookbox --version | head -n 1)"
after="$(mainpid hookbox.service) $(mainpid hookbox-dispatch.service)"
eq "upgrade: both restarted (pids $before, then $after)" "" \
    "$(for p in $before; do for q in $after; do
    [ "$p" = "$q" ] && echo "$p"; done; done)"
eq "upgrade: the running programs are the new ones" \
    "/usr/bin/hookbox-fcgi /usr/bin/hookbox" \
    "$(exe hookbox.service) $(exe hookbox-dispatch.service)"
eq "upgrade: a new callback ($(ct_journal hookbox.service))" \
    "200 accepted" "$(signed job-2)"
if until_true 30 delivered acme:att-2:deliver; then
	pass
else
	fail "not delivered after the upgrade: $(ct_journal \
	    hookbox-dispatch.service)"
fi
contains "upgrade: the responder logs the new version" "version=$v2" \
    "$(ct_journal hookbox.service)"

# ---- a release's databases, upgraded by the postinst ----
fixtures="$top/tests/fixtures/v0.9.0"
ct systemctl stop $units
mkdir -p "$tmp/old"
sqlite3 "$tmp/old/config.db" < "$fixtures/config.sql" &&
    sqlite3 "$tmp/old/state.db" < "$fixtures/state.sql" ||
    fail "the v0.9.0 fixtures"
ct rm -f /var/lib/hookbox/state.db-wal /var/lib/hookbox/state.db-shm
cp "$tmp/old/config.db" "$tmp/old/state.db" "$root/var/lib/hookbox/"
ct chown hookbox:hookbox /var/lib/hookbox/state.db
out=$(ct dpkg-reconfigure hookbox 2>&1)
eq "reconfigure ($out)" 0 $?
contains "reconfigure: the v0.9.0 configuration upgraded" \
    "upgraded /var/lib/hookbox/config.db: configuration schema" "$out"
eq "reconfigure: the owners and modes" "$want_perms" "$(perms)"
eq "reconfigure: v0.9.0's pending actions read" 3 \
    "$(jget outbox.pending "$(ct sh -c "$HB status --json")")"

# ---- apt remove ----
ct systemctl start $units
out=$(ct apt-get remove -y hookbox 2>&1)
eq "remove ($(echo "$out" | tail -n 5))" 0 $?
eq "remove: every unit stopped" "inactive inactive inactive inactive" \
    "$(active $units)"
eq "remove: the programs gone" "" \
    "$(ct ls /usr/bin/hookbox /usr/bin/hookbox-fcgi 2>/dev/null)"
eq "remove: the data and the snippet kept" \
    "/etc/nginx/snippets/hookbox.conf /var/lib/hookbox/config.db /var/lib/hookbox/state.db" \
    "$(ct ls /etc/nginx/snippets/hookbox.conf /var/lib/hookbox/config.db \
    /var/lib/hookbox/state.db | tr '\n' ' ' | sed 's/ $//')"
eq "remove: the package's state" "rc" \
    "$(ct dpkg-query -W -f '${db:Status-Abbrev}' hookbox | tr -d ' ')"
echo "deb: left after remove: $(ct sh -c 'ls -d /etc/nginx/snippets/hookbox.conf \
    /var/lib/hookbox/* /run/hookbox /etc/systemd/system/*.wants/hookbox* \
    2>/dev/null' | tr '\n' ' ')"

# ---- apt purge ----
out=$(ct apt-get purge -y hookbox 2>&1)
eq "purge ($(echo "$out" | tail -n 5))" 0 $?
contains "purge: says where the data is" \
    "hookbox: purged; the data in /var/lib/hookbox is kept" "$out"
eq "purge: the snippet, the run directory and the units' links gone" "" \
    "$(ct sh -c 'ls -d /etc/nginx/snippets/hookbox.conf /run/hookbox \
    /etc/systemd/system/*.wants/hookbox* 2>/dev/null')"
eq "purge: the databases kept" "config.db state.db" \
    "$(ct ls /var/lib/hookbox | grep '\.db$' | tr '\n' ' ' | sed 's/ $//')"
eq "purge: the user kept" hookbox "$(ct getent passwd hookbox | cut -d: -f1)"
eq "purge: the package gone" "" \
    "$(ct dpkg-query -W -f '${db:Status-Abbrev}' hookbox 2>/dev/null)"
echo "deb: left after purge: $(ct sh -c 'ls -d /etc/nginx/snippets/hookbox.conf \
    /var/lib/hookbox/* /run/hookbox /etc/systemd/system/*.wants/hookbox* \
    2>/dev/null' | tr '\n' ' ')"
out=$(ct dpkg --purge hookbox 2>&1)
eq "purge again ($out)" 0 $?

finish deb
