#!/bin/bash
# Build OVN 26.03.1 (Debian's source package) against the series' Open
# vSwitch tree, for make check-ovn: build/ovn, OVN's own tree with the
# patches of ovn/patches applied and the files of ovn/tests added.
#
# Usage: build-ovn.sh OVS_TREE    (exit status 77: OVN's source could not
#                                  be fetched)
#
# The tree is made again from the tarballs when the patches change;
# otherwise OVN's make runs again (incremental), and the test files are
# refreshed.  The tests run the Open vSwitch programs of OVS_TREE itself.
set -euo pipefail

OVS=$(cd "${1:?usage: build-ovn.sh OVS_TREE}" && pwd)
TOP=$(cd "$(dirname "$0")/.." && pwd)
DIR=$TOP/build/ovn
DL=$TOP/build/dl

# OVN's build dependencies, and the tools its tests skip or fail without:
# ncat, scapy, tcpdump, dhcpd and dhclient, iputils' arping (the one they
# call the way they do), nfcapd and nfdump, lftp, xxd, nft.
sh "$TOP/scripts/need-pkgs.sh" build-ovn libcap-ng-dev libssl-dev \
    libunbound-dev python3-scapy python3-sortedcontainers tcpdump ncat \
    isc-dhcp-server isc-dhcp-client iputils-arping nfdump lftp xxd nftables
# Exit status 77: the source is nowhere to be had (sid moves on); the
# caller reports the suite skipped, not failed.
sh "$TOP/scripts/fetch-ovn.sh" "$DL" || exit 77

stamp=$( (echo "$OVS"; cat "$TOP"/ovn/patches/*.patch) | sha256sum | cut -c1-16)
if [ "$(cat "$DIR/.afxdp-stamp" 2>/dev/null)" != "$stamp" ]; then
    echo "build-ovn: unpacking OVN into $DIR"
    rm -rf "$DIR"
    mkdir -p "$DIR"
    tar -xJf "$DL/ovn_26.03.1.orig.tar.xz" -C "$DIR" --strip-components=1
    tar -xJf "$DL/ovn_26.03.1-1.debian.tar.xz" -C "$DIR"
    for p in "$TOP"/ovn/patches/*.patch; do
        patch -d "$DIR" -p1 -s < "$p"
    done
    (cd "$DIR" && ./boot.sh >/dev/null 2>&1 \
        && ./configure -q --with-ovs-source="$OVS" >/dev/null)
    echo "$stamp" > "$DIR/.afxdp-stamp"
fi

# The series' test files, and the skip script of its Open vSwitch tests,
# which reads the list beside it.
for f in "$TOP"/ovn/tests/* "$TOP/tests/system-afxdp-skip.sh"; do
    if ! cmp -s "$f" "$DIR/tests/$(basename "$f")"; then
        cp "$f" "$DIR/tests/"
        rm -f "$DIR/tests/system-afxdp-testsuite"
    fi
done
make -s -C "$DIR" -j"$(nproc)" >/dev/null
# OVN's tests take "nc" to be nmap's ncat (-c, -d): theirs comes first on
# their PATH, whichever netcat the machine calls nc.
ln -sf "$(command -v ncat)" "$DIR/tests/nc"
# OVN's rule for its system-userspace suite makes ours too, from its .at.
make -s -C "$DIR" tests/atlocal tests/system-userspace-testsuite >/dev/null
make -s -C "$DIR" tests/system-afxdp-testsuite \
    SYSTEM_USERSPACE_TESTSUITE=tests/system-afxdp-testsuite >/dev/null
echo "build-ovn: OVN built in $DIR against $OVS"
