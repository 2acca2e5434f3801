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

/* The largest n_rxq an afxdp port accepts. */
#define AFXDP_MAX_QUEUES 64

/* The XSKMAP has a slot per receive queue of the device, indexed by queue
 * number: as built, for queues 0 to AFXDP_MAX_QUEUES - 1; user space
 * enlarges it before loading for a port whose queues go higher
 * (options:start-queue).  An afxdp port binds queues below this one. */
#define AFXDP_MAX_QUEUE_END 1024

/* Name of the XSKMAP that a program must define, ours or a user's. */
#define AFXDP_XSKS_MAP_NAME "xsks_map"

/* Names of the built-in programs: the one that asks the device for its RX
 * hash (Linux 6.3), the one that also transmits for user space (XDP
 * transmit, helpers of Linux 5.18), and the plain one, which needs neither
 * and so loads on every kernel that afxdp ports run on. */
#define AFXDP_PROG_HASH_NAME "afxdp_redirect_hash"
#define AFXDP_PROG_XMIT_NAME "afxdp_redirect_xmit"
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

/* XDP transmit
 * ============
 *
 * The transmitting program also sends packets for user space: run through
 * BPF_PROG_RUN with live frames, it fills each frame it is given from a
 * slot of 'xmit_slots' and redirects it to the slot's interface, so that
 * the packet leaves through the driver's XDP transmit path.  User space
 * tells such a run from a packet received on an interface by the metadata
 * it puts in front of the frame (struct afxdp_xmit_meta) and by the
 * interface, which is the loopback device in a BPF_PROG_RUN.
 *
 * Queue Q of a port owns slots [Q * AFXDP_XMIT_BURST, (Q + 1) *
 * AFXDP_XMIT_BURST) and entry Q of 'xmit_ctl', whose 'next' user space sets
 * to the queue's first slot before each run. */
#define AFXDP_XMIT_SLOTS_NAME "xmit_slots"
#define AFXDP_XMIT_CTL_NAME "xmit_ctl"
#define AFXDP_XMIT_BURST 32
#define AFXDP_XMIT_MAX 3072     /* Largest packet a slot holds. */
#define AFXDP_XMIT_MAGIC 0x786d6974u

struct afxdp_xmit_meta {
    __u32 magic;                /* AFXDP_XMIT_MAGIC. */
    __u32 queue;
};

struct afxdp_xmit_slot {
    __u32 len;
    __u32 ifindex;
    __u8 data[AFXDP_XMIT_MAX];
};

struct afxdp_xmit_ctl {
    __u32 next;                 /* Slot for the next frame of this run. */
    __u32 invalid;              /* Frames dropped: bad slot, ever. */
    __u32 pad[14];              /* One cache line per queue. */
};

/* Steering (options:pass-to-kernel)
 * ==================================
 *
 * Every built-in program first decides whether a packet is one that the
 * host's own network stack should have rather than OVS, and passes it on
 * (XDP_PASS) if so.  'steer_cfg' (one entry) says which kinds of packets
 * are the kernel's, as AFXDP_STEER_* bits; with none set, nothing is
 * looked at.
 *
 * AFXDP_STEER_LOCAL: untagged IPv4 and IPv6 packets whose destination is
 * in 'steer_addrs' (the device's own addresses, kept current by user
 * space), ARP packets whose target is, and IPv6 neighbor solicitations
 * (without extension headers) for one of them.  IPv4 addresses are
 * written as IPv4-mapped IPv6 addresses (::ffff:a.b.c.d).
 *
 * AFXDP_STEER_RULES: untagged packets that match an entry of 'steer_rules':
 * { EtherType, 0, 0 } by EtherType alone; { IPv4 or IPv6, protocol, 0 } by
 * IP protocol; { IPv4 or IPv6, TCP, UDP or SCTP, port } by destination
 * port (IPv4 without options, unfragmented or a first fragment; IPv6
 * without extension headers).  EtherType and port in network byte
 * order. */
#define AFXDP_STEER_CFG_NAME "steer_cfg"
#define AFXDP_STEER_ADDRS_NAME "steer_addrs"
#define AFXDP_STEER_RULES_NAME "steer_rules"
#define AFXDP_STEER_MAX_ADDRS 256
#define AFXDP_STEER_MAX_RULES 64

#define AFXDP_STEER_LOCAL 0x1u
#define AFXDP_STEER_RULES 0x2u

struct afxdp_steer_cfg {
    __u32 flags;                /* AFXDP_STEER_*. */
};

struct afxdp_steer_addr {
    __u8 addr[16];
};

struct afxdp_steer_rule {
    __be16 ethertype;
    __u8 proto;
    __u8 pad;
    __be16 port;
    __u16 pad2;
};

#endif /* afxdp-prog.h */
