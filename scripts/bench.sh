#!/bin/bash
# Benchmark: this series' afxdp ports against upstream's afxdp (the pristine
# 4.0.0 tree built with --enable-afxdp), type=system ports (AF_PACKET) and
# OVS-DPDK with DPDK's net_af_xdp driver (Debian's openvswitch-switch-dpdk),
# measured in one run, interleaved, median of several runs.
#
#   generator netns --veth--> port A -> OVS -> port B --veth--> sink netns
#
# xdp-trafficgen sends UDP on the generator's veth; the sink drops and
# counts with xdp-bench's XDP program.  The PMD thread runs on core 1,
# the generator on core 0.
#   rxdrop: actions=drop; Mpps and cycles/packet from pmd-stats-show.
#   l2fwd:  in_port=A,actions=output:B; Mpps at the sink, cycles/packet
#           from pmd-stats-show.
# Each also gives the share of core 1's time spent in softirq (/proc/stat),
# where the kernel's NAPI polls run when the PMD does not run them, the
# CPU time of ovs-vswitchd (all its threads, % of one core), and the XDP
# program's own run time per packet on port A's device (the kernel's BPF
# statistics, kernel.bpf_stats_enabled, on for BENCH_STATS_SECONDS after
# the rate's measurement only: the statistics cost time of their own).
#
# Environment: BENCH_SECONDS (per measurement, default 5), BENCH_REPEATS
# (default 3), BENCH_IMPLS (default "xdp-bare afxdp afxdp-offload
# afxdp-offload-sleep upstream system dpdk", where "xdp-bare" is no Open
# vSwitch at all but scripts/bench-xdp-bare.c on port A's device, dropping
# or redirecting to port B's device, the least that XDP can do there, and
# "afxdp-offload-sleep" is "afxdp-offload" with
# other_config:pmd-sleep-max=BENCH_SLEEP_MAX (microseconds, default 500);
# also "afxdp-sleep": this series with that pmd-sleep-max, without offload;
# "afxdp-nohash": this series with options:rx-hash=false; "afxdp-socket-tx":
# this series with options:xdp-xmit=false; "afxdp-nocsum": this series
# with options:rx-csum-partial=false; "afxdp-ring1024": this series with
# options:ring-size=1024, the default before 2048; "afxdp-busypoll": this
# series with options:busy-poll=true; "afxdp-base": the series as built
# in the Open vSwitch tree BENCH_BASE (another commit's build/ovs, for a
# change's before and after in one run), and "afxdp-base-offload", the same
# with other_config:hw-offload=true; "afxdp-busypoll-defer": the same with
# the OVS side veths' napi_defer_hard_irqs=2 and gro_flush_timeout=200000,
# as the guide advises; "afxdp-socket-tx2048": "afxdp-socket-tx" with
# options:tx-budget=2048, where Linux 6.17 allows it; "afxdp-offload":
# this series with other_config:hw-offload=true, the flows run in XDP),
# BENCH_CASES
# (TEST:FLOWS:SIZE[:GEN] ..., GEN "xdp", "loop" or "skb", "xdp" by
# default), BENCH_SKB_RATE (the
# "skb" generator's packets per second, 0 for as fast as it can),
# BENCH_PERF (if set, "perf record" of the PMD's core and of core 0 during
# each measurement, in build/bench/perf-*.data and perf0-*.data, and the
# share of core 0's samples in port A's XDP program by source line, in
# build/bench/xdp-lines-*.txt, by scripts/bench-prog-lines.c).
#
# Generators: "xdp" is xdp-trafficgen, which transmits XDP frames that veth
# hands on without an skb, so veth has no RX hash for them; "loop" is
# scripts/bench-xdp-loop.c, XDP frames too, from frames that circulate
# between the two ends of a second veth pair in the generator's namespace
# (for kernels that refuse xdp-trafficgen's BPF_PROG_RUN with live frames:
# "xdp" cases then run with it, and say so); "skb" is
# scripts/bench-afpacket-gen.c sending 64-byte frames through an AF_PACKET
# socket (under a million per second here), for which veth provides the
# hash.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$TOP/build
OVS=$BUILD/ovs
OUT=$BUILD/bench
SECS=${BENCH_SECONDS:-5}
REPEATS=${BENCH_REPEATS:-3}
STATS_SECS=${BENCH_STATS_SECONDS:-2}
# The kernel's BPF statistics as they were, restored after each use.
BPF_STATS_WAS=$(cat /proc/sys/kernel/bpf_stats_enabled 2>/dev/null || echo 0)
IMPLS=${BENCH_IMPLS:-"xdp-bare afxdp afxdp-offload afxdp-offload-sleep upstream system dpdk"}
GEN_NS=afxb-gen SINK_NS=afxb-sink
GEN_MAC=02:00:00:00:0b:01 SINK_MAC=02:00:00:00:0b:02

