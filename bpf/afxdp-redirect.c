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
 * afxdp_redirect_flows does neither; afxdp_redirect does not even run
 * offloaded flows, and needs nothing newer than the AF_XDP sockets
 * themselves.  User space loads one of the four programs.
 *
 * All four first pass to the kernel's stack the packets that steering
 * gives it (afxdp-prog.h, "Steering"); all but afxdp_redirect then execute
 * the offloaded flow a packet matches, if any (afxdp-prog.h, "Flow
 * offload"), which needs a helper of Linux 5.18.
 */

#include <linux/bpf.h>
#include <linux/icmpv6.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "afxdp-prog.h"
#include "../lib/afxdp-csum-partial.h"

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

/* Flow offload: shared by the programs of all ports (afxdp-prog.h). */
struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct afxdp_flow_cfg);
} flow_cfg SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __uint(max_entries, AFXDP_FLOW_MAX_MASKS);
    __type(key, __u32);
    __type(value, struct afxdp_flow_mask);
} flow_masks SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __uint(max_entries, AFXDP_FLOW_MAX);
    __type(key, struct afxdp_flow_lookup);
    __type(value, struct afxdp_flow_action);
} flow_table SEC(".maps");

/* User space gives the programs its own, sized for the host's CPUs
 * (lib/afxdp-flow.c): this one, which a program gets only where user space
 * has none and so installs no flow, is kept small. */
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct afxdp_flow_stats);
} flow_stats SEC(".maps");

/* Kept small for the same reason as 'flow_stats'. */
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct afxdp_flow_cache_entry);
} flow_cache SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, AFXDP_FLOW_N_COUNTERS);
    __type(key, __u32);
    __type(value, __u64);
} flow_counters SEC(".maps");

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

/* Room for the verifier in a program bound to a device: AFXDP_VERIFIER_ROOM
 * jumps to the next instruction, which the verifier drops (as it drops
 * every such no-op) before it rewrites anything, so that the program's
 * rewrites fit in the pages the kernel allocated for it as submitted (see
 * afxdp_xdp_check_bound() in lib/afxdp-xdp.c for why that matters). */
#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)
static __always_inline void
verifier_room(void)
{
    asm volatile(".rept " STRINGIFY(AFXDP_VERIFIER_ROOM) "\n\t"
                 "goto +0\n\t"
                 ".endr" ::: "memory");
}

/* Linux 6.8; weak for the same reason.  The tag's TCI comes in host
 * order, its protocol in network order. */
extern int bpf_xdp_metadata_rx_vlan_tag(const struct xdp_md *ctx,
                                        __be16 *vlan_proto, __u16 *vlan_tci)
    __ksym __weak;

/* ARP for IPv4 over Ethernet.  (linux/if_arp.h needs the C library, which
 * a BPF program does not have.) */
struct arp_ipv4 {
    __be16 hrd;
    __be16 pro;
    __u8 hln;
    __u8 pln;
    __be16 op;
    __u8 sha[ETH_ALEN];
    __be32 spa;
    __u8 tha[ETH_ALEN];
    __be32 tpa;
} __attribute__((packed));

/* Parsing: one walk over a packet's headers, for steering and for the
 * flow offload alike.  It goes as far as either needs: the Ethernet
 * header, one VLAN tag, an IPv4, IPv6 or ARP header, and the transport
 * header where it starts at a fixed offset.  Each user then reads the
 * fields it wants.
 *
 * Without CAP_PERFMON the verifier takes no comparison of a packet
 * pointer but with another packet pointer, and no variable offset from
 * one: so the headers are never 0 and never computed from a length.  They
 * are checked here, once for each place the network header may start,
 * and a user that reads one compares it with the packet's end again (for
 * the verifier: the parser's check of 'l3' and 'l4' says what they are,
 * the user's check is what the verifier sees on its path). */
struct headers {
    const void *l3;             /* After the Ethernet header and VLAN tag. */
    const void *l4;             /* After an IP header without options. */
    __u32 l2_len;               /* 14, or 18 with a VLAN tag. */
    __be16 eth_type;            /* The Ethernet header's EtherType. */
    __be16 type;                /* 'l3''s: eth_type, or the tag's inner
                                 * one; 0 if the tag is cut short or not
                                 * to be looked past. */
    __be16 vlan_tci;            /* The tag's, if any. */
    __u8 l3_ok;                 /* 'l3' is a whole IPv4 (of at least 20
                                 * bytes by its IHL), IPv6 or ARP header. */
    __u8 l4_ok;                 /* 'l4' is the transport header: the IP
                                 * header has no options, and the packet is
                                 * no later fragment.  Not checked for
                                 * length. */
    __u8 proto;                 /* IPv4's protocol, IPv6's next header. */
};

static __always_inline int
ipv6_ext_header(__u8 nexthdr)
{
    switch (nexthdr) {
    case 0: case 43: case 44: case 50: case 51: case 59: case 60:
    case 135: case 139: case 140:
        return 1;
    }
    return 0;
}

