#!/bin/bash
# PID 1 of nic-check.sh's guest (scripts/guest-common.sh sets it up).  For
# each NIC model, with Open vSwitch on the first NIC of its pair and the
# second in namespace "remote": the checks below, each titled with the
# driver and the socket mode.  Results go to /mnt/checks (build/nic/run),
# the logs of each model's Open vSwitch to /mnt/DRIVER/.
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

WORK=/run/nic-check
. "$(dirname "$0")/guest-common.sh"

SANDBOX=$WORK/ovs
. "$TOP/scripts/ovs-sandbox.sh"
UDP=$TOP/tests/afxdp-udp.py
REMOTE=10.3.0.1 LOCAL=10.3.0.2

# dev_of MAC: the guest's interface with MAC.
dev_of() {
    grep -l "^$1\$" /sys/class/net/*/address 2>/dev/null \
        | head -n 1 | xargs -r dirname | xargs -r basename
}

# wait_for SECONDS COMMAND...: runs COMMAND until it succeeds, for at most
# SECONDS (a bound on a failure, not a pause: under emulation everything
# takes long).
wait_for() {
    local end=$((SECONDS + $1))
    shift
    until "$@"; do
        [ $SECONDS -lt $end ] || return 1
        sleep 0.5
    done
}

port_up() {
    local n
    n=$(ovs-vsctl get interface "$1" ofport 2>/dev/null) && [ "$n" -gt 0 ]
}

status() {     # status PORT KEY: the value of KEY in PORT's status
    ovs-vsctl get interface "$1" status:"$2" 2>/dev/null | tr -d '"'
}

# t RESULT-COMMAND TITLE: one check, titled "DRIVER MODE: TITLE".  A
# check that fails leaves an excerpt in RUN/excerpts (the end of its
# output and of ovs-vswitchd's warnings), which check.sh prints with the
# failures: enough to tell a cause from a CI run's output alone.
t() {
    local title="$DRV $MODE: $2" out=$WORK/check-output
    if eval "$1" > "$out" 2>&1; then
        cat "$out" >> "$LOG"
        check ok "$title"
    else
        cat "$out" >> "$LOG"
        check FAILED "$title"
        {
            echo "--- $title: the check's last lines"
            tail -n 12 "$out"
            echo "--- ovs-vswitchd's last warnings"
            grep -E '\|(WARN|ERR|EMER)\|' "$SANDBOX/ovs-vswitchd.log" \
                2>/dev/null | tail -n 8
            echo "--- the port's status and statistics"
            ovs-vsctl get interface "$NEAR" status statistics 2>&1 \
                | cut -c 1-600
            ovs-appctl coverage/show 2>/dev/null | grep -E 'afxdp' \
                | head -n 12
            echo "--- the sockets"
            ovs-appctl afxdp/pool-show 2>&1 | grep -E '^  '
            echo "--- the device's own counters, those not 0"
            ethtool -S "$NEAR" 2>&1 | grep -v ': 0$' | head -n 16
            echo "--- the kernel's last lines"
            dmesg | tail -n 6
            echo "--- the device's queues, by QEMU"
            vq_status
        } >> "$RUN/excerpts" 2>&1
    fi
}

ping_remote() {
    ip netns exec local ping -c 3 -i 0.3 -W 5 "$REMOTE"
}

# listening NETNS t|u PORT: a TCP or UDP socket in NETNS ("" for this one)
# is bound to PORT.
listening() {
    ${1:+ip netns exec "$1"} ss -ln$2 "sport = :$3" | grep -q ":$3 "
}

udp_both_ways() {
    local f=$WORK/udp-data
    head -c 300000 /dev/urandom > "$f"
    ip netns exec local python3 "$UDP" recv "$LOCAL" 7000 "$f.in" &
    local r=$!
    wait_for 30 listening local u 7000
    ip netns exec remote python3 "$UDP" send "$LOCAL" 7000 "$f"
    wait $r && cmp "$f" "$f.in"
}

# tcp_send FROM-NETNS TO-NETNS ADDRESS PORT MIB: MIB MiB of random data
# over TCP from FROM-NETNS to ADDRESS:PORT, listened to in TO-NETNS; true
# if they arrive whole.
tcp_send() {
    local f=$WORK/tcp-$4
    head -c $(($5 * 1024 * 1024)) /dev/urandom > "$f"
    rm -f "$f.in"
    ip netns exec "$2" timeout 120 nc -l "$3" "$4" > "$f.in" &
    local r=$!
    wait_for 30 listening "$2" t "$4"
    local start=$SECONDS
    ip netns exec "$1" timeout 120 nc -N "$3" "$4" < "$f"
    echo "sender: $?"
    wait $r
    echo "receiver: $?, $(stat -c %s "$f.in") of $(stat -c %s "$f") bytes" \
         "in $((SECONDS - start)) s"
    cmp "$f" "$f.in"
}

tcp_to_local() {
    tcp_send remote local "$LOCAL" 5201 4
}

# The NIC pair of one model, with Open vSwitch on its first NIC.
nic_setup() {      # nic_setup DRIVER NEAR-MAC FAR-MAC
    DRV=$1
    LOG=$RUN/$DRV.log
    "$RUN/modprobe" "$DRV" || return 1
    wait_for 30 test -n "$(dev_of "$2")" || return 1
    wait_for 30 test -n "$(dev_of "$3")" || return 1
    NEAR=$(dev_of "$2") FAR=$(dev_of "$3")
    # The drivers spread over all channels by default, once more after
    # each change of their number (the quick run's virtio-net goes without
    # the device's RSS: nic-check.sh).  No "ethtool -X" here: with a table
    # of the user's, virtio_net tells the device its queue count on each
    # XDP attach by a command that turns QEMU's RSS off.  UDP is hashed on
    # its ports too (igb hashes it on its addresses by default).
    ethtool -L "$NEAR" combined 4 2>/dev/null || true
    ethtool -L "$FAR" combined 4 2>/dev/null || true
    # Asked while igb still resets after "ethtool -L", the hash on UDP
    # ports may not take (one full run had all 32 flows on one queue):
    # asked again until the device says it hashes them, where it has
    # hash settings at all.
    local i
    for i in 1 2 3 4 5 6 7 8 9 10; do
        case $(ethtool -N "$NEAR" rx-flow-hash udp4 sdfn 2>&1) in
        *"not supported"*) break ;;      # No RSS (the quick run's virtio)
        esac
        ethtool -n "$NEAR" rx-flow-hash udp4 2>/dev/null \
            | grep -q "L4 bytes 0 & 1" && break
        sleep 1
    done
    echo "$DRV: UDP hashed on: $(ethtool -n "$NEAR" rx-flow-hash udp4 2>&1 \
                                 | grep -v '^$' | tr '\n' ' ')"
    ip netns add remote
    ip link set "$FAR" netns remote
    ip -n remote addr add "$REMOTE/24" dev "$FAR"
    ip -n remote link set "$FAR" up
    ip -n remote link set lo up
    ip link set "$NEAR" up
    echo "$DRV: near $NEAR, far $FAR; $(ethtool -i "$NEAR" | head -n 2)"
}

ovs_start() {
    sandbox_start
    ovs-vsctl add-br br0 -- set bridge br0 datapath_type=netdev
    sandbox_add_ns local vloc "$LOCAL/24"
    ovs-vsctl add-port br0 ovs-vloc -- set interface ovs-vloc type=afxdp
    ovs-ofctl add-flow br0 actions=NORMAL
}

ovs_stop() {
    mkdir -p "$RUN/$DRV"
    cp "$SANDBOX"/*.log "$RUN/$DRV/" 2>/dev/null
    sandbox_cleanup
    ip netns del remote 2>/dev/null
}

# frames_accounted: afxdp/pool-show, once no frame is in a packet or held
# back: the pool's free frames equal the frames whose state is free, the
# rest are in rings, none was handed out or freed twice.  Waited for: with
# traffic still flowing (the full run's faults go on under a ping flood),
# the command counts frames as they move, and one snapshot may be off by
# the frames in flight; a frame really lost stays missing.
pool_consistent() {
    ovs-appctl afxdp/pool-show > "$1" || return 1
    awk -F': ' '
        /^in packets:/ { packets = $2 }
        /^held back for the kernel:/ { held = $2 }
        /^free in shared list:/ { free += $2 }
        /^free in thread caches:/ { free += $2 }
        /^free by frame state:/ { by_state = $2 }
        /^unaccounted:/ { lost = $2 }
        /^taken from the pool while in use:/ { twice += $2 }
        /^freed while not in a packet:/ { twice += $2 }
        END { exit !(packets == 0 && held == 0 && lost == 0 &&
                     free == by_state && twice == 0) }
        ' "$1"
}
frames_accounted() {
    local pool=$WORK/pool ok=0
    wait_for 60 pool_consistent "$pool" || ok=1
    cat "$pool"
    return $ok
}

# monitor COMMAND: a QEMU monitor command, run by nic-check.sh on the host.
monitor() {
    rm -f "$RUN/monitor-reply"
    echo "$1" > "$RUN/monitor-request"
    wait_for 30 test -e "$RUN/monitor-reply"
}

# vq_status: the virtqueues of the NIC under test as QEMU sees them
# (virtio only), one line each: the descriptors the driver made available
# and those the device took and used.
vq_status() {
    local path q
    [ "$DRV" = virtio_net ] || return 0
    monitor "info virtio" || return 0
    path=$(tr -d '\r' < "$RUN/monitor-reply" | grep '\[virtio-net\]' \
           | head -n 1 | awk '{ print $1 }')
    [ -n "$path" ] || return 0
    for q in 0 1 2 3 4 5 6 7; do
        monitor "info virtio-queue-status $path $q" || continue
        tr -d '\r' < "$RUN/monitor-reply" | awk -v q=$q '
            /^  (inuse|used_idx|last_avail_idx|shadow_avail_idx):/ {
                s = s " " $1 $2
            }
            END { print (q % 2 ? "tx" : "rx") int(q / 2) ":" s }'
    done
}

# A ping flood from the remote host to the veth port, in the background
# while faults happen.
flood_start() {
    ip netns exec remote ping -q -i 0.02 -s 200 "$LOCAL" > /dev/null 2>&1 &
    FLOOD=$!
}
flood_stop() {
    kill "$FLOOD" 2>/dev/null
    wait "$FLOOD" 2>/dev/null
}

resumes() {
    wait_for 90 ping_remote
}

no_xdp_left() {      # no XDP program on the NIC once ovs-vswitchd is gone
    ! ip link show "$NEAR" | grep -q "prog/xdp"
}

queue_rx() {         # queue_rx PORT QUEUE: its packets by the port's stats
    ovs-vsctl get interface "$1" statistics:xsk_queue_$2_rx_packets \
        2>/dev/null || echo 0
}

# udp_flows FIRST-PORT N ADDRESS PORT: from the remote host, 32 UDP flows
# of N datagrams each to ADDRESS:PORT, from source ports FIRST-PORT on,
# 1931 apart (mod 64000, above 1024): ports that differ in most of their
# bits, so that the queues they hash to depend on many bits of the
# device's random RSS key (ports that differ in their low bits only would
# all land on one or two queues for one key in 64).
udp_flows() {
    ip netns exec remote python3 -c '
import socket, sys
first, n, addr, port = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
for p in range(32):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("'$REMOTE'", 1024 + (first + p * 1931) % 64000))
    for _ in range(n):
        s.sendto(b"x" * 100, (addr, port))
' "$@"
}

rss_spreads() {
    local before=() used=0
    for q in 0 1 2 3; do before[q]=$(queue_rx "$NEAR" $q); done
    udp_flows 20000 20 "$LOCAL" 9
    # The port's statistics reach the database every 5 seconds.
    wait_for 30 eval 'sum=0; for q in 0 1 2 3; do
                          sum=$((sum + $(queue_rx "$NEAR" $q) - before[q]))
                      done; [ $sum -ge 100 ]'
    for q in 0 1 2 3; do
        n=$(queue_rx "$NEAR" $q)
        echo "queue $q: $((n - before[q])) packets"
        [ $((n - before[q])) -gt 0 ] && used=$((used + 1))
    done
    [ $used -ge 2 ]
}

# UDP flows from the remote host to the guest's own address on the NIC:
# some must reach the guest's stack (queues left to the kernel) and some
# the afxdp port (the others).
host_and_port_share() {
    local got=$WORK/host-got
    local vloc_rx=/sys/class/net/vloc/statistics/rx_packets
    local before=$(ip netns exec local cat $vloc_rx)
    python3 -c '
import socket, select, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("'$HOSTADDR'", 9999))
s.settimeout(20)
ports = set()
try:
    while True:
        _, a = s.recvfrom(2048)
        ports.add(a[1])
        s.settimeout(3)
except socket.timeout:
    pass
print(len(ports))
' > "$got" &
    local r=$!
    wait_for 30 listening "" u 9999
    # The remote host knows the host's MAC beforehand: its ARP request
    # might come in by a queue of the port (with rss=off, the one its tap
    # queue feeds), and reach Open vSwitch, not the host.
    ip -n remote neigh replace "$HOSTADDR" lladdr "$NEARMAC" dev "$FAR"
    udp_flows 21000 5 "$HOSTADDR" 9999
    wait $r
    ip -n remote neigh del "$HOSTADDR" dev "$FAR"
    # What reached the port's queues, Open vSwitch floods to the veth
    # (the destination MAC is the NIC's, which it has not learned).
    local after=$(ip netns exec local cat $vloc_rx)
    echo "flows to the host's stack: $(cat "$got");" \
         "packets through the port: $((after - before))"
    [ "$(cat "$got")" -gt 0 ] && [ $((after - before)) -gt 0 ]
}

tcp_from_local() {   # partial checksums from the veth, out of the NIC
    local ok=0
    tcp_send local remote "$REMOTE" 5202 2 || ok=1
    ip netns exec remote nstat -asz TcpInCsumErrors
    return $ok
}

offloaded_hits() {
    ovs-appctl dpif/offload/show
    ovs-appctl dpctl/dump-flows -m type=offloaded | grep -q "packets:[1-9]"
}

# port_pkts PORT rx|tx: the port's packet counter, read from the device
# (not the database, which is 5 seconds behind).
port_pkts() {
    ovs-ofctl dump-ports br0 "$1" | sed -n "s/.*$2 pkts=\([0-9]*\).*/\1/p"
}

