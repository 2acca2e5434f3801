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

/* Names of the built-in programs: three bound to the device, which ask it
 * for its RX hash (Linux 6.3), for the VLAN tag it keeps beside the packet
 * (Linux 6.8), or both; the one that transmits for user space (XDP
 * transmit, helpers of Linux 5.18); the one that does none of that but
 * runs offloaded flows, as all the others do (a helper of Linux 5.18);
 * and the plain one, which needs none of that and so loads on every
 * kernel that afxdp ports run on. */
#define AFXDP_PROG_HASH_NAME "afxdp_redirect_hash"
#define AFXDP_PROG_HASH_VLAN_NAME "afxdp_redirect_hash_vlan"
#define AFXDP_PROG_VLAN_NAME "afxdp_redirect_vlan"
#define AFXDP_PROG_XMIT_NAME "afxdp_redirect_xmit"
#define AFXDP_PROG_FLOWS_NAME "afxdp_redirect_flows"
#define AFXDP_PROG_PLAIN_NAME "afxdp_redirect"

/* The no-op instructions that a program bound to a device carries as room
 * for the verifier's rewrites, 16 kB: the verifier removes them first, and
 * the kernel must never have to move such a program to larger pages
 * (lib/afxdp-xdp.c, afxdp_xdp_check_bound()).  The rewrites grow our
 * bound programs by about 5% as root, and by about 22% for ovs-vswitchd
 * --user, without CAP_PERFMON, whose programs the verifier also hardens
 * against speculative execution (measured on Linux 6.18: 4441
 * instructions became 4664, and 5405). */
#define AFXDP_VERIFIER_ROOM 2048

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
    __u32 csum_partial;         /* Not steering: 1 if the port finishes
                                 * partial checksums it receives
                                 * (options:rx-csum-partial), which the
                                 * flow offload must do too. */
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

/* Flow offload (other_config:hw-offload=true)
 * ============================================
 *
 * The built-in programs but the plain one, after steering, look a packet
 * that arrived on a queue with a socket of the port in 'xsks_map' (never
 * one of the queues the port leaves to the kernel) up in a table of Open
 * vSwitch megaflows that user space mirrors
 * into maps shared by the programs of all afxdp ports, and execute the
 * actions of the one they find instead of handing the packet to the AF_XDP
 * socket.
 *
 * The program parses a packet into a struct afxdp_flow_key, with the
 * values Open vSwitch's own parser (miniflow_extract()) gives the same
 * fields, or gives up and leaves the packet to user space: frames it does
 * not parse exactly as Open vSwitch does (802.3 frames, two VLAN tags,
 * MPLS, NSH, IPv4 with options or fragmented, IPv6 with extension headers,
 * ICMPv6, IGMP, truncated headers), packets longer than
 * AFXDP_FLOW_MAX_LEN, VXLAN and Geneve.  A TCP or UDP checksum that a
 * local sender left partial (lib/afxdp-csum.h) is finished by the program
 * before it sends such a packet on, if the port's user space would finish
 * it ('csum_partial' of 'steer_cfg'); otherwise it goes on as it came, as
 * from user space.
 *
 * 'flow_masks' holds the masks in use, by slot, from 0 to 'n_slots' - 1
 * of 'flow_cfg' (a slot may be empty).  For each mask, the program looks
 * up { mask id, key & mask } in 'flow_table', whose entries say what to do
 * (struct afxdp_flow_action) and where to count (an entry of
 * 'flow_stats').  A mask's id is never reused, so that a program still
 * reading a mask that user space has just replaced finds no flow of
 * another.  Both hash maps are allocated without preallocation, so that a
 * reader sees an entry whole, before or after an update.
 *
 * A packet that matches no flow goes to the socket as before: a miss is
 * always safe.  'flow_counters' (per CPU) counts what the program did. */
#define AFXDP_FLOW_CFG_NAME "flow_cfg"
#define AFXDP_FLOW_MASKS_NAME "flow_masks"
#define AFXDP_FLOW_TABLE_NAME "flow_table"
#define AFXDP_FLOW_STATS_NAME "flow_stats"
#define AFXDP_FLOW_COUNTERS_NAME "flow_counters"
#define AFXDP_FLOW_MAX_MASKS 16

