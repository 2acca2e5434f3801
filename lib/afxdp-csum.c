/*
 * Copyright (c) 2026 The ovs-afxdp authors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at:
 *
 *     http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */


#include <config.h>

#include "afxdp-csum.h"
#include "afxdp-csum-partial.h"

#include <netinet/in.h>
#include <netinet/ip6.h>
#include <stddef.h>
#include <string.h>

#include "csum.h"
#include "dp-packet.h"
#include "packets.h"
#include "util.h"

BUILD_ASSERT_DECL(sizeof(struct afxdp_tx_meta) == 16);

/* UDP ports of the tunnels whose inner checksums are examined. */
#define VXLAN_PORT 4789
#define GENEVE_PORT 6081

/* A TCP or UDP header found by parse_l4(). */
struct l4_info {
    char *l3;                   /* IPv4 or IPv6 header. */
    char *l4;                   /* TCP or UDP header. */
    size_t l4_size;             /* From 'l4' to the end of the IP packet. */
    uint8_t proto;              /* IPPROTO_TCP or IPPROTO_UDP. */
    uint32_t pseudo_sum;        /* Of the pseudo-header, unfolded. */
};

/* The ones' complement sum, unfolded, of the 'n' 16-bit words at 'p', as
 * they lie in memory (like csum_continue(), for a few aligned words). */
static uint32_t
sum_words(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint32_t sum = 0;

    for (size_t i = 0; i < n; i++) {
        uint16_t word;

        memcpy(&word, b + 2 * i, sizeof word);
        sum += word;
    }
    return sum;
}

/* The pseudo-header sums of an IPv4 or IPv6 packet whose L4 part is
 * 'l4_size' bytes of protocol 'proto', unfolded: what packet_csum_
 * pseudoheader() and packet_csum_pseudoheader6() compute, inline, since
 * this runs for every packet received. */
static uint32_t
pseudo_sum4(const struct ip_header *ip, size_t l4_size)
{
    return (sum_words(&ip->ip_src, 4) + htons(ip->ip_proto)
            + htons(l4_size));
}

static uint32_t
pseudo_sum6(const struct ovs_16aligned_ip6_hdr *ip6)
{
    return (sum_words(&ip6->ip6_src, 16) + htons(ip6->ip6_nxt)
            + ip6->ip6_plen);
}

/* Parses the Ethernet frame of 'size' bytes at 'data' (at most one 802.1Q
 * tag; IPv4 not fragmented, or IPv6 without extension headers) down to a
 * TCP or UDP header whole within it.  Returns true and fills in '*info' if
 * there is one. */
static bool
parse_l4(char *data, size_t size, struct l4_info *info)
{
    size_t l3_ofs = ETH_HEADER_LEN;
    ovs_be16 eth_type;
    size_t hdr_len;

    if (size < ETH_HEADER_LEN) {
        return false;
    }
    eth_type = ALIGNED_CAST(const struct eth_header *, data)->eth_type;
    if (eth_type == htons(ETH_TYPE_VLAN_8021Q)) {
        if (size < VLAN_ETH_HEADER_LEN) {
            return false;
        }
        eth_type = ALIGNED_CAST(const struct vlan_eth_header *,
                                data)->veth_next_type;
        l3_ofs = VLAN_ETH_HEADER_LEN;
    }

    info->l3 = data + l3_ofs;
    if (eth_type == htons(ETH_TYPE_IP)) {
        const struct ip_header *ip
            = ALIGNED_CAST(const struct ip_header *, info->l3);
        size_t ip_len;

        if (size - l3_ofs < IP_HEADER_LEN
            || IP_VER(ip->ip_ihl_ver) != 4) {
            return false;
        }
        hdr_len = IP_IHL(ip->ip_ihl_ver) * 4;
        ip_len = ntohs(ip->ip_tot_len);
        if (hdr_len < IP_HEADER_LEN || ip_len < hdr_len
            || ip_len > size - l3_ofs
            || IP_IS_FRAGMENT(ip->ip_frag_off)) {
            return false;
        }
        info->l4_size = ip_len - hdr_len;
        info->proto = ip->ip_proto;
        info->pseudo_sum = pseudo_sum4(ip, info->l4_size);
    } else if (eth_type == htons(ETH_TYPE_IPV6)) {
        const struct ovs_16aligned_ip6_hdr *ip6
            = ALIGNED_CAST(const struct ovs_16aligned_ip6_hdr *, info->l3);

        if (size - l3_ofs < IPV6_HEADER_LEN) {
            return false;
        }
        hdr_len = IPV6_HEADER_LEN;
        info->l4_size = ntohs(ip6->ip6_plen);
        if (info->l4_size > size - l3_ofs - IPV6_HEADER_LEN) {
            return false;
        }
        info->proto = ip6->ip6_nxt;
        info->pseudo_sum = pseudo_sum6(ip6);
    } else {
        return false;
    }
    info->l4 = info->l3 + hdr_len;

    if (info->proto == IPPROTO_TCP) {
        return info->l4_size >= TCP_HEADER_LEN;
    } else if (info->proto == IPPROTO_UDP) {
        const struct udp_header *udp
            = ALIGNED_CAST(const struct udp_header *, info->l4);

        return (info->l4_size >= UDP_HEADER_LEN
                && ntohs(udp->udp_len) == info->l4_size);
    }
    return false;
}

