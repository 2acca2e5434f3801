/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Copyright (c) 2026 The ovs-afxdp authors.
 *
 * The one test for a TCP or UDP checksum that a sender on this host left
 * for the device to finish (lib/afxdp-csum.h explains when and why), used
 * by lib/afxdp-csum.c, which finishes such checksums, and by the XDP
 * program in bpf/, which leaves such packets to user space.  Plain C that
 * both compilers take.
 */

#ifndef AFXDP_CSUM_PARTIAL_H
#define AFXDP_CSUM_PARTIAL_H 1

#include <linux/types.h>

/* Whether 'csum', the checksum field of a TCP or UDP header as it is in
 * the packet, holds what such a sender leaves there: the ones' complement
 * sum of the pseudo-header, 'sum' (of its 16-bit words as they are in the
 * packet, the transport length included, not yet folded), folded but not
 * inverted.  That value is never 0, which in UDP means "no checksum". */
static inline int
afxdp_csum_is_partial(__u16 csum, __u32 sum)
{
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    return csum != 0 && csum == sum;
}

#endif /* afxdp-csum-partial.h */
