#!/bin/bash
# Two PMD threads sending through one transmit queue: two generators, each
# on its own afxdp port polled by its own PMD thread (cores 0 and 1), and
# one sink port with a single queue, so that both threads take its
# queue's lock for every batch.  Measured with XDP transmit (the
# BPF_PROG_RUN under that lock) and with the socket, in one run.
#
#   gen1 netns --veth--> ovs-sgen1 (PMD core 0) \
#                                                > ovs-ssink (1 txq) --veth--> sink netns
#   gen2 netns --veth--> ovs-sgen2 (PMD core 1) /
#
# The generators are scripts/bench-afpacket-gen.c at a fixed rate each
# (BENCH_SKB_RATE, default 300000 per second), on the same cores as the
# PMD threads (this machine has two); the sink counts and drops in XDP
# (xdp-bench), which also makes its veth take XDP frames.  Reported per
# variant: packets per second at the sink against the generators' sum,
# and each PMD's cycles per packet.
#
# Environment: BENCH_SECONDS (default 10), BENCH_REPEATS (default 3).
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$TOP/build
OVS=$BUILD/ovs
OUT=$BUILD/bench
SECS=${BENCH_SECONDS:-10}
REPEATS=${BENCH_REPEATS:-3}
RATE=${BENCH_SKB_RATE:-300000}
SINK_MAC=02:00:00:00:0c:02

mkdir -p "$OUT"
bash "$TOP/scripts/bench-prepare.sh" "$BUILD"
XDPT=$BUILD/xdp-tools
gcc -O2 -Wall -o "$OUT/afpacket-gen" "$TOP/scripts/bench-afpacket-gen.c"

SANDBOX=$OUT/sandbox-txq
export OVS_RUNDIR=$SANDBOX OVS_LOGDIR=$SANDBOX OVS_DBDIR=$SANDBOX
export OVS_SYSCONFDIR=$SANDBOX
export PATH=$OVS/utilities:$OVS/ovsdb:$OVS/vswitchd:$PATH

stop_ovs() {
    for d in ovs-vswitchd ovsdb-server; do
        [ -f "$SANDBOX/$d.pid" ] && kill "$(cat "$SANDBOX/$d.pid")" 2>/dev/null
    done
    for _ in $(seq 50); do
        pgrep -F "$SANDBOX/ovs-vswitchd.pid" >/dev/null 2>&1 || break
        sleep 0.1
    done
    ip link del ovs-netdev 2>/dev/null || true
    ip link del br0 2>/dev/null || true
}