/* Returns the checksum field of the TCP or UDP header in 'info'. */
static ovs_be16 *
l4_csum_field(const struct l4_info *info)
{
    return (info->proto == IPPROTO_TCP
            ? &ALIGNED_CAST(struct tcp_header *, info->l4)->tcp_csum
            : &ALIGNED_CAST(struct udp_header *, info->l4)->udp_csum);
}

/* Returns true if the checksum field in 'info' holds what a local sender
 * leaves there when it lets the device finish the checksum. */
static bool
is_partial(const struct l4_info *info)
{
    return afxdp_csum_is_partial(*l4_csum_field(info), info->pseudo_sum);
}

/* Returns the Ethernet frame carried by the VXLAN or Geneve packet whose
 * UDP header is in 'info', and stores its size in '*sizep'; or NULL. */
static char *
tunnel_payload(const struct l4_info *info, size_t *sizep)
{
    const struct udp_header *udp
        = ALIGNED_CAST(const struct udp_header *, info->l4);
    const uint8_t *hdr = (const uint8_t *) (udp + 1);
    size_t size = info->l4_size - UDP_HEADER_LEN;
    size_t hdr_len;

    if (size < 8) {
        return NULL;
    }
    if (udp->udp_dst == htons(VXLAN_PORT)) {
        hdr_len = 8;
    } else if (udp->udp_dst == htons(GENEVE_PORT)
               && (hdr[0] >> 6) == 0
               && hdr[2] == 0x65 && hdr[3] == 0x58) {
        /* Version 0, transparent Ethernet bridging. */
        hdr_len = 8 + (hdr[0] & 0x3f) * 4;
    } else {
        return NULL;
    }
    if (size < hdr_len) {
        return NULL;
    }
    *sizep = size - hdr_len;
    return CONST_CAST(char *, (const char *) hdr + hdr_len);
}

/* If the UDP packet in 'outer' is a VXLAN or Geneve packet whose inner TCP
 * or UDP checksum was left partial, finishes that checksum.  (Open vSwitch
 * forgets a packet's offload flags when it pops a tunnel header, so the
 * inner checksum cannot wait for the output.)  The outer UDP checksum, if
 * any, was computed for the finished inner one: a sender's stack uses
 * local checksum offload for it.  Returns true if it finished one. */
static bool
finish_inner(const struct l4_info *outer)
{
    struct l4_info inner;
    ovs_be16 *field;
    char *frame;
    size_t size;

    frame = tunnel_payload(outer, &size);
    if (!frame || !parse_l4(frame, size, &inner) || !is_partial(&inner)) {
        return false;
    }

    field = l4_csum_field(&inner);
    *field = 0;
    *field = csum_finish(csum_continue(inner.pseudo_sum, inner.l4,
                                       inner.l4_size));
    if (inner.proto == IPPROTO_UDP && !*field) {
        *field = htons(0xffff);
    }
    return true;
}

/* Marks 'packet', just received, as having a partial L4 checksum if its
 * TCP or UDP checksum field holds what a local sender leaves there when it
 * lets the device finish the checksum (see afxdp-csum.h), and sets its L3
 * and L4 offsets.  Finishes, instead, the inner checksum of a VXLAN or
 * Geneve packet left partial.  Returns true if it did either. */
