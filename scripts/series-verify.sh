#!/bin/bash
# Check that the exported series applies with "git am" to the pristine
# Open vSwitch 4.0.0 tree and that the result configures and builds.
set -euo pipefail

build=$(cd "${1:?usage: series-verify.sh BUILD_DIR}" && pwd)
tree=$build/series-verify
rm -rf "$tree"
git clone -q --no-checkout "$build/ovs" "$tree"
cd "$tree"
git checkout -q -b verify base
# The pristine tree is the unpacked source package: the base commit tracks
# only debian/automake.mk of its debian/ directory, the rest comes from the
# package as it does in build/ovs.
tar -xJf "$build/dl/openvswitch_4.0.0-2.debian.tar.xz" -C "$tree"
git -c user.name=verify -c user.email=verify@localhost \
    am -q $(ls "$build"/series/*.patch | grep -v '/0000-cover-letter')
echo "series-verify: $(git rev-list --count base..HEAD) patches applied to" \
     "pristine 4.0.0 with git am"
./boot.sh >/dev/null
./configure -q --enable-afxdp PYTHON3=/usr/bin/python3
make -s -j2 V=0 >/dev/null
echo "series-verify: the patched tree builds"
