#!/bin/bash
# afxdp ports on real NIC drivers: a QEMU guest with emulated NICs whose
# Linux drivers have AF_XDP zero-copy, under Debian's newest kernel (sid's,
# else trixie-backports').  Each NIC model comes as a pair: QEMU gives
# each NIC 4 queue pairs through a multi-queue tap, and the two taps of a
# pair are cabled by a bridge in a network namespace of this machine that
# nothing else is in.  In the guest (scripts/nic-guest.sh) Open vSwitch
# runs afxdp ports on the first NIC of a pair and the second NIC is the
# remote host, in a namespace.
#
#   nic-check.sh OVS_TREE [quick]
#
# "quick" runs a representative part (make check runs it): zero-copy
# traffic between a virtio-net NIC and a veth port and one fault, the
# port's deletion under traffic.
# Models: virtio-net (driver virtio_net) and the 82576 (driver igb).  A
# model that cannot run here is reported as skipped, with the reason.
# The guest runs under software emulation (TCG), so what it checks is
# function, not speed: the rxdrop and l2fwd rates that the full run
# writes to build/nic/run/rates compare zero-copy with copy mode on the
# same emulated NIC, a sanity ratio only.  Writes build/nic/run; its checks are
# lines "ok: ...", "FAILED: ..." and "skipped: ...".
set -euo pipefail

OVS=$(cd "${1:?usage: nic-check.sh OVS_TREE [quick]}" && pwd)
QUICK=no
[ "${2:-}" = quick ] && QUICK=yes
TOP=$(cd "$(dirname "$0")/.." && pwd)
KDIR=$TOP/build/kernel
RUN=$TOP/build/nic/run
NS=afxdp-nic-cables

rm -rf "$RUN"
mkdir -p "$RUN"

sh "$TOP/scripts/need-pkgs.sh" nic-check qemu-system-x86 busybox-static \
    cpio kmod xz-utils socat ethtool
# The packet generator of the rates (full run): 64-byte UDP frames.
gcc -O2 -Wall -o "$RUN/afpacket-gen" "$TOP/scripts/bench-afpacket-gen.c"

. "$TOP/scripts/guest-boot.sh"
suite=
for s in sid trixie-backports; do
    if guest_kernel "$KDIR" "$s"; then
        suite=$s
        break
    fi
done
if [ -z "$suite" ]; then
    echo "nic-check: cannot fetch linux-image-amd64 from sid or" \
         "trixie-backports" >&2
    echo "0 passed, 1 failed"
    exit 1
fi

# The 82576 (igb, zero-copy since Linux 6.14) needs QEMU 8.0 or later, and
# this machine's (bookworm's) is 7.2: trixie's QEMU runs from a trixie root
# made with debootstrap in build/nic/trixie-root (once, about 360 MB), with
# its own libraries, modules and firmware (scripts/qemu-trixie.sh).  If
# that cannot be had, the guest runs under this machine's QEMU and the igb
# checks are reported as skipped.
QEMU=qemu-system-x86_64
troot=$TOP/build/nic/trixie-root
# The quick part runs under trixie's QEMU too: a second zero-copy socket
# on a virtio-net queue passes no traffic under 7.2's (see nic-guest.sh).
if [ "${NIC_CHECK_QEMU:-trixie}" = trixie ]; then
    if [ ! -x "$troot/usr/bin/qemu-system-x86_64" ]; then
        sh "$TOP/scripts/need-pkgs.sh" nic-check debootstrap
        rm -rf "$troot.new"
        echo "nic-check: making a trixie root with QEMU (debootstrap)"
        if debootstrap --variant=minbase --include=qemu-system-x86 trixie \
               "$troot.new" http://deb.debian.org/debian \
               > "$RUN/debootstrap.log" 2>&1; then
            mv "$troot.new" "$troot"
        else
            echo "nic-check: debootstrap failed (build/nic/run/debootstrap.log)"
            rm -rf "$troot.new"
        fi
    fi
    if [ -x "$troot/usr/bin/qemu-system-x86_64" ]; then
        QEMU="sh $TOP/scripts/qemu-trixie.sh $troot"
    fi
fi
qemu_version=$($QEMU --version 2>/dev/null \
               | sed -n 's/.*version \([0-9.]*\).*/\1/p;q')
MODELS=virtio
if [ $QUICK = yes ]; then
    :
elif [ "${qemu_version%%.*}" -ge 8 ] 2>/dev/null; then
    MODELS="virtio igb"
