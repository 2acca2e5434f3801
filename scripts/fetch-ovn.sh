#!/bin/sh
# Fetch Debian's OVN 26.03.1-1 source package (the release tarball and the
# debian/ directory, which OVN's Makefile.am includes) for make check-ovn,
# and verify both checksums.
#
# Order of sources: Debian's "ovn" source package through the machine's
# own apt configuration (the deb-src entry of scripts/deb-src.sh), then
# ../shared/cache/ beside the repository.
#
# Usage: fetch-ovn.sh DESTDIR
#   -> DESTDIR/ovn_26.03.1.orig.tar.xz, ovn_26.03.1-1.debian.tar.xz
set -eu

DEB_VERSION=26.03.1-1
ORIG=ovn_26.03.1.orig.tar.xz
DEBTAR=ovn_${DEB_VERSION}.debian.tar.xz
SHA256=70c0e248107045c374fd98fcad4c81712b029367f79a88138e3850794ec937ed
DEB_SHA256=8b94779288c0b3eefbacb641dc056db7cca062793072fbf205b0c2d122e40523

dest=${1:?usage: fetch-ovn.sh DESTDIR}
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$dest"

PREFIX=fetch-ovn
. "$top/scripts/deb-src.sh"

have "$ORIG" && have "$DEBTAR" && exit 0

from_apt ovn "$DEB_VERSION" || from_cache "$DEB_VERSION" || {
    echo "fetch-ovn: could not obtain OVN $DEB_VERSION" >&2
    exit 1
}
