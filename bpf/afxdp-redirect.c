/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Copyright (c) 2026 The ovs-afxdp authors.
 *
 * XDP programs for afxdp ports: a packet received on queue N goes to the
 * AF_XDP socket in slot N of 'xsks_map'; where no socket is bound to that
 * queue, the packet goes on to the kernel's network stack (XDP_PASS).
 *
 * afxdp_redirect_hash also asks the device for the hash it computed over
 * the packet (kernel 6.3 or later, a program bound to the device) and
 * leaves it for user space in front of the packet (afxdp-prog.h).
 *
 * afxdp_redirect_xmit also transmits for user space (afxdp-prog.h, "XDP
 * transmit", helpers of Linux 5.18); a device-bound program cannot be run
 * that way.
 *
 * afxdp_redirect does neither, and needs nothing newer than the AF_XDP
 * sockets themselves.  User space loads one of the three programs.
 *
 * All three first pass to the kernel's stack the packets that steering
 * gives it (afxdp-prog.h, "Steering").
 */

#include <linux/bpf.h>
#include <linux/icmpv6.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "afxdp-prog.h"

struct {
    __uint(type, BPF_MAP_TYPE_XSKMAP);
    __uint(max_entries, AFXDP_MAX_QUEUES);
    __type(key, __u32);
    __type(value, __u32);
} xsks_map SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct afxdp_steer_cfg);
} steer_cfg SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, AFXDP_STEER_MAX_ADDRS);
    __type(key, struct afxdp_steer_addr);
    __type(value, __u8);
} steer_addrs SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, AFXDP_STEER_MAX_RULES);
    __type(key, struct afxdp_steer_rule);
    __type(value, __u8);
} steer_rules SEC(".maps");

/* Both sized by user space before loading. */
struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(map_flags, BPF_F_MMAPABLE);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct afxdp_xmit_slot);
} xmit_slots SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(map_flags, BPF_F_MMAPABLE);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct afxdp_xmit_ctl);
} xmit_ctl SEC(".maps");

/* The loopback device's index in every network namespace: a BPF_PROG_RUN
 * runs the program as if the packet came in there. */
#define LOOPBACK_IFINDEX 1

/* The kernel's type for the hash's kind; only its size matters here. */
enum xdp_rss_hash_type {
    XDP_RSS_TYPE_NONE = 0,
};

/* Weak: a kernel without it (before 6.3) still loads the object's other
 * programs; user space loads afxdp_redirect_hash only where it exists. */
extern int bpf_xdp_metadata_rx_hash(const struct xdp_md *ctx, __u32 *hash,
                                    enum xdp_rss_hash_type *rss_type)
    __ksym __weak;

/* Steering. */

/* Whether IPv4 address 'addr' (network byte order) is the device's. */
static __always_inline int
local_ipv4(__be32 addr)
{
    struct afxdp_steer_addr key = {
        .addr = { [10] = 0xff, [11] = 0xff },
    };

    __builtin_memcpy(&key.addr[12], &addr, 4);
    return bpf_map_lookup_elem(&steer_addrs, &key) != 0;
}

/* Whether the 16 bytes at 'addr' are one of the device's IPv6 addresses. */
static __always_inline int
local_ipv6(const void *addr)
{
    struct afxdp_steer_addr key;

    __builtin_memcpy(key.addr, addr, sizeof key.addr);
    return bpf_map_lookup_elem(&steer_addrs, &key) != 0;
}

static __always_inline int
rule(__be16 ethertype, __u8 proto, __be16 port)
{
    struct afxdp_steer_rule key = {
        .ethertype = ethertype,
        .proto = proto,
        .port = port,
    };

    return bpf_map_lookup_elem(&steer_rules, &key) != 0;
}

/* Whether a packet of EtherType 'type' and IP protocol 'proto' matches a
 * rule by protocol or, if 'has_l4' (its transport header starts at 'l4'),
 * by destination port.  (Without CAP_PERFMON, the verifier lets a packet
 * pointer be compared only with another.) */
static __always_inline int
rule_l4(__be16 type, __u8 proto, const void *l4, int has_l4,
        const void *end)
{
    if (rule(type, proto, 0)) {
        return 1;
    }
    if (has_l4 && (proto == IPPROTO_TCP || proto == IPPROTO_UDP
                   || proto == IPPROTO_SCTP)) {
        /* The destination port is bytes 2 and 3 of all three headers. */
        const __be16 *ports = l4;

        if ((const void *) (ports + 2) <= end) {
            return rule(type, proto, ports[1]);
        }
    }
    return 0;
}

