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

#ifndef AFXDP_UMEM_H
#define AFXDP_UMEM_H 1

#include <stdbool.h>
#include <stdint.h>

#include "afxdp-pool.h"

/*
 * The shared UMEM and its AF_XDP sockets.
 * =======================================
 *
 * One UMEM serves every afxdp port and queue of the process.  It grows in
 * regions: each region is an area of frames of AFXDP_FRAME_SIZE bytes
 * (AFXDP_UMEM_FRAMES, 128 MiB, backed by huge pages where the kernel has
 * enough free), registered with the kernel by the first AF_XDP socket
 * placed in it and shared by the others placed there (XDP_SHARED_UMEM).
 * Each socket, one per (port, queue), has its own four rings: fill and rx
 * for receiving, tx and completion for sending.  Because every socket of a
 * region can address all of the region's frames, a packet received on one
 * afxdp port is sent on another from the frame it arrived in, without a
 * copy, when both sockets are in the same region; across regions, it is
 * copied, as a packet from any other netdev is.
 *
 * A socket goes into the first region whose fill rings leave at least half
 * of its frames for packets in flight once the socket's fill ring is
 * counted, and whose copy mode (zero-copy or copy, decided by its first
 * socket) and multi-buffer suit the socket; if none does, a new region is
 * added, up to 32 of them.  So ports and queues can be added at any time
 * without a socket's fill ring ever starving the others: the kernel cannot
 * grow a registered UMEM, but a new registration beside it serves.  A
 * region is kept until the process exits: packets in flight may point into
 * it at any time.
 *
 * Where the kernel has multi-buffer AF_XDP (Linux 6.6), a region's first
 * socket binds with XDP_USE_SG and so the region carries packets larger
 * than a frame: one arrives as a chain of descriptors, which
 * afxdp_xsk_recv() copies into a single dp_packet, and one sent leaves as a
 * chain of frames (afxdp_xsk_has_sg()).  A zero-copy driver without
 * multi-buffer support for AF_XDP may keep a region from it; sockets that
 * need it then go to another region.
 *
 * Where the kernel has TX metadata (afxdp-csum.h), a region is registered
 * with room for it in front of every packet sent, so that any socket can
 * ask the kernel to finish a packet's checksum; afxdp_xsk_has_tx_meta()
 * says whether it was.
 *
 * Each region's free frames live in an afxdp_pool with one cache per
 * thread.  For each frame, a 'struct dp_packet' is preallocated, so that
 * receiving allocates nothing.
 *
 * Conservation: every frame is, at any time, in its region's pool (shared
 * list or a cache), in a socket's rings (fill, rx, tx or completion, or
 * inside the kernel between them), or in a packet that OVS is processing.
 * Each frame that a socket is given records the socket's slot, so that
 * destroying the socket returns exactly its frames to the pool, whichever
 * ring, or kernel queue, they were in.
 *
 * Thread-safety
 * =============
 *
 *   afxdp_xsk_create(), afxdp_xsk_destroy()
 *       Any thread; serialized by an internal mutex.  A socket must not be
 *       used by another thread while it is destroyed.
 *
 *   afxdp_xsk_set_tx_budget(), afxdp_xsk_set_busy_poll()
 *       The thread that created the socket, before others use it.
 *
 *   afxdp_xsk_update_busy_poll(), afxdp_xsk_napi_id()
 *       One thread at a time (the one that reconfigures the port), while
 *       others use the socket.
 *
 *   afxdp_xsk_recv()
 *       One thread at a time per socket (the rxq's poller).
 *
 *   afxdp_xsk_send()
 *       One thread at a time per socket: callers that share a tx queue
 *       serialize with a lock of their own.  Receiving and sending on the
 *       same socket may run concurrently.
 *
 *   afxdp_umem_free_packet(), afxdp_umem_get_stats(),
 *   afxdp_umem_kernel_has_sg(), afxdp_umem_kernel_has_tx_budget(),
 *   afxdp_umem_max_packet(),
 *   afxdp_xsk_has_tx_meta(), afxdp_xsk_has_sg(), afxdp_xsk_get_stats()
 *       Any thread.
 */

/* Bytes per frame (the UMEM's chunk size). */
#define AFXDP_FRAME_SIZE 4096

/* Bytes the kernel leaves free in front of received packet data, on top
 * of its own XDP_PACKET_HEADROOM: room for OVS to push headers. */
#define AFXDP_FRAME_HEADROOM 128

/* Frames in a region of the UMEM (128 MiB with 4 KiB frames). */
#define AFXDP_UMEM_FRAMES 32768

/* The most descriptors one copy-mode transmit call sends before Linux 6.17,
 * and by default on later kernels (afxdp_xsk_set_tx_budget()). */
