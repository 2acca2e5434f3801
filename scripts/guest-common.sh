# The start of every guest of guest-boot.sh, sourced by its PID 1 script
# with WORK set (a directory for the guest's own files): the root file
# system is the host's, read-only, and /mnt is the one writable directory
# shared with the host (the run directory).  Mounts what Open vSwitch and
# the tests need, reads RUN/env (OVS, TOP, KROOT) and defines check(),
# summary() and finish().

mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs shm /dev/shm
# Writable: /run (network namespaces live in /run/netns) and /tmp, below.
mount -t tmpfs tmpfs /run
mount -t bpf bpf /sys/fs/bpf
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null || true

RUN=/mnt
. "$RUN/env"

# /tmp must be writable too (glibc's tmpfile(), which ovsdb-server uses,
# ignores TMPDIR).  A build under /tmp stays visible through a bind mount.
case $TOP/ in
/tmp/?*)
    mkdir -p /run/top
    mount --bind "$TOP" /run/top
    mount -t tmpfs tmpfs /tmp
    mkdir -p "$TOP"
    mount --bind /run/top "$TOP"
    ;;
*)
    mount -t tmpfs tmpfs /tmp
    ;;
esac
export HOME=$WORK/home TMPDIR=$WORK/tmp
mkdir -p "$HOME" "$TMPDIR"

# Modules come from the package's tree: the kernel asks for them through a
# modprobe that looks there.
printf '#!/bin/sh\nexec /sbin/modprobe -d %s "$@"\n' "$KROOT" \
    > "$RUN/modprobe"
chmod +x "$RUN/modprobe"
echo "$RUN/modprobe" > /proc/sys/kernel/modprobe

# check RESULT NAME: one result line, "ok: NAME", "FAILED: NAME" or
# "skipped: NAME".
check() {
    echo "$1: $2" | tee -a "$RUN/checks"
}

# summary: writes RUN/summary ("N passed, N failed") and RUN/rc, and
# powers the guest off.  No passed check at all is a failure.
summary() {
    local p f
    p=$(grep -c '^ok:' "$RUN/checks" 2>/dev/null)
    f=$(grep -c '^FAILED:' "$RUN/checks" 2>/dev/null)
    p=${p:-0} f=${f:-0}
    echo "$p passed, $f failed" > "$RUN/summary"
    finish $([ "$f" = 0 ] && [ "$p" -gt 0 ] && echo 0 || echo 1)
}

finish() {
    echo "$1" > "$RUN/rc"
    sync
    echo o > /proc/sysrq-trigger
    sleep 10
}
