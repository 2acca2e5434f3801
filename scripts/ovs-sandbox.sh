# Shell helpers shared by the demo and the benchmark: start ovsdb-server and
# ovs-vswitchd from the assembled tree in a private directory, and create
# namespaces joined to the bridge by veth pairs.  Sourced, not run.
#
# The caller sets OVS (the assembled tree) and SANDBOX (a directory), and
# calls sandbox_cleanup from its EXIT trap.

SANDBOX_NETNS=""
SANDBOX_VETHS=""
SANDBOX_BPFFS_MOUNTED=no

sandbox_start() {
    rm -rf "$SANDBOX"
    mkdir -p "$SANDBOX"
    export OVS_RUNDIR=$SANDBOX OVS_LOGDIR=$SANDBOX OVS_DBDIR=$SANDBOX \
           OVS_SYSCONFDIR=$SANDBOX OVS_PKGDATADIR=$OVS
    export PATH=$OVS/utilities:$OVS/vswitchd:$OVS/ovsdb:$PATH

    # libbpf and libxdp pin and look up objects under bpffs.
    if ! mountpoint -q /sys/fs/bpf; then
        mount -t bpf bpf /sys/fs/bpf
        SANDBOX_BPFFS_MOUNTED=yes
    fi

    ovsdb-tool create "$SANDBOX/conf.db" "$OVS/vswitchd/vswitch.ovsschema"
    ovsdb-server --detach --no-chdir --pidfile --log-file \
        --remote=punix:"$SANDBOX/db.sock" "$SANDBOX/conf.db"
    ovs-vsctl --no-wait init
    ovs-vswitchd --detach --no-chdir --pidfile --log-file \
        -vconsole:off -vsyslog:off
}

# sandbox_add_ns NS VETH ADDR: namespace NS holds VETH with ADDR; its peer
# ovs-VETH stays in the root namespace for the bridge.
sandbox_add_ns() {
    ns=$1 dev=$2 addr=$3
    ip netns add "$ns"
    SANDBOX_NETNS="$SANDBOX_NETNS $ns"
    ip link add "$dev" type veth peer name "ovs-$dev"
    SANDBOX_VETHS="$SANDBOX_VETHS ovs-$dev"
    ip link set "$dev" netns "$ns"
    # The namespace's veth keeps its default offloads, as a container's
    # does: afxdp ports finish the checksums it leaves partial.
    ip netns exec "$ns" ip addr add "$addr" dev "$dev"
    ip netns exec "$ns" ip link set "$dev" up
    ip netns exec "$ns" ip link set lo up
    ip link set "ovs-$dev" up
}

sandbox_cleanup() {
    if [ -n "${OVS_RUNDIR:-}" ]; then
        # --cleanup: also remove the datapath and its internal devices.
        for d in "ovs-vswitchd exit --cleanup" "ovsdb-server exit"; do
            set -- $d
            if [ -f "$OVS_RUNDIR/$1.pid" ]; then
                ovs-appctl -t "$@" >/dev/null 2>&1 \
                    || kill "$(cat "$OVS_RUNDIR/$1.pid")" 2>/dev/null
            fi
        done
        # Give ovs-vswitchd a moment to detach XDP programs and close sockets.
        for _ in 1 2 3 4 5 6 7 8 9 10; do
            pgrep -F "$OVS_RUNDIR/ovs-vswitchd.pid" >/dev/null 2>&1 || break
            sleep 0.5
        done
    fi
    for v in $SANDBOX_VETHS; do
        ip link del "$v" 2>/dev/null
    done
    for ns in $SANDBOX_NETNS; do
        ip netns del "$ns" 2>/dev/null
    done
    SANDBOX_VETHS="" SANDBOX_NETNS=""
    if [ "$SANDBOX_BPFFS_MOUNTED" = yes ]; then
        umount /sys/fs/bpf 2>/dev/null
        SANDBOX_BPFFS_MOUNTED=no
    fi
}
