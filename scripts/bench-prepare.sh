#!/bin/bash
# What the benchmark needs besides this series' build, each built or
# fetched once and cached under build/:
#   upstream/    the pristine 4.0.0 tree built with --enable-afxdp;
#   xdp-tools/   xdp-trafficgen and xdp-bench, from Debian's xdp-tools
#                1.6.3 source (bookworm's 1.3.1 fails on recent kernels);
#   dpdk-ovs/    Debian's openvswitch-switch-dpdk (OVS 3.1 + DPDK 22.11),
#                unpacked, not installed: no service of it is started;
# and 1 GiB of 2 MiB hugepages for it.
set -euo pipefail

build=$(cd "${1:?usage: bench-prepare.sh BUILD_DIR}" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
export DEBIAN_FRONTEND=noninteractive

need_pkgs() {
    local missing=""
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null \
            | grep -q "install ok installed" || missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        echo "bench: installing$missing" >&2
        apt-get install -y -q --no-install-recommends $missing >/dev/null
    fi
}

# libxdp-dev: upstream's afxdp, which the series no longer needs.
need_pkgs bpftool libpcap-dev libxdp-dev m4 python3-matplotlib linux-perf iperf3 \
    librte-eal23 librte-ethdev23 librte-mbuf23 librte-mempool23 \
    librte-meter23 librte-vhost23 librte-net-af-xdp23 librte-mempool-ring23

# Upstream's afxdp: the base commit of build/ovs, built on its own.
if [ ! -x "$build/upstream/vswitchd/ovs-vswitchd" ]; then
    echo "bench: building pristine Open vSwitch 4.0.0 (upstream afxdp)" >&2
    rm -rf "$build/upstream"
    git clone -q --no-checkout "$build/ovs" "$build/upstream"
    git -C "$build/upstream" checkout -q base
    tar -xJf "$build/dl/openvswitch_4.0.0-2.debian.tar.xz" -C "$build/upstream"
    (cd "$build/upstream" && ./boot.sh >/dev/null \
     && ./configure -q --enable-afxdp PYTHON3=/usr/bin/python3 \
     && make -s -j2 V=0 >/dev/null)
fi

# xdp-tools.
if [ ! -x "$build/xdp-tools/xdp-trafficgen/xdp-trafficgen" ]; then
    echo "bench: building xdp-tools 1.6.3" >&2
    work=$(mktemp -d)
    if ! (cd "$work" && apt-get source -q --download-only \
              xdp-tools=1.6.3-1 >/dev/null 2>&1); then
        cp "$top/../shared/cache/xdp-tools_1.6.3.orig.tar.gz" "$work/"
    fi
    echo "78da363ff7dcf1a586f47800f16d644022bd33f3844864061a44616fce854fd8  $work/xdp-tools_1.6.3.orig.tar.gz" \
        | sha256sum -c --status -
    rm -rf "$build/xdp-tools"
    mkdir -p "$build/xdp-tools"
    tar -xzf "$work/xdp-tools_1.6.3.orig.tar.gz" -C "$build/xdp-tools" \
        --strip-components=1
    rm -rf "$work"
    (cd "$build/xdp-tools" && ./configure >/dev/null && make -s >/dev/null)
fi

# OVS-DPDK, unpacked.
if [ ! -x "$build/dpdk-ovs/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk" ]; then
    echo "bench: unpacking openvswitch-switch-dpdk" >&2
    work=$(mktemp -d)
    (cd "$work" && apt-get download -q openvswitch-switch-dpdk \
                                      openvswitch-common \
                                      openvswitch-switch >/dev/null 2>&1)
    rm -rf "$build/dpdk-ovs"
    for deb in "$work"/*.deb; do
        dpkg -x "$deb" "$build/dpdk-ovs"
    done
    rm -rf "$work"
fi

# Hugepages for DPDK.
if [ "$(cat /proc/sys/vm/nr_hugepages)" -lt 512 ]; then
    echo 512 > /proc/sys/vm/nr_hugepages
fi
if ! mountpoint -q /dev/hugepages 2>/dev/null; then
    mkdir -p /dev/hugepages
    mount -t hugetlbfs nodev /dev/hugepages
fi
