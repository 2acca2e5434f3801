#!/bin/sh
# Fetch Debian's Open vSwitch 4.0.0-2 source package that the series is
# based on (the upstream release tarball plus the debian/ directory, which
# upstream's Makefile.am includes) and verify both checksums.
#
# Order of sources:
#   1. $OVS_TARBALL, when set (an explicit tarball chosen by the user);
#   2. Debian's "openvswitch" 4.0.0-2 source package through the machine's
#      own apt configuration (a deb-src entry derived from its sources);
#   3. ../shared/cache/ beside the repository, as the last resort.
#
# $OVS_TARBALL replaces only the release tarball; the debian/ part still
# comes from apt or the cache.
#
# Usage: fetch-ovs.sh DESTDIR
#   -> DESTDIR/openvswitch_4.0.0.orig.tar.xz, openvswitch_4.0.0-2.debian.tar.xz
set -eu

OVS_VERSION=4.0.0
DEB_VERSION=4.0.0-2
ORIG=openvswitch_${OVS_VERSION}.orig.tar.xz
DEBTAR=openvswitch_${DEB_VERSION}.debian.tar.xz
SHA256=2b4d75ed077e94bc649ffbc9be5f9f822db82cf266c920cb3060f94db9d6d796
DEB_SHA256=951c7a76aca773bfab944ce8cf474e825ccf7ea6863807ec6d43380e80092f81

dest=${1:?usage: fetch-ovs.sh DESTDIR}
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$dest"

PREFIX=fetch-ovs
. "$top/scripts/deb-src.sh"

if have "$ORIG" && have "$DEBTAR"; then
    exit 0
fi

if [ -n "${OVS_TARBALL:-}" ]; then
    cp "$OVS_TARBALL" "$dest/$ORIG.tmp"
    if ! verify "$dest/$ORIG.tmp"; then
        echo "fetch-ovs: $OVS_TARBALL does not match the sha256 of" \
             "Open vSwitch $OVS_VERSION" >&2
        rm -f "$dest/$ORIG.tmp"
        exit 1
    fi
    mv "$dest/$ORIG.tmp" "$dest/$ORIG"
    echo "fetch-ovs: using $OVS_TARBALL"
fi

from_apt openvswitch "$DEB_VERSION" || from_cache "$DEB_VERSION" || {
    echo "fetch-ovs: could not obtain Open vSwitch $OVS_VERSION" \
         "(set OVS_TARBALL=/path/to/$ORIG)" >&2
    exit 1
}