#define AFXDP_TX_BUDGET 32

/* Default and largest number of descriptors in each ring of a socket. */
#define AFXDP_RING_SIZE 2048
#define AFXDP_RING_SIZE_MAX 8192

/* Where a received packet starts in its frame, and so the largest packet
 * a frame carries. */
#define AFXDP_RX_OFFSET (256 + AFXDP_FRAME_HEADROOM)
#define AFXDP_MAX_PACKET (AFXDP_FRAME_SIZE - AFXDP_RX_OFFSET)

/* Multi-buffer (Linux 6.6): a packet larger than a frame travels in up to
 * this many frames, chained descriptors of AFXDP_MAX_PACKET bytes each
 * but the last.  A copy-mode socket transmits at most MAX_SKB_FRAGS (17)
 * descriptors per packet. */
#define AFXDP_MAX_SEGS 16
#define AFXDP_MAX_SG_PACKET (AFXDP_MAX_SEGS * AFXDP_MAX_PACKET)

struct dp_packet;
struct dp_packet_batch;
struct xdp_statistics;

/* Wanted copy mode of a socket. */
enum afxdp_xsk_copy {
    AFXDP_XSK_ANY,              /* Zero-copy where possible, else copy. */
    AFXDP_XSK_ZEROCOPY,         /* Zero-copy, or fail. */
    AFXDP_XSK_COPY,             /* Copy. */
};

struct afxdp_xsk;

/* Counters of one socket's transmit path, kept by the caller. */
struct afxdp_tx_stats {
    uint64_t zero_copy;         /* Sent from the frame they arrived in. */
    uint64_t copied;            /* Copied into a fresh frame. */
    uint64_t ring_full;         /* Dropped: tx ring full. */
    uint64_t no_frame;          /* Dropped: no free frame to copy into. */
    uint64_t too_big;           /* Dropped: larger than the UMEM carries. */
    uint64_t multi_buffer;      /* Sent in several chained frames. */
    uint64_t csum_meta;         /* Checksum finished by the kernel. */
    uint64_t csum_software;     /* Checksum finished in software. */
};

/* Counters of one afxdp_xsk_recv() call, kept by the caller. */
struct afxdp_rx_stats {
    uint32_t runt;              /* Dropped: shorter than an Ethernet header. */
    uint32_t invalid;           /* Dropped: descriptor outside its frame. */
    uint32_t hashed;            /* Hash taken from the XDP metadata. */
    uint32_t multi_buffer;      /* Arrived in several frames, copied out. */
    uint32_t over_mtu;          /* Dropped: longer than 'max_len'. */
};

/* The UMEM. */
void afxdp_umem_free_packet(struct dp_packet *);
void afxdp_umem_get_stats(struct afxdp_pool_stats *, uint32_t *n_sockets);
bool afxdp_umem_kernel_has_sg(void);
bool afxdp_umem_kernel_has_tx_budget(void);
uint32_t afxdp_umem_max_packet(void);
void afxdp_umem_run(void);
void afxdp_umem_wait(void);

/* Sockets. */
int afxdp_xsk_create(const char *ifname, int ifindex, uint32_t queue,
                     enum afxdp_xsk_copy, uint32_t ring_size, bool need_sg,
                     struct afxdp_xsk **, char **errp);
void afxdp_xsk_destroy(struct afxdp_xsk *);
int afxdp_xsk_fd(const struct afxdp_xsk *);
bool afxdp_xsk_is_zero_copy(const struct afxdp_xsk *);
bool afxdp_xsk_has_tx_meta(const struct afxdp_xsk *);
bool afxdp_xsk_has_sg(const struct afxdp_xsk *);
int afxdp_xsk_get_stats(const struct afxdp_xsk *, struct xdp_statistics *);
int afxdp_xsk_set_tx_budget(struct afxdp_xsk *, uint32_t budget);
int afxdp_xsk_set_busy_poll(struct afxdp_xsk *, uint32_t budget);
uint32_t afxdp_xsk_napi_id(const struct afxdp_xsk *);
uint32_t afxdp_xsk_update_busy_poll(struct afxdp_xsk *);

int afxdp_xsk_recv(struct afxdp_xsk *, struct dp_packet_batch *,
                   bool rx_meta, uint32_t max_len, int *qfill,
                   struct afxdp_rx_stats *);
void afxdp_xsk_reclaim(struct afxdp_xsk *);
void afxdp_umem_poll_caches(void);
void afxdp_xsk_send(struct afxdp_xsk *, struct dp_packet_batch *,
                    bool csum_meta, struct afxdp_tx_stats *);

#endif /* afxdp-umem.h */
