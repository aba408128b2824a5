#!/bin/sh
# scripts/nginx-conf.sh PREFIX PORT SOCKET DATADIR
# Renders nginx/run.conf.in and the site snippet nginx/hookbox.conf into
# PREFIX, pointing the snippet at SOCKET and DATADIR.  An empty DATADIR
# (a responder on PostgreSQL) drops the HOOKBOX_DIR cross-check.  Prints
# the path of the main configuration file.
set -eu
prefix=$1 port=$2 sock=$3 data=$4
top=$(cd "$(dirname "$0")/.." && pwd)

mkdir -p "$prefix/tmp" "$prefix/status"
# A root master would hand requests to "nobody" workers that cannot
# reach the socket; keep them as the invoking user.
user=""
[ "$(id -u)" -eq 0 ] && user="user root;"
sed -e "s|@PREFIX@|$prefix|g" -e "s|@PORT@|$port|g" -e "s|@USER@|$user|g" \
    "$top/nginx/run.conf.in" > "$prefix/nginx.conf"
if [ -n "$data" ]; then
	datafix="s|/var/lib/hookbox|$data|g"
else
	datafix="/fastcgi_param HOOKBOX_DIR /d"
fi
sed -e "s|unix:/run/hookbox/hookbox.sock|unix:$sock|g" \
    -e "$datafix" \
    -e "s|include fastcgi_params;|include $prefix/fastcgi_params;|" \
    "$top/nginx/hookbox.conf" > "$prefix/hookbox.conf"
cp /etc/nginx/fastcgi_params "$prefix/fastcgi_params"
echo "$prefix/nginx.conf"