static __always_inline int
steer_arp(const void *l3, const void *end, __u32 flags)
{
    /* ARP for IPv4 over Ethernet.  (linux/if_arp.h needs the C library,
     * which a BPF program does not have.) */
    const struct {
        __be16 hrd;
        __be16 pro;
        __u8 hln;
        __u8 pln;
        __be16 op;
        __u8 sha[ETH_ALEN];
        __be32 spa;
        __u8 tha[ETH_ALEN];
        __be32 tpa;
    } __attribute__((packed)) *arp = l3;

    if (!(flags & AFXDP_STEER_LOCAL) || (const void *) (arp + 1) > end
        || arp->hrd != bpf_htons(1) || arp->pro != bpf_htons(ETH_P_IP)
        || arp->hln != ETH_ALEN || arp->pln != 4) {
        return 0;
    }
    return local_ipv4(arp->tpa);
}

static __always_inline int
steer_ipv4(const void *l3, const void *end, __u32 flags)
{
    const struct iphdr *ip = l3;

    if ((const void *) (ip + 1) > end || ip->ihl < 5) {
        return 0;
    }
    if ((flags & AFXDP_STEER_LOCAL) && local_ipv4(ip->daddr)) {
        return 1;
    }
    if (!(flags & AFXDP_STEER_RULES)) {
        return 0;
    }
    /* Ports only where the transport header follows a header without
     * options: later fragments have none, and a variable offset would be
     * pointer arithmetic, which the verifier allows only with
     * CAP_PERFMON. */
    return rule_l4(bpf_htons(ETH_P_IP), ip->protocol, ip + 1,
                   ip->ihl == 5 && !(ip->frag_off & bpf_htons(0x1fff)), end);
}

static __always_inline int
steer_ipv6(const void *l3, const void *end, __u32 flags)
{
    const struct ipv6hdr *ip6 = l3;

    if ((const void *) (ip6 + 1) > end) {
        return 0;
    }
    if (flags & AFXDP_STEER_LOCAL) {
        const struct {
            struct icmp6hdr hdr;
            struct in6_addr target;
        } *ns = (const void *) (ip6 + 1);

        if (local_ipv6(&ip6->daddr)) {
            return 1;
        }
        /* A neighbor solicitation for one of the device's addresses goes
         * to a multicast address. */
        if (ip6->nexthdr == IPPROTO_ICMPV6 && (const void *) (ns + 1) <= end
            && ns->hdr.icmp6_type == 135 && local_ipv6(&ns->target)) {
            return 1;
        }
    }
    return ((flags & AFXDP_STEER_RULES)
            && rule_l4(bpf_htons(ETH_P_IPV6), ip6->nexthdr, ip6 + 1, 1, end));
}

/* Whether steering gives the packet of 'ctx' to the kernel's stack. */
static __always_inline int
steer_to_kernel(struct xdp_md *ctx)
{
    const void *data = (void *) (long) ctx->data;
    const void *end = (void *) (long) ctx->data_end;
    const struct ethhdr *eth = data;
    const struct afxdp_steer_cfg *cfg;
    __u32 zero = 0, flags;

    cfg = bpf_map_lookup_elem(&steer_cfg, &zero);
    if (!cfg || !cfg->flags || (const void *) (eth + 1) > end) {
        return 0;
    }
    flags = cfg->flags;
    if ((flags & AFXDP_STEER_RULES) && rule(eth->h_proto, 0, 0)) {
        return 1;
    }
    switch (eth->h_proto) {
    case bpf_htons(ETH_P_ARP):
        return steer_arp(eth + 1, end, flags);
    case bpf_htons(ETH_P_IP):
        return steer_ipv4(eth + 1, end, flags);
    case bpf_htons(ETH_P_IPV6):
        return steer_ipv6(eth + 1, end, flags);
    }
    return 0;
}

static __always_inline int
redirect(struct xdp_md *ctx)
{
    /* The lower bits of the flags are the action to take when the lookup
     * fails: an unbound queue passes the packet to the stack. */
    return bpf_redirect_map(&xsks_map, ctx->rx_queue_index, XDP_PASS);
}