# far_rx: the packets that the remote host's NIC received.
far_rx() {
    ip netns exec remote cat /sys/class/net/"$FAR"/statistics/rx_packets
}

# rate TEST: for rxdrop (every frame from the remote host dropped) or
# l2fwd (sent back out of the NIC), the frames per second that the port
# received, or that came back to the remote host, over 10 seconds of
# 64-byte frames in 64 UDP flows from the remote host; fails if none.
# (Not the port's tx counter: it is the device's, and virtio_net counts
# the packets that it sends from zero-copy sockets in its bytes only.)
# Under emulation the figure says little by itself: it is compared
# between the socket modes.
rate() {
    local count="port_pkts $NEAR rx" action=drop before after
    if [ "$1" = l2fwd ]; then
        # Back to the remote NIC, from the near NIC's address: a learning
        # bridge cables the NICs.  With the source address left as it came,
        # a frame that the remote host sends itself during the test (an
        # ARP or neighbour probe) would come back from this side with the
        # remote NIC's address as its source: the bridge would then learn
        # that address on the near NIC's tap and drop every later frame
        # sent to it (never out of the port it came in by), until the
        # remote host sends again.  Seen on igb here: 0 frames/s.
        count=far_rx
        action="mod_dl_src:$NEARMAC,mod_dl_dst:$FARMAC,in_port"
    fi
    ovs-ofctl del-flows br0
    ovs-ofctl add-flow br0 "in_port=$NEAR,actions=$action"
    ip netns exec remote "$RUN/afpacket-gen" "$FAR" "$NEARMAC" 64 14 \
        > /dev/null &
    local gen=$!
    sleep 2
    before=$($count)
    sleep 10
    after=$($count)
    wait $gen
    ovs-ofctl del-flows br0
    ovs-ofctl add-flow br0 actions=NORMAL
    echo "$DRV $MODE $1: $(((after - before) / 10)) frames/s" \
        | tee -a "$RUN/rates"
    [ $((after - before)) -gt 0 ]
}