/* Longer packets are left to user space: the driver may have spread one
 * over several buffers, which the program cannot tell from its length
 * without CAP_PERFMON, and a device may not take such a packet from XDP
 * (veth or a NIC without NETDEV_XDP_ACT_NDO_XMIT_SG): it would be lost. */
#define AFXDP_FLOW_MAX_LEN 1522
#define AFXDP_FLOW_MAX 65536
/* The bytes of per-CPU flow statistics ('flow_stats') that user space
 * allocates at most: on hosts with many CPUs, the table holds fewer
 * flows than AFXDP_FLOW_MAX. */
#define AFXDP_FLOW_STATS_BUDGET (32 * 1024 * 1024)

struct afxdp_flow_cfg {
    __u32 n_slots;              /* Mask slots to look at. */
    __u32 cache_shift;          /* 64 - log2 of 'flow_cache''s entries. */
    __u64 gen;                  /* The table's generation (below). */
};

/* The flow cache: each CPU keeps, in 'flow_cache', the action that the
 * table gave a packet of each of as many keys as it has entries (by a
 * hash of the whole key), or that it had none, so that a packet like it
 * is executed or left to user space without a search of every mask's
 * table.
 *
 * An entry is valid only under the generation of the table it was taken
 * from.  User space makes the generation odd before it changes the table
 * (the cache is then neither read nor filled), and even again only after
 * a grace period of the kernel's RCU during which the table did not
 * change: a program that reads that even generation began after the
 * grace period began, after every change, and so cannot have read the
 * table as it was before one, whatever order the CPU loads in.  0 is
 * never a valid generation, and 64 bits never wrap around to one that
 * an old entry still has. */
#define AFXDP_FLOW_CACHE_NAME "flow_cache"

/* The cache's entries: a power of 2, as many as AFXDP_FLOW_CACHE_BUDGET
 * bytes hold on every possible CPU, from AFXDP_FLOW_CACHE_MIN to
 * AFXDP_FLOW_CACHE_MAX (4096 up to 26 CPUs, 1024 with 64, 256 beyond 215).
 * Fewer entries than flows that take turns cost a search of the table for
 * many packets: with 1000 flows, 1024 entries cost 35 ns per packet more
 * than 4096 (make bench, veth). */
#define AFXDP_FLOW_CACHE_MIN 256
#define AFXDP_FLOW_CACHE_MAX 4096
#define AFXDP_FLOW_CACHE_BUDGET (16 * 1024 * 1024)

/* A search's result goes into the cache only once in this many searches,
 * at random: a busy flow gets in after a few packets, while many flows
 * that take turns (more than the cache holds) do not each pay for
 * writing an entry that the next would evict. */
#define AFXDP_FLOW_CACHE_INSERT 16

/* All in network byte order, as in the packet, except 'ifindex'. */
struct afxdp_flow_key {
    __u32 ifindex;              /* The device the packet arrived on. */
    __be16 dl_type;
    __be16 vlan_tpid;           /* 0: no VLAN tag. */
    __u8 dl_dst[6];
    __u8 dl_src[6];
    __be16 vlan_tci;            /* With 0x1000 set if tagged, as in OVS. */
    __u8 nw_frag;
    __u8 nw_tos;
    __u8 nw_ttl;
    __u8 nw_proto;              /* Or the ARP opcode, if at most 0xff. */
    __be16 tp_src;              /* Or the ICMP type. */
    __be16 tp_dst;              /* Or the ICMP code. */
    __be16 tcp_flags;           /* The low 12 bits of the TCP header's. */
    __be32 nw_src;              /* IPv4 or ARP sender address. */
    __be32 nw_dst;              /* IPv4 or ARP target address. */
    __be32 ipv6_label;
    __u32 pad;
    __u8 ipv6_src[16];
    __u8 ipv6_dst[16];
    __u8 arp_sha[6];
    __u8 arp_tha[6];
    __u32 pad2;
};