/* Removes the packet's XDP metadata.  The kernel keeps at most 32 bytes
 * of it, in multiples of 4, and the verifier does not let a program
 * without CAP_PERFMON subtract one packet pointer from another: so 4 bytes
 * at a time.  Returns 0 on success. */
static __always_inline int
strip_meta(struct xdp_md *ctx)
{
#pragma unroll
    for (int i = 0; i < 8; i++) {
        if ((void *) (long) ctx->data_meta >= (void *) (long) ctx->data) {
            return 0;
        }
        if (bpf_xdp_adjust_meta(ctx, 4)) {
            return -1;
        }
    }
    return (void *) (long) ctx->data_meta < (void *) (long) ctx->data;
}

/* Fills the frame of a BPF_PROG_RUN from the next slot of the queue named
 * in 'meta' and sends it to the slot's interface. */
static __always_inline int
xmit(struct xdp_md *ctx, const struct afxdp_xmit_meta *meta)
{
    __u32 queue = meta->queue;
    struct afxdp_xmit_slot *slot;
    struct afxdp_xmit_ctl *ctl;
    __u32 index, len;
    int delta;

    ctl = bpf_map_lookup_elem(&xmit_ctl, &queue);
    if (!ctl) {
        return XDP_DROP;
    }
    index = ctl->next++;
    slot = bpf_map_lookup_elem(&xmit_slots, &index);
    if (!slot || index / AFXDP_XMIT_BURST != queue) {
        ctl->invalid++;
        return XDP_DROP;
    }
    len = slot->len;
    if (len < 14 || len > AFXDP_XMIT_MAX) {
        ctl->invalid++;
        return XDP_DROP;
    }
    delta = (int) len - (int) bpf_xdp_get_buff_len(ctx);
    if (bpf_xdp_adjust_tail(ctx, delta)
        || bpf_xdp_store_bytes(ctx, 0, slot->data, len)
        || strip_meta(ctx)) {
        ctl->invalid++;
        return XDP_DROP;
    }
    return bpf_redirect(slot->ifindex, 0);
}

SEC("xdp")
int
afxdp_redirect(struct xdp_md *ctx)
{
    return steer_to_kernel(ctx) ? XDP_PASS : redirect(ctx);
}

SEC("xdp")
int
afxdp_redirect_xmit(struct xdp_md *ctx)
{
    if (ctx->ingress_ifindex == LOOPBACK_IFINDEX) {
        const struct afxdp_xmit_meta *meta;

        meta = (void *) (long) ctx->data_meta;
        if ((void *) (meta + 1) <= (void *) (long) ctx->data
            && meta->magic == AFXDP_XMIT_MAGIC) {
            return xmit(ctx, meta);
        }
    }
    return steer_to_kernel(ctx) ? XDP_PASS : redirect(ctx);
}

SEC("xdp")
int
afxdp_redirect_hash(struct xdp_md *ctx)
{
    /* Initialized: without CAP_PERFMON the verifier refuses to pass
     * uninitialized stack to a kernel function. */
    enum xdp_rss_hash_type type = XDP_RSS_TYPE_NONE;
    struct afxdp_rx_meta *meta;
    __u32 hash = 0;

    if (steer_to_kernel(ctx)) {
        return XDP_PASS;        /* Without asking for a hash. */
    }

    /* A packet that comes with metadata of its own (an XDP frame from a
     * veth peer's program) keeps none of it: ours must be all there is,
     * right in front of the packet, where user space reads it.  Without
     * room for ours, there is none at all. */
    if (strip_meta(ctx)) {
        return XDP_DROP;        /* More than the kernel lets anyone add. */
    }
    if (bpf_xdp_adjust_meta(ctx, -(int) sizeof *meta)) {
        return redirect(ctx);
    }
    meta = (void *) (long) ctx->data_meta;
    if ((void *) (meta + 1) <= (void *) (long) ctx->data) {
        if (!bpf_xdp_metadata_rx_hash(ctx, &hash, &type)) {
            meta->hash = hash;
            meta->flags = AFXDP_RX_META_HASH;
        } else {
            meta->flags = 0;
        }
    }
    return redirect(ctx);
}

char _license[] SEC("license") = "Dual BSD/GPL";
