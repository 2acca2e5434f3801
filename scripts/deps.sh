#!/bin/sh
# Install, from Debian's packages, whatever the build, the demo and the
# tests need and the machine lacks.  Safe to run again: it installs only
# what is missing.
set -eu

# Build: autotools, compiler, the libraries OVS and AF_XDP link against,
# clang/llvm for the BPF program.
BUILD_PKGS="autoconf automake libtool make gcc pkg-config python3
  libbpf-dev libelf-dev zlib1g-dev libssl-dev libcap-ng-dev
  libnuma-dev libunbound-dev clang llvm git xz-utils dpkg-dev
  python3-sortedcontainers"
# Run and test: namespaces, veths and the tools upstream's system tests
# look for (they skip a test when one is missing).
RUN_PKGS="iproute2 ethtool iputils-ping netcat-openbsd tcpdump curl wget
  iptables lftp python3-pyftpdlib procps psmisc"

missing=""
for p in $BUILD_PKGS $RUN_PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null \
         | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done

[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
    echo "deps: missing packages:$missing (run as root to install them)" >&2
    exit 1
fi
echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends $missing >/dev/null