#define AFXDP_FLOW_KEY_WORDS (sizeof(struct afxdp_flow_key) / 8)

struct afxdp_flow_mask {
    __u32 id;
    __u32 pad;
    struct afxdp_flow_key mask;
};

struct afxdp_flow_lookup {
    __u32 mask_id;
    __u32 pad;
    struct afxdp_flow_key key;  /* Masked. */
};

/* struct afxdp_flow_action 'flags', applied in this order, then the
 * packet goes to 'ifindex' or, if it is 0, is dropped.  SET_TTL sets the
 * IPv4 TTL (updating the header checksum) or the IPv6 hop limit to
 * 'nw_ttl'; it comes first, while the network header is where the packet
 * arrived with it, and touches no byte that the others do. */
#define AFXDP_FLOW_SET_TTL 0x8u
#define AFXDP_FLOW_POP_VLAN 0x1u
#define AFXDP_FLOW_SET_ETH 0x2u
#define AFXDP_FLOW_PUSH_VLAN 0x4u

struct afxdp_flow_action {
    __u32 stats;                /* Entry of 'flow_stats'. */
    __u32 ifindex;              /* Output device, 0 to drop. */
    __u32 flags;                /* AFXDP_FLOW_*. */
    __be16 vlan_tpid;           /* To push. */
    __be16 vlan_tci;            /* To push, as it goes on the wire. */
    __u8 eth_dst[6];            /* Bits of 'eth_dst_mask' replaced. */
    __u8 eth_src[6];
    __u8 eth_dst_mask[6];
    __u8 eth_src_mask[6];
    __u8 nw_ttl;                /* To set. */
    __u8 pad[3];
};

struct afxdp_flow_cache_entry {
    __u64 gen;                  /* 0: empty or being written. */
    __u32 miss;                 /* 1: the key matches no flow. */
    __u32 pad;
    struct afxdp_flow_key key;
    struct afxdp_flow_action action;
};

/* A flow's statistics, one entry per CPU ('flow_stats' is a per-CPU
 * array), written by the programs on that CPU only, without atomics; user
 * space adds the counts up and ORs the 'tcp_flags'.  No time of last use:
 * a read of the clock, a helper call, cost 15 ns per packet, a sixth of
 * an offloaded hit (make bench, veth, where each call and return pays for
 * the CPU's speculation mitigations); user space takes a flow as used
 * when it sees its count move (lib/dpif-offload-xdp.c). */
struct afxdp_flow_stats {
    __u64 packets;
    __u64 bytes;
    __u32 tcp_flags;            /* Host byte order. */
    __u32 pad;
};

/* What the test program afxdp_parse_probe stores in 'parse_probe'. */
#define AFXDP_PARSE_PROBE_PROG_NAME "afxdp_parse_probe"
#define AFXDP_PARSE_PROBE_MAP_NAME "parse_probe"

struct afxdp_parse_probe {
    __u32 parsed;               /* 0: left to user space. */
    __u32 steered;              /* 1: steering passes it to the kernel. */
    struct afxdp_flow_key key;
};

/* Entries of 'flow_counters'. */
enum afxdp_flow_counter {
    AFXDP_FLOW_HIT,             /* Executed in XDP. */
    AFXDP_FLOW_MISS,            /* Parsed, matched no flow. */
    AFXDP_FLOW_UNPARSED,        /* Left to user space unparsed. */
    AFXDP_FLOW_CSUM_FINISHED,   /* Executed in XDP, which finished the
                                 * checksum a local sender left partial
                                 * (also counted in AFXDP_FLOW_HIT). */
    AFXDP_FLOW_ACTION_FAILED,   /* Dropped: an action failed. */
    AFXDP_FLOW_VLAN_FAILED,     /* Dropped: its VLAN tag could not be put
                                 * back in the packet. */
    AFXDP_FLOW_CACHE_HIT,       /* Executed in XDP, found in the cache
                                 * (also counted in AFXDP_FLOW_HIT). */
    AFXDP_FLOW_N_COUNTERS
};

#endif /* afxdp-prog.h */