# The measurements: test, flows, packet size.
CASES=${BENCH_CASES:-"rxdrop:1:64 rxdrop:1000:64 l2fwd:1:64 l2fwd:1000:64 l2fwd:1:1518"}

log() { printf '%s\n' "$*" >&2; }

mkdir -p "$OUT"
bash "$TOP/scripts/bench-prepare.sh" "$BUILD"
XDPT=$BUILD/xdp-tools
UPSTREAM=$BUILD/upstream
DPDK_ROOT=$BUILD/dpdk-ovs

SANDBOX=$OUT/sandbox
CTL=$SANDBOX/vswitchd.ctl
export OVS_RUNDIR=$SANDBOX OVS_LOGDIR=$SANDBOX OVS_DBDIR=$SANDBOX
export OVS_SYSCONFDIR=$SANDBOX
export PATH=$OVS/utilities:$OVS/ovsdb:$PATH
GEN_PID=""

stop_ovs() {
    for d in ovs-vswitchd ovsdb-server; do
        if [ -f "$SANDBOX/$d.pid" ]; then
            kill "$(cat "$SANDBOX/$d.pid")" 2>/dev/null || true
        fi
    done
    for _ in $(seq 50); do
        pgrep -F "$SANDBOX/ovs-vswitchd.pid" >/dev/null 2>&1 || break
        sleep 0.1
    done
    ip link del ovs-netdev 2>/dev/null || true
    ip link del br0 2>/dev/null || true
    # Upstream's afxdp and DPDK's af_xdp driver leave their XDP programs
    # on the interfaces when they are killed; the next run must not find
    # them (this series refuses a program it did not attach).
    for p in ovs-bgen ovs-bsink; do
        ip link set dev $p xdp off 2>/dev/null || true
        ip link set dev $p xdpgeneric off 2>/dev/null || true
    done
}

cleanup() {
    sysctl -qw kernel.bpf_stats_enabled="$BPF_STATS_WAS" 2>/dev/null || true
    [ -n "$GEN_PID" ] && kill "$GEN_PID" 2>/dev/null
    # Also those of an earlier, interrupted run.
    pkill -f "$XDPT/xdp-trafficgen/xdp-trafficgen" 2>/dev/null || true
    pkill -f "$XDPT/xdp-bench/xdp-bench" 2>/dev/null || true
    pkill -f "$OUT/xdp-loop" 2>/dev/null || true
    stop_ovs
    ip link del ovs-bgen 2>/dev/null || true
    ip link del ovs-bsink 2>/dev/null || true
    ip netns del $GEN_NS 2>/dev/null || true
    ip netns del $SINK_NS 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

topology() {
    ip netns add $GEN_NS
    ip netns add $SINK_NS
    ip link add bgen address $GEN_MAC type veth peer name ovs-bgen
    ip link add bsink address $SINK_MAC type veth peer name ovs-bsink
    ip link set bgen netns $GEN_NS
    # The loop generator's veth pair.
    ip -n $GEN_NS link add bloop-a type veth peer name bloop-b
    ip -n $GEN_NS link set bloop-a up
    ip -n $GEN_NS link set bloop-b up
    ip link set bsink netns $SINK_NS
    ip -n $GEN_NS link set bgen up
    ip -n $SINK_NS link set bsink up
    ip link set ovs-bgen up
    ip link set ovs-bsink up
    # The sink counts (and drops) in XDP.
    ip netns exec $SINK_NS "$XDPT/xdp-bench/xdp-bench" drop bsink \
        -i 1000 >/dev/null 2>&1 &
    sleep 1
}

sink_packets() {
    ip -n $SINK_NS -s -j link show bsink \
        | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["rx"]["packets"])'
}