/* Whether 'arp' (whole in the packet) is ARP for IPv4 over Ethernet. */
static __always_inline int
arp_eth_ipv4(const struct arp_ipv4 *arp)
{
    return (arp->hrd == bpf_htons(1) && arp->pro == bpf_htons(ETH_P_IP)
            && arp->hln == ETH_ALEN && arp->pln == 4);
}

/* The network header at 'l3', of EtherType 'type'.  Inlined once for each
 * place 'l3' may be, so that every offset into the packet is constant. */
static __always_inline void
parse_l3(const void *l3, const void *end, __be16 type, struct headers *h)
{
    h->type = type;
    h->l3 = l3;
    h->l4 = l3;
    switch (type) {
    case bpf_htons(ETH_P_IP): {
        const struct iphdr *ip = l3;

        if ((const void *) (ip + 1) <= end && ip->ihl >= 5) {
            h->l3_ok = 1;
            h->proto = ip->protocol;
            h->l4 = ip + 1;
            h->l4_ok = ip->ihl == 5 && !(ip->frag_off & bpf_htons(0x1fff));
        }
        break;
    }
    case bpf_htons(ETH_P_IPV6): {
        const struct ipv6hdr *ip6 = l3;

        if ((const void *) (ip6 + 1) <= end) {
            h->l3_ok = 1;
            h->proto = ip6->nexthdr;
            h->l4 = ip6 + 1;
            h->l4_ok = !ipv6_ext_header(ip6->nexthdr);
        }
        break;
    }
    case bpf_htons(ETH_P_ARP):
    case bpf_htons(ETH_P_RARP):
        h->l3_ok = (const void *) ((const struct arp_ipv4 *) l3 + 1) <= end;
        break;
    }
}

/* Parses the headers of the packet of 'ctx' into 'h', looking past a VLAN
 * tag if 'tagged' (else a tagged packet's 'type' is 0).  Returns 0, or -1
 * if the packet is shorter than an Ethernet header. */
static __always_inline int
parse_headers(struct xdp_md *ctx, int tagged, struct headers *h)
{
    const void *data = (void *) (long) ctx->data;
    const void *end = (void *) (long) ctx->data_end;
    const struct ethhdr *eth = data;

    h->l3_ok = h->l4_ok = h->proto = 0;
    h->vlan_tci = 0;
    if ((const void *) (eth + 1) > end) {
        return -1;
    }
    h->eth_type = eth->h_proto;
    if (eth->h_proto == bpf_htons(ETH_P_8021Q)
        || eth->h_proto == bpf_htons(ETH_P_8021AD)) {
        const __be16 *vlan = (const void *) (eth + 1);

        h->l2_len = 18;
        if (!tagged || (const void *) (vlan + 2) > end) {
            h->type = 0;
            h->l3 = h->l4 = vlan;
            return 0;
        }
        h->vlan_tci = vlan[0];
        parse_l3(vlan + 2, end, vlan[1], h);
    } else {
        h->l2_len = 14;
        parse_l3(eth + 1, end, eth->h_proto, h);
    }
    return 0;
}

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

/* Whether the IP packet parsed in 'h' matches a rule by protocol or, for
 * TCP, UDP and SCTP where the transport header is known, by destination
 * port. */
static __always_inline int
rule_l4(const struct headers *h, const void *end)
{
    /* The destination port is bytes 2 and 3 of all three headers. */
    const __be16 *ports = h->l4;

    if (rule(h->type, h->proto, 0)) {
        return 1;
    }
    if (h->l4_ok && (h->proto == IPPROTO_TCP || h->proto == IPPROTO_UDP
                     || h->proto == IPPROTO_SCTP)
        && (const void *) (ports + 2) <= end) {
        return rule(h->type, h->proto, ports[1]);
    }
    return 0;
}

static __always_inline int
steer_arp(const struct headers *h, const void *end, __u32 flags)
{
    const struct arp_ipv4 *arp = h->l3;

    return ((flags & AFXDP_STEER_LOCAL) && h->l3_ok
            && (const void *) (arp + 1) <= end && arp_eth_ipv4(arp)
            && local_ipv4(arp->tpa));
}

static __always_inline int
steer_ipv4(const struct headers *h, const void *end, __u32 flags)
{
    const struct iphdr *ip = h->l3;

    if (!h->l3_ok || (const void *) (ip + 1) > end) {
        return 0;
    }
    if ((flags & AFXDP_STEER_LOCAL) && local_ipv4(ip->daddr)) {
        return 1;
    }
    return (flags & AFXDP_STEER_RULES) && rule_l4(h, end);
}

static __always_inline int
steer_ipv6(const struct headers *h, const void *end, __u32 flags)
{
    const struct ipv6hdr *ip6 = h->l3;

    if (!h->l3_ok || (const void *) (ip6 + 1) > end) {
        return 0;
    }
    if (flags & AFXDP_STEER_LOCAL) {
        const struct {
            struct icmp6hdr hdr;
            struct in6_addr target;
        } *ns = h->l4;

        if (local_ipv6(&ip6->daddr)) {
            return 1;
        }
        /* A neighbor solicitation for one of the device's addresses goes
         * to a multicast address. */
        if (h->proto == IPPROTO_ICMPV6 && (const void *) (ns + 1) <= end
            && ns->hdr.icmp6_type == 135 && local_ipv6(&ns->target)) {
            return 1;
        }
    }
    return (flags & AFXDP_STEER_RULES) && rule_l4(h, end);
}

