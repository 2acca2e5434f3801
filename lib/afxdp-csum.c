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

#include <netinet/in.h>
#include <netinet/ip6.h>
#include <stddef.h>

#include "csum.h"
#include "dp-packet.h"
#include "packets.h"
#include "util.h"

BUILD_ASSERT_DECL(sizeof(struct afxdp_tx_meta) == 16);

/* The value a local sender leaves in the checksum field of a packet whose
 * checksum it left partial: the folded pseudo-header sum, not inverted. */
static ovs_be16
partial_value(uint32_t pseudo_sum)
{
    return ~csum_finish(pseudo_sum);
}

/* Sets 'packet''s L3 and L4 offsets and marks its checksum partial, if the
 * checksum field of its TCP or UDP header at 'l4', 'l4_size' bytes long,
 * holds 'pseudo_sum' folded.  Returns true if it did. */
static bool
mark_if_partial(struct dp_packet *packet, const void *l3, void *l4,
                size_t l4_size, uint8_t proto, uint32_t pseudo_sum)
{
    ovs_be16 want = partial_value(pseudo_sum);

    if (proto == IPPROTO_TCP) {
        const struct tcp_header *tcp = l4;

        if (l4_size < TCP_HEADER_LEN || tcp->tcp_csum != want) {
            return false;
        }
        dp_packet_l4_proto_set_tcp(packet);
    } else if (proto == IPPROTO_UDP) {
        const struct udp_header *udp = l4;

        if (l4_size < UDP_HEADER_LEN || udp->udp_csum != want
            || ntohs(udp->udp_len) != l4_size) {
            return false;
        }
        dp_packet_l4_proto_set_udp(packet);
    } else {
        return false;
    }

    dp_packet_set_l3(packet, CONST_CAST(void *, l3));
    dp_packet_set_l4(packet, l4);
    dp_packet_l4_checksum_set_partial(packet);
    return true;
}

/* Marks 'packet', just received, as having a partial L4 checksum if its
 * TCP or UDP checksum field holds what a local sender leaves there when it
 * lets the device finish the checksum (see afxdp-csum.h).  Sets the L3 and
 * L4 offsets of a packet it marks.  Returns true if it marked 'packet'. */
bool
afxdp_csum_rx_partial(struct dp_packet *packet)
{
    char *data = dp_packet_data(packet);
    size_t size = dp_packet_size(packet);
    size_t l3_ofs = ETH_HEADER_LEN;
    ovs_be16 eth_type;

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

    if (eth_type == htons(ETH_TYPE_IP)) {
        const struct ip_header *ip
            = ALIGNED_CAST(const struct ip_header *, data + l3_ofs);
        size_t ip_len, hdr_len;

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
        return mark_if_partial(packet, ip, data + l3_ofs + hdr_len,
                               ip_len - hdr_len, ip->ip_proto,
                               packet_csum_pseudoheader(ip));
    } else if (eth_type == htons(ETH_TYPE_IPV6)) {
        const struct ovs_16aligned_ip6_hdr *ip6
            = ALIGNED_CAST(const struct ovs_16aligned_ip6_hdr *,
                           data + l3_ofs);
        size_t plen;

        if (size - l3_ofs < IPV6_HEADER_LEN) {
            return false;
        }
        plen = ntohs(ip6->ip6_plen);
        if (plen > size - l3_ofs - IPV6_HEADER_LEN) {
            return false;
        }
        return mark_if_partial(packet, ip6,
                               data + l3_ofs + IPV6_HEADER_LEN, plen,
                               ip6->ip6_nxt,
                               packet_csum_pseudoheader6(ip6));
    }
    return false;
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

    meta->flags = AFXDP_TX_META_CSUM;
    meta->csum_start = l4 - (const char *) dp_packet_data(packet);
    meta->csum_offset = (tcp ? offsetof(struct tcp_header, tcp_csum)
                         : offsetof(struct udp_header, udp_csum));
    return AFXDP_CSUM_TX_META;
}