# variant_options IMPL: the interface options of this series' variant IMPL.
variant_options() {
    case $1 in
    afxdp-nohash) echo "options:rx-hash=false" ;;
    afxdp-socket-tx) echo "options:xdp-xmit=false" ;;
    afxdp-socket-tx2048) echo "options:xdp-xmit=false options:tx-budget=2048" ;;
    afxdp-nocsum) echo "options:rx-csum-partial=false" ;;
    afxdp-ring1024) echo "options:ring-size=1024" ;;
    afxdp-busypoll|afxdp-busypoll-defer) echo "options:busy-poll=true" ;;
    esac
}

# start_bare TEST: scripts/bench-xdp-bare.c on ovs-bgen, built for TEST
# (rxdrop: drop; l2fwd: redirect to ovs-bsink).
start_bare() {
    local obj=$OUT/xdp-bare-$1.o def=""
    [ "$1" = l2fwd ] && def=-DSINK_IFINDEX=$(cat /sys/class/net/ovs-bsink/ifindex)
    # shellcheck disable=SC2086
    clang -O2 -g -target bpf $def \
        -I/usr/include/"$(gcc -print-multiarch)" \
        -c "$TOP/scripts/bench-xdp-bare.c" -o "$obj"
    ethtool -K ovs-bgen gro off >/dev/null 2>&1 || true
    ip link set dev ovs-bgen xdpdrv obj "$obj" sec xdp
}

# start_ovs IMPL TEST: ovsdb-server and ovs-vswitchd of IMPL, a netdev
# bridge with ovs-bgen and ovs-bsink as IMPL's ports, PMD on core 1; for
# xdp-bare, start_bare TEST.
start_ovs() {
    local impl=$1 vswitchd schema type=afxdp extra=""
    rm -rf "$SANDBOX"
    mkdir -p "$SANDBOX"
    if [ "$impl" = xdp-bare ]; then
        start_bare "$2"
        return
    fi
    case $impl in
    afxdp-base|afxdp-base-offload)
            vswitchd=${BENCH_BASE:?afxdp-base needs BENCH_BASE}/vswitchd/ovs-vswitchd
            schema=$BENCH_BASE/vswitchd/vswitch.ovsschema ;;
    afxdp*) vswitchd=$OVS/vswitchd/ovs-vswitchd
            schema=$OVS/vswitchd/vswitch.ovsschema
            extra=$(variant_options "$impl") ;;
    upstream) vswitchd=$UPSTREAM/vswitchd/ovs-vswitchd
              schema=$UPSTREAM/vswitchd/vswitch.ovsschema ;;
    system) vswitchd=$OVS/vswitchd/ovs-vswitchd
            schema=$OVS/vswitchd/vswitch.ovsschema type=system ;;
    dpdk) vswitchd=$DPDK_ROOT/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk
          schema=$DPDK_ROOT/usr/share/openvswitch/vswitch.ovsschema
          type=dpdk ;;
    esac

    ovsdb-tool create "$SANDBOX/conf.db" "$schema"
    ovsdb-server --detach --no-chdir --pidfile --log-file \
        --remote=punix:"$SANDBOX/db.sock" "$SANDBOX/conf.db"
    ovs-vsctl --no-wait init -- set Open_vSwitch . \
        other_config:pmd-cpu-mask=0x2
    case $impl in
    afxdp-offload|afxdp-offload-sleep|afxdp-base-offload)
        ovs-vsctl --no-wait set Open_vSwitch . other_config:hw-offload=true
        ;;
    esac
    if [ "$impl" = afxdp-offload-sleep ] || [ "$impl" = afxdp-sleep ]; then
        ovs-vsctl --no-wait set Open_vSwitch . \
            other_config:pmd-sleep-max="${BENCH_SLEEP_MAX:-500}"
    fi
    if [ "$impl" = dpdk ]; then
        ovs-vsctl --no-wait set Open_vSwitch . other_config:dpdk-init=true \
            other_config:dpdk-lcore-mask=0x1 \
            other_config:dpdk-socket-mem=1024 \
            other_config:dpdk-extra="--no-pci"
    fi
    # GRO makes a veth without an XDP program accept XDP frames from its
    # peer (xdp-trafficgen transmits through ndo_xdp_xmit).
    ethtool -K ovs-bgen gro "$([ $type = system ] && echo on || echo off)" \
        >/dev/null 2>&1 || true
    for p in ovs-bgen ovs-bsink; do
        if [ "$impl" = afxdp-busypoll-defer ]; then
            echo 2 > /sys/class/net/$p/napi_defer_hard_irqs
            echo 200000 > /sys/class/net/$p/gro_flush_timeout
        else
            echo 0 > /sys/class/net/$p/napi_defer_hard_irqs
            echo 0 > /sys/class/net/$p/gro_flush_timeout
        fi
    done
    "$vswitchd" --detach --no-chdir --pidfile="$SANDBOX/ovs-vswitchd.pid" \
        --log-file="$SANDBOX/ovs-vswitchd.log" --unixctl="$CTL" \
        -vconsole:off -vsyslog:off
    ovs-vsctl add-br br0 -- set bridge br0 datapath_type=netdev
    for p in ovs-bgen ovs-bsink; do
        if [ $type = dpdk ]; then
            extra="options:dpdk-devargs=net_af_xdp_$p,iface=$p,start_queue=0,queue_count=1"
        fi
        # shellcheck disable=SC2086
        ovs-vsctl add-port br0 $p -- set interface $p type=$type $extra
    done
}

