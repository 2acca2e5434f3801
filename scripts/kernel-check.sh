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
    cpio kmod

# The image linux-image-amd64 depends on (apt's lists may be missing on a
# fresh machine: then they are fetched first).
default_image() {
    apt-cache depends linux-image-amd64 2>/dev/null \
        | awk '/Depends: linux-image-[0-9]/ { print $2; exit }'
}
if [ -z "$pkg" ]; then
    pkg=$(default_image)
fi
if [ -z "$pkg" ]; then
    apt-get update -q >/dev/null
    pkg=$(default_image)
fi
deb=$(ls "$KDIR"/"$pkg"_*.deb 2>/dev/null | tail -n 1 || true)
if [ -z "$deb" ]; then
    (cd "$KDIR" && apt-get download "$pkg" >/dev/null 2>&1) || {
        apt-get update -q >/dev/null
        (cd "$KDIR" && apt-get download "$pkg" >/dev/null)
    }
    deb=$(ls "$KDIR"/"$pkg"_*.deb | tail -n 1)
fi
kroot=$KDIR/$pkg
if [ ! -d "$kroot/lib/modules" ]; then
    rm -rf "$kroot"
    dpkg-deb -x "$deb" "$kroot"
fi
kver=$(ls "$kroot/lib/modules")
if [ ! -e "$kroot/lib/modules/$kver/modules.dep" ]; then
    depmod -b "$kroot" "$kver"
fi

# The initramfs: busybox, the modules that reach the shared root, and an
# init that mounts it and switches to it.
# (Made anew each run: it takes a second, and follows this script.)
initrd=$KDIR/initrd-$kver.gz
ird=$KDIR/initramfs
rm -rf "$ird"
mkdir -p "$ird"/{bin,dev,proc,sys,newroot,mods}
cp /bin/busybox "$ird/bin/busybox"
: > "$ird/mods/order"
for m in $(modprobe -d "$kroot" -S "$kver" --show-depends \
               -a virtio_pci 9pnet_virtio 9p | awk '$1 == "insmod" { print $2 }'); do
    base=$(basename "$m")
    grep -qx "$base" "$ird/mods/order" && continue
    cp "$m" "$ird/mods/$base"
    echo "$base" >> "$ird/mods/order"
done
cat > "$ird/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
arg() { sed -n "s/.*afxdp\.$1=\([^ ]*\).*/\1/p" /proc/cmdline; }
for m in $(cat /mods/order); do insmod /mods/$m; done
opts=trans=virtio,version=9p2000.L,msize=262144
mount -t 9p -o $opts,ro,cache=loose host /newroot
# The one writable share, at a path no tmpfs of the guest covers.
mount -t 9p -o $opts kernelrun /newroot/mnt
guest=$(arg guest)
umount /proc /sys /dev
exec switch_root /newroot /bin/bash $guest
EOF
chmod +x "$ird/init"
(cd "$ird" && find . | cpio -o -H newc --quiet | gzip -1) > "$initrd"

cat > "$RUN/env" <<EOF
OVS=$OVS
TOP=$TOP
KROOT=$kroot

EOF

echo "kernel-check: booting $pkg ($kver) under emulation"
timeout 600 qemu-system-x86_64 \
    -accel tcg,thread=multi -cpu max -smp 2 -m 4096 \
    -kernel "$kroot/boot/vmlinuz-$kver" -initrd "$initrd" \
    -append "console=ttyS0 panic=-1 quiet afxdp.guest=$TOP/scripts/kernel-guest.sh" \
    -virtfs local,path=/,mount_tag=host,security_model=none,readonly=on,multidevs=remap \
    -virtfs local,path="$RUN",mount_tag=kernelrun,security_model=none \
    -display none -serial file:"$RUN/console.log" -no-reboot \
    || true

if [ ! -e "$RUN/rc" ]; then
    echo "kernel-check: the guest did not finish; its console:" >&2
    tail -n 40 "$RUN/console.log" >&2
    echo "0 passed, 1 failed"
    exit 1
fi
cat "$RUN/summary"
exit "$(cat "$RUN/rc")"
