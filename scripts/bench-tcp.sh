#!/bin/bash
# TCP benchmark: iperf3, one stream, between two network namespaces joined
# through two ports of a switch, at MTU 1500 with the namespaces' veths at
# their default offloads (transmit checksum offload on, as in a container)
# and with "ethtool -K DEV tx off", and at MTU 9000 with the default
# offloads (not for upstream's afxdp, which cannot carry it), for:
#   afxdp     this series' afxdp ports;
#   upstream  upstream's afxdp (the pristine 4.0.0 tree built with
#             --enable-afxdp);
#   bridge    a Linux bridge, the kernel's reference;
# and, when named in BENCH_TCP_IMPLS:
#   afxdp-budget2048  this series with options:tx-budget=2048 (Linux
#             6.17), where the default is 32;
#   afxdp-busypoll  this series with options:busy-poll=true;
#   afxdp-base  the series as built in the Open vSwitch tree BENCH_BASE
#             (another commit's build/ovs, for a change's before and
#             after in one run);
#   afxdp-offload, afxdp-base-offload  the same two with
#             other_config:hw-offload=true (flows between the ports run in
#             XDP where the namespaces' veths take XDP frames: with
#             BENCH_TCP_GRO=on or xdp);
#   afxdp-offload-peer  afxdp-offload with options:peer-xdp=true: the
#             namespaces' veths take XDP frames through a program the ports
#             put on them, whatever their GRO;
#   system-tso  this series' build with the veths as type=system ports
#             (AF_PACKET) and other_config:userspace-tso-enable=true.
# Interleaved (each repeat runs every case in turn), median of the repeats.
#
#   ns afxt-a (ta, 10.9.1.1) --veth-- ovs-ta  [switch]  ovs-tb --veth-- (tb, 10.9.1.2) ns afxt-b
#
# Environment: BENCH_TCP_SECONDS (per measurement, default 5),
# BENCH_REPEATS (default 3), BENCH_TCP_IMPLS (default "afxdp upstream
# bridge"), BENCH_TCP_PORT_OPTIONS (more "options:KEY=VALUE" for both
# ports of the OVS implementations, e.g. options:ring-size=4096 for this
# series), BENCH_TCP_MTUS (default "1500 9000").  Output:
# build/bench/tcp-results.md and tcp-results.txt.
#
# Then request-response latency (sockperf ping-pong, TCP, 64-byte
# messages, BENCH_TCP_SECONDS) through the same switches at MTU 1500,
# with the namespaces' veths at their default transmit offloads,
# with GRO off (the default of a container's veth) and on in both
# namespaces (which lets the switch's veths take XDP frames: this series
# then transmits by XDP, unless options:xdp-xmit=false, the
# "afxdp-socket-tx" implementation).  BENCH_LAT_IMPLS (default "afxdp
# afxdp-socket-tx upstream bridge"), BENCH_LAT_GRO (default "off on";
# also "xdp": GRO off and an XDP program passing every packet on each
# namespace's veth).  BENCH_LAT_TX (default "on") sets the namespaces'
# transmit checksum offload for the latency part: "off" lets upstream's
# afxdp, which sends partial checksums on unfinished, carry TCP at all.
# Output: build/bench/latency-results.md and latency-results.txt.
# BENCH_TCP_PARTS (default "throughput latency") chooses the parts;
# BENCH_TCP_GRO (default "off"; "on", "xdp" as for BENCH_LAT_GRO) sets the
# namespaces' veths for the throughput part.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$TOP/build
OUT=$BUILD/bench
SECS=${BENCH_TCP_SECONDS:-5}
REPEATS=${BENCH_REPEATS:-3}
LAT_TX=${BENCH_LAT_TX:-on}
IMPLS=${BENCH_TCP_IMPLS:-"afxdp upstream bridge"}
MTUS=${BENCH_TCP_MTUS:-"1500 9000"}
NS_A=afxt-a NS_B=afxt-b

