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

verify() {
    case $1 in
    *.debian.tar.xz) sum=$DEB_SHA256 ;;
    *) sum=$SHA256 ;;
    esac
    echo "$sum  $1" | sha256sum -c --status -
}

have() {
    [ -f "$dest/$1" ] && verify "$dest/$1"
}

have "$ORIG" && have "$DEBTAR" && exit 0

PREFIX=fetch-ovn
. "$top/scripts/deb-src.sh"

from_apt() {
    command -v apt-get >/dev/null 2>&1 || return 1
    add_deb_src || return 1
    work=$(mktemp -d)
    if (cd "$work" && apt-get source -q --download-only "ovn=$DEB_VERSION") \
            >"$work/log" 2>&1 \
       && verify "$work/$ORIG" && verify "$work/$DEBTAR"; then
        mv "$work/$ORIG" "$work/$DEBTAR" "$dest/"
        rm -rf "$work"
        echo "fetch-ovn: fetched ovn $DEB_VERSION with apt-get source"
        return 0
    fi
    sed 's/^/fetch-ovn: apt: /' "$work/log" | tail -n 3 >&2
    rm -rf "$work"
    return 1
}

from_cache() {
    for f in $ORIG $DEBTAR; do
        have "$f" && continue
        cache=$top/../shared/cache/$f
        [ -f "$cache" ] && verify "$cache" || return 1
        cp "$cache" "$dest/$f"
    done
    echo "fetch-ovn: the mirror lacks $DEB_VERSION; used ../shared/cache"
}

from_apt || from_cache || {
    echo "fetch-ovn: could not obtain OVN $DEB_VERSION" >&2
    exit 1
}
