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

#ifndef AFXDP_XDP_H
#define AFXDP_XDP_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * XDP program loading and attachment for afxdp ports.
 * ===================================================
 *
 * Each afxdp port loads an XDP program that redirects the packets of
 * receive queue N to the AF_XDP socket in slot N of its map 'xsks_map':
 * ours (bpf/afxdp-redirect.c, built into the binary) or one the user names
 * with options:xdp-program.
 *
 * The program is attached through a bpf_link, so that the kernel detaches
 * it when the link's file descriptor is closed: by afxdp_xdp_detach(), or
 * by the kernel itself when the process dies, even on SIGKILL.  A program
 * that is already attached to the interface, in any mode, is someone
 * else's: attaching fails with a clear error and leaves it in place.
 *
 * RX hash
 * =======
 *
 * When asked to, and when the device can (its driver implements the XDP
 * RX hash kfunc, as the kernel's netdev netlink family reports) and the
 * program runs in native mode, the built-in program that writes the
 * device's hash in front of each packet (struct afxdp_rx_meta) is loaded,
 * bound to the device.  Otherwise the plain one is, and
 * afxdp_xdp_rx_hash_status() says why.
 *
 * Queues
 * ======
 *
 * A port's sockets are bound to 'n_queues' consecutive receive queues of
 * the device from 'first_queue' on; the packets of the device's other
 * queues find no socket in the XSKMAP and go to the kernel's stack.  The
 * functions below that take a queue take the port's own numbering, from 0
 * to n_queues - 1.
 *
 * Steering
 * ========
 *
 * Our programs can also give the kernel's stack some of the packets of
 * the queues that have a socket (bpf/afxdp-prog.h, "Steering"): those for
 * the device's own addresses, which afxdp_xdp_steer_addrs() keeps
 * current, and those that match afxdp_xdp_steer_rules().
 *
 * XDP transmit
 * ============
 *
 * A copy-mode AF_XDP socket transmits by building a socket buffer for
 * every packet and handing it to the driver's ordinary transmit function.
 * Our transmitting program can instead send a port's packets as XDP frames,
 * through the driver's XDP transmit path (ndo_xdp_xmit): user space copies
 * up to AFXDP_XMIT_BURST packets into the queue's slots in a map it shares
 * with the program, and runs the program once over that many live frames
 * (BPF_PROG_RUN with BPF_F_TEST_XDP_LIVE_FRAMES), which fills each frame
 * from a slot and redirects it to the port.  On veth this skips the socket
 * buffer on both ends.  It needs that program attached in native
 * mode and a device that takes XDP frames, which afxdp_xdp_xmit_obstacle()
 * asks the kernel.
 *
 * Flow offload
 * ============
 *
 * Every program loaded from our object shares the process's flow table
 * (afxdp-flow.h), and executes the megaflows offloaded to XDP for packets
 * that arrive on its device.
 *
 * Thread-safety
 * =============
 *
 * Not thread-safe: the netdev calls these from its reconfiguration, under
 * its own mutex.  Different 'struct afxdp_xdp's may be used concurrently.
 * Exceptions: afxdp_xdp_xmit_obstacle() and afxdp_xdp_xmit() may be called
 * by any thread while the port is set up, the latter by one thread at a
 * time for a given queue.
 */

/* Where the program runs. */
enum afxdp_xdp_attach {
    AFXDP_XDP_NATIVE,           /* In the driver (XDP_FLAGS_DRV_MODE). */
    AFXDP_XDP_GENERIC,          /* In the stack (XDP_FLAGS_SKB_MODE). */
};

struct afxdp_steer_rule;
struct afxdp_xdp;
struct dp_packet_batch;
struct in6_addr;

/* What afxdp_xdp_attach() installs. */
struct afxdp_xdp_config {
    const char *path;           /* A user's object file, or NULL: ours. */
    enum afxdp_xdp_attach attach;
    bool rx_hash;               /* The device's RX hash, where it has one. */
    bool xmit;                  /* XDP transmit, where possible. */
    uint32_t first_queue;       /* The device's queue for the port's 0. */
    uint32_t n_queues;
    uint32_t steer;             /* AFXDP_STEER_* bits; ours only. */
    bool csum_partial;          /* Offloaded flows finish partial checksums
                                 * (the port's rx-csum-partial); ours
                                 * only. */
};

int afxdp_xdp_attach(const char *ifname, int ifindex,
                     const struct afxdp_xdp_config *,
                     struct afxdp_xdp **, char **errp);
void afxdp_xdp_detach(struct afxdp_xdp *);

int afxdp_xdp_steer_rules(struct afxdp_xdp *, const struct afxdp_steer_rule *,
                          size_t n);
int afxdp_xdp_steer_addrs(struct afxdp_xdp *, const struct in6_addr *,
                          size_t n, bool *changed);
size_t afxdp_xdp_n_steer_addrs(const struct afxdp_xdp *);

int afxdp_xdp_set_socket(struct afxdp_xdp *, uint32_t queue, int fd);
void afxdp_xdp_clear_socket(struct afxdp_xdp *, uint32_t queue);

uint32_t afxdp_xdp_prog_id(const struct afxdp_xdp *);
bool afxdp_xdp_has_rx_hash(const struct afxdp_xdp *);
const char *afxdp_xdp_rx_hash_status(const struct afxdp_xdp *);
const char *afxdp_xdp_rx_vlan_status(const struct afxdp_xdp *);
const char *afxdp_xdp_attach_name(enum afxdp_xdp_attach);

int afxdp_xdp_query(int ifindex, uint32_t *prog_id);
const char *afxdp_xdp_probe_xsk_csum(int ifindex);
int afxdp_xdp_queue_has_pool(int ifindex, uint32_t queue);
int afxdp_xdp_probe_zero_copy(int ifindex);

/* Counters of afxdp_xdp_xmit() calls, kept by the caller.  What happens
 * to a packet once the program has redirected it is the kernel's and the
 * driver's business, out of sight: a device that is down, a packet over
 * the device's MTU, a full ring at a veth's peer drop it without telling
 * (veth counts those in the sending device's ethtool -S, as
 * tx_queue_N_xdp_xmit_errors). */
struct afxdp_xmit_stats {
    uint64_t redirected;        /* Redirected by the program to the device's
                                 * XDP transmit. */
    uint64_t invalid;           /* Dropped by the program: bad slot. */
    uint64_t failed;            /* Not run (the kernel refused the run, or
                                 * failed before them): left for the
                                 * socket. */
};

bool afxdp_xdp_has_flow_table(const struct afxdp_xdp *);
const char *afxdp_xdp_frames_obstacle(int ifindex);

/* A program that afxdp_xdp_peer_attach() put on a veth's peer. */
struct afxdp_xdp_peer {
    int link_fd;                /* Its bpf_link; -1: none. */
};

const char *afxdp_xdp_peer_attach(int ifindex, struct afxdp_xdp_peer *);
void afxdp_xdp_peer_detach(struct afxdp_xdp_peer *);

const char *afxdp_xdp_xmit_unsupported(const struct afxdp_xdp *);
const char *afxdp_xdp_xmit_obstacle(const struct afxdp_xdp *);
void afxdp_xdp_xmit(struct afxdp_xdp *, uint32_t queue,
                    struct dp_packet_batch *, struct afxdp_xmit_stats *);

#endif /* afxdp-xdp.h */
