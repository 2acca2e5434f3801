#!/bin/bash
# What a miss costs with flow offload to XDP: the round trip of a ping
# whose request and reply each miss (revalidator/purge just removed their
# datapath flows and ukeys: upcall, translation, flow installation and,
# with hw-offload, the flow's installation in XDP, all before the packet
# goes on), against the round trip of one that hits,
# with other_config:hw-offload=false and =true, interleaved.  Half the
# difference is one miss.  The provider's own time per flow installation
# ("flow puts" of dpif/offload/show) is reported too.
#
#   ns0 --veth--> ovs-p0 (afxdp) -> OVS -> ovs-p1 (afxdp) --veth--> ns1
#
# Environment: BENCH_MISS_ROUNDS (pings of each kind per setting, default
# 50).  Output: build/bench/offload-miss.md.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
OVS=$TOP/build/ovs
OUT=$TOP/build/bench
SANDBOX=$TOP/build/bench/offload-miss
ROUNDS=${BENCH_MISS_ROUNDS:-50}
. "$TOP/scripts/ovs-sandbox.sh"

trap sandbox_cleanup EXIT
mkdir -p "$OUT"

# rtt_ms: the round trip of one ping from ns0 to ns1, in milliseconds.
rtt_ms() {
    ip netns exec afxm0 ping -c 1 -W 2 10.1.1.2 \
        | sed -n 's/.*time=\([0-9.]*\) ms.*/\1/p'
}

# run OFFLOAD: prints "miss_median hit_median puts" for hw-offload=OFFLOAD.
run() {
    local offload=$1 miss="" hit=""
    sandbox_start
    ovs-vsctl set Open_vSwitch . other_config:hw-offload="$offload" \
        other_config:pmd-cpu-mask=0x2
    ovs-vsctl add-br br0 -- set bridge br0 datapath_type=netdev
    sandbox_add_ns afxm0 p0 10.1.1.1/24
    sandbox_add_ns afxm1 p1 10.1.1.2/24
    # The namespaces' veths take XDP frames, so that flows may send to
    # them from XDP.
    ip netns exec afxm0 ethtool -K p0 gro on >/dev/null
    ip netns exec afxm1 ethtool -K p1 gro on >/dev/null
    for p in p0 p1; do
        ovs-vsctl add-port br0 ovs-$p -- set interface ovs-$p type=afxdp \
            options:xdp-mode=native
    done
    ovs-ofctl add-flow br0 actions=normal
    # Learn the MAC addresses and resolve ARP first.
    ip netns exec afxm0 ping -c 3 -i 0.2 -W 2 10.1.1.2 >/dev/null
    for _ in $(seq "$ROUNDS"); do
        ovs-appctl revalidator/purge >/dev/null
        miss="$miss $(rtt_ms)"
        hit="$hit $(rtt_ms)"
    done
    if [ "$offload" = true ]; then
        ovs-appctl dpif/offload/show > "$OUT/offload-miss-show.txt"
    fi
    sandbox_cleanup
    python3 - "$miss" "$hit" <<'EOF'
import statistics, sys
miss = [float(v) for v in sys.argv[1].split()]
hit = [float(v) for v in sys.argv[2].split()]
print(f"{statistics.median(miss):.3f} {statistics.median(hit):.3f}")
EOF
}

read -r miss_off hit_off < <(run false)
read -r miss_on hit_on < <(run true)
puts=$(sed -n 's/^ *flow puts: //p' "$OUT/offload-miss-show.txt")

{
    echo "# What a miss costs, with and without flow offload to XDP"
    echo
    echo "Round trip of a ping whose request and reply both miss, and of"
    echo "one that hits, medians of $ROUNDS each (ms).  A miss is half the"
    echo "difference."
    echo
    echo "| hw-offload | miss RTT | hit RTT | one miss |"
    echo "|---|---|---|---|"
    for s in "false $miss_off $hit_off" "true $miss_on $hit_on"; do
        set -- $s
        echo "| $1 | $2 | $3 | $(python3 -c "print(f'{($2 - $3) / 2:.3f}')") |"
    done
    echo
    echo "Provider, with hw-offload=true: flow puts: $puts."
} | tee "$OUT/offload-miss.md"
