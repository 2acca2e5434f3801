#!/bin/bash
# make check-deb: the packages of "make deb" as a user runs them.  Installs
# openvswitch-common and openvswitch-switch (and what they depend on),
# starts Open vSwitch with the packaged ovs-ctl as Debian's init script
# does (no systemd), adds two afxdp ports between network namespaces,
# passes a ping and a TCP transfer, restarts with "ovs-ctl restart" under
# traffic, stops, and removes every package it installed, leaving the
# machine as it was.  One result line per check, then "N passed, N failed".
#
# Refuses to run where Open vSwitch is installed or running already: it
# would not replace a user's installation.
set -uo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
DEB=$TOP/build/deb
OVS_CTL=/usr/share/openvswitch/scripts/ovs-ctl
NS_A=afxdp-deb-a NS_B=afxdp-deb-b
TCP_BYTES=$((8 * 1024 * 1024))
WORK=$(mktemp -d)
passed=0 failed=0

# Only its namespace helpers: the daemons here are the packaged ones.
. "$TOP/scripts/ovs-sandbox.sh"

check() {    # check NAME COMMAND...: one result line
    local name=$1
    shift
    if "$@" >> "$WORK/log" 2>&1; then
        echo "ok: $name"
        passed=$((passed + 1))
    else
        echo "FAILED: $name"
        failed=$((failed + 1))
    fi
}

die() {
    echo "check-deb: $*" >&2
    exit 1
}

[ "$(id -u)" = 0 ] || die "run as root"
ls "$DEB"/openvswitch-switch_*.deb >/dev/null 2>&1 \
    || die "no packages in build/deb: run make deb"
if dpkg-query -W -f='${Status}' openvswitch-switch 2>/dev/null \
       | grep -q "install ok installed" \
   || pgrep -x ovs-vswitchd >/dev/null || pgrep -x ovsdb-server >/dev/null; then
    die "Open vSwitch is installed or running on this machine; not touching it"
fi

# What to restore: the installed packages, whether the package scripts
# may start services, and Open vSwitch's directories.
dpkg-query -W -f='${Package} ${Status}\n' | awk '$NF == "installed" { print $1 }' \
    | sort > "$WORK/before"
OVS_DIRS="/etc/openvswitch /var/lib/openvswitch /var/log/openvswitch
  /var/run/openvswitch /run/openvswitch"
: > "$WORK/dirs-before"
for d in $OVS_DIRS; do
    [ -e "$d" ] && echo "$d" >> "$WORK/dirs-before"
done
POLICY=/usr/sbin/policy-rc.d
own_policy=no