# The packets that offloaded flows have handled in XDP so far (0 without
# offload).
xdp_hits() {
    { ovs-appctl -t "$CTL" dpctl/offload-stats-show 2>/dev/null || true; } \
        | awk '$1 == "xdp_hits:" { n = $2 } END { print n + 0 }'
}

# The CPU time of ovs-vswitchd so far, all threads, in clock ticks; none
# without ovs-vswitchd.
vswitchd_ticks() {
    local pid
    pid=$(cat "$SANDBOX/ovs-vswitchd.pid" 2>/dev/null) || return 0
    awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$pid/stat" 2>/dev/null \
        || true
}

# The id of the XDP program attached to ovs-bgen, if any.
xdp_prog_id() {
    ip -j link show dev ovs-bgen | python3 -c '
import json, sys
x = json.load(sys.stdin)[0].get("xdp", {})
progs = [x["prog"]] if "prog" in x else [a["prog"] for a in x.get("attached", [])]
print(progs[0]["id"] if progs else "")' || true
}

# The run time per run, in ns, of the XDP program attached to ovs-bgen,
# over STATS_SECS with the kernel's BPF statistics on; "nan" without
# bpftool or a program.
xdp_prog_ns() {
    local id a b
    id=$(xdp_prog_id)
    if [ -z "$id" ] || ! command -v bpftool >/dev/null; then
        echo nan
        return
    fi
    prog_stats() {
        bpftool -j prog show id "$id" | python3 -c '
import json, sys
p = json.load(sys.stdin)
print(p.get("run_time_ns", 0), p.get("run_cnt", 0))'
    }
    sysctl -qw kernel.bpf_stats_enabled=1
    a=$(prog_stats)
    sleep "$STATS_SECS"
    b=$(prog_stats)
    sysctl -qw kernel.bpf_stats_enabled="$BPF_STATS_WAS"
    python3 -c "
a, b = '$a'.split(), '$b'.split()
n = int(b[1]) - int(a[1])
print((int(b[0]) - int(a[0])) / n if n > 0 else 'nan')"
}

# The softirq and total jiffies of core 1 so far.
core1_jiffies() {
    awk '$1 == "cpu1" { t = 0; for (i = 2; i <= NF; i++) t += $i;
                        print $8, t }' /proc/stat
}

# The packets that ovs-bgen has received so far, XDP's drops included.
bgen_packets() {
    ip -s -j link show ovs-bgen \
        | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["rx"]["packets"])'
}

