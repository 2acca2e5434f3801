/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Copyright (c) 2026 The ovs-afxdp authors.
 *
 * What the XDP program in bpf/afxdp-redirect.c and the afxdp netdev agree
 * on.  Included by both the BPF program and user space.
 */

#ifndef AFXDP_PROG_H
#define AFXDP_PROG_H 1

#include <linux/types.h>

/* Slots of the XSKMAP: one per receive queue, indexed by queue number.
 * Also the largest n_rxq an afxdp port accepts. */
#define AFXDP_MAX_QUEUES 64

/* Name of the XSKMAP that a program must define, ours or a user's. */
#define AFXDP_XSKS_MAP_NAME "xsks_map"

/* Name of the built-in program that asks the device for its RX hash, and
 * of the one that does not. */
#define AFXDP_PROG_HASH_NAME "afxdp_redirect_hash"
#define AFXDP_PROG_PLAIN_NAME "afxdp_redirect"

/* What the hash program writes in front of every packet it steers to an
 * AF_XDP socket, in the XDP metadata area: the last bytes before the
 * packet data.  'flags' is AFXDP_RX_META_HASH when 'hash' holds the hash
 * the device computed, anything else when it does not; user space clears
 * it once read. */
struct afxdp_rx_meta {
    __u32 hash;
    __u32 flags;
};
#define AFXDP_RX_META_HASH 0x68736801u

#endif /* afxdp-prog.h */
