#!/bin/sh
# Build the assembled tree a second time, in build/asan, instrumented with
# AddressSanitizer and UndefinedBehaviorSanitizer.  The tree is a worktree
# of build/ovs checked out at the same commit; later runs are incremental.
set -eu
ovs=$(cd "$1" && pwd)
mkdir -p "$(dirname "$2")"; asan=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
jobs=${3:-2}

if [ ! -d "$asan/.git" ] && [ ! -f "$asan/.git" ]; then
    git -C "$ovs" worktree prune
    git -C "$ovs" worktree add -q --detach "$asan" HEAD
else
    git -C "$asan" checkout -q --detach "$(git -C "$ovs" rev-parse HEAD)"
fi
# Only debian/automake.mk is tracked; the rest of debian/ is what the
# build's Makefile lists.
cp -rn "$ovs/debian/." "$asan/debian/"
cd "$asan"
if [ ! -f Makefile ]; then
    # debian/automake.mk is tracked; the rest of debian/ is not needed.
    ./boot.sh >/dev/null
    ./configure -q --enable-afxdp PYTHON3=/usr/bin/python3 \
        --localstatedir=/var --sysconfdir=/etc \
        CFLAGS="-g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined" \
        LDFLAGS="-fsanitize=address,undefined"
fi
make -s -j"$jobs" V=0 all tests/atlocal