mkdir -p "$OUT"
bash "$TOP/scripts/bench-prepare.sh" "$BUILD"
SANDBOX=$OUT/tcp-sandbox
CTL=$SANDBOX/vswitchd.ctl
export OVS_RUNDIR=$SANDBOX OVS_LOGDIR=$SANDBOX OVS_DBDIR=$SANDBOX
export OVS_SYSCONFDIR=$SANDBOX
export PATH=$BUILD/ovs/utilities:$BUILD/ovs/ovsdb:$PATH

stop_switch() {
    if [ -f "$SANDBOX/ovs-vswitchd.pid" ]; then
        kill "$(cat "$SANDBOX/ovs-vswitchd.pid")" 2>/dev/null || true
        for _ in $(seq 50); do
            pgrep -F "$SANDBOX/ovs-vswitchd.pid" >/dev/null 2>&1 || break
            sleep 0.1
        done
    fi
    if [ -f "$SANDBOX/ovsdb-server.pid" ]; then
        kill "$(cat "$SANDBOX/ovsdb-server.pid")" 2>/dev/null || true
    fi
    rm -f "$SANDBOX"/*.pid
    ip link del ovs-netdev 2>/dev/null || true
    ip link del br0 2>/dev/null || true
    ip link del afxt-br 2>/dev/null || true
    # Upstream's afxdp leaves its program behind when it is killed.
    for p in ovs-ta ovs-tb; do
        ip link set dev $p xdp off 2>/dev/null || true
        ip link set dev $p xdpgeneric off 2>/dev/null || true
    done
}

cleanup() {
    ip netns pids $NS_B 2>/dev/null | xargs -r kill 2>/dev/null || true
    stop_switch
    ip link del ovs-ta 2>/dev/null || true
    ip link del ovs-tb 2>/dev/null || true
    ip netns del $NS_A 2>/dev/null || true
    ip netns del $NS_B 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

topology() {
    ip netns add $NS_A
    ip netns add $NS_B
    ip link add ta type veth peer name ovs-ta
    ip link add tb type veth peer name ovs-tb
    ip link set ta netns $NS_A
    ip link set tb netns $NS_B
    ip -n $NS_A addr add 10.9.1.1/24 dev ta
    ip -n $NS_B addr add 10.9.1.2/24 dev tb
    for ns in $NS_A $NS_B; do
        ip -n $ns link set lo up
    done
    ip -n $NS_A link set ta up
    ip -n $NS_B link set tb up
    ip link set ovs-ta up
    ip link set ovs-tb up
}

# set_mtu MTU: both veth pairs, before any switch uses them.
set_mtu() {
    ip -n $NS_A link set ta mtu "$1"
    ip -n $NS_B link set tb mtu "$1"
    ip link set ovs-ta mtu "$1"
    ip link set ovs-tb mtu "$1"
}

# start_switch IMPL MTU
start_switch() {
    local impl=$1 mtu=$2 tree extra="" type=afxdp config=""
    case $impl in
    bridge)
        ip link add afxt-br type bridge
        ip link set ovs-ta master afxt-br
        ip link set ovs-tb master afxt-br
        ip link set afxt-br up
        return ;;
    afxdp) tree=$BUILD/ovs ;;
    afxdp-budget2048) tree=$BUILD/ovs extra="options:tx-budget=2048" ;;
    afxdp-busypoll) tree=$BUILD/ovs extra="options:busy-poll=true" ;;
    afxdp-socket-tx) tree=$BUILD/ovs extra="options:xdp-xmit=false" ;;
    afxdp-base) tree=${BENCH_BASE:?afxdp-base needs BENCH_BASE} ;;
    afxdp-offload) tree=$BUILD/ovs config="other_config:hw-offload=true" ;;
    afxdp-offload-peer)
        tree=$BUILD/ovs config="other_config:hw-offload=true"
        extra="options:peer-xdp=true" ;;
    afxdp-base-offload)
        tree=${BENCH_BASE:?afxdp-base-offload needs BENCH_BASE}
        config="other_config:hw-offload=true" ;;
    system-tso)
        tree=$BUILD/ovs type=system
        config="other_config:userspace-tso-enable=true" ;;
    upstream) tree=$BUILD/upstream ;;
    esac
    rm -rf "$SANDBOX"
    mkdir -p "$SANDBOX"
    ovsdb-tool create "$SANDBOX/conf.db" "$tree/vswitchd/vswitch.ovsschema"
    ovsdb-server --detach --no-chdir --pidfile --log-file \
        --remote=punix:"$SANDBOX/db.sock" "$SANDBOX/conf.db" 2>/dev/null
    ovs-vsctl --no-wait init -- set Open_vSwitch . \
        other_config:pmd-cpu-mask=0x2 $config
    "$tree/vswitchd/ovs-vswitchd" --detach --no-chdir \
        --pidfile="$SANDBOX/ovs-vswitchd.pid" \
        --log-file="$SANDBOX/ovs-vswitchd.log" --unixctl="$CTL" \
        -vconsole:off -vsyslog:off 2>/dev/null
    ovs-vsctl add-br br0 -- set bridge br0 datapath_type=netdev \
        -- add-port br0 ovs-ta -- set interface ovs-ta type=$type \
           mtu_request="$mtu" $extra ${BENCH_TCP_PORT_OPTIONS:-} \
        -- add-port br0 ovs-tb -- set interface ovs-tb type=$type \
           mtu_request="$mtu" $extra ${BENCH_TCP_PORT_OPTIONS:-}
    ovs-ofctl add-flow br0 actions=normal
    for p in ovs-ta ovs-tb; do
        for _ in $(seq 50); do
            [ "$(ovs-vsctl get interface $p ofport)" -gt 0 ] 2>/dev/null \
                && break
            sleep 0.2
        done
    done
}

# The packets ovs-ta's driver dropped on receive: for a port whose XDP
# program redirects to AF_XDP, those the socket had no room for (rx ring
# full, or no free frame), which are also XDP_STATISTICS' drops.
rx_dropped() {
    ip -s -j link show ovs-ta \
        | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["rx"]["dropped"])'
}

# measure IMPL OFFLOADS MTU: prints "Gbit/s retransmits rx-dropped".
measure() {
    local impl=$1 offl=$2 mtu=$3 json gbps retr ringfull=n/a before after
    peer_rx "${BENCH_TCP_GRO:-off}"
    ip netns exec $NS_A ethtool -K ta tx "$offl" >/dev/null
    ip netns exec $NS_B ethtool -K tb tx "$offl" >/dev/null
    set_mtu "$mtu"
    start_switch "$impl" "$mtu"
    # Let the switch learn both MACs.
    ip netns exec $NS_A ping -q -c 2 -i 0.2 -W 1 10.9.1.2 >/dev/null 2>&1 \
        || true
    ip netns exec $NS_B iperf3 -s -1 -B 10.9.1.2 >/dev/null 2>&1 &
    sleep 0.5
    json=$OUT/tcp-$impl-$offl-$mtu.json
    before=$(rx_dropped)
    ip netns exec $NS_A timeout $((SECS + 15)) iperf3 -c 10.9.1.2 \
        -t "$SECS" -J --connect-timeout 3000 > "$json" 2>/dev/null || true
    read -r gbps retr < <(python3 - "$json" <<'PY'
import json, sys
try:
    end = json.load(open(sys.argv[1]))["end"]
    print(end["sum_received"]["bits_per_second"] / 1e9,
          end["sum_sent"].get("retransmits", 0))
except (ValueError, KeyError):
    print(0, "n/a")
PY
)
    after=$(rx_dropped)
    if [ "$impl" != bridge ]; then
        ringfull=$((after - before))
        for p in ovs-ta ovs-tb; do
            echo "$p: $(ovs-vsctl get interface $p statistics)"
        done > "$OUT/tcp-stats-$impl-$offl-$mtu.txt" 2>&1 || true
        cp "$SANDBOX/ovs-vswitchd.log" \
           "$OUT/tcp-vswitchd-$impl-$offl-$mtu.log"
    fi
    ip netns pids $NS_B | xargs -r kill 2>/dev/null || true
    stop_switch
    echo "$gbps $retr $ringfull"
}

# peer_rx GRO: the namespaces' veths with GRO "on" or "off", or "xdp":
# GRO off and an XDP program that passes every packet to the stack
# (scripts/bench-xdp-bare.c); each way but "off" makes the switch's veths
# take XDP frames.
peer_rx() {
    local obj=$OUT/xdp-pass.o
    if [ "$1" = xdp ] && [ ! -f "$obj" ]; then
        clang -O2 -g -target bpf -DPASS \
            -I/usr/include/"$(gcc -print-multiarch)" \
            -c "$TOP/scripts/bench-xdp-bare.c" -o "$obj"
    fi
    ip netns exec $NS_A ethtool -K ta gro "$([ "$1" = on ] && echo on || echo off)" >/dev/null
    ip netns exec $NS_B ethtool -K tb gro "$([ "$1" = on ] && echo on || echo off)" >/dev/null
    if [ "$1" = xdp ]; then
        ip -n $NS_A link set dev ta xdpdrv obj "$obj" sec xdp
        ip -n $NS_B link set dev tb xdpdrv obj "$obj" sec xdp
    else
        ip -n $NS_A link set dev ta xdp off
        ip -n $NS_B link set dev tb xdp off
    fi
}

# latency IMPL GRO: prints the average and 99.9th percentile of one-way
# latency (half the round trip) in microseconds, by sockperf ping-pong,
# with the namespaces' veths as peer_rx GRO makes them.
latency() {
    local impl=$1 gro=$2 log
    peer_rx "$gro"
    # The namespaces' default offloads (a container's), whatever the
    # throughput part left, unless BENCH_LAT_TX says otherwise.
    ip netns exec $NS_A ethtool -K ta tx "$LAT_TX" >/dev/null
    ip netns exec $NS_B ethtool -K tb tx "$LAT_TX" >/dev/null
    set_mtu 1500
    start_switch "$impl" 1500
    # Until the ports pass traffic (and the switch knows both MACs).
    for _ in $(seq 100); do
        ip netns exec $NS_A ping -q -c 1 -W 0.2 10.9.1.2 >/dev/null 2>&1 \
            && break
    done
    ip netns exec $NS_B sockperf server --tcp -i 10.9.1.2 -p 11111 \
        >/dev/null 2>&1 &
    for _ in $(seq 50); do
        ip netns exec $NS_A timeout 1 bash -c '</dev/tcp/10.9.1.2/11111' \
            2>/dev/null && break
        sleep 0.1
    done
    log=$OUT/latency-$impl-gro-$gro.log
    ip netns exec $NS_A timeout $((SECS + 15)) sockperf ping-pong --tcp \
        -i 10.9.1.2 -p 11111 -t "$SECS" -m 64 > "$log" 2>&1 || true
    ip netns pids $NS_B | xargs -r kill 2>/dev/null || true
    stop_switch
    peer_rx off
    python3 - "$log" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
avg = re.search(r"avg-lat(?:ency)?=\s*([0-9.]+)", text)
p999 = re.search(r"percentile 99\.900 =\s*([0-9.]+)", text)
print(avg.group(1) if avg else "nan", p999.group(1) if p999 else "nan")
PY
}

command -v sockperf >/dev/null || {
    echo "bench-tcp: installing sockperf" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q sockperf >/dev/null
}

command -v iperf3 >/dev/null || {
    echo "bench-tcp: installing iperf3" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q iperf3 >/dev/null
}

results=$OUT/tcp-results.txt
cleanup
topology

throughput_part() {
    : > "$results"
    for r in $(seq "$REPEATS"); do
        for mtu in $MTUS; do
            for impl in $IMPLS; do
                offloads="on off"
                if [ "$mtu" != 1500 ]; then
                    [ "$impl" = upstream ] && continue
                    offloads=on
                fi
                for offl in $offloads; do
                    m=$(measure "$impl" "$offl" "$mtu")
                    echo "bench-tcp: run $r: $impl mtu $mtu tx-checksum=$offl:" \
                         "$m" >&2
                    echo "$impl $mtu $offl $m" >> "$results"
                done
            done
        done
    done
    set_mtu 1500

    python3 - "$results" "$OUT/tcp-results.md" <<'PY'
import statistics, sys
names = {"afxdp": "ovs-afxdp (this series)",
         "afxdp-budget2048": "ovs-afxdp, tx-budget=2048",
         "afxdp-busypoll": "ovs-afxdp, busy-poll=true",
         "afxdp-socket-tx": "ovs-afxdp, xdp-xmit=false",
         "afxdp-base": "ovs-afxdp as built in BENCH_BASE",
         "afxdp-offload": "ovs-afxdp, hw-offload",
         "afxdp-offload-peer": "ovs-afxdp, hw-offload, peer-xdp",
         "afxdp-base-offload": "ovs-afxdp as built in BENCH_BASE, hw-offload",
         "system-tso": "type=system, userspace-tso-enable",
         "upstream": "upstream afxdp", "bridge": "Linux bridge"}
runs = {}
for line in open(sys.argv[1]):
    impl, mtu, offl, gbps, retr, ringfull = line.split()
    runs.setdefault((impl, mtu, offl), []).append((float(gbps), retr,
                                                   ringfull))
out = ["| switch | MTU | sender tx checksum offload | Gbit/s (median) "
       "| retransmits | rx drops (port A) | runs |",
       "|---|---|---|---|---|---|---|"]
for (impl, mtu, offl), rs in sorted(runs.items(),
                                    key=lambda kv: (int(kv[0][1]),
                                                    list(names).index(kv[0][0])
                                                    if kv[0][0] in names
                                                    else 9, kv[0][2])):
    gbps = statistics.median(r[0] for r in rs)
    out.append("| %s | %s | %s | %.2f | %s | %s | %d |" % (
        names.get(impl, impl), mtu,
        "on (default)" if offl == "on" else "off",
        gbps, " ".join(r[1] for r in rs), " ".join(r[2] for r in rs),
        len(rs)))
open(sys.argv[2], "w").write("\n".join(out) + "\n")
print("\n".join(out))
PY
}

latency_part() {
    local lat=$OUT/latency-results.txt impl gro r m
    : > "$lat"
    for r in $(seq "$REPEATS"); do
        for gro in ${BENCH_LAT_GRO:-off on}; do
            for impl in ${BENCH_LAT_IMPLS:-afxdp afxdp-socket-tx upstream bridge}; do
                m=$(latency "$impl" "$gro")
                echo "bench-tcp: run $r: latency $impl gro=$gro: $m" >&2
                echo "$impl $gro $m" >> "$lat"
            done
        done
    done
    python3 - "$lat" "$OUT/latency-results.md" <<'PY'
import statistics, sys
names = {"afxdp": "ovs-afxdp (this series)",
         "afxdp-socket-tx": "ovs-afxdp, xdp-xmit=false",
         "afxdp-base": "ovs-afxdp as built in BENCH_BASE",
         "afxdp-offload": "ovs-afxdp, hw-offload",
         "afxdp-offload-peer": "ovs-afxdp, hw-offload, peer-xdp",
         "afxdp-base-offload": "ovs-afxdp as built in BENCH_BASE, hw-offload",
         "system-tso": "type=system, userspace-tso-enable",
         "upstream": "upstream afxdp", "bridge": "Linux bridge"}
runs = {}
for line in open(sys.argv[1]):
    impl, gro, avg, p999 = line.split()
    runs.setdefault((gro, impl), []).append((float(avg), float(p999)))
out = ["| switch | namespaces' GRO | average us (median) | P99.9 us (median) "
       "| runs |", "|---|---|---|---|---|"]
for (gro, impl), rs in runs.items():
    out.append("| %s | %s | %.1f | %.1f | %d |" % (
        names.get(impl, impl), gro, statistics.median(r[0] for r in rs),
        statistics.median(r[1] for r in rs), len(rs)))
open(sys.argv[2], "w").write("\n".join(out) + "\n")
print("\n".join(out))
PY
}

for part in ${BENCH_TCP_PARTS:-throughput latency}; do
    "${part}_part"
done