bool
afxdp_csum_rx_partial(struct dp_packet *packet)
{
    struct l4_info info;

    if (!parse_l4(dp_packet_data(packet), dp_packet_size(packet), &info)) {
        return false;
    }
    if (is_partial(&info)) {
        if (info.proto == IPPROTO_TCP) {
            dp_packet_l4_proto_set_tcp(packet);
        } else {
            dp_packet_l4_proto_set_udp(packet);
        }
        dp_packet_set_l3(packet, info.l3);
        dp_packet_set_l4(packet, info.l4);
        dp_packet_l4_checksum_set_partial(packet);
        return true;
    }
    return info.proto == IPPROTO_UDP && finish_inner(&info);
}

/* Returns true if 'packet' has a checksum left for its sender to finish:
 * an L4 or IPv4 header checksum, outer or inner. */
static bool
has_partial(const struct dp_packet *packet)
{
    return (dp_packet_l4_checksum_partial(packet)
            || dp_packet_ip_checksum_partial(packet)
            || dp_packet_inner_l4_checksum_partial(packet)
            || dp_packet_inner_ip_checksum_partial(packet));
}

/* Finishes in software every checksum of 'packet' that is partial.
 * Returns true if there was one. */
bool
afxdp_csum_tx_finish(struct dp_packet *packet)
{
    if (OVS_LIKELY(!has_partial(packet))) {
        return false;
    }
    dp_packet_ol_send_prepare(packet, 0);
    return true;
}

/* Writes into the checksum field of the TCP (if 'tcp') or UDP header at
 * 'l4' the folded sum of the pseudo-header of the IPv4 or IPv6 header at
 * 'l3', as a device that finishes the checksum expects it there. */
static void
put_pseudo_sum(const void *l3, char *l4, bool tcp)
{
    const struct ip_header *ip = l3;
    uint32_t sum = (IP_VER(ip->ip_ihl_ver) == 4
                    ? packet_csum_pseudoheader(ip)
                    : packet_csum_pseudoheader6(l3));
    ovs_be16 *field = (tcp
                       ? &ALIGNED_CAST(struct tcp_header *, l4)->tcp_csum
                       : &ALIGNED_CAST(struct udp_header *, l4)->udp_csum);

    *field = ~csum_finish(sum);
}

/* Prepares the checksums of 'packet' for a socket that finishes one L4
 * checksum per packet through TX metadata: if 'packet' has exactly one
 * partial checksum, a TCP or UDP one (outer or inner), fills in '*meta' to
 * have the kernel finish it; if it has others, finishes them all in
 * software.  Returns what it did. */
enum afxdp_csum_tx
afxdp_csum_tx_prepare(struct dp_packet *packet, struct afxdp_tx_meta *meta)
{
    bool outer, inner;
    const char *l4;
    bool tcp, udp;

    if (OVS_LIKELY(!has_partial(packet))) {
        return AFXDP_CSUM_TX_NONE;
    }

    outer = dp_packet_l4_checksum_partial(packet);
    inner = dp_packet_inner_l4_checksum_partial(packet);
    if (outer && !inner) {
        l4 = dp_packet_l4(packet);
        tcp = dp_packet_l4_proto_tcp(packet);
        udp = dp_packet_l4_proto_udp(packet);
    } else if (inner && !outer) {
        l4 = dp_packet_inner_l4(packet);
        tcp = dp_packet_inner_l4_proto_tcp(packet);
        udp = dp_packet_inner_l4_proto_udp(packet);
    } else {
        l4 = NULL;
        tcp = udp = false;
    }

    if (!l4 || (!tcp && !udp)
        || dp_packet_ip_checksum_partial(packet)
        || dp_packet_inner_ip_checksum_partial(packet)) {
        dp_packet_ol_send_prepare(packet, 0);
        return AFXDP_CSUM_TX_SOFTWARE;
    }

    /* The kernel, like a NIC, adds to the field what it sums from
     * 'csum_start' on: the field must hold the pseudo-header's sum.  It
     * does in a packet that a local sender left partial, but not in one
     * that Open vSwitch marked partial itself (an encapsulation's outer
     * UDP checksum) or whose pseudo-header it changed (a NAT). */
    put_pseudo_sum(outer ? dp_packet_l3(packet) : dp_packet_inner_l3(packet),
                   CONST_CAST(char *, l4), tcp);
    meta->flags = AFXDP_TX_META_CSUM;
    meta->csum_start = l4 - (const char *) dp_packet_data(packet);
    meta->csum_offset = (tcp ? offsetof(struct tcp_header, tcp_csum)
                         : offsetof(struct udp_header, udp_csum));
    return AFXDP_CSUM_TX_META;
}