else
    echo "skipped: igb zero-copy: all checks -- QEMU ${qemu_version:-?}" \
         "has no igb device (QEMU 8.0 or later)" >> "$RUN/checks"
fi

cleanup() {
    ip netns del "$NS" 2>/dev/null || true
}
trap cleanup EXIT
cleanup
ip netns add "$NS"
ip -n "$NS" link set lo up

# cable NAME TAP0 TAP1 [multi_queue]: two taps joined by bridge NAME, with
# room for jumbo frames.
cable() {
    ip -n "$NS" link add "$1" type bridge forward_delay 0 stp_state 0
    ip -n "$NS" link set "$1" mtu 9000
    for t in "$2" "$3"; do
        ip -n "$NS" tuntap add dev "$t" mode tap ${4:-}
        ip -n "$NS" link set "$t" mtu 9000 master "$1" up
    done
    ip -n "$NS" link set "$1" up
}
cable cable-v vtap0 vtap1 multi_queue
cable cable-i itap0 itap1

# The guest asks for QEMU monitor commands (link up and down) through
# RUN/monitor-request; the answer goes to RUN/monitor-reply.
monitor_loop() {
    while kill -0 "$1" 2>/dev/null; do
        if [ -s "$RUN/monitor-request" ]; then
            cmd=$(cat "$RUN/monitor-request")
            rm -f "$RUN/monitor-request"
            echo "$cmd" | socat - UNIX-CONNECT:"$RUN/monitor.sock" \
                > "$RUN/monitor-reply.tmp" 2>&1
            mv "$RUN/monitor-reply.tmp" "$RUN/monitor-reply"
        fi
        sleep 0.2
    done
}

# virtio ID TAP MAC SLOT: a virtio-net NIC with 4 queue pairs on TAP.  The
# full run spreads flows by QEMU's software RSS (its RSS check needs it:
# without it flows follow the tap's own queue choice, which put all 32
# flows on one queue in one run here).  The quick run, in make check, goes
# without it, each tap queue feeding its own queue: QEMU's RSS can stop a
# tap queue for good when it sends a packet to a queue that an AF_XDP bind
# is resetting (see "Drivers tested" in the guide).  iommu_platform:
# virtio_net maps AF_XDP zero-copy buffers through the DMA API, which it
# uses only then.
VIRTIO_RSS=on
[ "$QUICK" = no ] || VIRTIO_RSS=off
virtio() {
    echo "-netdev tap,id=$1,ifname=$2,script=no,downscript=no,vhost=off,queues=4"
    echo "-device virtio-net-pci,netdev=$1,mac=$3,addr=$4,mq=on,vectors=10,rss=$VIRTIO_RSS,disable-legacy=on,iommu_platform=on"
}

# igb ID TAP MAC SLOT: an 82576 on TAP (QEMU's model spreads over its
# queues by RSS itself).  Its 8 virtual functions take the two slots 16
# further on (slots stop at 31): the slots are given, so that no other
# device lands there.
igb() {
    echo "-netdev tap,id=$1,ifname=$2,script=no,downscript=no,vhost=off"
    echo "-device igb,netdev=$1,mac=$3,addr=$4"
}

nics="$(virtio v0 vtap0 52:54:00:a0:00:01 0x0c)"
nics="$nics $(virtio v1 vtap1 52:54:00:a0:00:02 0x0d)"
case $MODELS in
*igb*) nics="$nics $(igb i0 itap0 52:54:00:b0:00:01 0x08)"
       nics="$nics $(igb i1 itap1 52:54:00:b0:00:02 0x0a)" ;;
esac

echo "nic-check: booting $(basename "$KROOT") ($KVER, $suite) under" \
     "emulation, QEMU $qemu_version, models: $MODELS"
(
    sleep 1
    while ! [ -S "$RUN/monitor.sock" ]; do sleep 0.2; done
    monitor_loop "$(pgrep -f "qemu-system.*monitor.sock" | head -n 1)"
) &
GUEST_WRAP="ip netns exec $NS" GUEST_QEMU=$QEMU \
GUEST_ENV="QUICK=$QUICK
QEMU_MAJOR=${qemu_version%%.*}
MODELS='$MODELS'" \
guest_boot "$RUN" "$TOP/scripts/nic-guest.sh" 3000 $nics \
    -monitor unix:"$RUN/monitor.sock",server,nowait || {
    echo "0 passed, 1 failed"
    exit 1
}
cat "$RUN/summary"
exit "$(cat "$RUN/rc")"
