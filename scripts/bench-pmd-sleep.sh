#!/bin/bash
# What OVS's PMD load-based sleeping (other_config:pmd-sleep-max) gives and
# costs over afxdp ports, for each maximum sleep in BENCH_SLEEPS: the CPU
# time of ovs-vswitchd (all threads) while no packet reaches the PMD, as
# when every flow runs in XDP, and the round trip of pings that each go
# through the PMD (hw-offload=false, one ping every 50 ms: the PMD has
# slept as long as it may when each arrives, as for the first packets of
# a flow that XDP does not have yet).
#
#   ns0 --veth--> ovs-p0 (afxdp) -> OVS -> ovs-p1 (afxdp) --veth--> ns1
#
# Environment: BENCH_SLEEPS (microseconds, default "0 50 200 500 1000"),
# BENCH_SLEEP_PINGS (default 100).  Output: build/bench/pmd-sleep.md.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
OVS=$TOP/build/ovs
OUT=$TOP/build/bench
SANDBOX=$TOP/build/bench/pmd-sleep
SLEEPS=${BENCH_SLEEPS:-"0 50 200 500 1000"}
PINGS=${BENCH_SLEEP_PINGS:-100}
. "$TOP/scripts/ovs-sandbox.sh"

trap sandbox_cleanup EXIT
mkdir -p "$OUT"

# vswitchd_ticks: ovs-vswitchd's CPU time so far, all threads, in ticks.
vswitchd_ticks() {
    awk '{ sub(/.*\) /, ""); print $12 + $13 }' \
        "/proc/$(cat "$SANDBOX/ovs-vswitchd.pid")/stat"
}

# run SLEEP: prints "idle-CPU% rtt-median rtt-p99 pings" for
# pmd-sleep-max=SLEEP.
run() {
    local t0 t1 c0 c1 rtts
    sandbox_start
    ovs-vsctl set Open_vSwitch . other_config:pmd-cpu-mask=0x2 \
        other_config:pmd-sleep-max="$1"
    ovs-vsctl add-br br0 -- set bridge br0 datapath_type=netdev
    sandbox_add_ns afxs0 p0 10.1.1.1/24
    sandbox_add_ns afxs1 p1 10.1.1.2/24
    for p in p0 p1; do
        ovs-vsctl add-port br0 ovs-$p -- set interface ovs-$p type=afxdp
    done
    ovs-ofctl add-flow br0 actions=normal
    # MAC learning and ARP first; the megaflows then stay (max-idle 10 s).
    ip netns exec afxs0 ping -c 3 -i 0.2 -W 2 10.1.1.2 >/dev/null
    # A quiet second, then the CPU time of three.
    sleep 1
    c0=$(vswitchd_ticks) t0=$(date +%s.%N)
    sleep 3
    c1=$(vswitchd_ticks) t1=$(date +%s.%N)
    rtts=$(ip netns exec afxs0 ping -c "$PINGS" -i 0.05 -W 2 10.1.1.2 \
           | sed -n 's/.*time=\([0-9.]*\) ms.*/\1/p')
    sandbox_cleanup
    python3 - "$c0" "$c1" "$t0" "$t1" "$(getconf CLK_TCK)" "$rtts" <<'EOF'
import statistics, sys
c0, c1, t0, t1, hz = map(float, sys.argv[1:6])
rtt = sorted(float(v) * 1000 for v in sys.argv[6].split())
p99 = rtt[min(len(rtt) - 1, int(len(rtt) * 0.99))]
print(f"{100 * (c1 - c0) / hz / (t1 - t0):.1f} "
      f"{statistics.median(rtt):.0f} {p99:.0f} {len(rtt)}")
EOF
}

rows=""
for s in $SLEEPS; do
    run "$s" > "$OUT/pmd-sleep-row.txt"
    read -r cpu med p99 n < "$OUT/pmd-sleep-row.txt"
    echo "pmd-sleep-max=$s: ovs-vswitchd $cpu% of a core idle, ping RTT median $med us, P99 $p99 us ($n pings)" >&2
    rows="$rows
| $s | $cpu% | $med | $p99 | $n |"
done

{
    echo "# PMD load-based sleeping over afxdp ports"
    echo
    echo "ovs-vswitchd's CPU time while no packet reaches the PMD (% of one"
    echo "core, all threads, 3 s), and the round trip of pings that cross"
    echo "the PMD both ways while it sleeps between them (us)."
    echo
    echo "| pmd-sleep-max (us) | ovs-vswitchd CPU, idle | ping RTT median | P99 | pings |"
    echo "|---|---|---|---|---|$rows"
} | tee "$OUT/pmd-sleep.md"
