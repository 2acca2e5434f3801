#!/bin/bash
# PID 1 of kernel-check.sh's guest: the root file system is the host's,
# read-only, and /mnt is the one writable directory shared with the host
# (its build/kernel/run).  Mounts what the demo needs, runs it from the
# host's build with the status checks below, writes the results and exit
# status to /mnt and powers the guest off.
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

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
WORK=/run/kernel-check
export HOME=$WORK/home TMPDIR=$WORK/tmp
mkdir -p "$HOME" "$TMPDIR"

# check RESULT NAME: one result line.
check() {
    echo "$1: $2" | tee -a "$RUN/checks"
}

finish() {
    echo "$1" > "$RUN/rc"
    sync
    echo o > /proc/sysrq-trigger
    sleep 10
}

{
    echo "kernel-check: guest kernel $(uname -r)"
    hostname kernel-check
    ip link set lo up
    # Modules come from the package's tree: the kernel asks for them
    # through a modprobe that looks there.
    printf '#!/bin/sh\nexec /sbin/modprobe -d %s "$@"\n' "$KROOT" \
        > "$RUN/modprobe"
    chmod +x "$RUN/modprobe"
    echo "$RUN/modprobe" > /proc/sys/kernel/modprobe
    "$RUN/modprobe" -a veth tun

    # The demo, from a tmpfs (9p cannot hold the daemons' Unix sockets).
    # The autotest suites are not run here: under emulation the daemons
    # are ten times slower than their timeouts and warnings allow.
    if DEMO_SANDBOX=$WORK/demo bash "$TOP/scripts/demo.sh" "$OVS" \
            > "$RUN/demo.log" 2>&1; then
        check ok "demo: ping and TCP through two afxdp ports"
    else
        check FAILED "demo: ping and TCP through two afxdp ports"
    fi
    cp "$WORK"/demo/*.log "$RUN"/ 2>/dev/null
    tail -n 60 "$RUN/demo.log"

    # What the ports said of the features this kernel lacks.
    kv=$(uname -r | awk -F. '{ print $1 * 1000 + $2 }')
    expect() {     # expect MIN_KERNEL KEY VALUE: status KEY=VALUE below it
        local n
        if [ "$kv" -lt "$1" ]; then
            n=$(grep -c -- "$2=$3" "$RUN/demo.log")
            [ "$n" = 2 ] && check ok "status $2=$3" \
                         || check FAILED "status $2=$3 ($n of 2 ports)"
        fi
    }
    expect 6006 multi-buffer '"off: kernel has no multi-buffer AF_XDP"'
    expect 6003 rx-hash '"unavailable: [^"]*"'
    expect 6003 xdp-xmit '"unavailable: [^"]*"'
    expect 6011 tx-csum-offload '"unavailable: [^"]*"'
    expect 6017 tx-budget '"32: kernel has no XDP_MAX_TX_SKB_BUDGET (Linux 6.17)"'
    if [ ! -s "$RUN/ovs-vswitchd.log" ]; then
        check FAILED "ovs-vswitchd.log written"
    elif grep -E '\|(ERR|EMER)\|' "$RUN/ovs-vswitchd.log"; then
        check FAILED "no ERR in ovs-vswitchd.log"
    else
        check ok "no ERR in ovs-vswitchd.log"
    fi
} > "$RUN/guest.log" 2>&1

p=$(grep -c '^ok:' "$RUN/checks")
f=$(grep -c '^FAILED:' "$RUN/checks")
echo "$p passed, $f failed" > "$RUN/summary"
finish $([ "$f" = 0 ] && [ "$p" -gt 0 ] && echo 0 || echo 1)
