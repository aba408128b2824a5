#!/bin/sh
# tests/e2e/install.sh BUILD_DIR: `make install` into a staging directory.
#
# Installs the programs already built in BUILD_DIR (make's O=) with
# DESTDIR and PREFIX=/usr, checks every file and its mode, that the
# programs are the built ones and that @BINDIR@ was replaced, and has
# systemd-analyze verify every unit: exit 0 and nothing on stderr (an
# unknown key is only a warning), and has systemd-analyze security rate
# each service 2.0 or lower.  `make uninstall`, with a PREFIX and a
# UNITDIR of its own, removes every file install put there and keeps a
# data directory and the operator's files beside them.  tests/e2e/units.sh
# starts the units; tests/e2e/upgrade.sh installs over a running release.
set -u
build=$(cd "${1:?usage: install.sh BUILD_DIR}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/helpers/lib.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dest="$tmp/dest"
units="hookbox.socket hookbox.service hookbox-dispatch.service
hookbox-poll.service hookbox-poll.timer hookbox-registrar.socket
hookbox-registrar@.service"
unitdir="$dest/usr/lib/systemd/system"

# mode WHAT EXPECTED FILE
mode() {
	if [ -f "$3" ]; then
		eq "$1 mode" "$2" "$(stat -c %a "$3")"
	else
		fail "$1: $3 not installed"
	fi
}

# ---- make install ----
if make -C "$top" install DESTDIR="$dest" PREFIX=/usr O="$build" \
    > "$tmp/make.log" 2>&1; then
	pass
else
	fail "make install failed: $(cat "$tmp/make.log")"
fi
for p in hookbox hookbox-fcgi; do
	mode "$p" 755 "$dest/usr/bin/$p"
	if cmp -s "$build/$p" "$dest/usr/bin/$p"; then
		pass
	else
		fail "$p: installed program differs from $build/$p"
	fi
done
mode "nginx snippet" 644 "$dest/usr/share/hookbox/hookbox.conf"
mode "setup-server.sh" 755 "$dest/usr/share/hookbox/setup-server.sh"
mode "sysusers.d" 644 "$dest/usr/lib/sysusers.d/hookbox.conf"
mode "tmpfiles.d" 644 "$dest/usr/lib/tmpfiles.d/hookbox.conf"
for f in setup-server.sh:scripts/setup-server.sh \
    ../../lib/sysusers.d/hookbox.conf:systemd/hookbox.sysusers \
    ../../lib/tmpfiles.d/hookbox.conf:systemd/hookbox.tmpfiles; do
	if cmp -s "$top/${f#*:}" "$dest/usr/share/hookbox/${f%%:*}"; then
		pass
	else
		fail "${f%%:*} differs from ${f#*:}"
	fi
done
if cmp -s "$top/nginx/hookbox.conf" "$dest/usr/share/hookbox/hookbox.conf"
then
	pass
else
	fail "nginx snippet differs from nginx/hookbox.conf"
fi
for u in $units; do
	mode "$u" 644 "$unitdir/$u"
done
# The README is not installed: what is cites the manual pages.
for f in "$dest/usr/share/hookbox/hookbox.conf" "$unitdir"/*; do
	lacks "$(basename "$f") cites only what is installed" README \
	    "$(cat "$f")"
done
mode "hookbox(1)" 644 "$dest/usr/share/man/man1/hookbox.1"
mode "hookbox(7)" 644 "$dest/usr/share/man/man7/hookbox.7"
mode "hookbox-fcgi(8)" 644 "$dest/usr/share/man/man8/hookbox-fcgi.8"
mode "bash completion" 644 "$dest/usr/share/bash-completion/completions/hookbox"
# The presets: each mapping and sample, as in the tree.
npresets=0
for f in "$top"/presets/*.json; do
	npresets=$((npresets + 1))
	g="$dest/usr/share/hookbox/presets/$(basename "$f")"
	mode "preset $(basename "$f")" 644 "$g"
	if cmp -s "$f" "$g"; then pass
	else fail "preset $(basename "$f") differs from the tree's"; fi
done
eq "the presets: mappings and samples" 1 "$([ "$npresets" -ge 6 ] && echo 1)"
eq "files installed" $((17 + npresets)) \
    "$(find "$dest" -type f | wc -l | tr -d ' ')"

# ---- man pages: groff renders them with every warning on, silently ----
for m in man1/hookbox.1 man7/hookbox.7 man8/hookbox-fcgi.8; do
	[ -f "$dest/usr/share/man/$m" ] || continue
	eq "$m renders without a warning" "" \
	    "$(groff -t -man -ww -z "$dest/usr/share/man/$m" 2>&1)"
done
# Every command the tool lists has its entry in hookbox(1).
for c in $("$build/hookbox" help | awk '/^commands:/ { on = 1; next }
    on && NF == 0 { exit } on { print $1 }'); do
	contains "hookbox(1) names $c" "$c" \
	    "$(sed 's/\\-/-/g' "$dest/usr/share/man/man1/hookbox.1")"
done

# ---- bash completion, against the installed tool's own help ----
comp() {
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1));
	    _hookbox; echo "${COMPREPLY[*]}"' sh \
	    "$dest/usr/share/bash-completion/completions/hookbox" \
	    "$dest/usr/bin/hookbox" "$@"
}
eq "completes a command" "tenant" "$(comp ten)"
eq "completes a group's verbs" "add set list remove" "$(comp tenant "")"
eq "completes a command's options" "--tenant --timeout-ms" \
    "$(comp -d /x destination add --t)"

# ---- @BINDIR@ replaced ----
for u in $units; do
	[ -f "$unitdir/$u" ] || continue
	lacks "$u" "@BINDIR@" "$(cat "$unitdir/$u")"
done
for u in hookbox.service hookbox-dispatch.service hookbox-poll.service \
    hookbox-registrar@.service; do
	[ -f "$unitdir/$u" ] || continue
	contains "$u ExecStart" "ExecStart=/usr/bin/hookbox" \
	    "$(grep '^ExecStart=' "$unitdir/$u")"
done

# ---- make uninstall: what install put there, and nothing else ----
# Installed into a DESTDIR of its own, with a PREFIX and a UNITDIR of
# their own; beside it the data directory (config.db, state.db, the -wal
# of a running server) and the operator's configuration, which stay.
un="$tmp/un"
unvars="DESTDIR=$un PREFIX=/opt/hb UNITDIR=/etc/systemd/system O=$build"
# shellcheck disable=SC2086
make -C "$top" install $unvars > "$tmp/make.log" 2>&1 ||
    fail "make install (for uninstall) failed: $(cat "$tmp/make.log")"
eq "installed under PREFIX and UNITDIR" $((17 + npresets)) \
    "$(find "$un/opt/hb" "$un/etc/systemd/system" -type f | wc -l |
    tr -d ' ')"
mkdir -p "$un/var/lib/hookbox" "$un/etc/hookbox" \
    "$un/etc/systemd/system/hookbox.service.d"
"$build/hookbox" -d "$un/var/lib/hookbox" init > /dev/null ||
    fail "hookbox init for the data directory"
: > "$un/var/lib/hookbox/state.db-wal"
echo "HOOKBOX_DB=dbname=hookbox" > "$un/etc/hookbox/env"
printf '[Service]\nEnvironmentFile=/etc/hookbox/env\n' \
    > "$un/etc/systemd/system/hookbox.service.d/env.conf"
# A data file in the install's own directory is kept, and with it the
# directory (said so).
echo "local" > "$un/opt/hb/share/hookbox/local.conf"
(cd "$un" && find . -type f ! -path './opt/hb/bin/*' \
    ! -path './opt/hb/share/*' ! -path './opt/hb/lib/*' ! -name 'hookbox*.service' \
    ! -name 'hookbox*.socket' ! -name 'hookbox*.timer' | sort) \
    > "$tmp/kept.want"
echo ./opt/hb/share/hookbox/local.conf >> "$tmp/kept.want"
sort -o "$tmp/kept.want" "$tmp/kept.want"
# shellcheck disable=SC2086
make -C "$top" uninstall $unvars > "$tmp/un.log" 2>&1
eq "make uninstall ($(tail -n 3 "$tmp/un.log"))" 0 $?
eq "uninstall leaves only the data and the operator's files" \
    "$(cat "$tmp/kept.want")" "$(cd "$un" && find . -type f | sort)"
eq "kept: the data files" "config.db state.db state.db-wal" \
    "$(ls "$un/var/lib/hookbox" | tr '\n' ' ' | sed 's/ $//')"
contains "uninstall says how to back the data up, WAL and all" \
    'sqlite3 DIR/state.db ".backup FILE"' "$(cat "$tmp/un.log")"
contains "uninstall says the data directory is kept" \
    "kept the data directory (/var/lib/hookbox" "$(cat "$tmp/un.log")"
contains "uninstall says a directory with other files is kept" \
    "$un/opt/hb/share/hookbox kept: not empty" "$(cat "$tmp/un.log")"
eq "uninstall: the presets directory is gone" "" \
    "$(find "$un" -path '*/share/hookbox/presets*')"
# Without the stray file, share/hookbox goes too: every directory left
# was there before install or is shared (bin, man1, ...).
rm "$un/opt/hb/share/hookbox/local.conf"
# shellcheck disable=SC2086
make -C "$top" uninstall $unvars > "$tmp/un.log" 2>&1
eq "make uninstall again" 0 $?
eq "uninstall again: no hookbox directory left" "" \
    "$(find "$un/opt" -name 'hookbox*')"
lacks "uninstall again: nothing kept" \
    "$un/opt/hb/share/hookbox kept" "$(cat "$tmp/un.log")"

# ---- systemd-analyze verify ----
# verify insists that ExecStart's program exists on this machine, and
# --root does not help (it then finds none of the system's own units,
# sysinit.target and the rest).  So each installed unit is verified as a
# copy whose ExecStart names the built program.  User=hookbox need not
# exist: verify does not look users up.  It also runs man for each page
# Documentation= cites: the installed pages, found on MANPATH.
if ! command -v systemd-analyze >/dev/null 2>&1; then
	fail "systemd-analyze not found (make deps installs systemd)"
	finish install
	exit
fi
mkdir "$tmp/verify"
for u in $units; do
	[ -f "$unitdir/$u" ] || continue
	sed "s|^ExecStart=/usr/bin/|ExecStart=$build/|" "$unitdir/$u" \
	    > "$tmp/verify/$u"
done
# verify EXPECT_STATUS EXPECT_STDERR(empty|some) UNIT
verify() {
	MANPATH="$dest/usr/share/man" systemd-analyze verify \
	    "$tmp/verify/$3" > "$tmp/out" 2> "$tmp/err"
	_rc=$?
	_err=$(cat "$tmp/err")
	if [ "$1" = 0 ]; then
		eq "verify $3 status ($_err)" 0 "$_rc"
	elif [ "$_rc" -ne 0 ]; then
		pass
	else
		fail "verify $3: succeeded, expected a failure"
	fi
	if [ "$2" = empty ]; then
		eq "verify $3 stderr" "" "$_err"
	elif [ -n "$_err" ]; then
		pass
	else
		fail "verify $3: said nothing, expected a complaint"
	fi
}
for u in $units; do
	[ -f "$tmp/verify/$u" ] || continue
	verify 0 empty "$u"
done

# The checks above can fail: a misspelt key is a warning on stderr, a
# program that is not there an error.
if [ -f "$tmp/verify/hookbox.service" ]; then
	sed 's/^ProtectHome=/ProtectHom=/' "$tmp/verify/hookbox.service" \
	    > "$tmp/verify/typo.service"
	verify 0 some typo.service
	sed "s|^ExecStart=$build/|ExecStart=$tmp/nowhere/|" \
	    "$tmp/verify/hookbox.service" > "$tmp/verify/missing.service"
	verify 1 some missing.service
fi

# ---- systemd-analyze security: each service rates 2.0 or lower ----
# --offline=true rates the unit file as written, with no manager running;
# --threshold=20 (tenths) exits non-zero above 2.0.  The rating printed
# is compared too, so that an option that stopped doing its part cannot
# pass a loose unit.
# rating UNIT: the N.N of "Overall exposure level for UNIT: N.N ...".
rating() {
	systemd-analyze security --offline=true --no-pager "$1" 2>/dev/null |
	    sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p'
}
# at_most WHAT LIMIT RATING
at_most() {
	if [ -n "$3" ] && awk -v r="$3" -v l="$2" 'BEGIN { exit !(r <= l) }'
	then
		pass
	else
		fail "$1: rated '$3', more than $2"
	fi
}
for u in hookbox.service hookbox-dispatch.service hookbox-poll.service \
    hookbox-registrar@.service; do
	[ -f "$unitdir/$u" ] || continue
	systemd-analyze security --offline=true --threshold=20 --no-pager \
	    "$unitdir/$u" > "$tmp/out" 2>&1
	_rc=$?
	eq "$u: security --threshold=20 ($(tail -n 1 "$tmp/out"))" 0 "$_rc"
	at_most "$u" 2.0 "$(rating "$unitdir/$u")"
done
# Both checks can fail: the responder without its system call filter
# and capability bounding set rates above 2.0.
if [ -f "$unitdir/hookbox.service" ]; then
	sed -e '/^SystemCallFilter=/d' -e '/^CapabilityBoundingSet=/d' \
	    "$unitdir/hookbox.service" > "$tmp/verify/loose.service"
	systemd-analyze security --offline=true --threshold=20 --no-pager \
	    "$tmp/verify/loose.service" > /dev/null 2>&1
	_rc=$?
	if [ "$_rc" -ne 0 ]; then pass; else fail "loose unit passed --threshold"; fi
	_r=$(rating "$tmp/verify/loose.service")
	if awk -v r="$_r" 'BEGIN { exit !(r > 2.0) }'; then
		pass
	else
		fail "loose unit: rated '$_r', expected more than 2.0"
	fi
fi

finish install