# rxdrop and l2fwd in zero-copy, then in copy mode, on the same NIC.
rates() {
    local mode
    for mode in native-with-zerocopy native; do
        ovs-vsctl set interface "$NEAR" options:xdp-mode=$mode
        if [ $mode = native ]; then
            MODE="copy mode"
            wait_for 60 eval '[ "$(status "$NEAR" zero-copy)" = false ] && port_up "$NEAR"'
        else
            wait_for 60 eval '[ "$(status "$NEAR" zero-copy)" = true ] && port_up "$NEAR"'
        fi
        t 'rate rxdrop' "rxdrop rate (build/nic/run/rates)"
        t 'rate l2fwd' "l2fwd rate (build/nic/run/rates)"
    done
    ovs-vsctl set interface "$NEAR" options:xdp-mode=native-with-zerocopy
    MODE=zero-copy
    wait_for 60 eval '[ "$(status "$NEAR" zero-copy)" = true ]'
    t resumes "zero-copy again after copy mode"
}

# Port deletion under traffic: the zero-copy queues' frames are held back
# until the kernel has released the sockets' buffer pools, then return.
port_deletion() {
    ovs-vsctl del-port br0 "$NEAR"
    t frames_accounted "port deleted under traffic: held-back frames return"
    ovs-appctl afxdp/pool-show | grep "written by" | sed "s/^/$DRV /" | tee -a "$RUN/features"
    t no_xdp_left "port deleted: no XDP program left on the NIC"
    ovs-vsctl add-port br0 "$NEAR" -- set interface "$NEAR" type=afxdp \
        options:xdp-mode=native-with-zerocopy options:n_rxq=4
    if [ "$DRV" = virtio_net ] && [ "${QEMU_MAJOR:-0}" -lt 8 ]; then
        # Seen here: under QEMU 7.2 a virtio-net queue that had a
        # zero-copy socket passes no traffic to the next one (queue
        # reset); under 10.0 it does.
        check skipped "$DRV $MODE: port added again -- QEMU $QEMU_MAJOR's virtio-net passes no traffic to a second zero-copy socket on a queue (10.0 does)"
        wait_for 60 port_up "$NEAR"
        return
    fi
    t 'wait_for 60 port_up "$NEAR" && resumes' "port added again"
}

