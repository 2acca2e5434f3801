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
. "$TOP/scripts/ovs-sandbox.sh"

XDP_BENCH_PID=""
cleanup() {
    pkill -f "$OUT/afpacket-gen" 2>/dev/null || true
    [ -n "$XDP_BENCH_PID" ] && kill "$XDP_BENCH_PID" 2>/dev/null
    XDP_BENCH_PID=""
    sandbox_cleanup
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# link_packets NS DEV rx|tx: the packets DEV in NS received or sent.
link_packets() {
    ip -n "$1" -s -j link show "$2" | python3 -c \
        'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["'"$3"'"]["packets"])'
}

# measure XDP_XMIT: one line "sink-Mpps sent-Mpps cycles-core0 cycles-core1".
measure() {
    local xmit=$1 before after t0 t1 stats g1 g2
    # A fresh switch and topology each time (ovs-sandbox.sh).
    sandbox_start
    ovs-vsctl set Open_vSwitch . other_config:pmd-cpu-mask=0x3
    sandbox_add_ns afxq-sgen1 sgen1 10.3.1.1/24
    sandbox_add_ns afxq-sgen2 sgen2 10.3.1.2/24
    sandbox_add_ns afxq-ssink ssink 10.3.1.3/24
    ip -n afxq-ssink link set ssink address $SINK_MAC
    # The sink counts and drops in XDP, which also makes its veth take XDP
    # frames.
    ip netns exec afxq-ssink "$XDPT/xdp-bench/xdp-bench" drop ssink \
        -i 1000 >/dev/null 2>&1 &
    XDP_BENCH_PID=$!
    sleep 1
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
    g1=$(link_packets afxq-sgen1 sgen1 tx)
    g2=$(link_packets afxq-sgen2 sgen2 tx)
    t0=$(date +%s.%N)
    before=$(link_packets afxq-ssink ssink rx)
    sleep "$SECS"
    after=$(link_packets afxq-ssink ssink rx)
    t1=$(date +%s.%N)
    stats=$(ovs-appctl dpif-netdev/pmd-stats-show)
    g1=$(( $(link_packets afxq-sgen1 sgen1 tx) - g1 ))
    g2=$(( $(link_packets afxq-sgen2 sgen2 tx) - g2 ))
    pkill -f "$OUT/afpacket-gen" 2>/dev/null || true
    sleep 0.5
    printf '%s\n' "$stats" > "$OUT/txq-pmd-stats-xmit-$xmit.txt"
    ovs-appctl afxdp/pool-show > "$OUT/txq-pool-xmit-$xmit.txt" 2>&1 || true
    ovs-vsctl get interface ovs-ssink statistics > "$OUT/txq-sink-stats-xmit-$xmit.txt"
    cleanup
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
