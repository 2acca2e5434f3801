/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Copyright (c) 2026 The ovs-afxdp authors.
 *
 * What the XDP program in bpf/afxdp-redirect.c and the afxdp netdev agree
 * on.  Included by both the BPF program and user space.
 */

#ifndef AFXDP_PROG_H
#define AFXDP_PROG_H 1

/* Slots of the XSKMAP: one per receive queue, indexed by queue number.
 * Also the largest n_rxq an afxdp port accepts. */
#define AFXDP_MAX_QUEUES 64

/* Name of the XSKMAP that a program must define, ours or a user's. */
#define AFXDP_XSKS_MAP_NAME "xsks_map"

#endif /* afxdp-prog.h */
