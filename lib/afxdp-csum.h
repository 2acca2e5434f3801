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

#ifndef AFXDP_CSUM_H
#define AFXDP_CSUM_H 1

#include <stdbool.h>
#include <stdint.h>

/*
 * L4 checksums on afxdp ports.
 * ============================
 *
 * Receive.  A local sender (a container behind a veth, a VM behind a tap)
 * with checksum offload on leaves the TCP or UDP checksum of its packets
 * for the device to finish: the kernel marks them CHECKSUM_PARTIAL and
 * stores in the checksum field only the folded sum of the pseudo-header.
 * XDP, and so AF_XDP, hands the bytes over as they are, without that mark.
 * afxdp_csum_rx_partial() recognises such a packet by that very value and
 * marks it partial in its dp_packet, as a NIC would mark one it verified,
 * so that Open vSwitch finishes the checksum where the output needs it.
 *
 * A VXLAN or Geneve tunnel endpoint on this host leaves the checksum of
 * the inner packet partial in the same way.  Open vSwitch forgets a
 * packet's offload flags when it pops a tunnel header, so for such a
 * packet the inner checksum is finished right away, in software.
 *
 * The test cannot damage a packet whose checksum is complete and correct:
 * finishing a checksum computes it from the data alone, whatever the field
 * held, and gives back the same value.  A packet corrupted on its way here
 * whose checksum field happens to equal its pseudo-header sum (1 in 65535
 * for a random error) is finished too, where a NIC that verifies checksums
 * would count it bad.  The test reads the headers only (about 40 cycles
 * per packet on the PMD, measured with "make bench").  It handles
 * Ethernet with at most one 802.1Q tag, IPv4 that is not fragmented (the
 * stack never leaves a fragment's checksum partial) and IPv6 without
 * extension headers, and VXLAN (UDP port 4789) and Geneve (6081) around
 * them; a partial checksum in any other packet arrives unfinished.
 *
 * Transmit.  Linux 6.11 and later finish a checksum for an AF_XDP socket
 * when the descriptor carries XDP_TX_METADATA and the metadata in front of
 * the packet asks for it (struct afxdp_tx_meta): in copy mode the kernel
 * hands the driver a CHECKSUM_PARTIAL socket buffer, in zero-copy mode the
 * driver asks the NIC, if it can (the device's "xsk-features").
 * afxdp_csum_tx_prepare() fills that metadata in for a packet whose
 * checksum is partial, and puts in the checksum field the pseudo-header's
 * sum that the kernel or the NIC starts from (Open vSwitch leaves the
 * field as it was when it marks a checksum partial itself, or changes the
 * addresses under one); afxdp_csum_tx_finish() finishes checksums in
 * software for the paths that cannot ask (XDP transmit).
 *
 * Thread-safety: the functions touch only the packets given to them.
 */

struct dp_packet;

/* The kernel's struct xsk_tx_metadata (linux/if_xdp.h, 6.8 and later),
 * as far as a checksum request goes: the UMEM reserves this many bytes in
 * front of each packet to transmit. */
struct afxdp_tx_meta {
    uint64_t flags;             /* AFXDP_TX_META_CSUM or 0. */
    uint16_t csum_start;        /* From the packet's first byte. */
    uint16_t csum_offset;       /* Of the checksum field, from csum_start. */
    uint8_t pad[4];
};

#define AFXDP_TX_META_CSUM (1 << 1)     /* XDP_TXMD_FLAGS_CHECKSUM. */

bool afxdp_csum_rx_partial(struct dp_packet *);

/* What afxdp_csum_tx_prepare() did to a packet. */
enum afxdp_csum_tx {
    AFXDP_CSUM_TX_NONE,         /* Nothing: its checksums are complete. */
    AFXDP_CSUM_TX_META,         /* Asked the kernel, in the metadata. */
    AFXDP_CSUM_TX_SOFTWARE,     /* Finished them in software. */
};

enum afxdp_csum_tx afxdp_csum_tx_prepare(struct dp_packet *,
                                         struct afxdp_tx_meta *);
bool afxdp_csum_tx_finish(struct dp_packet *);

#endif /* afxdp-csum.h */
