#!/bin/bash
# make deb: Debian's openvswitch 4.0.0-2 source package with this series
# added as quilt patches (debian/patches/), built into the usual binary
# packages in build/deb/.
#
# The packaging itself changes only where Debian bookworm needs it
# (patches/debian-bookworm.patch): no DPDK variant, since bookworm's DPDK
# is older than Open vSwitch 4.0 needs; no libxdp-dev, which the series
# does not use; clang, which builds the XDP program; and --enable-afxdp, so that a
# build without AF_XDP fails rather than quietly leaves the port type out.
# The package's own tests are skipped (nocheck): "make check" runs the
# series' tests.
#
# Skips the build when build/deb/ already holds the packages of the same
# series and packaging.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$TOP/build
OVS=$BUILD/ovs
DEB=$BUILD/deb
ORIG=$BUILD/dl/openvswitch_4.0.0.orig.tar.xz
DEBTAR=$BUILD/dl/openvswitch_4.0.0-2.debian.tar.xz
VERSION=4.0.0-2+afxdp1

# Build dependencies of the package that the series' own build lacks.
PKGS="debhelper dh-exec dh-python python3-sphinx graphviz python3-netaddr
  architecture-properties python3-all-dev python3-setuptools
  python3-pyparsing python3-sortedcontainers libdbus-1-dev libpcap-dev
  openssl pkgconf iproute2 procps bzip2"
# shellcheck disable=SC2086
sh "$TOP/scripts/need-pkgs.sh" deb $PKGS

key="$(git -C "$OVS" rev-parse HEAD) $(sha256sum < "$TOP/patches/debian-bookworm.patch" | cut -c1-16) $VERSION"
if [ -f "$DEB/key" ] && [ "$(cat "$DEB/key")" = "$key" ] \
   && ls "$DEB"/openvswitch-switch_*.deb >/dev/null 2>&1; then
    echo "deb: build/deb/ is up to date ($VERSION):"
    ls "$DEB"/*.deb | xargs -n1 basename
    exit 0
fi

rm -rf "$DEB"
src=$DEB/src/openvswitch-4.0.0
mkdir -p "$src"
tar -xJf "$ORIG" -C "$src" --strip-components=1
tar -xJf "$DEBTAR" -C "$src"
cp "$ORIG" "$DEB/src/"

# The packaging changes for bookworm, then the series as quilt patches
# (git format-patch output applies with patch -p1, as quilt does).
(cd "$src" && patch -s -p1 < "$TOP/patches/debian-bookworm.patch")
git -C "$OVS" format-patch -q --no-signature -o "$src/debian/patches" \
    base..HEAD
(cd "$src/debian/patches" && ls 0*.patch > series)
n=$(wc -l < "$src/debian/patches/series")

{
    printf 'openvswitch (%s) UNRELEASED; urgency=medium\n\n' "$VERSION"
    printf '  * AF_XDP port type of ovs-afxdp: %s patches in debian/patches.\n' "$n"
    printf '  * Built for Debian bookworm: no openvswitch-switch-dpdk, no\n'
    printf '    libxdp-dev, clang for the XDP program, --enable-afxdp.\n\n'
    printf ' -- ovs-afxdp <ovs-afxdp@localhost>  %s\n\n' "$(date -R)"
    cat "$src/debian/changelog"
} > "$src/debian/changelog.new"
mv "$src/debian/changelog.new" "$src/debian/changelog"

echo "deb: building openvswitch $VERSION ($n series patches) in build/deb/src"
start=$(date +%s)
if ! (cd "$src" && dpkg-checkbuilddeps \
      && DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" \
         dpkg-buildpackage -b -uc -us) > "$DEB/build.log" 2>&1; then
    tail -n 40 "$DEB/build.log" >&2
    echo "deb: FAILED, see build/deb/build.log" >&2
    exit 1
fi
mv "$DEB"/src/*.deb "$DEB"/
echo "deb: built in $(( $(date +%s) - start )) s:"
ls "$DEB"/*.deb | xargs -n1 basename
echo "$key" > "$DEB/key"
