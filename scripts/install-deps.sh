#!/bin/sh
# Installs the Debian packages hookbox needs to build, test and run.
# A no-op when everything is present.  Run as root (or with sudo on PATH).
set -eu

pkgs="gcc make pkg-config libc6-dev sqlite3 libsqlite3-dev libsodium-dev
libcjson-dev libcurl4-openssl-dev libfcgi-dev libfcgi-bin check nginx
spawn-fcgi curl procps util-linux passwd dpkg-dev debian-archive-keyring
systemd groff-base postgresql libpq-dev"

missing=""
for p in $pkgs; do
	# Any nginx build (nginx-light, -full, ...) will do.
	if [ "$p" = nginx ] && command -v nginx >/dev/null 2>&1; then
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
[ "$(id -u)" -eq 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
