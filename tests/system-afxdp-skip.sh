#!/bin/sh
# Usage: system-afxdp-skip.sh "TEST TITLE"
#        system-afxdp-skip.sh --tx-off "TEST TITLE"
#
# Exits 0 (skip) when TEST TITLE is listed in system-afxdp-skip.txt beside
# this script and its condition holds, printing the reason; exits 1 (run)
# otherwise.
#
# A line of the list is "TITLE | REASON".  A reason of the form
# "needs kernel device TYPE" holds only where the kernel cannot create a
# TYPE device, "needs tc filter KIND" only where tc cannot add a KIND
# filter with a police action, "needs kernel module NAME" only where NAME
# is neither loaded nor loadable: the test runs on kernels that can.  A
# reason "tx off: WHY" does not skip the test: with --tx-off, the script
# exits 0 for it, and the test's namespace veths get their transmit
# checksum offload switched off.
tx_off=no
if [ "$1" = --tx-off ]; then
    tx_off=yes
    shift
fi
title=$1
list=$(dirname "$0")/system-afxdp-skip.txt

reason=$(awk -v t="$title" '
    /^[[:space:]]*(#|$)/ { next }
    {
        i = index($0, " | ")
        if (i && substr($0, 1, i - 1) == t) {
            print substr($0, i + 3)
            exit
        }
    }' "$list")
[ -n "$reason" ] || exit 1
case $reason in
"tx off: "*) [ $tx_off = yes ] && exit 0 || exit 1 ;;
*) [ $tx_off = yes ] && exit 1 ;;
esac

# Probe for a device type in a throw-away namespace.
kernel_has_device() {
    ns=afxdp-probe-$$
    ip netns add "$ns" 2>/dev/null || return 1
    case $1 in
    vlan)
        ip -n "$ns" link add probe1 type veth peer name probe2 >/dev/null 2>&1
        args="link probe1 type vlan id 10"
        ;;
    gre|gretap|erspan|ip6gre|ip6gretap|ip6erspan|ipip|sit|ip6tnl)
        args="type $1 local 10.255.0.1 remote 10.255.0.2"
        case $1 in
        ip6*) args="type $1 local fc00::1 remote fc00::2" ;;
        esac
        case $1 in
        erspan|ip6erspan) args="$args seq key 1 erspan_ver 1 erspan 1" ;;
        esac
        ;;
    geneve) args="type geneve id 1 remote 10.255.0.2" ;;
    vxlan) args="type vxlan id 1 dstport 4789" ;;
    vrf) args="type vrf table 10" ;;
    *) args="type $1" ;;
    esac
    ip -n "$ns" link add probe0 $args >/dev/null 2>&1
    rc=$?
    ip netns del "$ns"
    return $rc
}

# Probe for a tc classifier that can carry a police action.
kernel_has_tc_filter() {
    ns=afxdp-probe-$$
    ip netns add "$ns" 2>/dev/null || return 1
    ip -n "$ns" link add probe1 type veth peer name probe2 \
        && tc -n "$ns" qdisc add dev probe1 ingress \
        && tc -n "$ns" filter add dev probe1 parent ffff: $1 \
               action police rate 1mbit burst 10k >/dev/null 2>&1
    rc=$?
    ip netns del "$ns"
    return $rc
}

case $reason in
"needs kernel device "*)
    type=${reason#needs kernel device }
    kernel_has_device "${type%% *}" && exit 1
    ;;
"needs tc filter "*)
    kind=${reason#needs tc filter }
    kernel_has_tc_filter "${kind%% *}" && exit 1
    ;;
"needs kernel module "*)
    module=${reason#needs kernel module }
    module=${module%% *}
    { [ -d "/sys/module/$module" ] || modprobe -q "$module"; } && exit 1
    ;;
esac
echo "afxdp-skip: $title: $reason"
exit 0