cleanup() {
    pkill -f "$OUT/afpacket-gen" 2>/dev/null || true
    pkill -f "$XDPT/xdp-bench/xdp-bench drop ssink" 2>/dev/null || true
    stop_ovs
    for p in sgen1 sgen2 ssink; do
        ip link del ovs-$p 2>/dev/null || true
        ip netns del afxq-$p 2>/dev/null || true
    done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cleanup
for p in sgen1 sgen2 ssink; do
    ip netns add afxq-$p
    ip link add $p type veth peer name ovs-$p
    ip link set $p netns afxq-$p
    ip -n afxq-$p link set $p up
    ip link set ovs-$p up
done
ip -n afxq-ssink link set ssink address $SINK_MAC
ip netns exec afxq-ssink "$XDPT/xdp-bench/xdp-bench" drop ssink -i 1000 \
    >/dev/null 2>&1 &
sleep 1

sink_packets() {
    ip -n afxq-ssink -s -j link show ssink | python3 -c \
        'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["rx"]["packets"])'
}

# measure XDP_XMIT: one line "sink-Mpps sent-Mpps cycles-core0 cycles-core1".
measure() {
    local xmit=$1 before after t0 t1 stats g1 g2
    rm -rf "$SANDBOX"
    mkdir -p "$SANDBOX"
    ovsdb-tool create "$SANDBOX/conf.db" "$OVS/vswitchd/vswitch.ovsschema"
    ovsdb-server --detach --no-chdir --pidfile --log-file \
        --remote=punix:"$SANDBOX/db.sock" "$SANDBOX/conf.db"
    ovs-vsctl --no-wait init -- set Open_vSwitch . \
        other_config:pmd-cpu-mask=0x3
    ovs-vswitchd --detach --no-chdir --pidfile --log-file \
        -vconsole:off -vsyslog:off
    ovs-vsctl add-br br0 -- set bridge br0 datapath_type=netdev \
        -- add-port br0 ovs-sgen1 -- set interface ovs-sgen1 type=afxdp \
               other_config:pmd-rxq-affinity=0:0 \
        -- add-port br0 ovs-sgen2 -- set interface ovs-sgen2 type=afxdp \
               other_config:pmd-rxq-affinity=0:1 \
        -- add-port br0 ovs-ssink -- set interface ovs-ssink type=afxdp \
               options:xdp-xmit="$xmit" options:n_rxq=1
    ovs-ofctl add-flow br0 actions=output:ovs-ssink
    for _ in $(seq 50); do
        [ "$(ovs-vsctl get interface ovs-ssink status:xdp-xmit 2>/dev/null)" \
          = "$([ "$xmit" = true ] && echo on || echo off)" ] && break
        sleep 0.2
    done
    ip netns exec afxq-sgen1 taskset -c 0 "$OUT/afpacket-gen" sgen1 \
        $SINK_MAC 1 3600 "$RATE" > "$OUT/txq-gen1" 2>&1 &
    ip netns exec afxq-sgen2 taskset -c 1 "$OUT/afpacket-gen" sgen2 \
        $SINK_MAC 1 3600 "$RATE" > "$OUT/txq-gen2" 2>&1 &
    sleep 2
    ovs-appctl dpif-netdev/pmd-stats-clear >/dev/null
    g1=$(ip -n afxq-sgen1 -s -j link show sgen1 | python3 -c \
        'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["tx"]["packets"])')
    g2=$(ip -n afxq-sgen2 -s -j link show sgen2 | python3 -c \
        'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["tx"]["packets"])')
    t0=$(date +%s.%N)
    before=$(sink_packets)
    sleep "$SECS"
    after=$(sink_packets)
    t1=$(date +%s.%N)
    stats=$(ovs-appctl dpif-netdev/pmd-stats-show)
    g1=$(( $(ip -n afxq-sgen1 -s -j link show sgen1 | python3 -c \
        'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["tx"]["packets"])') - g1 ))
    g2=$(( $(ip -n afxq-sgen2 -s -j link show sgen2 | python3 -c \
        'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["tx"]["packets"])') - g2 ))
    pkill -f "$OUT/afpacket-gen" 2>/dev/null || true
    sleep 0.5
    printf '%s\n' "$stats" > "$OUT/txq-pmd-stats-xmit-$xmit.txt"
    ovs-appctl afxdp/pool-show > "$OUT/txq-pool-xmit-$xmit.txt" 2>&1 || true
    ovs-vsctl get interface ovs-ssink statistics > "$OUT/txq-sink-stats-xmit-$xmit.txt"
    stop_ovs
    python3 - "$t0" "$t1" "$before" "$after" "$g1" "$g2" <<'EOF' "$stats"
import re, sys
t0, t1, before, after, g1, g2 = map(float, sys.argv[1:7])
stats = sys.argv[7]
secs = t1 - t0
cpp = {}
core = None
for line in stats.splitlines():
    m = re.match(r"pmd thread numa_id \d+ core_id (\d+):", line)
    if m:
        core = m.group(1)
    m = re.search(r"Rx packets:\s+\d+\s+\(.*?, ([\d.]+) cycles/pkt\)", line)
    if m and core is not None:
        cpp[core] = m.group(1)
print("%.3f %.3f %s %s" % ((after - before) / secs / 1e6, (g1 + g2) / secs / 1e6,
                           cpp.get("0", "nan"), cpp.get("1", "nan")))
EOF
}

results=$OUT/txq-results.txt
: > "$results"
for r in $(seq "$REPEATS"); do
    for xmit in true false; do
        line=$(measure $xmit)
        echo "xdp-xmit=$xmit run $r: $line" | tee -a "$results" >&2
    done
done

echo
echo "Two PMD threads, one sink txq, $RATE pps per generator, ${SECS}s, median of $REPEATS"
printf '%-14s %12s %12s %14s %14s\n' variant "sink Mpps" "sent Mpps" \
       "cyc/pkt pmd0" "cyc/pkt pmd1"
for xmit in true false; do
    grep "^xdp-xmit=$xmit " "$results" | cut -d: -f2 | python3 -c '
import sys, statistics
rows = [l.split() for l in sys.stdin if l.strip()]
cols = list(zip(*rows))
med = [statistics.median(float(x) for x in c if x != "nan") if any(x != "nan" for x in c) else float("nan") for c in cols]
print("%-14s %12.3f %12.3f %14.0f %14.0f" % ("xdp-xmit='"$xmit"'", *med))'
done