# measure IMPL TEST FLOWS SIZE GEN: prints "Mpps cycles/packet softirq%
# vswitchd-CPU% XDP-ns/packet", "nan" for what does not apply.
measure() {
    local impl=$1 test=$2 flows=$3 size=$4 gen=$5 args="" before after stats
    local rate cpp poller="core_id 1:" t0 t1 secs si0 tot0 si1 tot1 softirq
    local hits0 hits1 cpu0 cpu1 cpu bgen0 bgen1 prog_ns perf0 prog_id
    if [ "$impl" != xdp-bare ]; then
        ovs-ofctl del-flows br0
        if [ "$test" = rxdrop ]; then
            ovs-ofctl add-flow br0 actions=drop
        else
            ovs-ofctl add-flow br0 in_port=ovs-bgen,actions=output:ovs-bsink
        fi
    fi
    [ "$flows" -gt 1 ] && args="-d $flows"
    if [ "$gen" = skb ]; then
        ip netns exec $GEN_NS taskset -c 0 "$OUT/afpacket-gen" \
            bgen $SINK_MAC "$flows" 3600 "${BENCH_SKB_RATE:-0}" \
            >/dev/null 2>&1 &
    elif [ "$gen" = loop ]; then
        ip netns exec $GEN_NS taskset -c 0 "$OUT/xdp-loop" \
            "$OUT/xdp-loop.o" bloop-a bloop-b bgen $SINK_MAC "$flows" \
            "$size" 3600 >"$OUT/xdp-loop.log" 2>&1 &
    else
        ip netns exec $GEN_NS taskset -c 0 \
            "$XDPT/xdp-trafficgen/xdp-trafficgen" udp \
            -m $SINK_MAC -M $GEN_MAC -s "$size" $args bgen >/dev/null 2>&1 &
    fi
    GEN_PID=$!
    sleep 1
    ovs-appctl -t "$CTL" dpif-netdev/pmd-stats-clear >/dev/null 2>&1 || true
    t0=$(date +%s.%N)
    read -r si0 tot0 < <(core1_jiffies)
    hits0=$(xdp_hits)
    cpu0=$(vswitchd_ticks)
    bgen0=$(bgen_packets)
    before=$(sink_packets)
    if [ -n "${BENCH_PERF:-}" ]; then
        # Profiles of the PMD's core and of core 0, where the generator
        # and port A's XDP program run, while it measures.
        perf record -q -C 0 -o "$OUT/perf0-$impl-$test-$flows-$size-$gen.data" \
            -- sleep "$SECS" >/dev/null 2>&1 &
        perf0=$!
        perf record -q -C 1 -o "$OUT/perf-$impl-$test-$flows-$size-$gen.data" \
            -- sleep "$SECS" >/dev/null 2>&1
        wait $perf0 || true
    else
        sleep "$SECS"
    fi
    after=$(sink_packets)
    bgen1=$(bgen_packets)
    cpu1=$(vswitchd_ticks)
    hits1=$(xdp_hits)
    read -r si1 tot1 < <(core1_jiffies)
    stats=$(ovs-appctl -t "$CTL" dpif-netdev/pmd-stats-show 2>/dev/null) || true
    t1=$(date +%s.%N)
    secs=$(python3 -c "print($t1 - $t0)")
    prog_ns=$(xdp_prog_ns)
    prog_id=$(xdp_prog_id)
    if [ -n "${BENCH_PERF:-}" ] && [ -n "$prog_id" ]; then
        # Port A's XDP program's share of core 0's samples, by source line.
        perf script -i "$OUT/perf0-$impl-$test-$flows-$size-$gen.data" \
                -F ip,sym 2>/dev/null \
            | "$OUT/prog-lines" "$prog_id" \
                > "$OUT/xdp-lines-$impl-$test-$flows-$size-$gen.txt" 2>&1 \
            || true
    fi
    printf '%s\n' "$stats" > "$OUT/pmd-stats-$impl-$test-$flows-$size-$gen.txt"
    ovs-vsctl get interface ovs-bgen status:rx-hash \
        > "$OUT/rx-hash-$impl-$test-$flows-$size-$gen.txt" 2>&1 || true
    kill $GEN_PID 2>/dev/null || true
    wait $GEN_PID 2>/dev/null || true
    GEN_PID=""

    # For the PMD on core 1, or the main thread, which polls type=system
    # ports: OVS 4.0 prints "Rx packets: N (X Kpps, C cycles/pkt)" (C: busy
    # cycles per packet; none for the main thread), OVS 3.1 "packets
    # received: N" and "avg processing cycles per packet: C".
    [ "$impl" = system ] && poller="main thread:"
    read -r rate cpp < <(printf '%s\n' "$stats" \
                         | awk -v p="$poller" -v secs="$secs" '
        index($0, p) { pmd = 1; next }
        pmd && /^[^ ]/ { exit }
        pmd && /Rx packets:|packets received:/ {
            n = $3
            gsub(/[(,]/, " ")
            for (i = 1; i <= NF; i++) {
                if ($i == "cycles/pkt)") cpp = $(i - 1)
            }
        }
        pmd && /avg processing cycles per packet:/ { cpp = $6 }
        END { if (n != "") print n / secs / 1e6, cpp }')
    # A PMD that received next to nothing (the flows in XDP) has no
    # cycles per packet worth a figure.
    if python3 -c "import sys; sys.exit(float('${rate:-0}') >= 0.01)"; then
        cpp=nan
    fi
    if [ "$test" = l2fwd ]; then
        rate=$(python3 -c "print(($after - $before) / $secs / 1e6)")
    elif [ "$impl" = xdp-bare ]; then
        rate=$(python3 -c "print(($bgen1 - $bgen0) / $secs / 1e6)")
    elif [ "$hits1" -gt "$hits0" ]; then
        # Dropped in XDP, and so never received by the PMD.
        rate=$(python3 -c "print(${rate:-0} + ($hits1 - $hits0) / $secs / 1e6)")
    fi
    softirq=$(python3 -c "print(100 * ($si1 - $si0) / max($tot1 - $tot0, 1))")
    cpu=nan
    if [ -n "$cpu0" ] && [ -n "$cpu1" ]; then
        cpu=$(python3 -c "print(100 * ($cpu1 - $cpu0) / $(getconf CLK_TCK) / $secs)")
    fi
    echo "${rate:-nan} ${cpp:-nan} $softirq $cpu $prog_ns"
}

mkdir -p "$OUT"
gcc -O2 -Wall -o "$OUT/afpacket-gen" "$TOP/scripts/bench-afpacket-gen.c"
gcc -O2 -Wall -o "$OUT/xdp-loop" "$TOP/scripts/bench-xdp-loop.c" -lbpf
gcc -O2 -Wall -o "$OUT/prog-lines" "$TOP/scripts/bench-prog-lines.c" -lbpf
clang -O2 -g -target bpf -I/usr/include/"$(gcc -print-multiarch)" \
    -c "$TOP/scripts/bench-xdp-loop.bpf.c" -o "$OUT/xdp-loop.o"

results=$OUT/results.txt
: > "$results"
cleanup
topology
# xdp-trafficgen needs BPF_PROG_RUN with live frames, which some kernels
# refuse ("Error probing kernel support"): the "xdp" cases then run with
# the loop generator, said once, before any measurement.
xdp_gen=no
for c in $CASES; do
    IFS=: read -r _ _ _ g <<< "$c"
    [ "${g:-xdp}" = xdp ] && xdp_gen=yes
done
if [ $xdp_gen = yes ]; then
    rc=0
    probe=$(ip netns exec $GEN_NS timeout 2 \
                "$XDPT/xdp-trafficgen/xdp-trafficgen" udp \
                -m $SINK_MAC -M $GEN_MAC bgen 2>&1) || rc=$?
    if [ $rc -ne 0 ] && [ $rc -ne 124 ]; then
        log "bench: xdp-trafficgen cannot send on this kernel:" \
            "$(printf '%s\n' "$probe" | tail -n 1)"
        log "bench: the \"xdp\" cases use the loop generator instead"
        xdp_gen=loop
    fi
fi
for r in $(seq "$REPEATS"); do
    for c in $CASES; do
        IFS=: read -r test flows size gen <<< "$c"
        gen=${gen:-xdp}
        [ "$gen" = xdp ] && [ $xdp_gen = loop ] && gen=loop
        label=$test
        [ "$gen" = xdp ] || label=$test-$gen
        for impl in $IMPLS; do
            if ! start_ovs "$impl" "$test" > "$OUT/start-$impl.log" 2>&1; then
                log "bench: $impl did not start (see $OUT/start-$impl.log)"
                echo "$impl $label $flows $size nan nan nan nan nan" >> "$results"
                stop_ovs
                continue
            fi
            m=$(measure "$impl" "$test" "$flows" "$size" "$gen")
            cp "$SANDBOX/ovs-vswitchd.log" "$OUT/vswitchd-$impl.log" 2>/dev/null || true
            stop_ovs
            log "run $r: $impl $test flows=$flows size=$size gen=$gen: $m"
            echo "$impl $label $flows $size $m" >> "$results"
        done
    done
done

/usr/bin/python3 "$TOP/scripts/bench-report.py" "$results" "$OUT"
