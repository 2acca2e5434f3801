#!/bin/bash
# The main job: two network namespaces joined to a userspace (netdev) bridge
# through veth pairs whose host ends are afxdp ports; a ping and a TCP
# transfer across; then the PMD and port statistics.  Tears everything down
# on exit, Ctrl-C or failure.
set -euo pipefail

OVS=$(cd "${1:?usage: demo.sh OVS_TREE}" && pwd)
TOP=$(cd "$(dirname "$0")/.." && pwd)
SANDBOX=${DEMO_SANDBOX:-$TOP/build/demo}
NS_A=afxdp-demo-a NS_B=afxdp-demo-b
TCP_BYTES=$((4 * 1024 * 1024))

. "$TOP/scripts/ovs-sandbox.sh"

fail() {
    echo "demo: FAILED: $*" >&2
    echo "demo: last lines of ovs-vswitchd.log:" >&2
    tail -n 20 "$SANDBOX/ovs-vswitchd.log" >&2 || true
    exit 1
}

trap sandbox_cleanup EXIT
trap 'echo "demo: interrupted" >&2; exit 130' INT TERM

step() { printf '\n== %s\n' "$*"; }

step "Starting ovsdb-server and ovs-vswitchd in $SANDBOX"
sandbox_start
ovs-vsctl add-br br0 -- set bridge br0 datapath_type=netdev

step "Namespaces $NS_A (10.1.1.1) and $NS_B (10.1.1.2) on afxdp ports"
sandbox_add_ns "$NS_A" dema 10.1.1.1/24
sandbox_add_ns "$NS_B" demb 10.1.1.2/24
ovs-vsctl add-port br0 ovs-dema -- set interface ovs-dema type=afxdp \
          -- add-port br0 ovs-demb -- set interface ovs-demb type=afxdp
ovs-ofctl add-flow br0 actions=NORMAL
for p in ovs-dema ovs-demb; do
    for _ in $(seq 50); do
        [ "$(ovs-vsctl get interface $p ofport)" -gt 0 ] 2>/dev/null && break
        sleep 0.2
    done
    [ "$(ovs-vsctl get interface $p ofport)" -gt 0 ] 2>/dev/null \
        || fail "port $p did not come up: $(ovs-vsctl get interface $p error)"
done

ours=no
if ovs-appctl list-commands | grep '^  afxdp/' >/dev/null; then
    ours=yes
    echo "afxdp implementation: ovs-afxdp (this series)"
else
    echo "afxdp implementation: upstream Open vSwitch 4.0.0 lib/netdev-afxdp.c"
fi

step "ping $NS_A -> $NS_B"
ip netns exec "$NS_A" ping -c 5 -i 0.2 -W 2 10.1.1.2 || fail "ping"

step "TCP: $TCP_BYTES bytes $NS_A -> $NS_B"
rx=$SANDBOX/tcp-received
ip netns exec "$NS_B" timeout 30 nc -l 10.1.1.2 5201 > "$rx" &
listener=$!
sleep 0.5
head -c "$TCP_BYTES" /dev/urandom > "$SANDBOX/tcp-sent"
ip netns exec "$NS_A" timeout 30 nc -N 10.1.1.2 5201 < "$SANDBOX/tcp-sent" \
    || fail "TCP sender"
wait "$listener" || fail "TCP receiver"
cmp -s "$SANDBOX/tcp-sent" "$rx" \
    || fail "received $(stat -c %s "$rx") of $TCP_BYTES bytes"
echo "received all $TCP_BYTES bytes intact"

step "ovs-appctl dpif-netdev/pmd-stats-show"
ovs-appctl dpif-netdev/pmd-stats-show
rx_pkts=$(ovs-appctl dpif-netdev/pmd-stats-show \
          | awk '/Rx packets:/ {n += $3} END {print n + 0}')
[ "$rx_pkts" -gt 0 ] || fail "PMD threads received no packets"

for p in ovs-dema ovs-demb; do
    step "$p: statistics"
    ovs-vsctl get interface $p statistics | tr ',' '\n' | sed 's/^ *//'
    step "$p: status"
    ovs-vsctl get interface $p status
done

if [ $ours = yes ]; then
    step "ovs-appctl afxdp/pool-show"
    ovs-appctl afxdp/pool-show
fi

step "Log lines of level WARN or above"
grep -E '\|(WARN|ERR|EMER)\|' "$SANDBOX/ovs-vswitchd.log" || echo "(none)"

printf '\ndemo: OK, %s packets received by PMD threads\n' "$rx_pkts"
