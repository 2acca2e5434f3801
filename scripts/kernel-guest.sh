#!/bin/bash
# PID 1 of kernel-check.sh's guest (scripts/guest-common.sh sets it up):
# runs the demo from the host's build with the status checks below, writes
# the results and exit status to /mnt (build/kernel/run) and powers the
# guest off.
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

WORK=/run/kernel-check
. "$(dirname "$0")/guest-common.sh"

{
    echo "kernel-check: guest kernel $(uname -r)"
    hostname kernel-check
    ip link set lo up
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
    expect 6008 rx-vlan '"unavailable: [^"]*"'
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

summary
