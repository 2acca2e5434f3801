# Shell helpers shared by kernel-check.sh and nic-check.sh: fetch a Debian
# kernel package, make an initramfs that mounts this machine's root file
# system read-only over virtio 9p, and boot it in a QEMU guest that runs a
# script of ours as its PID 1.  Sourced, not run.
#
# The caller sets TOP (the repository) and OVS (the assembled tree).

# guest_kernel DIR SUITE [PACKAGE]: downloads into DIR and unpacks the
# kernel image PACKAGE (by default, the one linux-image-amd64 depends on)
# from Debian SUITE ("" for this machine's own sources) and sets KROOT (the
# unpacked tree, with lib/modules), KVER and VMLINUZ.  Sid's images are
# split into linux-binary-* (the kernel) and linux-modules-*: both are
# fetched.
guest_kernel() {
    local dir=$1 suite=$2 pkg=${3:-} apt=() deb d

    mkdir -p "$dir"
    if [ -n "$suite" ]; then
        # A private apt state: this machine's own sources are left alone.
        local a=$dir/apt-$suite
        mkdir -p "$a/lists/partial" "$a/cache/archives/partial"
        echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]" \
             "http://deb.debian.org/debian $suite main" > "$a/sources.list"
        apt=(-o Dir::Etc::sourcelist="$a/sources.list"
             -o Dir::Etc::sourceparts=- -o Dir::State::Lists="$a/lists"
             -o Dir::Cache="$a/cache" -o APT::Get::List-Cleanup=0)
        if ! ls "$a"/lists/*Packages* >/dev/null 2>&1; then
            apt-get "${apt[@]}" update -q >/dev/null 2>&1 || return 1
        fi
    fi
    image() {
        apt-cache "${apt[@]}" depends "$1" 2>/dev/null \
            | awk '/Depends: linux-image-[0-9]/ { print $2; exit }'
    }
    if [ -z "$pkg" ]; then
        pkg=$(image linux-image-amd64)
        if [ -z "$pkg" ] && [ -z "$suite" ]; then
            apt-get update -q >/dev/null
            pkg=$(image linux-image-amd64)
        fi
        [ -n "$pkg" ] || return 1
    fi
    KROOT=$dir/$pkg
    if [ ! -d "$KROOT/lib/modules" ]; then
        local debs=("$pkg")
        debs+=($(apt-cache "${apt[@]}" depends "$pkg" 2>/dev/null \
                 | awk '/Depends: linux-(binary|modules)-[0-9]/ { print $2 }'))
        for d in "${debs[@]}"; do
            deb=$(ls "$dir"/"$d"_*.deb 2>/dev/null | tail -n 1 || true)
            if [ -z "$deb" ]; then
                (cd "$dir" && apt-get "${apt[@]}" download "$d" \
                     >/dev/null 2>&1) || {
                    [ -n "$suite" ] || apt-get update -q >/dev/null
                    (cd "$dir" && apt-get "${apt[@]}" download "$d" \
                         >/dev/null 2>&1) || return 1
                }
            fi
        done
        rm -rf "$KROOT"
        mkdir -p "$KROOT"
        for d in "${debs[@]}"; do
            dpkg-deb -x "$(ls "$dir"/"$d"_*.deb | tail -n 1)" "$KROOT"
        done
        # Newer packages keep modules in usr/lib: modprobe -d looks in lib.
        if [ ! -d "$KROOT/lib/modules" ] && [ -d "$KROOT/usr/lib/modules" ]
        then
            ln -s usr/lib "$KROOT/lib"
        fi
    fi
    KVER=$(ls "$KROOT/lib/modules")
    VMLINUZ=$KROOT/boot/vmlinuz-$KVER
    [ -e "$VMLINUZ" ] || VMLINUZ=$KROOT/lib/modules/$KVER/vmlinuz
    if [ ! -e "$KROOT/lib/modules/$KVER/modules.dep" ]; then
        depmod -b "$KROOT" "$KVER"
    fi
    [ -e "$VMLINUZ" ]
}

# guest_initrd FILE: writes to FILE an initramfs for KROOT's kernel:
# busybox, the modules that reach the shared root (uncompressed: busybox's
# insmod takes them plain), and an init that mounts the root at /, a
# writable share "run" at /mnt, and hands over to the guest script named
# on the kernel command line (afxdp.guest=).
guest_initrd() {
    local out=$1 ird m base
    ird=$(mktemp -d)
    mkdir -p "$ird"/{bin,dev,proc,sys,newroot,mods}
    cp /bin/busybox "$ird/bin/busybox"
    : > "$ird/mods/order"
    for m in $(modprobe -d "$KROOT" -S "$KVER" --show-depends \
                   -a virtio_pci 9pnet_virtio 9p 2>/dev/null \
               | awk '$1 == "insmod" { print $2 }'); do
        base=$(basename "$m")
        base=${base%.xz}
        base=${base%.zst}
        grep -qx "$base" "$ird/mods/order" && continue
        case $m in
        *.xz) xz -dc "$m" > "$ird/mods/$base" ;;
        *.zst) zstd -qdc "$m" > "$ird/mods/$base" ;;
        *) cp "$m" "$ird/mods/$base" ;;
        esac
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
mount -t 9p -o $opts run /newroot/mnt
guest=$(arg guest)
umount /proc /sys /dev
exec switch_root /newroot /bin/bash $guest
EOF
    chmod +x "$ird/init"
    (cd "$ird" && find . | cpio -o -H newc --quiet | gzip -1) > "$out"
    rm -rf "$ird"
}

# guest_boot RUN GUEST TIMEOUT [QEMU-ARGUMENT...]: boots KROOT's kernel
# under emulation (TCG: KVM guests do not start on this machine) with
# GUEST as PID 1 and RUN as its writable /mnt, where RUN/env gives it OVS,
# TOP and KROOT.  Stops the guest after TIMEOUT seconds.  Returns 0 if the
# guest finished (it wrote RUN/rc), 1 otherwise, after printing the end
# of its console.  GUEST_ENV, if set, is added to RUN/env; GUEST_QEMU is
# the emulator's command (qemu-system-x86_64) and GUEST_WRAP a command to
# run it under.
guest_boot() {
    local run=$1 guest=$2 timeout=$3
    shift 3
    cat > "$run/env" <<EOF
OVS=$OVS
TOP=$TOP
KROOT=$KROOT
${GUEST_ENV:-}
EOF
    guest_initrd "$run/initrd.gz"
    timeout "$timeout" ${GUEST_WRAP:-} ${GUEST_QEMU:-qemu-system-x86_64} \
        -accel tcg,thread=multi -cpu max -smp 2 -m 4096 \
        -kernel "$VMLINUZ" -initrd "$run/initrd.gz" \
        -append "console=ttyS0 panic=-1 quiet afxdp.guest=$guest" \
        -virtfs local,path=/,mount_tag=host,security_model=none,readonly=on,multidevs=remap \
        -virtfs local,path="$run",mount_tag=run,security_model=none \
        -display none -serial file:"$run/console.log" -no-reboot \
        "$@" || true
    if [ ! -e "$run/rc" ]; then
        echo "the guest did not finish; its console:" >&2
        tail -n 40 "$run/console.log" >&2
        return 1
    fi
}
