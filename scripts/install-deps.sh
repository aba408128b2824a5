#!/bin/sh
# scripts/install-deps.sh [-l] [run|deb|check]
# Installs the Debian packages hookbox needs: `run` what `make` and
# `make run` need (the compiler, the libraries, nginx, curl, and
# bash-completion, which loads what `make install` puts in COMPDIR), `deb`
# that and what `make deb` needs (dpkg-dev, build-essential, debhelper),
# `check` (the default) that and everything the tests use (Check,
# sqlite3, spawn-fcgi, systemd-analyze, groff, ...; systemd-container's
# systemd-nspawn and iproute2's ip for tests/e2e/units.sh, which boots the
# units in a container and gives its network a link-local address;
# chromium for tests/e2e/page.sh, which loads the status page in it;
# locales, whose sources tests/check.sh makes a German locale from, for a
# PostgreSQL server whose messages are not in English; lintian, which
# tests/e2e/deb.sh runs on the package).
# A no-op when everything is present.  Run as root (or with sudo on
# PATH).  -l prints the set's packages, one a line, and installs nothing.
set -eu

list=0
if [ "${1:-}" = -l ]; then
	list=1
	shift
fi
run_pkgs="gcc make pkg-config libc6-dev libsqlite3-dev libsodium-dev
libcjson-dev libcurl4-openssl-dev libfcgi-dev libpq-dev nginx curl
bash-completion"
deb_pkgs="$run_pkgs dpkg-dev build-essential debhelper"
check_pkgs="$deb_pkgs sqlite3 libfcgi-bin check spawn-fcgi procps
util-linux passwd debian-archive-keyring systemd groff-base postgresql
systemd-container iproute2 chromium locales faketime lintian"
case "${1:-check}" in
run) pkgs=$run_pkgs ;;
deb) pkgs=$deb_pkgs ;;
check) pkgs=$check_pkgs ;;
*)
	echo "usage: install-deps.sh [-l] [run|deb|check]" >&2
	exit 2
	;;
esac

if [ $list -eq 1 ]; then
	for p in $pkgs; do echo "$p"; done
	exit 0
fi

missing=""
for p in $pkgs; do
	# Any nginx build (nginx-light, -full, ...) will do, on PATH or in
	# /usr/sbin (which a user's PATH often lacks).
	if [ "$p" = nginx ] && { command -v nginx >/dev/null 2>&1 ||
	    [ -x /usr/sbin/nginx ]; }; then
		continue
	fi
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
	    grep -q 'install ok installed'; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

echo "installing:$missing"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
	if ! command -v sudo >/dev/null 2>&1; then
		echo "install-deps.sh: these packages are missing and installing" \
		    "them needs root (or sudo):$missing" >&2
		exit 1
	fi
	sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
