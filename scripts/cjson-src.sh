#!/bin/sh
# scripts/cjson-src.sh DIR MK: Debian's cJSON source for the sanitizer and
# fuzz builds, so that ASan, UBSan and libFuzzer see inside the JSON
# parser instead of calling the system's uninstrumented libcjson.
#
# Fetches the source package once into DIR and writes the make fragment
# MK: CJSON_SRC names DIR/src/cJSON.c, or is empty when the source cannot
# be had, with a warning that says why (the builds then link libcjson).
# Never fails the build.  Remove MK to try again; remove DIR to fetch again.
#
# The fetch is `apt-get source` with a private deb-src list and private
# state under DIR/apt: the system's apt configuration is not touched and
# root is not needed.  apt checks the archive's InRelease signature
# against debian-archive-keyring, then each downloaded file's hash (the
# .dsc, the upstream tarball, Debian's patches) against the signed Sources
# index, and refuses a mismatch; only then does dpkg-source unpack it and
# apply Debian's patches (the security fixes).  The version is the
# installed libcjson-dev's when the archive still has it (the header the
# other builds compile against), else the newest of the release.
set -u

dir=${1:?usage: cjson-src.sh DIR MK}
mk=${2:?usage: cjson-src.sh DIR MK}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

fragment() {
	mkdir -p "$(dirname "$mk")"
	printf '# Written by scripts/cjson-src.sh; remove to run it again.\n' \
	    > "$mk.tmp"
	if [ -n "$1" ]; then
		printf 'CJSON_SRC = %s\nCJSON_VERSION = %s\n' "$1" "$2" \
		    >> "$mk.tmp"
		echo "cjson-src: cJSON $2 from Debian's source package in $dir"
	else
		# Make syntax: keep the reason free of $, # and parentheses.
		why=$(printf '%s' "$2" | tr -d '$#()' | tr '\n' ' ')
		printf 'CJSON_SRC =\n$(warning cJSON source unavailable: %s;' \
		    "$why" >> "$mk.tmp"
		printf ' the sanitizer and fuzz builds link the system'"'"'s' \
		    >> "$mk.tmp"
		printf ' uninstrumented libcjson. Remove %s to try again.)\n' \
		    "$mk" >> "$mk.tmp"
		echo "cjson-src: $why" >&2
	fi
	mv "$mk.tmp" "$mk"
	exit 0
}

# Fetched before: use it as it is.
if [ -f "$dir/src/cJSON.c" ] && [ -f "$dir/src/cJSON.h" ] &&
    [ -s "$dir/src/VERSION" ]; then
	fragment "$dir/src/cJSON.c" "$(cat "$dir/src/VERSION")"
fi

for c in apt-get dpkg-source dpkg-query; do
	command -v "$c" >/dev/null 2>&1 ||
	    fragment "" "$c not found: not a Debian system"
done
[ -r "$keyring" ] || fragment "" "$keyring missing"
codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
[ -n "$codename" ] || fragment "" "no VERSION_CODENAME in /etc/os-release"

mkdir -p "$dir" && abs=$(cd "$dir" && pwd) || fragment "" "cannot create $dir"
apt="$abs/apt"
rm -rf "$apt" "$abs/unpack"
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/parts" \
    "$abs/unpack" || fragment "" "cannot create $dir"
# The machine's own Debian mirrors, as deb-src: the same archive, the same
# signing keys, whatever proxy or mirror the operator chose.
: > "$apt/sources.list"
for f in /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] && grep -q "Signed-By: $keyring" "$f" || continue
	sed 's/^Types: deb$/Types: deb-src/' "$f" > "$apt/parts/$(basename "$f")"
done
if [ -f /etc/apt/sources.list ]; then
	sed -n "s|^deb \(\[[^]]*\] \)\{0,1\}|deb-src [signed-by=$keyring] |p" \
	    /etc/apt/sources.list > "$apt/sources.list"
fi
[ -s "$apt/sources.list" ] || ls "$apt/parts"/*.sources >/dev/null 2>&1 ||
    fragment "" "no Debian archive in the system's apt sources"

# As root apt would hand downloads to the _apt user, who cannot write
# here; running them as whoever runs this changes nothing else.
set -- -q -o Dir::Etc::SourceList="$apt/sources.list" \
    -o Dir::Etc::SourceParts="$apt/parts" -o Dir::State::Lists="$apt/lists" \
    -o Dir::Cache="$apt/cache" -o Acquire::Retries=1 \
    -o Acquire::http::Timeout=30 -o APT::Sandbox::User="$(id -un)"

echo "cjson-src: fetching Debian's source index for $codename"
if ! apt-get "$@" --error-on=any update > "$dir/apt.log" 2>&1; then
	fragment "" "apt-get update failed, see $dir/apt.log"
fi
want=$(dpkg-query -W -f='${source:Version}' libcjson-dev 2>/dev/null)
(
	cd "$abs/unpack" || exit 1
	{ [ -n "$want" ] && apt-get "$@" source "cjson=$want"; } ||
	    apt-get "$@" source cjson
) >> "$dir/apt.log" 2>&1 ||
    fragment "" "apt-get source cjson failed, see $dir/apt.log"

src=$(find "$dir/unpack" -mindepth 2 -maxdepth 2 -name cJSON.c | head -n 1)
[ -n "$src" ] && [ -f "$(dirname "$src")/cJSON.h" ] ||
    fragment "" "no cJSON.c in the source package"
ver=$(sed -n 's/^Version: //p' "$dir"/unpack/cjson_*.dsc | head -n 1)
[ -n "$ver" ] || fragment "" "no version in the .dsc"
mkdir -p "$dir/src" &&
    cp "$src" "$(dirname "$src")/cJSON.h" "$dir/src/" &&
    printf '%s\n' "$ver" > "$dir/src/VERSION" ||
    fragment "" "cannot copy the source into $dir/src"
rm -rf "$dir/unpack" "$apt"
fragment "$dir/src/cJSON.c" "$ver"