/* Whether steering gives the packet of 'ctx' to the kernel's stack.  It
 * looks into untagged packets only: a tagged one goes to the kernel only
 * by a rule for its Ethernet header's EtherType. */
static __always_inline int
steer_to_kernel(struct xdp_md *ctx)
{
    const void *end = (void *) (long) ctx->data_end;
    const struct afxdp_steer_cfg *cfg;
    struct headers h;
    __u32 zero = 0, flags;

    cfg = bpf_map_lookup_elem(&steer_cfg, &zero);
    if (!cfg || !cfg->flags || parse_headers(ctx, 0, &h)) {
        return 0;
    }
    flags = cfg->flags;
    if ((flags & AFXDP_STEER_RULES) && rule(h.eth_type, 0, 0)) {
        return 1;
    }
    switch (h.type) {
    case bpf_htons(ETH_P_ARP):
        return steer_arp(&h, end, flags);
    case bpf_htons(ETH_P_IP):
        return steer_ipv4(&h, end, flags);
    case bpf_htons(ETH_P_IPV6):
        return steer_ipv6(&h, end, flags);
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

/* Whether the packet's queue has a socket of the port. */
static __always_inline int
queue_has_socket(struct xdp_md *ctx)
{
    __u32 queue = ctx->rx_queue_index;

    return bpf_map_lookup_elem(&xsks_map, &queue) != NULL;
}

/* Flow offload. */

static __always_inline void
flow_count(__u32 counter)
{
    __u64 *n = bpf_map_lookup_elem(&flow_counters, &counter);

    if (n) {
        *n += 1;
    }
}

/* Parses the transport header at 'l4' of an unfragmented IPv4 or IPv6
 * packet, 'l4_len' bytes long by its IP header, into 'key'.  'sum' is the
 * pseudo-header's sum, without the length.  Returns 0, or -1 to leave the
 * packet to user space. */
/* Where the TCP or UDP checksum that a local sender left partial is in a
 * packet (see lib/afxdp-csum.h): offsets from the packet's start. */
struct partial_csum {
    __u32 l4_ofs;               /* 0: no partial checksum. */
    __u32 l4_len;
    __u32 field_ofs;
    __u32 udp;
};

static __always_inline int
parse_l4(const void *l4, const void *end, __u32 l4_ofs, __u32 l4_len,
         __u32 sum, struct afxdp_flow_key *key, struct partial_csum *pc)
{
    const __be16 *ports = l4;

    sum += bpf_htons(l4_len);
    switch (key->nw_proto) {
    case IPPROTO_TCP: {
        const struct tcphdr *tcp = l4;
        __u32 len;

        if ((const void *) (tcp + 1) > end) {
            return -1;
        }
        len = tcp->doff * 4;
        if (len < sizeof *tcp || l4_len < len) {
            return -1;
        }
        if (afxdp_csum_is_partial(tcp->check, sum)) {
            pc->l4_ofs = l4_ofs;
            pc->l4_len = l4_len;
            pc->field_ofs = l4_ofs + 16;
            pc->udp = 0;
        }
        key->tcp_flags = ((const __be16 *) tcp)[6] & bpf_htons(0x0fff);
        break;
    }
    case IPPROTO_UDP: {
        const struct udphdr *udp = l4;

        if ((const void *) (udp + 1) > end || l4_len < sizeof *udp
            || udp->dest == bpf_htons(4789) || udp->dest == bpf_htons(6081)) {
            return -1;
        }
        if (afxdp_csum_is_partial(udp->check, sum)) {
            pc->l4_ofs = l4_ofs;
            pc->l4_len = l4_len;
            pc->field_ofs = l4_ofs + 6;
            pc->udp = 1;
        }
        break;
    }
    case IPPROTO_SCTP:
        if ((const void *) (ports + 6) > end || l4_len < 12) {
            return -1;
        }
        break;
    case IPPROTO_ICMP: {
        const __u8 *icmp = l4;

        if (key->dl_type != bpf_htons(ETH_P_IP)
            || (const void *) (icmp + 8) > end || l4_len < 8) {
            return -1;
        }
        key->tp_src = bpf_htons(icmp[0]);
        key->tp_dst = bpf_htons(icmp[1]);
        return 0;
    }
    case IPPROTO_IGMP:
    case IPPROTO_ICMPV6:
        return -1;
    default:
        return 0;
    }
    key->tp_src = ports[0];
    key->tp_dst = ports[1];
    return 0;
}

/* 'room' is the packet's length from the network header on, all its
 * buffers together: a scalar, as the verifier allows only constant offsets
 * from a packet pointer, and no difference of two, without CAP_PERFMON. */
static __always_inline int
parse_ipv4(const struct headers *h, const void *end, __u32 room,
           struct afxdp_flow_key *key, struct partial_csum *pc)
{
    const struct iphdr *ip = h->l3;
    const __u16 *addrs;
    __u32 tot_len;

    if (!h->l3_ok || !h->l4_ok || (const void *) (ip + 1) > end) {
        return -1;              /* Cut short, or with options. */
    }
    tot_len = bpf_ntohs(ip->tot_len);
    if (tot_len < sizeof *ip || tot_len > room
        || ip->frag_off & bpf_htons(0x3fff)) {
        return -1;
    }
    key->nw_src = ip->saddr;
    key->nw_dst = ip->daddr;
    key->nw_tos = ip->tos;
    key->nw_ttl = ip->ttl;
    key->nw_proto = h->proto;
    addrs = (const __u16 *) &ip->saddr;
    return parse_l4(h->l4, end, h->l2_len + sizeof *ip, tot_len - sizeof *ip,
                    (__u32) addrs[0] + addrs[1] + addrs[2] + addrs[3]
                    + bpf_htons(h->proto), key, pc);
}

static __always_inline int
parse_ipv6(const struct headers *h, const void *end, __u32 room,
           struct afxdp_flow_key *key, struct partial_csum *pc)
{
    const struct ipv6hdr *ip6 = h->l3;
    const __u16 *addrs;
    __u32 plen, sum = 0;

    if (!h->l3_ok || !h->l4_ok || (const void *) (ip6 + 1) > end) {
        return -1;              /* Cut short, or extension headers. */
    }
    plen = bpf_ntohs(ip6->payload_len);
    if (plen + sizeof *ip6 > room) {
        return -1;
    }
    __builtin_memcpy(key->ipv6_src, &ip6->saddr, 16);
    __builtin_memcpy(key->ipv6_dst, &ip6->daddr, 16);
    key->ipv6_label = *(const __be32 *) ip6 & bpf_htonl(0xfffff);
    key->nw_tos = bpf_ntohl(*(const __be32 *) ip6) >> 20;
    key->nw_ttl = ip6->hop_limit;
    key->nw_proto = h->proto;
    addrs = (const __u16 *) &ip6->saddr;
#pragma unroll
    for (int i = 0; i < 16; i++) {
        sum += addrs[i];
    }
    return parse_l4(h->l4, end, h->l2_len + sizeof *ip6, plen,
                    sum + bpf_htons(h->proto), key, pc);
}

static __always_inline int
parse_arp(const struct headers *h, const void *end,
          struct afxdp_flow_key *key)
{
    const struct arp_ipv4 *arp = h->l3;

    if (!h->l3_ok || (const void *) (arp + 1) > end) {
        return -1;
    }
    if (arp_eth_ipv4(arp)) {
        key->nw_src = arp->spa;
        key->nw_dst = arp->tpa;
        if (bpf_ntohs(arp->op) <= 0xff) {
            key->nw_proto = bpf_ntohs(arp->op);
        }
        __builtin_memcpy(key->arp_sha, arp->sha, ETH_ALEN);
        __builtin_memcpy(key->arp_tha, arp->tha, ETH_ALEN);
    }
    return 0;
}

/* Parses the packet of 'ctx', 'len' bytes long, into 'key', and says in
 * 'pc' where its partial checksum is, if it has one. */
static __always_inline int
parse(struct xdp_md *ctx, __u32 len, struct afxdp_flow_key *key,
      struct partial_csum *pc)
{
    const void *end = (void *) (long) ctx->data_end;
    const struct ethhdr *eth = (void *) (long) ctx->data;
    struct headers h;

    if (parse_headers(ctx, 1, &h) || len < 18
        || (const void *) (eth + 1) > end) {
        return -1;
    }
    key->ifindex = ctx->ingress_ifindex;
    __builtin_memcpy(key->dl_dst, eth->h_dest, ETH_ALEN);
    __builtin_memcpy(key->dl_src, eth->h_source, ETH_ALEN);
    if (h.l2_len != 14) {
        key->vlan_tpid = h.eth_type;
        key->vlan_tci = h.vlan_tci | bpf_htons(0x1000);
    }
    if (bpf_ntohs(h.type) < ETH_P_802_3_MIN) {
        return -1;              /* 802.3, maybe with LLC and SNAP; or a
                                 * VLAN tag cut short. */
    }
    key->dl_type = h.type;
    switch (h.type) {
    case bpf_htons(ETH_P_IP):
        return parse_ipv4(&h, end, len - h.l2_len, key, pc);
    case bpf_htons(ETH_P_IPV6):
        return parse_ipv6(&h, end, len - h.l2_len, key, pc);
    case bpf_htons(ETH_P_ARP):
    case bpf_htons(ETH_P_RARP):
        return parse_arp(&h, end, key);
    case bpf_htons(ETH_P_8021Q):
    case bpf_htons(ETH_P_8021AD):
    case bpf_htons(ETH_P_MPLS_UC):
    case bpf_htons(ETH_P_MPLS_MC):
    case bpf_htons(0x894f):     /* NSH. */
        return -1;
    }
    return 0;
}

/* Looks the parsed packet up in each mask's table.  The loop is unrolled,
 * and its body neither breaks nor returns, so that the verifier follows
 * 16 straight copies of it. */
static __always_inline const struct afxdp_flow_action *
flow_lookup(const struct afxdp_flow_key *key, __u32 n_slots)
{
    const struct afxdp_flow_action *found = 0;

#pragma unroll
    for (__u32 slot = 0; slot < AFXDP_FLOW_MAX_MASKS; slot++) {
        const struct afxdp_flow_mask *mask = 0;
        struct afxdp_flow_lookup lookup;
        __u32 index = slot;

        if (!found && slot < n_slots) {
            mask = bpf_map_lookup_elem(&flow_masks, &index);
        }
        if (mask) {
            const __u64 *k = (const __u64 *) key;
            const __u64 *m = (const __u64 *) &mask->mask;
            __u64 *l = (__u64 *) &lookup.key;

            lookup.mask_id = mask->id;
            lookup.pad = 0;
#pragma unroll
            for (int i = 0; i < AFXDP_FLOW_KEY_WORDS; i++) {
                l[i] = k[i] & m[i];
            }
            found = bpf_map_lookup_elem(&flow_table, &lookup);
        }
    }
    return found;
}

/* The entry of this CPU's flow cache for 'key' under generation 'gen',
 * or NULL if the cache is not to be used (see afxdp-prog.h).  'shift'
 * leaves as many bits of the key's hash as index the cache's entries. */
static __always_inline struct afxdp_flow_cache_entry *
flow_cache_entry(const struct afxdp_flow_key *key, __u64 gen, __u32 shift)
{
    const __u64 *k = (const __u64 *) key;
    __u64 h = 0;
    __u32 slot;

    if (!gen || gen & 1) {
        return 0;
    }
#pragma unroll
    for (int i = 0; i < AFXDP_FLOW_KEY_WORDS; i++) {
        h = (h ^ k[i]) * 0x9e3779b97f4a7c15ULL;
    }
    /* A shift out of range gives an index of no entry: no cache. */
    slot = shift && shift < 64 ? h >> shift : 0xffffffff;
    return bpf_map_lookup_elem(&flow_cache, &slot);
}

/* Whether 'e' holds the action for 'key' under generation 'gen'. */
static __always_inline int
flow_cache_hit(const struct afxdp_flow_cache_entry *e,
               const struct afxdp_flow_key *key, __u64 gen)
{
    const __u64 *k = (const __u64 *) key;
    const __u64 *c = (const __u64 *) &e->key;
    __u64 diff = e->gen ^ gen;

#pragma unroll
    for (int i = 0; i < AFXDP_FLOW_KEY_WORDS; i++) {
        diff |= k[i] ^ c[i];
    }
    return !diff;
}

/* Stores in 'e' that 'key' takes 'action' (none if NULL) under
 * generation 'gen'.  The generation goes last: a program that runs in
 * between on this CPU (an interrupt's) finds the entry empty. */
static __always_inline void
flow_cache_put(struct afxdp_flow_cache_entry *e,
               const struct afxdp_flow_key *key,
               const struct afxdp_flow_action *action, __u64 gen)
{
    e->gen = 0;
    asm volatile("" ::: "memory");
    __builtin_memcpy(&e->key, key, sizeof e->key);
    if (action) {
        __builtin_memcpy(&e->action, action, sizeof e->action);
    }
    e->miss = !action;
    asm volatile("" ::: "memory");
    e->gen = gen;
}

static __always_inline void
flow_account(const struct afxdp_flow_action *action,
             const struct afxdp_flow_key *key, __u64 bytes)
{
    __u32 index = action->stats;
    struct afxdp_flow_stats *stats;

    stats = bpf_map_lookup_elem(&flow_stats, &index);
    if (stats) {
        __u32 flags = bpf_ntohs(key->tcp_flags);

        /* This CPU's own entry: plain adds, where atomic ones on an
         * entry of all CPUs took a locked instruction each. */
        stats->packets++;
        stats->bytes += bytes;
        if ((stats->tcp_flags & flags) != flags) {
            stats->tcp_flags |= flags;
        }
    }
}

/* Replaces the bits of the 6 bytes at 'p' that 'mask' selects with those
 * of 'value'. */
static __always_inline void
set_masked(__u8 *p, const __u8 *value, const __u8 *mask)
{
#pragma unroll
    for (int i = 0; i < ETH_ALEN; i++) {
        p[i] = (p[i] & ~mask[i]) | (value[i] & mask[i]);
    }
}

/* Inserts a VLAN header with 'tpid' and 'tci' (both in network order)
 * after the packet's Ethernet addresses.  Returns 0, or -1 if the packet
 * is too short for an Ethernet header or there is no room in front of it
 * (the packet may have moved then). */
static __always_inline int
push_vlan(struct xdp_md *ctx, __be16 tpid, __be16 tci)
{
    struct ethhdr *eth = (void *) (long) ctx->data;
    __be16 *vlan;
    __u8 macs[12];

    if ((void *) (eth + 1) > (void *) (long) ctx->data_end) {
        return -1;
    }
    __builtin_memcpy(macs, eth, 12);
    if (bpf_xdp_adjust_head(ctx, -4)) {
        return -1;
    }
    eth = (void *) (long) ctx->data;
    if ((void *) eth + 16 > (void *) (long) ctx->data_end) {
        return -1;
    }
    __builtin_memcpy(eth, macs, 12);
    vlan = (void *) eth + 12;
    vlan[0] = tpid;
    vlan[1] = tci;
    return 0;
}

/* Sets the IPv4 TTL or IPv6 hop limit of the packet of 'ctx', parsed into
 * 'key', to 'ttl'.  An IPv4 header's checksum is updated for the change
 * (RFC 1624, equation 3) as user space updates it, so that a packet with
 * a wrong checksum leaves with the same wrong one either way.  Returns 0,
 * or -1 if the packet could not be read or written.
 *
 * A global function, never inlined: the verifier checks it once, on its
 * own, instead of on each of the many paths of the offload that lead to
 * it (inlined, it took the program past the verifier's million
 * instructions). */
__attribute__((noinline)) int
afxdp_set_ttl(struct xdp_md *ctx, const struct afxdp_flow_key *key,
              __u32 ttl)
{
    __u32 l3;

    if (!key) {
        return -1;
    }
    /* A parsed IP packet has no VLAN tag or one, in the packet. */
    l3 = key->vlan_tpid ? 18 : 14;

    if (key->dl_type == bpf_htons(ETH_P_IP)) {
        /* The TTL and protocol bytes, then the header checksum, as 16-bit
         * words in the packet's byte order: the ones' complement sum is
         * the same in either order.  The changed word is taken with the
         * protocol byte 0, as user space takes it. */
        union {
            __u16 w[2];
            __u8 b[4];
        } hdr;
        union {
            __u16 w;
            __u8 b[2];
        } old_w = { .w = 0 }, new_w = { .w = 0 };
        __u32 sum;

        if (bpf_xdp_load_bytes(ctx, l3 + 8, &hdr, sizeof hdr)) {
            return -1;
        }
        if (hdr.b[0] == (__u8) ttl) {
            return 0;
        }
        old_w.b[0] = hdr.b[0];
        new_w.b[0] = (__u8) ttl;
        sum = (__u32) (__u16) ~hdr.w[1] + (__u16) ~old_w.w + new_w.w;
        sum = (sum & 0xffff) + (sum >> 16);
        sum = (sum & 0xffff) + (sum >> 16);
        hdr.w[1] = ~(__u16) sum;
        hdr.b[0] = (__u8) ttl;
        return bpf_xdp_store_bytes(ctx, l3 + 8, &hdr, sizeof hdr) ? -1 : 0;
    } else if (key->dl_type == bpf_htons(ETH_P_IPV6)) {
        __u8 hlimit = ttl;

        return bpf_xdp_store_bytes(ctx, l3 + 7, &hlimit, 1) ? -1 : 0;
    }
    return -1;
}

/* Executes 'action' on the packet of 'ctx', parsed into 'key'.  Returns
 * the XDP verdict. */
static __always_inline int
flow_execute(struct xdp_md *ctx, const struct afxdp_flow_key *key,
             const struct afxdp_flow_action *action)
{
    __u32 flags = action->flags;
    struct ethhdr *eth;
    __u8 macs[12];

    if ((flags & AFXDP_FLOW_SET_TTL)
        && afxdp_set_ttl(ctx, key, action->nw_ttl)) {
        goto fail;
    }
    if (flags & AFXDP_FLOW_POP_VLAN) {
        eth = (void *) (long) ctx->data;
        if ((void *) eth + 18 > (void *) (long) ctx->data_end) {
            goto fail;
        }
        __builtin_memcpy(macs, eth, 12);
        if (bpf_xdp_adjust_head(ctx, 4)) {
            goto fail;
        }
        eth = (void *) (long) ctx->data;
        if ((void *) (eth + 1) > (void *) (long) ctx->data_end) {
            goto fail;
        }
        __builtin_memcpy(eth, macs, 12);
    }
    if (flags & AFXDP_FLOW_SET_ETH) {
        eth = (void *) (long) ctx->data;
        if ((void *) (eth + 1) > (void *) (long) ctx->data_end) {
            goto fail;
        }
        set_masked(eth->h_dest, action->eth_dst, action->eth_dst_mask);
        set_masked(eth->h_source, action->eth_src, action->eth_src_mask);
    }
    if ((flags & AFXDP_FLOW_PUSH_VLAN)
        && push_vlan(ctx, action->vlan_tpid, action->vlan_tci)) {
        goto fail;
    }
    if (!action->ifindex) {
        return XDP_DROP;
    }
    return bpf_redirect(action->ifindex, 0);

fail:
    flow_count(AFXDP_FLOW_ACTION_FAILED);
    return XDP_DROP;
}

/* Parses the packet of 'ctx' into 'key' for the flow table, and where its
 * partial checksum is into 'pc', and returns its length, or -1 to leave it
 * to user space. */
static __always_inline int
flow_key(struct xdp_md *ctx, struct afxdp_flow_key *key,
         struct partial_csum *pc)
{
    __u32 len = bpf_xdp_get_buff_len(ctx);

    __builtin_memset(key, 0, sizeof *key);
    pc->l4_ofs = 0;
    if (len > AFXDP_FLOW_MAX_LEN || parse(ctx, len, key, pc)) {
        return -1;
    }
    return len;
}

/* The bytes that finish_csum() sums at a time.  The transport segment of a
 * packet of AFXDP_FLOW_MAX_LEN bytes takes at most CSUM_CHUNKS of them. */
#define CSUM_CHUNK 128
#define CSUM_CHUNKS ((AFXDP_FLOW_MAX_LEN - 14 - 20 + CSUM_CHUNK - 1) \
                     / CSUM_CHUNK)

/* 'n' (not 0) clamped to at most CSUM_CHUNK, by instructions that the
 * compiler cannot drop: the verifier must see the bound on the very
 * register passed to a helper as a length, and the compiler, knowing
 * better, would keep the unclamped value where it can. */
static __always_inline __u64
csum_chunk_len(__u64 n)
{
    asm volatile("if %[n] > " STRINGIFY(CSUM_CHUNK) " goto l0_%=;"
                 "if %[n] != 0 goto l1_%=;"
                 "%[n] = 1;"
                 "goto l1_%=;"
                 "l0_%=:"
                 "%[n] = " STRINGIFY(CSUM_CHUNK) ";"
                 "l1_%=:"
                 : [n] "+r" (n));
    return n;
}

/* Finishes the partial checksum that 'pc' locates in the packet of 'ctx',
 * as the device it was left for would: the ones' complement sum of the
 * transport segment, from its header on, with the checksum field as the
 * sender left it (the pseudo-header's sum), inverted into that field; a
 * UDP checksum of 0 is sent as 0xffff.  That is the checksum that user
 * space computes for such a packet (lib/afxdp-csum.c).  Returns 0, or -1
 * if the packet could not be read or written. */
static __always_inline int
finish_csum(struct xdp_md *ctx, const struct partial_csum *pc)
{
    __u32 buf[CSUM_CHUNK / 4 + 1];
    __u32 ofs = pc->l4_ofs;
    __u64 left = pc->l4_len;
    __s64 sum = 0;
    __u16 csum;

#pragma unroll
    for (int i = 0; i < CSUM_CHUNKS; i++) {
        __u64 n;

        if (!left) {
            break;
        }
        n = csum_chunk_len(left);
        /* Zeros after an odd or short tail, which bpf_csum_diff() takes
         * in words of 4 bytes. */
        __builtin_memset(buf, 0, sizeof buf);
        if (bpf_xdp_load_bytes(ctx, ofs, buf, n)) {
            return -1;
        }
        sum = bpf_csum_diff(0, 0, buf, (n + 3) & ~3u, (__u32) sum);
        if (sum < 0) {
            return -1;
        }
        ofs += n;
        left -= n;
    }
    if (left) {
        return -1;
    }
    sum = (sum & 0xffff) + ((__u32) sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    csum = ~(__u16) sum;
    if (pc->udp && !csum) {
        csum = 0xffff;
    }
    return bpf_xdp_store_bytes(ctx, pc->field_ofs, &csum, sizeof csum)
           ? -1 : 0;
}

/* Whether the port's user space finishes partial checksums that it
 * receives (options:rx-csum-partial), and so XDP must too. */
static __always_inline int
port_finishes_csum(void)
{
    const struct afxdp_steer_cfg *cfg;
    __u32 zero = 0;

    cfg = bpf_map_lookup_elem(&steer_cfg, &zero);
    return cfg && cfg->csum_partial;
}

/* Executes the offloaded flow that the packet of 'ctx' matches, if any,
 * and returns the XDP verdict; otherwise returns -1. */
static __always_inline int
offload(struct xdp_md *ctx)
{
    const struct afxdp_flow_action *action;
    struct afxdp_flow_cache_entry *cached;
    struct afxdp_flow_key key;
    const struct afxdp_flow_cfg *cfg;
    struct partial_csum pc;
    __u32 zero = 0;
    __u64 gen;
    int len;

    cfg = bpf_map_lookup_elem(&flow_cfg, &zero);
    if (!cfg || !cfg->n_slots) {
        return -1;
    }
    /* Read before the table is. */
    gen = *(volatile const __u64 *) &cfg->gen;
    /* Only the port's own queues: a packet on a queue that the port left
     * to the kernel (options:start-queue, n_rxq) is the host's, whatever
     * flow it would match. */
    if (!queue_has_socket(ctx)) {
        return -1;
    }
    len = flow_key(ctx, &key, &pc);
    if (len < 0) {
        flow_count(AFXDP_FLOW_UNPARSED);
        return -1;
    }
    cached = flow_cache_entry(&key, gen, cfg->cache_shift);
    if (cached && flow_cache_hit(cached, &key, gen)) {
        action = cached->miss ? 0 : &cached->action;
        if (action) {
            flow_count(AFXDP_FLOW_CACHE_HIT);
        }
    } else {
        action = flow_lookup(&key, cfg->n_slots);
        if (cached
            && !(bpf_get_prandom_u32() & (AFXDP_FLOW_CACHE_INSERT - 1))) {
            flow_cache_put(cached, &key, action, gen);
        }
    }
    if (!action) {
        flow_count(AFXDP_FLOW_MISS);
        return -1;
    }
    /* A checksum left partial is finished here, where user space would
     * finish it (a drop needs none): the device that the packet goes to
     * from XDP does not know that it is partial. */
    if (pc.l4_ofs && action->ifindex && port_finishes_csum()) {
        if (finish_csum(ctx, &pc)) {
            return -1;          /* User space finishes it. */
        }
        flow_count(AFXDP_FLOW_CSUM_FINISHED);
    }
    flow_count(AFXDP_FLOW_HIT);
    flow_account(action, &key, len);
    return flow_execute(ctx, &key, action);
}

/* What the built-in programs do with a packet they receive: steering,
 * then, but for the plain program, the offloaded flows, then the
 * socket. */
static __always_inline int
receive(struct xdp_md *ctx, int flows)
{
    int verdict;

    if (steer_to_kernel(ctx)) {
        return XDP_PASS;
    }
    verdict = flows ? offload(ctx) : -1;
    return verdict >= 0 ? verdict : redirect(ctx);
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
    return receive(ctx, 0);
}

SEC("xdp")
int
afxdp_redirect_flows(struct xdp_md *ctx)
{
    return receive(ctx, 1);
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
    return receive(ctx, 1);
}

/* Puts back in front of the packet's EtherType the VLAN tag that the
 * device keeps beside the packet, if it does (a veth whose peer sent the
 * tag as metadata, a NIC that strips tags) and the packet is on a queue
 * with a socket: the socket and the offloaded flows must see the packet
 * as it was sent.  Returns 0, or -1 if the tag could not be put back.
 *
 * The tag is asked for first: most packets have none, and then the
 * XSKMAP lookup is saved. */
static __always_inline int
restore_vlan(struct xdp_md *ctx)
{
    __be16 tpid = 0;
    __u16 tci = 0;

    if (bpf_xdp_metadata_rx_vlan_tag(ctx, &tpid, &tci)
        || !queue_has_socket(ctx)) {
        return 0;               /* No tag beside it, or not ours. */
    }
    return push_vlan(ctx, tpid, bpf_htons(tci));
}

/* What the programs bound to the device do: steering, then, on a queue
 * with a socket, the packet's VLAN tag put back if 'vlan', then the
 * offloaded flows, and the device's RX hash in front of the packet if
 * 'hash'.  A packet passed to the kernel keeps its tag beside it, where
 * the kernel expects it (in the packet too, the kernel would see two). */
static __always_inline int
bound(struct xdp_md *ctx, int hash, int vlan)
{
    /* Initialized: without CAP_PERFMON the verifier refuses to pass
     * uninitialized stack to a kernel function. */
    enum xdp_rss_hash_type type = XDP_RSS_TYPE_NONE;
    struct afxdp_rx_meta *meta;
    __u32 value = 0;
    int verdict;

    verifier_room();
    if (steer_to_kernel(ctx)) {
        return XDP_PASS;        /* Without asking for a hash. */
    }
    if (vlan && restore_vlan(ctx)) {
        flow_count(AFXDP_FLOW_VLAN_FAILED);
        return XDP_DROP;
    }
    verdict = offload(ctx);
    if (verdict >= 0 || !hash) {
        return verdict >= 0 ? verdict : redirect(ctx);
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
        if (!bpf_xdp_metadata_rx_hash(ctx, &value, &type)) {
            meta->hash = value;
            meta->flags = AFXDP_RX_META_HASH;
        } else {
            meta->flags = 0;
        }
    }
    return redirect(ctx);
}

SEC("xdp")
int
afxdp_redirect_hash(struct xdp_md *ctx)
{
    return bound(ctx, 1, 0);
}

SEC("xdp")
int
afxdp_redirect_hash_vlan(struct xdp_md *ctx)
{
    return bound(ctx, 1, 1);
}

SEC("xdp")
int
afxdp_redirect_vlan(struct xdp_md *ctx)
{
    return bound(ctx, 0, 1);
}

/* For the tests (tests/test-afxdp-parse.c), never attached: stores in
 * 'parse_probe' the key that the flow table would be searched for with
 * the packet of a BPF_PROG_RUN, or that the packet would be left to user
 * space, and whether steering (as 'steer_cfg' says) would pass the packet
 * to the kernel. */
struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct afxdp_parse_probe);
} parse_probe SEC(".maps");

SEC("xdp")
int
afxdp_parse_probe(struct xdp_md *ctx)
{
    struct afxdp_parse_probe *probe;
    __u32 zero = 0;

    probe = bpf_map_lookup_elem(&parse_probe, &zero);
    if (probe) {
        struct partial_csum pc;

        probe->steered = steer_to_kernel(ctx);
        probe->parsed = flow_key(ctx, &probe->key, &pc) >= 0;
    }
    return XDP_PASS;
}

char _license[] SEC("license") = "Dual BSD/GPL";
