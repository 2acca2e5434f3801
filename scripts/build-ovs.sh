#!/bin/sh
# Configure (once) and build the assembled tree.  Later runs are incremental:
# make rebuilds what changed, automake's rules regenerate what the series'
# edits to Makefile.am or configure.ac require.
set -eu
ovs=$1
jobs=${2:-2}
cd "$ovs"
if [ ! -f Makefile ]; then
    ./boot.sh >/dev/null
    # The distribution's python3, whatever python3 comes first in PATH: the
    # tests' helpers import modules installed from Debian's packages.
    ./configure -q --enable-afxdp PYTHON3=/usr/bin/python3 \
        --localstatedir=/var --sysconfdir=/etc
fi
# tests/atlocal too, which the tests read and "make all" leaves as it was
# when atlocal.in changes.
make -s -j"$jobs" V=0 all tests/atlocal