cleanup() {
    set +e
    if [ -x "$OVS_CTL" ]; then
        "$OVS_CTL" stop >> "$WORK/log" 2>&1
    fi
    pkill -x ovs-vswitchd 2>/dev/null
    pkill -x ovsdb-server 2>/dev/null
    sandbox_cleanup             # The namespaces and veths.
    ip link del br0 2>/dev/null
    ip link del ovs-netdev 2>/dev/null
    # Every package that was not there before goes, with its files.
    dpkg-query -W -f='${Package} ${Status}\n' \
        | awk '$NF == "installed" { print $1 }' | sort > "$WORK/after"
    new=$(comm -13 "$WORK/before" "$WORK/after")
    if [ -n "$new" ]; then
        # shellcheck disable=SC2086
        DEBIAN_FRONTEND=noninteractive apt-get purge -y -q $new \
            >> "$WORK/log" 2>&1
    fi
    for d in $OVS_DIRS; do
        grep -qx "$d" "$WORK/dirs-before" || rm -rf "$d"
    done
    [ $own_policy = yes ] && rm -f "$POLICY"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Installing must not start the daemons: this script starts them, with
# ovs-ctl.  (Debian's package scripts ask policy-rc.d.)
if [ ! -e "$POLICY" ]; then
    printf '#!/bin/sh\nexit 101\n' > "$POLICY"
    chmod +x "$POLICY"
    own_policy=yes
fi

echo "== installing openvswitch-common and openvswitch-switch from build/deb"
apt-get update -q >/dev/null 2>&1
check "packages install" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q --no-install-recommends \
    "$DEB"/openvswitch-common_*.deb "$DEB"/openvswitch-switch_*.deb
dpkg-query -W -f='${Package} ${Version}\n' openvswitch-common \
    openvswitch-switch 2>/dev/null
[ -x "$OVS_CTL" ] || die "ovs-ctl is not installed; log: $(tail -n 20 "$WORK/log")"

# The packaged binaries and their own directories, not a build tree's.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
unset OVS_RUNDIR OVS_LOGDIR OVS_DBDIR OVS_SYSCONFDIR OVS_PKGDATADIR

# As Debian's init script starts it: root, --mlockall (ovs-ctl's default),
# no bpffs mounted by anyone for it.
echo "== ovs-ctl start"
check "ovs-ctl start" "$OVS_CTL" --system-id=random start
check "ovs-vswitchd runs with --mlockall" \
    sh -c 'tr "\0" " " < /proc/$(cat /var/run/openvswitch/ovs-vswitchd.pid)/cmdline | grep -q -- --mlockall'

sandbox_add_ns $NS_A debp0 10.1.1.1/24
sandbox_add_ns $NS_B debp1 10.1.1.2/24

ovs-vsctl add-br br0 -- set bridge br0 datapath_type=netdev \
    -- add-port br0 ovs-debp0 -- set interface ovs-debp0 type=afxdp \
    -- add-port br0 ovs-debp1 -- set interface ovs-debp1 type=afxdp \
    >> "$WORK/log" 2>&1
ovs-ofctl add-flow br0 actions=NORMAL >> "$WORK/log" 2>&1

ports_up() {
    local p
    for p in ovs-debp0 ovs-debp1; do
        [ "$(ovs-vsctl get interface $p ofport 2>/dev/null)" -gt 0 ] 2>/dev/null \
            && [ -n "$(ovs-vsctl get interface $p status:xdp-prog-id 2>/dev/null)" ] \
            || return 1
    done
}
wait_for() {    # wait_for SECONDS COMMAND...
    local t=$1
    shift
    for _ in $(seq $((t * 5))); do
        "$@" && return 0
        sleep 0.2
    done
    "$@"
}
prog_ids() {    # the XDP programs attached to the two host veths
    ip -j link show ovs-debp0 | python3 -c 'import json,sys; l=json.load(sys.stdin)[0]; print(l.get("xdp", {}).get("prog", {}).get("id", 0))'
    ip -j link show ovs-debp1 | python3 -c 'import json,sys; l=json.load(sys.stdin)[0]; print(l.get("xdp", {}).get("prog", {}).get("id", 0))'
}

check "two afxdp ports up" wait_for 20 ports_up
ovs-vsctl get interface ovs-debp0 status >> "$WORK/log" 2>&1
check "ping across" ip netns exec $NS_A ping -q -c 3 -i 0.2 -W 2 10.1.1.2

tcp() {
    head -c $TCP_BYTES /dev/urandom > "$WORK/sent"
    ip netns exec $NS_B timeout 30 nc -l 10.1.1.2 5201 > "$WORK/received" &
    local l=$!
    sleep 0.5
    ip netns exec $NS_A timeout 30 nc -N 10.1.1.2 5201 < "$WORK/sent" \
        && wait $l && cmp -s "$WORK/sent" "$WORK/received"
}
check "TCP transfer of $TCP_BYTES bytes intact" tcp

echo "== ovs-ctl restart under traffic"
old_ids=$(prog_ids | tr '\n' ' ')
old_pid=$(cat /var/run/openvswitch/ovs-vswitchd.pid)
ip netns exec $NS_A ping -q -i 0.05 -W 1 10.1.1.2 > "$WORK/ping-restart" 2>&1 &
pinger=$!
sleep 1
check "ovs-ctl restart" "$OVS_CTL" --system-id=random restart
check "a new ovs-vswitchd" \
    test "$(cat /var/run/openvswitch/ovs-vswitchd.pid)" != "$old_pid"
check "ports back after the restart" wait_for 20 ports_up
new_ids=$(prog_ids | tr '\n' ' ')
echo "XDP programs before the restart: $old_ids, after: $new_ids" >> "$WORK/log"
# The old process's programs went with its bpf_links: the new process
# found the devices free (it refuses a program it did not attach) and
# attached its own.
no_old_prog() {
    local id
    for id in $old_ids; do
        case " $new_ids " in *" $id "*) return 1 ;; esac
    done
    ! grep -q "already has an XDP program" /var/log/openvswitch/ovs-vswitchd.log
}
check "no XDP program left by the old process" no_old_prog
check "traffic resumes after the restart" wait_for 10 \
    ip netns exec $NS_A ping -q -c 1 -W 1 10.1.1.2
kill -INT $pinger 2>/dev/null
wait $pinger 2>/dev/null
grep -E 'packets transmitted' "$WORK/ping-restart"
check "TCP after the restart" tcp

echo "== ovs-ctl stop"
check "ovs-ctl stop" "$OVS_CTL" stop
no_prog() { [ "$(prog_ids | tr '\n' ' ')" = "0 0 " ]; }
check "no XDP program left after stop" wait_for 5 no_prog
errors=$(grep -E '\|(ERR|EMER)\|' /var/log/openvswitch/ovs-vswitchd.log)
echo "$errors" >> "$WORK/log"
check "no ERR in ovs-vswitchd.log" test -z "$errors"

cleanup
trap - EXIT
dpkg-query -W -f='${Package} ${Status}\n' | awk '$NF == "installed" { print $1 }' \
    | sort > "$WORK/after"
check "packages removed: the machine's package set as before" \
    cmp -s "$WORK/before" "$WORK/after"
left=""
for d in $OVS_DIRS; do
    grep -qx "$d" "$WORK/dirs-before" || { [ -e "$d" ] && left="$left $d"; }
done
check "no Open vSwitch directory left" test -z "$left"

if [ "$failed" -gt 0 ]; then
    echo "check-deb: log:"
    tail -n 60 "$WORK/log"
fi
cp "$WORK/log" "$DEB/check-deb.log"
rm -rf "$WORK"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
