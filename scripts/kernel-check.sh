#!/bin/bash
# Run the series under another kernel: Debian's packaged kernel (by
# default bookworm's 6.1, the one linux-image-amd64 depends on) boots in a
# QEMU guest whose root file system is this machine's, shared read-only
# over virtio 9p, so the guest runs the same build and tools; only the
# kernel differs.  The guest (scripts/kernel-guest.sh) runs the demo and
# checks that the ports report the features that kernel lacks, and writes
# its logs to build/kernel/run.
#
#   kernel-check.sh OVS_TREE [PACKAGE]
#
# PACKAGE is a Debian kernel image package.  The guest runs under
# software emulation (TCG): KVM guests do not start on this machine.  A
# guest that has not finished after 10 minutes (it takes under one) is
# stopped and counts as one failure.
set -euo pipefail

OVS=$(cd "${1:?usage: kernel-check.sh OVS_TREE [PACKAGE]}" && pwd)
TOP=$(cd "$(dirname "$0")/.." && pwd)
KDIR=$TOP/build/kernel
RUN=$KDIR/run
pkg=${2:-}

# Results of an earlier run must not pass for this one's.
rm -rf "$RUN"
mkdir -p "$RUN"

# What only this check needs: the emulator, the guest's initramfs tools
# and depmod/modprobe for the kernel package's modules.
sh "$TOP/scripts/need-pkgs.sh" kernel-check qemu-system-x86 busybox-static \
    cpio kmod xz-utils

. "$TOP/scripts/guest-boot.sh"
guest_kernel "$KDIR" "" "$pkg" || {
    echo "kernel-check: cannot fetch the kernel package ${pkg:-linux-image-amd64}" >&2
    echo "0 passed, 1 failed"
    exit 1
}

echo "kernel-check: booting $(basename "$KROOT") ($KVER) under emulation"
if ! guest_boot "$RUN" "$TOP/scripts/kernel-guest.sh" 600; then
    echo "0 passed, 1 failed"
    exit 1
fi
cat "$RUN/summary"
exit "$(cat "$RUN/rc")"
