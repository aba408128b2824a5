#!/bin/sh
# scripts/deb.sh OUTDIR [VERSION]: builds the Debian package,
# OUTDIR/hookbox_VERSION_ARCH.deb with its .buildinfo and .changes, with
# Debian's own tools (debian/, debhelper, dpkg-buildpackage -b), from a
# clean copy of the tree in OUTDIR/hookbox-VERSION: the files git tracks
# (or, outside a git checkout, the tree without its build directories).
# VERSION defaults to the programs' own (HB_VERSION in lib/base/hb.h),
# which debian/changelog, written here, gives the package.  Needs no
# root; `scripts/install-deps.sh deb` (or `make deps`, which installs
# what the tests need too) installs what it needs.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: deb.sh OUTDIR [VERSION]}
version=${2:-$(sed -n 's/^#define HB_VERSION[[:space:]]*"\(.*\)"$/\1/p' \
    "$top/lib/base/hb.h")}
case $version in
[0-9]*) ;;
*) echo "deb.sh: no version (lib/base/hb.h's HB_VERSION)" >&2; exit 1 ;;
esac
for c in dpkg-buildpackage dh; do
	command -v "$c" >/dev/null 2>&1 || {
		echo "deb.sh: $c not found (scripts/install-deps.sh deb" \
		    "installs it)" >&2
		exit 1
	}
done

mkdir -p "$out"
out=$(cd "$out" && pwd)
src=$out/hookbox-$version
rm -rf "$src"
mkdir "$src"
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	(cd "$top" && git ls-files -z) | (cd "$top" && xargs -0 tar -cf - --) |
	    tar -xf - -C "$src"
	date=$(git -C "$top" log -1 --format=%cD 2>/dev/null || date -R)
else
	(cd "$top" && tar -cf - --exclude='./build*' --exclude=./config.mk \
	    --exclude=./.git .) | tar -xf - -C "$src"
	date=$(date -R)
fi

# One entry, the version's: the project's history is its git log.
cat > "$src/debian/changelog" <<END
hookbox ($version) unstable; urgency=medium

  * hookbox $version.

 -- hookbox developers <hookbox@example.org>  $date
END

# Run from make, the package's own make would take the caller's
# variables (MAKEFLAGS); debian/rules names the build directory itself.
unset MAKEFLAGS MFLAGS MAKELEVEL
(cd "$src" && dpkg-buildpackage -b -us -uc) > "$out/build.log" 2>&1 || {
	tail -n 40 "$out/build.log" >&2
	echo "deb.sh: dpkg-buildpackage failed; its log: $out/build.log" >&2
	exit 1
}
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
echo "deb.sh: built $out/hookbox_${version}_$arch.deb"