model_checks() {
    MODE=zero-copy
    HOSTADDR=10.4.0.1
    ip -n remote addr add 10.4.0.2/24 dev "$FAR"
    ovs-vsctl add-port br0 "$NEAR" -- set interface "$NEAR" type=afxdp \
        options:xdp-mode=native-with-zerocopy options:n_rxq=4
    wait_for 60 port_up "$NEAR"
    ovs-vsctl get interface "$NEAR" status error >> "$LOG" 2>&1
    t '[ "$(status "$NEAR" zero-copy)" = true ]' \
      "the port reports zero-copy"
    t 'wait_for 60 port_up ovs-vloc && ping_remote' "ping to a veth port"
    t udp_both_ways "UDP to a veth port"
    t tcp_to_local "TCP to a veth port"
    if [ "$QUICK" = yes ]; then
        flood_start
        port_deletion
        flood_stop
        t frames_accounted "every frame accounted for at the end"
        return
    fi
    t rss_spreads "n_rxq=4: RSS spreads flows over the queues"

    # Checksums: the driver has no TX-metadata checksum, so the port
    # finishes them in software.
    ovs-vsctl set interface "$NEAR" options:tx-csum-offload=true
    t 'status "$NEAR" tx-csum-offload | grep -q "^unavailable: "' \
      "tx-csum-offload: reported unavailable"
    t tcp_from_local "TCP from a veth port (partial checksums) out of the NIC"
    ovs-vsctl remove interface "$NEAR" options tx-csum-offload

    # The device's RX hash.
    echo "$DRV rx-hash: $(status "$NEAR" rx-hash)" | tee -a "$RUN/features"
    echo "$DRV rx-vlan: $(status "$NEAR" rx-vlan)" | tee -a "$RUN/features"

    # Jumbo frames: the driver has no zero-copy multi-buffer.
    ovs-vsctl set interface "$NEAR" mtu_request=9000
    # ovs-vsctl returns once the bridge has tried the MTU: a driver that
    # refuses it has; otherwise the port's setup at MTU 9000 says how it
    # went.
    wait_for 60 eval '[ "$(cat /sys/class/net/$NEAR/mtu)" != 9000 ] || [ -n "$(status "$NEAR" afxdp-error)" ] || status "$NEAR" multi-buffer | grep -q "^on"'
    echo "$DRV mtu 9000: device mtu $(cat /sys/class/net/$NEAR/mtu)," \
         "afxdp-error $(status "$NEAR" afxdp-error)," \
         "multi-buffer $(status "$NEAR" multi-buffer)" | tee -a "$RUN/features"
    if [ "$(cat /sys/class/net/$NEAR/mtu)" != 9000 ]; then
        # The driver refuses the MTU while XDP is attached (igb).
        t '[ "$(status "$NEAR" zero-copy)" = true ] && ping_remote' \
          "MTU 9000 refused by the driver with XDP attached; the port goes on"
        ovs-vsctl remove interface "$NEAR" mtu_request 9000
    else
        t 'status "$NEAR" afxdp-error | grep -q "no zero-copy support for packets larger than a frame"' \
          "MTU 9000: a clear error (no zero-copy multi-buffer)"
        # The fallback: best-effort takes copy mode with multi-buffer.
        ovs-vsctl set interface "$NEAR" options:xdp-mode=best-effort
        ip netns exec remote ip link set "$FAR" mtu 9000
        ip netns exec local ip link set vloc mtu 9000
        ovs-vsctl set interface ovs-vloc mtu_request=9000
        wait_for 60 eval 'status "$NEAR" multi-buffer | grep -q "^on"'
        MODE="copy mode"
        t '[ "$(status "$NEAR" zero-copy)" = false ] && status "$NEAR" multi-buffer | grep -q "^on" && ip netns exec local ping -c 3 -i 0.3 -W 5 -s 8000 -M do "$REMOTE"' \
          "MTU 9000 with xdp-mode=best-effort: copy mode, multi-buffer, jumbo ping"
        ovs-vsctl set interface "$NEAR" options:xdp-mode=native-with-zerocopy \
            -- remove interface "$NEAR" mtu_request 9000 \
            -- remove interface ovs-vloc mtu_request 9000
        ip netns exec remote ip link set "$FAR" mtu 1500
        ip netns exec local ip link set vloc mtu 1500
        ip link set "$NEAR" mtu 1500
    fi
    MODE=zero-copy
    wait_for 60 eval '[ "$(status "$NEAR" zero-copy)" = true ]'
    t resumes "traffic after the refused MTU"

    # Queues 0 and 1 left to the kernel, with an address on the NIC.
    ip addr add "$HOSTADDR/24" dev "$NEAR"
    ovs-vsctl set interface "$NEAR" options:start-queue=2 options:n_rxq=2
    wait_for 60 eval '[ "$(status "$NEAR" start-queue)" = 2 ]'
    t host_and_port_share \
      "start-queue=2: the kernel keeps queues 0-1, the port has 2-3"
    ovs-vsctl remove interface "$NEAR" options start-queue \
        -- set interface "$NEAR" options:n_rxq=4 \
           options:pass-to-kernel=local
    wait_for 60 eval '[ "$(status "$NEAR" pass-to-kernel)" = local ] && [ "$(status "$NEAR" pass-to-kernel-addresses)" -ge 1 ]'
    t 'wait_for 30 ip netns exec remote ping -c 3 -i 0.3 -W 5 "$HOSTADDR" && ping_remote' \
      "pass-to-kernel=local: the host answers, the veth port too"
    ovs-vsctl remove interface "$NEAR" options pass-to-kernel
    ip addr del "$HOSTADDR/24" dev "$NEAR"

    rates

    # Faults, under a ping flood.
    flood_start
    # Fewer channels than a zero-copy socket's queue: the kernel refuses.
    # Then, with the port on 2 queues, 2 channels and back to 4: the port
    # follows (virtio_net takes no channel change while XDP is attached).
    t '! ethtool -L "$NEAR" combined 2 && resumes' \
      "ethtool -L below a zero-copy socket's queue refused; traffic goes on"
    ovs-vsctl set interface "$NEAR" options:n_rxq=2
    wait_for 60 eval '[ "$(status "$NEAR" n_rxq)" = 2 ]'
    # Packets that RSS sends to the queues without a socket go to the
    # kernel: RSS over the port's 2 only.
    # A change of the channel count sets the RSS table over all channels
    # again (igb), so it is set over the port's 2 again after.
    ethtool -X "$NEAR" equal 2
    if ethtool -L "$NEAR" combined 2; then
        t 'resumes && ethtool -L "$NEAR" combined 4 && ethtool -X "$NEAR" equal 2 && resumes && [ "$(status "$NEAR" zero-copy)" = true ]' \
          "ethtool -L 2 then 4 under traffic: the port follows"
    else
        t resumes "ethtool -L refused by the driver while XDP is attached; traffic goes on"
    fi
    ovs-vsctl set interface "$NEAR" options:n_rxq=4
    wait_for 60 eval '[ "$(status "$NEAR" n_rxq)" = 4 ]'
    ethtool -X "$NEAR" default
    t 'monitor "set_link $NETID off" && sleep 3 && monitor "set_link $NETID on" && resumes' \
      "link down and up (QEMU set_link) under traffic"
    local devid=$(basename "$(readlink -f /sys/class/net/"$NEAR"/device)")
    local drvdir=$(readlink -f /sys/class/net/"$NEAR"/device/driver)
    # The device comes back with the default channels (one per CPU): the
    # port sets itself up again once it has the 4 queues it asks for.
    t 'echo "$devid" > "$drvdir/unbind" && wait_for 30 grep -q "$NEAR: no such interface" "$SANDBOX/ovs-vswitchd.log" && echo "$devid" > "$drvdir/bind" && wait_for 30 test -n "$(dev_of $NEARMAC)" && [ "$(dev_of $NEARMAC)" = "$NEAR" ] && ip link set "$NEAR" up && { ethtool -L "$NEAR" combined 4; echo "ethtool -L 4: $?"; ethtool -l "$NEAR" | tail -n 5; true; } && resumes && [ "$(status "$NEAR" zero-copy)" = true ]' \
      "driver unbind and rebind under traffic"
    local n=$(ls -d /sys/class/net/"$NEAR"/queues/rx-* | wc -l)
    if [ "$n" -lt 4 ]; then
        # Seen on igb: bound again, it has 2 channels and refuses 4
        # (ethtool -L: Invalid argument); the port waits and says why.
        check skipped "$DRV $MODE: the checks after the driver's rebind -- the device came back with $n queues and refuses 4 ($DRV.log)"
        flood_stop
        return
    fi
    t frames_accounted "every frame accounted for after the faults"
    ovs-appctl afxdp/pool-show | grep "written by" | sed "s/^/$DRV /" | tee -a "$RUN/features"

    port_deletion

    # kill -9 and restart, with flow offload from then on (it takes a
    # restart); the veth's peer takes XDP frames through GRO.
    ip netns exec local ethtool -K vloc gro on >/dev/null
    ovs-vsctl set Open_vSwitch . other_config:hw-offload=true
    kill -9 "$(cat "$OVS_RUNDIR/ovs-vswitchd.pid")"
    t 'wait_for 30 no_xdp_left' \
      "ovs-vswitchd killed: no XDP program left on the NIC"
    ovs-vswitchd --detach --no-chdir --pidfile --log-file \
        -vconsole:off -vsyslog:off
    t 'wait_for 60 port_up "$NEAR" && resumes && [ "$(status "$NEAR" zero-copy)" = true ]' \
      "ovs-vswitchd killed and restarted: traffic resumes, zero-copy"
    flood_stop
    t 'ping_remote && tcp_to_local && offloaded_hits' \
      "hw-offload=true: flows from the NIC to the veth run in XDP"
    t 'status "$NEAR" flow-offload | grep "^in only: zero-copy sockets on the device"' \
      "hw-offload=true: no flow sends into the zero-copy NIC from XDP"
    t frames_accounted "every frame accounted for at the end"
    ovs-appctl afxdp/pool-show >> "$LOG" 2>&1
    dmesg | grep -iE "xdp|xsk|virtio|WARN|BUG" | tail -n 30 >> "$LOG"
}

{
    echo "nic-check: guest kernel $(uname -r)"
    hostname nic-check
    ip link set lo up
    "$RUN/modprobe" -a veth tun

    for model in $MODELS; do
        case $model in
        virtio) NETID=v0 NEARMAC=52:54:00:a0:00:01 FARMAC=52:54:00:a0:00:02
                drv=virtio_net ;;
        igb) NETID=i0 NEARMAC=52:54:00:b0:00:01 FARMAC=52:54:00:b0:00:02
             drv=igb ;;
        esac
        if nic_setup $drv $NEARMAC $FARMAC; then
            ovs_start
            model_checks
            ovs_stop
        else
            check FAILED "$drv: the NICs did not come up"
        fi
    done
} > "$RUN/guest.log" 2>&1

summary
