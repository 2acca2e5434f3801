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

#include "afxdp-umem.h"

#include <errno.h>
#include <linux/if_xdp.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "afxdp-csum.h"
#include "afxdp-xdp.h"
#include "bpf/afxdp-prog.h"
#include "coverage.h"
#include "dp-packet.h"
#include "dpif-netdev.h"
#include "id-pool.h"
#include "openvswitch/dynamic-string.h"
#include "openvswitch/list.h"
#include "openvswitch/vlog.h"
#include "ovs-atomic.h"
#include "ovs-thread.h"
#include "packets.h"
#include "openvswitch/poll-loop.h"
#include "timeval.h"
#include "unixctl.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(afxdp_umem);

COVERAGE_DEFINE(afxdp_fill_short);
COVERAGE_DEFINE(afxdp_rx_multi_buffer);
COVERAGE_DEFINE(afxdp_tx_multi_buffer);
COVERAGE_DEFINE(afxdp_rx_invalid);
COVERAGE_DEFINE(afxdp_rx_runt);
COVERAGE_DEFINE(afxdp_tx_zero_copy);
COVERAGE_DEFINE(afxdp_tx_copy);
COVERAGE_DEFINE(afxdp_tx_ring_full);
COVERAGE_DEFINE(afxdp_tx_wakeup_error);
COVERAGE_DEFINE(afxdp_frame_in_use);
COVERAGE_DEFINE(afxdp_frame_held_back);

#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef SOL_XDP
#define SOL_XDP 283
#endif

/* Linux 6.8 and 6.11 (linux/if_xdp.h may be older than the kernel): the
 * UMEM reserves room for TX metadata in front of each packet sent, and a
 * descriptor says that it carries some. */
#define AFXDP_UMEM_TX_METADATA_LEN (1 << 2)
#define AFXDP_XDP_TX_METADATA (1 << 1)

/* Linux 6.17: the most descriptors one copy-mode sendto() sends, 32
 * (AFXDP_TX_BUDGET) before. */
#define AFXDP_XDP_MAX_TX_SKB_BUDGET 9

/* Linux 5.11 (asm/socket.h may be older): preferred busy polling. */
#ifndef SO_PREFER_BUSY_POLL
#define SO_PREFER_BUSY_POLL 69
#endif
#ifndef SO_BUSY_POLL_BUDGET
#define SO_BUSY_POLL_BUDGET 70
#endif

/* Busy polling's time limit, in microseconds.  A nonblocking call polls
 * the device's NAPI context once whatever it is, but it must not be 0. */
#define BUSY_POLL_USECS 20

/* Linux 6.6: multi-buffer.  A socket bound with the flag receives and
 * sends packets larger than a frame as chains of descriptors, each but the
 * last marked "continued". */
#define AFXDP_XDP_USE_SG (1 << 4)
#define AFXDP_XDP_PKT_CONTD (1 << 0)

/* struct xdp_umem_reg as of Linux 6.8.  Older kernels take the same size
 * and reject the flag above. */
struct afxdp_umem_reg {
    uint64_t addr;
    uint64_t len;
    uint32_t chunk_size;
    uint32_t headroom;
    uint32_t flags;
    uint32_t tx_metadata_len;
};

/* Per-thread caches of each region's pool: a thread takes the lowest free
 * cache slot when it first uses a pool, and gives it back, with its caches
 * flushed, when it exits, so that threads that come and go (PMD threads on
 * every change of pmd-cpu-mask) neither strand frames nor run out of
 * slots.  A thread that finds none free uses the shared lists directly. */
#define N_POOL_CACHES 64

/* sendto() calls at most to push one batch out of a copy-mode tx ring:
 * 16 budgets of 32 descriptors, a full batch in 16 frames each. */
#define TX_KICKS_MAX 16

/* Frames moved between the pool and a ring at once. */
#define RING_BATCH 64

/* Descriptors read from the rx ring at once: a full batch of packets
 * that each take a few frames. */
#define RX_PEEK (NETDEV_MAX_BURST * 4)

/* How long to wait for a queue that is busy when we bind to it: 1 s. */
#define BIND_BUSY_RETRIES 100
#define BIND_BUSY_WAIT_NS (10 * 1000 * 1000)

/* One ring shared with the kernel.  Producer rings (fill, tx) are written
 * by us and read by the kernel, consumer rings (rx, completion) the other
 * way around.  The cached indices spare a read of the shared ones. */
struct afxdp_ring {
    atomic_uint32_t *producer;
    atomic_uint32_t *consumer;
    atomic_uint32_t *flags;
    void *descs;                /* uint64_t or struct xdp_desc. */
    uint32_t size;              /* A power of 2. */
    uint32_t mask;
    uint32_t cached_prod;
    uint32_t cached_cons;
    void *map;
    size_t map_size;
};

/* A region of the UMEM: one registration with the kernel, shared by the
 * sockets placed in it.  Its frames are the global frames [first, first +
 * n_frames); a descriptor names frame 'first + i' by the address i *
 * AFXDP_FRAME_SIZE.  Set up once, under 'umem_mutex', and never freed:
 * packets in flight may point into it at any time. */
struct umem_region {
    uint32_t index;
    uint32_t first;             /* index * REGION_FRAMES. */
    uint32_t n_frames;
    char *area;                 /* Frame 'first'. */
    struct afxdp_pool *pool;    /* Its free frames, as indices from 0. */
    bool hugepages;             /* Backed by huge pages. */

    /* Decided when its first socket is bound (it registers the region)
     * and kept while any socket is; read by the region's senders. */
    atomic_uint32_t tx_meta_len;        /* 0 or sizeof(afxdp_tx_meta). */
    atomic_bool sg;                     /* Multi-buffer. */
    bool zero_copy;                     /* Under 'umem_mutex'. */

    struct ovs_list xsks;       /* Its sockets, under 'umem_mutex'. */
    uint32_t reserved;          /* Their fill rings' slots, likewise. */
};

struct afxdp_xsk {
    /* Constant while the socket is in use, but for 'busy_polling'. */
    PADDED_MEMBERS(CACHE_LINE_SIZE,
        struct ovs_list node;   /* In its region's 'xsks'. */
        char *name;             /* "ifname queue N", for messages. */
        int fd;
        uint32_t slot;          /* Marks the frames it holds. */
        bool zero_copy;
        bool bound;
        int ifindex;
        uint32_t queue;
        bool busy_poll;         /* Busy polling asked for. */

        /* Whether the poller drives the device's NAPI: busy polling asked
         * for and a NAPI context known (afxdp_xsk_update_busy_poll()).
         * Written by the thread that reconfigures the port, read by the
         * socket's users; rarely changes. */
        atomic_bool busy_polling;
        struct umem_region *region;
        uint32_t ring_size;
    );

    /* The receiving side and the sending side may be different threads:
     * each has its own cache lines. */
    PADDED_MEMBERS(CACHE_LINE_SIZE,
        struct afxdp_ring rx;
        struct afxdp_ring fill;
    );
    PADDED_MEMBERS(CACHE_LINE_SIZE,
        struct afxdp_ring tx;
        struct afxdp_ring comp;
    );
};

/* Frames of a region: 128 MiB, a whole number of huge pages. */
#define REGION_FRAMES AFXDP_UMEM_FRAMES

/* Regions, at most: 4 GiB of frames. */
#define MAX_REGIONS 32

/* A region may give at most this share of its frames to fill rings, to
 * keep the rest for packets in flight: received and not yet sent, in tx
 * and completion rings. */
#define REGION_FILL_SHARE 2

/* Huge pages, where the kernel has them free. */
#define HUGE_PAGE_SIZE (2u << 20)

static struct ovs_mutex umem_mutex = OVS_MUTEX_INITIALIZER;

/* Address space for MAX_REGIONS regions, reserved once and backed region
 * by region, so that a frame's global index is its place in it. */
static char *umem_base;

/* One preallocated dp_packet per possible frame, likewise backed only
 * where touched. */
static struct dp_packet *umem_packets;

/* holder[i]: where frame i is, counted independently of the pool's own
 * books: the slot of the socket that holds it in one of its rings (or
 * between them, in the kernel), FRAME_IN_PACKET in a dp_packet,
 * FRAME_HELD_BACK held back from a closed socket until the kernel is done
 * with it, or FRAME_FREE in the pool.  Written by the thread that moves the
 * frame, read when a socket is destroyed, when a frame is taken from the
 * pool (it must be free) and by afxdp/pool-show; relaxed, the handover
 * itself is ordered by the rings and by the pool. */
static atomic_uint16_t *umem_holder;
#define FRAME_FREE 0
#define FRAME_IN_PACKET UINT16_MAX
#define FRAME_HELD_BACK (UINT16_MAX - 1)
#define MAX_XSK_SLOT (UINT16_MAX - 2)

/* Frames taken from the pool that were not free by their state (handed
 * out twice), and frames given back twice. */
static atomic_uint64_t umem_n_taken_in_use = 0;
static atomic_uint64_t umem_n_freed_twice = 0;

/* The frames of a closed zero-copy socket, held back until the kernel
 * has released the socket's buffer pool: until then the driver may still
 * write into the frames it took from the fill ring (and read those it took
 * from the tx ring).  The kernel releases the pool from a workqueue some
 * time after close(); the queue no longer having one, or a new socket
 * bound to it, shows that it has.  Under 'umem_mutex'. */
struct held_back {
    struct ovs_list node;       /* In 'umem_held_back'. */
    int ifindex;
    uint32_t queue;
    struct umem_region *region;
    uint32_t *frames;           /* Indices in 'region'. */
    uint32_t n;
    long long int deadline;     /* Released then if the kernel can't say. */
};
static struct ovs_list umem_held_back OVS_GUARDED_BY(umem_mutex)
    = OVS_LIST_INITIALIZER(&umem_held_back);
static atomic_uint32_t umem_n_held_back = 0;   /* Frames in it. */
/* Held-back frames that the device wrote after their socket closed: those
 * that returning them to the pool at once would have handed out while a
 * driver could still write them. */
static atomic_uint64_t umem_n_written_after_close = 0;
static long long int umem_next_held_back_check = LLONG_MIN;
static void held_back_release_queue(int ifindex, uint32_t queue)
    OVS_REQUIRES(umem_mutex);

/* A frame's bytes while it is held back, to tell later whether the device
 * wrote it. */
#define HELD_BACK_POISON 0x5a

/* How long frames are held back where the kernel cannot say whether a
 * queue still has a buffer pool (before Linux 6.15), and how often the
 * kernel is asked. */
#define HELD_BACK_FALLBACK_MS 1000
#define HELD_BACK_CHECK_MS 20

/* Regions [0, umem_n_regions) are set up: a region is complete before the
 * count that covers it is stored (release). */
static struct umem_region umem_regions[MAX_REGIONS];
static atomic_uint32_t umem_n_regions = 0;

static struct id_pool *xsk_slots OVS_GUARDED_BY(umem_mutex);

static void afxdp_umem_show(struct unixctl_conn *, int argc,
                            const char *argv[], void *aux);

static uint32_t n_regions(void);

/* Cache slots: see N_POOL_CACHES. */
static struct ovs_mutex slot_mutex = OVS_MUTEX_INITIALIZER;
static struct id_pool *cache_slots OVS_GUARDED_BY(slot_mutex);
static uint32_t n_cache_slots OVS_GUARDED_BY(slot_mutex);
static ovsthread_key_t cache_slot_key;

/* The calling thread's slot: SLOT_UNSET until it has one. */
#define SLOT_UNSET (UINT32_MAX - 1)
DEFINE_STATIC_PER_THREAD_DATA(uint32_t, cache_slot, SLOT_UNSET);

/* At the exit of a thread that held cache slot 'aux' - 1: flushes its
 * caches back to the shared lists and frees the slot. */
static void
cache_slot_release(void *aux)
{
    uint32_t slot = (uintptr_t) aux - 1;
    uint32_t n = n_regions();

    for (uint32_t r = 0; r < n; r++) {
        afxdp_pool_flush(umem_regions[r].pool, slot);
    }
    ovs_mutex_lock(&slot_mutex);
    id_pool_free_id(cache_slots, slot);
    n_cache_slots--;
    ovs_mutex_unlock(&slot_mutex);
}

static uint32_t
cache_slot_assign(void)
{
    static struct ovsthread_once once = OVSTHREAD_ONCE_INITIALIZER;
    uint32_t slot;

    if (ovsthread_once_start(&once)) {
        ovsthread_key_create(&cache_slot_key, cache_slot_release);
        ovs_mutex_lock(&slot_mutex);
        cache_slots = id_pool_create(0, N_POOL_CACHES);
        ovs_mutex_unlock(&slot_mutex);
        ovsthread_once_done(&once);
    }

    ovs_mutex_lock(&slot_mutex);
    if (id_pool_alloc_id(cache_slots, &slot)) {
        n_cache_slots++;
    } else {
        slot = AFXDP_POOL_NO_CACHE;
    }
    ovs_mutex_unlock(&slot_mutex);

    if (slot != AFXDP_POOL_NO_CACHE) {
        ovsthread_setspecific(cache_slot_key, (void *) (uintptr_t) (slot + 1));
    }
    return slot;
}

/* The cache slot of the calling thread, taken on first use. */
static uint32_t
pool_user(void)
{
    uint32_t *slot = cache_slot_get();

    if (OVS_UNLIKELY(*slot == SLOT_UNSET)) {
        *slot = cache_slot_assign();
    }
    return *slot;
}

static uint32_t
n_regions(void)
{
    uint32_t n;

    atomic_read_explicit(&umem_n_regions, &n, memory_order_acquire);
    return n;
}

/* The region of global frame 'frame', or NULL if there is no such frame. */
static struct umem_region *
region_of(uint32_t frame)
{
    uint32_t r = frame / REGION_FRAMES;

    return r < n_regions() ? &umem_regions[r] : NULL;
}

/* The global frame that descriptor address 'addr' names in 'region', or
 * UINT32_MAX if it names none. */
static uint32_t
region_frame(const struct umem_region *region, uint64_t addr)
{
    uint64_t i = addr / AFXDP_FRAME_SIZE;

    return i < region->n_frames ? region->first + i : UINT32_MAX;
}

/* The address in its region of byte 'offset' of global frame 'frame'. */
static uint64_t
frame_addr(uint32_t frame, uint32_t offset)
{
    return (uint64_t) (frame % REGION_FRAMES) * AFXDP_FRAME_SIZE + offset;
}

static char *
frame_data(uint32_t frame)
{
    return umem_base + (size_t) frame * AFXDP_FRAME_SIZE;
}

static void *
umem_reserve(size_t size)
{
    void *p = mmap(NULL, size, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

    return p == MAP_FAILED ? NULL : p;
}

/* Reserves the address space of the UMEM and of its frames' metadata, on
 * first use.  Returns 0 or a positive errno with an explanation in
 * '*errp'. */
static int
umem_init(char **errp)
    OVS_REQUIRES(umem_mutex)
{
    size_t n = (size_t) MAX_REGIONS * REGION_FRAMES;
    size_t packets_size = n * sizeof *umem_packets;
    size_t holder_size = n * sizeof *umem_holder;
    char *base;

    if (umem_base) {
        return 0;
    }

    /* The frames, aligned for huge pages; the metadata, readable and
     * writable at once, its pages allocated as they are first touched. */
    base = umem_reserve(n * AFXDP_FRAME_SIZE + HUGE_PAGE_SIZE);
    umem_packets = umem_reserve(packets_size);
    umem_holder = umem_reserve(holder_size);
    if (!base || !umem_packets || !umem_holder
        || mprotect(umem_packets, packets_size, PROT_READ | PROT_WRITE)
        || mprotect(umem_holder, holder_size, PROT_READ | PROT_WRITE)) {
        int error = errno;

        *errp = xasprintf("cannot reserve address space for the AF_XDP "
                          "UMEM (%s)", ovs_strerror(error));
        if (base) {
            munmap(base, n * AFXDP_FRAME_SIZE + HUGE_PAGE_SIZE);
        }
        if (umem_packets) {
            munmap(umem_packets, packets_size);
            umem_packets = NULL;
        }
        if (umem_holder) {
            munmap(umem_holder, holder_size);
            umem_holder = NULL;
        }
        return error;
    }
    umem_base = (char *) ROUND_UP((uintptr_t) base, HUGE_PAGE_SIZE);
    xsk_slots = id_pool_create(1, MAX_XSK_SLOT);
    unixctl_command_register("afxdp/pool-show", "", 0, 0,
                             afxdp_umem_show, NULL);
    return 0;
}

BUILD_ASSERT_DECL((size_t) REGION_FRAMES * AFXDP_FRAME_SIZE
                  % HUGE_PAGE_SIZE == 0);

/* Adds a region.  Returns it, or NULL with an explanation in '*errp'. */
static struct umem_region *
region_create(char **errp)
    OVS_REQUIRES(umem_mutex)
{
    uint32_t index = n_regions();
    size_t size = (size_t) REGION_FRAMES * AFXDP_FRAME_SIZE;
    struct umem_region *region;
    char *area;
    void *p;

    if (index >= MAX_REGIONS) {
        *errp = xasprintf("the AF_XDP UMEM has no room for another region "
                          "(%d regions of %d frames)", MAX_REGIONS,
                          REGION_FRAMES);
        return NULL;
    }
    area = umem_base + index * size;

    region = &umem_regions[index];
    memset(region, 0, sizeof *region);
    region->hugepages = true;
    p = mmap(area, size, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_HUGETLB, -1, 0);
    if (p == MAP_FAILED) {
        region->hugepages = false;
        p = mmap(area, size, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    }
    if (p == MAP_FAILED) {
        int error = errno;

        *errp = xasprintf("cannot allocate %"PRIuSIZE" MiB for the AF_XDP "
                          "UMEM (%s)", size >> 20, ovs_strerror(error));
        return NULL;
    }

    region->index = index;
    region->first = index * REGION_FRAMES;
    region->n_frames = REGION_FRAMES;
    region->area = area;
    region->pool = afxdp_pool_create(REGION_FRAMES, N_POOL_CACHES);
    ovs_list_init(&region->xsks);

    VLOG_INFO("AF_XDP UMEM region %"PRIu32": %"PRIu32" frames of %d bytes "
              "(%"PRIuSIZE" MiB, %s)", index, region->n_frames,
              AFXDP_FRAME_SIZE,
              size >> 20, region->hugepages ? "huge pages" : "4 KiB pages");

    /* Release: the region is complete before readers that see the new
     * count (with acquire) look at it. */
    atomic_store_explicit(&umem_n_regions, index + 1, memory_order_release);
    return region;
}

static void
frame_set(uint32_t frame, uint16_t state)
{
    atomic_store_relaxed(&umem_holder[frame], state);
}

/* Counts and logs 'frame', found in state 'state' when it was taken from
 * the pool (if 'taken') or freed. */
static void
frame_misplaced(uint32_t frame, uint16_t state, bool taken)
{
    static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 20);
    uint64_t orig;

    COVERAGE_INC(afxdp_frame_in_use);
    atomic_add_relaxed(taken ? &umem_n_taken_in_use : &umem_n_freed_twice,
                       1, &orig);
    VLOG_ERR_RL(&rl, "UMEM frame %"PRIu32" %s while %s", frame,
                taken ? "taken from the pool" : "freed",
                state == FRAME_FREE ? "free"
                : state == FRAME_IN_PACKET ? "in a packet"
                : state == FRAME_HELD_BACK ? "held back for the kernel"
                : "in a socket's rings");
}

/* Gives the frame of 'packet', received on an afxdp port, back to its
 * region's pool.  Called through dp_packet_delete(). */
void
afxdp_umem_free_packet(struct dp_packet *packet)
{
    uint32_t frame = packet - umem_packets;
    struct umem_region *region = region_of(frame);
    uint16_t state;
    uint32_t i;

    ovs_assert(region);
    atomic_read_relaxed(&umem_holder[frame], &state);
    if (OVS_UNLIKELY(state != FRAME_IN_PACKET)) {
        /* Given back twice, or while a ring has it: putting it in the
         * pool would hand it out twice. */
        frame_misplaced(frame, state, false);
        return;
    }
    frame_set(frame, FRAME_FREE);
    i = frame - region->first;
    afxdp_pool_put(region->pool, pool_user(), &i, 1);
}

/* Ring helpers. */

static int
ring_map(int fd, struct afxdp_ring *r, const struct xdp_ring_offset *off,
         uint32_t size, size_t desc_size, off_t pgoff)
{
    size_t map_size = off->desc + size * desc_size;
    char *map;

    map = mmap(NULL, map_size, PROT_READ | PROT_WRITE,
               MAP_SHARED | MAP_POPULATE, fd, pgoff);
    if (map == MAP_FAILED) {
        return errno;
    }

    r->map = map;
    r->map_size = map_size;
    r->producer = ALIGNED_CAST(atomic_uint32_t *, map + off->producer);
    r->consumer = ALIGNED_CAST(atomic_uint32_t *, map + off->consumer);
    r->flags = ALIGNED_CAST(atomic_uint32_t *, map + off->flags);
    r->descs = map + off->desc;
    r->size = size;
    r->mask = size - 1;
    atomic_read_relaxed(r->producer, &r->cached_prod);
    atomic_read_relaxed(r->consumer, &r->cached_cons);
    return 0;
}

static void
ring_unmap(struct afxdp_ring *r)
{
    if (r->map) {
        munmap(r->map, r->map_size);
        r->map = NULL;
    }
}

/* Producer side: returns how many slots are free, reading the kernel's
 * consumer index only when fewer than 'want' look free. */
static uint32_t
ring_prod_free(struct afxdp_ring *r, uint32_t want)
{
    uint32_t n_free = r->size - (r->cached_prod - r->cached_cons);

    if (n_free < want) {
        /* Acquire: pairs with the kernel's release of the consumer index
         * once it has read the descriptors, so the slots are ours again. */
        atomic_read_explicit(r->consumer, &r->cached_cons,
                             memory_order_acquire);
        n_free = r->size - (r->cached_prod - r->cached_cons);
    }
    return n_free;
}

static void
ring_prod_submit(struct afxdp_ring *r, uint32_t n)
{
    r->cached_prod += n;
    /* Release: the descriptors written before become visible to the kernel
     * no later than the index that covers them (its acquire load). */
    atomic_store_explicit(r->producer, r->cached_prod, memory_order_release);
}

/* Producer side: returns true if the kernel has not yet taken all the
 * descriptors submitted. */
static bool
ring_prod_pending(struct afxdp_ring *r)
{
    if (r->cached_prod == r->cached_cons) {
        return false;
    }
    atomic_read_explicit(r->consumer, &r->cached_cons, memory_order_acquire);
    return r->cached_prod != r->cached_cons;
}

/* Consumer side: returns how many descriptors, up to 'want', are ready. */
static uint32_t
ring_cons_peek(struct afxdp_ring *r, uint32_t want)
{
    uint32_t n = r->cached_prod - r->cached_cons;

    if (n < want) {
        /* Acquire: pairs with the kernel's release of the producer index
         * after it wrote the descriptors. */
        atomic_read_explicit(r->producer, &r->cached_prod,
                             memory_order_acquire);
        n = r->cached_prod - r->cached_cons;
    }
    return MIN(n, want);
}

static void
ring_cons_release(struct afxdp_ring *r, uint32_t n)
{
    r->cached_cons += n;
    /* Release: the reads of the descriptors complete before the kernel may
     * reuse their slots (it reads the index with acquire). */
    atomic_store_explicit(r->consumer, r->cached_cons, memory_order_release);
}

static bool
ring_needs_wakeup(const struct afxdp_ring *r)
{
    uint32_t flags;

    atomic_read_relaxed(r->flags, &flags);
    return flags & XDP_RING_NEED_WAKEUP;
}

/* Sockets. */

static void
xsk_hold(const struct afxdp_xsk *xsk, uint32_t frame)
{
    frame_set(frame, xsk->slot);
}

static void
xsk_release(uint32_t frame)
{
    frame_set(frame, FRAME_FREE);
}

/* Marks 'frame', just taken from the pool, as held by 'xsk'.  A frame
 * that was not free is in two places at once: counted and logged. */
static void
xsk_take(const struct afxdp_xsk *xsk, uint32_t frame)
{
    uint16_t state;

    atomic_read_relaxed(&umem_holder[frame], &state);
    if (OVS_UNLIKELY(state != FRAME_FREE)) {
        frame_misplaced(frame, state, true);
    }
    xsk_hold(xsk, frame);
}

/* Tops the fill ring up from its region's pool, in bulks of RING_BATCH,
 * if at least 'min' slots are free: as many bulks as it takes to give back
 * what a poll took (up to RX_PEEK descriptors), so that packets in chained
 * frames do not drain it. */
static void
xsk_refill(struct afxdp_xsk *xsk, uint32_t user, uint32_t min)
{
    const struct umem_region *region = xsk->region;
    uint64_t *addrs = xsk->fill.descs;
    uint32_t frames[RING_BATCH];
    uint32_t n_free, n, got;

    n_free = ring_prod_free(&xsk->fill, RX_PEEK);
    if (n_free < min) {
        return;
    }
    n_free = MIN(n_free, RX_PEEK);

    do {
        n = MIN(n_free, RING_BATCH);
        got = afxdp_pool_get(region->pool, user, frames, n);
        if (got < n) {
            COVERAGE_INC(afxdp_fill_short);
        }
        for (uint32_t i = 0; i < got; i++) {
            xsk_take(xsk, region->first + frames[i]);
            addrs[(xsk->fill.cached_prod + i) & xsk->fill.mask]
                = (uint64_t) frames[i] * AFXDP_FRAME_SIZE;
        }
        if (got) {
            ring_prod_submit(&xsk->fill, got);
        }
        n_free -= got;
    } while (got == n && n_free);
}

/* Gives the frames of sent packets back to the pool. */
static void
xsk_complete(struct afxdp_xsk *xsk, uint32_t user)
{
    const struct umem_region *region = xsk->region;
    const uint64_t *addrs = xsk->comp.descs;
    uint32_t frames[RING_BATCH];

    /* At most a ring's worth, so that a busy ring cannot hold us here. */
    for (uint32_t done = 0; done < xsk->comp.size; done += RING_BATCH) {
        uint32_t n = ring_cons_peek(&xsk->comp, RING_BATCH);
        uint32_t k = 0;

        if (!n) {
            break;
        }
        for (uint32_t i = 0; i < n; i++) {
            uint64_t addr = addrs[(xsk->comp.cached_cons + i)
                                  & xsk->comp.mask];
            uint32_t frame = region_frame(region, addr);

            if (frame != UINT32_MAX) {
                xsk_release(frame);
                frames[k++] = frame - region->first;
            }
        }
        ring_cons_release(&xsk->comp, n);
        afxdp_pool_put(region->pool, user, frames, k);
    }
}

static int
xsk_setup_rings(struct afxdp_xsk *xsk, uint32_t ring_size, char **errp)
{
    static const struct {
        int opt;
        const char *name;
    } rings[] = {
        { XDP_UMEM_FILL_RING, "fill" },
        { XDP_UMEM_COMPLETION_RING, "completion" },
        { XDP_RX_RING, "rx" },
        { XDP_TX_RING, "tx" },
    };
    struct xdp_mmap_offsets off;
    socklen_t optlen = sizeof off;
    int error;

    for (size_t i = 0; i < ARRAY_SIZE(rings); i++) {
        if (setsockopt(xsk->fd, SOL_XDP, rings[i].opt, &ring_size,
                       sizeof ring_size)) {
            error = errno;
            *errp = xasprintf("%s: cannot size the %s ring to %"PRIu32" (%s)",
                              xsk->name, rings[i].name, ring_size,
                              ovs_strerror(error));
            return error;
        }
    }

    if (getsockopt(xsk->fd, SOL_XDP, XDP_MMAP_OFFSETS, &off, &optlen)) {
        error = errno;
        *errp = xasprintf("%s: cannot get ring offsets (%s)", xsk->name,
                          ovs_strerror(error));
        return error;
    }

    error = ring_map(xsk->fd, &xsk->rx, &off.rx, ring_size,
                     sizeof(struct xdp_desc), XDP_PGOFF_RX_RING);
    if (!error) {
        error = ring_map(xsk->fd, &xsk->tx, &off.tx, ring_size,
                         sizeof(struct xdp_desc), XDP_PGOFF_TX_RING);
    }
    if (!error) {
        error = ring_map(xsk->fd, &xsk->fill, &off.fr, ring_size,
                         sizeof(uint64_t), XDP_UMEM_PGOFF_FILL_RING);
    }
    if (!error) {
        error = ring_map(xsk->fd, &xsk->comp, &off.cr, ring_size,
                         sizeof(uint64_t), XDP_UMEM_PGOFF_COMPLETION_RING);
    }
    if (error) {
        *errp = xasprintf("%s: cannot map rings (%s)", xsk->name,
                          ovs_strerror(error));
    }
    return error;
}

/* Binds 'xsk' to queue 'queue' of device 'ifindex' with 'flags', waiting
 * a moment for a queue that is still busy.  Returns 0 or a positive
 * errno. */
static int
xsk_bind__(struct afxdp_xsk *xsk, int ifindex, uint32_t queue,
           uint16_t flags, const struct afxdp_xsk *anchor)
{
    struct sockaddr_xdp sxdp;
    int error;

    memset(&sxdp, 0, sizeof sxdp);
    sxdp.sxdp_family = AF_XDP;
    sxdp.sxdp_ifindex = ifindex;
    sxdp.sxdp_queue_id = queue;
    sxdp.sxdp_flags = flags;
    sxdp.sxdp_shared_umem_fd = anchor ? anchor->fd : 0;

    /* The kernel lets go of a queue some time after the socket bound to it
     * is closed (it releases the socket's buffer pool from a workqueue):
     * a queue that we have just closed a socket on is busy for a moment. */
    for (int i = 0; ; i++) {
        error = bind(xsk->fd, (struct sockaddr *) &sxdp, sizeof sxdp)
                ? errno : 0;
        if (error != EBUSY || i >= BIND_BUSY_RETRIES) {
            return error;
        }
        xnanosleep(BIND_BUSY_WAIT_NS);
    }
}

/* Binds 'xsk', its region's first socket if 'anchor' is null, otherwise
 * one that shares the region with 'anchor'.  The first socket decides for
 * the whole region: copy mode, need_wakeup and multi-buffer.  It tries
 * zero-copy before copy (as 'copy' allows), and within each, multi-buffer
 * first; without multi-buffer only if 'need_sg' is false, since a
 * zero-copy driver may lack multi-buffer support. */
static int
xsk_bind(struct afxdp_xsk *xsk, int ifindex, uint32_t queue,
         enum afxdp_xsk_copy copy, bool need_sg,
         const struct afxdp_xsk *anchor, char **errp)
    OVS_REQUIRES(umem_mutex)
{
    bool kernel_sg = afxdp_umem_kernel_has_sg();
    struct xdp_options opts;
    socklen_t optlen = sizeof opts;
    uint16_t tries[4];
    size_t n_tries = 0;
    int error = 0;

    if (anchor) {
        /* A sharing socket may not ask for flags of its own. */
        tries[n_tries++] = XDP_SHARED_UMEM;
    } else {
        static const uint16_t modes[2] = { XDP_ZEROCOPY, XDP_COPY };

        for (int m = 0; m < 2; m++) {
            if ((modes[m] == XDP_ZEROCOPY && copy == AFXDP_XSK_COPY)
                || (modes[m] == XDP_COPY && copy == AFXDP_XSK_ZEROCOPY)) {
                continue;
            }
            if (kernel_sg) {
                tries[n_tries++] = (modes[m] | XDP_USE_NEED_WAKEUP
                                    | AFXDP_XDP_USE_SG);
            }
            if (!kernel_sg || !need_sg) {
                tries[n_tries++] = modes[m] | XDP_USE_NEED_WAKEUP;
            }
        }
    }

    for (size_t t = 0; t < n_tries; t++) {
        error = xsk_bind__(xsk, ifindex, queue, tries[t], anchor);
        if (!error) {
            if (!anchor) {
                atomic_store_relaxed(&xsk->region->sg,
                                     (tries[t] & AFXDP_XDP_USE_SG) != 0);
            }
            break;
        }
        if (error != EOPNOTSUPP) {
            break;
        }
        /* No zero-copy, or no zero-copy multi-buffer: the next try. */
    }
    if (error) {
        *errp = xasprintf("%s: cannot bind AF_XDP socket (%s)%s", xsk->name,
                          ovs_strerror(error),
                          error == EBUSY ? ": the queue is in use"
                          : error == EOPNOTSUPP && copy == AFXDP_XSK_ZEROCOPY
                          ? (need_sg
                             ? ": the driver has no zero-copy support for "
                               "packets larger than a frame (multi-buffer)"
                             : ": the driver has no zero-copy support")
                          : error == EINVAL && copy == AFXDP_XSK_ZEROCOPY
                          ? ": the driver refused zero-copy on this queue "
                            "(a queue it does not have or, for virtio_net, a "
                            "device without iommu_platform: it maps buffers "
                            "through the DMA API only then)"
                          : error == EINVAL && queue
                          ? ": the device may have fewer queues" : "");
        return error;
    }

    /* The queue is ours: whatever the kernel held of a socket closed on
     * it before, it has let go of. */
    held_back_release_queue(ifindex, queue);
    xsk->bound = true;
    xsk->ifindex = ifindex;
    xsk->queue = queue;

    if (getsockopt(xsk->fd, SOL_XDP, XDP_OPTIONS, &opts, &optlen)) {
        opts.flags = 0;
    }
    xsk->zero_copy = opts.flags & XDP_OPTIONS_ZEROCOPY;

    if (copy == AFXDP_XSK_ZEROCOPY && !xsk->zero_copy) {
        *errp = xasprintf("%s: zero-copy is not available: the UMEM shared "
                          "with the other afxdp ports is in copy mode",
                          xsk->name);
        return EOPNOTSUPP;
    }
    if (need_sg && !afxdp_xsk_has_sg(xsk)) {
        *errp = xasprintf("%s: the MTU needs packets larger than a frame, "
                          "but the socket was bound without multi-buffer",
                          xsk->name);
        return EOPNOTSUPP;
    }
    return 0;
}

/* How many frames of 'region' are in state 'state'. */
static uint32_t
region_held_by(const struct umem_region *region, uint16_t state)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < region->n_frames; i++) {
        uint16_t holder;

        atomic_read_relaxed(&umem_holder[region->first + i], &holder);
        n += holder == state;
    }
    return n;
}

/* Gives the frames of 'hb' back to the pool and frees it, counting those
 * the device wrote while they were held back. */
static void
held_back_release(struct held_back *hb)
    OVS_REQUIRES(umem_mutex)
{
    static const uint8_t poison[AFXDP_FRAME_SIZE] = {
        [0 ... AFXDP_FRAME_SIZE - 1] = HELD_BACK_POISON
    };
    struct umem_region *region = hb->region;
    uint64_t written = 0, orig;
    uint32_t n_orig;

    for (uint32_t i = 0; i < hb->n; i++) {
        uint32_t frame = region->first + hb->frames[i];

        written += memcmp(frame_data(frame), poison, sizeof poison) != 0;
        xsk_release(frame);
    }
    afxdp_pool_push_bulk(region->pool, hb->frames, hb->n);
    atomic_add_relaxed(&umem_n_written_after_close, written, &orig);
    atomic_sub_relaxed(&umem_n_held_back, hb->n, &n_orig);
    VLOG_DBG("released %"PRIu32" frames held back from device %d queue "
             "%"PRIu32" (%"PRIu64" written after the socket closed)",
             hb->n, hb->ifindex, hb->queue, written);
    ovs_list_remove(&hb->node);
    free(hb->frames);
    free(hb);
}

/* Releases the frames held back from queue 'queue' of device 'ifindex':
 * a socket has just been bound there, so the kernel has released the
 * buffer pool of the socket closed before. */
static void
held_back_release_queue(int ifindex, uint32_t queue)
    OVS_REQUIRES(umem_mutex)
{
    struct held_back *hb;

    LIST_FOR_EACH_SAFE (hb, node, &umem_held_back) {
        if (hb->ifindex == ifindex && hb->queue == queue) {
            held_back_release(hb);
        }
    }
}

/* Called from the main loop: gives back the held-back frames whose queue
 * the kernel has released. */
void
afxdp_umem_run(void)
{
    struct held_back *hb;
    uint32_t n_held;
    long long int now;

    afxdp_umem_poll_caches();

    atomic_read_relaxed(&umem_n_held_back, &n_held);
    now = time_msec();
    if (!n_held || now < umem_next_held_back_check) {
        return;
    }
    umem_next_held_back_check = now + HELD_BACK_CHECK_MS;

    ovs_mutex_lock(&umem_mutex);
    LIST_FOR_EACH_SAFE (hb, node, &umem_held_back) {
        int has = afxdp_xdp_queue_has_pool(hb->ifindex, hb->queue);

        if (!has || (has < 0 && now >= hb->deadline)) {
            held_back_release(hb);
        }
    }
    ovs_mutex_unlock(&umem_mutex);
}

void
afxdp_umem_wait(void)
{
    uint32_t n_held;

    atomic_read_relaxed(&umem_n_held_back, &n_held);
    if (n_held) {
        poll_timer_wait_until(umem_next_held_back_check);
    }
}

static void
xsk_free(struct afxdp_xsk *xsk)
    OVS_REQUIRES(umem_mutex)
{
    struct umem_region *region = xsk->region;
    bool hold_back = xsk->bound && xsk->zero_copy;
    struct held_back *hb = NULL;
    uint32_t frames[RING_BATCH];
    uint32_t n = 0;

    ring_unmap(&xsk->rx);
    ring_unmap(&xsk->tx);
    ring_unmap(&xsk->fill);
    ring_unmap(&xsk->comp);
    if (xsk->fd >= 0) {
        close(xsk->fd);
    }

    /* With the socket closed, the kernel no longer gives us its frames
     * back.  In copy mode it is done with them: they go back to the pool.
     * A zero-copy driver keeps those it took from the fill and tx rings
     * until the kernel releases the socket's buffer pool, later: they are
     * held back until then (afxdp_umem_run()), poisoned to tell whether
     * the device wrote them meanwhile. */
    if (hold_back) {
        hb = xmalloc(sizeof *hb);
        hb->ifindex = xsk->ifindex;
        hb->queue = xsk->queue;
        hb->region = region;
        hb->n = 0;
        /* The driver may hold frames beyond what the rings have room
         * for: count them first. */
        hb->frames = xmalloc(sizeof *hb->frames
                             * MAX(region_held_by(region, xsk->slot), 1));
        hb->deadline = time_msec() + HELD_BACK_FALLBACK_MS;
    }
    for (uint32_t i = 0; region && xsk->slot && i < region->n_frames; i++) {
        uint16_t holder;

        atomic_read_relaxed(&umem_holder[region->first + i], &holder);
        if (holder != xsk->slot) {
            continue;
        }
        if (hb) {
            frame_set(region->first + i, FRAME_HELD_BACK);
            memset(frame_data(region->first + i), HELD_BACK_POISON,
                   AFXDP_FRAME_SIZE);
            hb->frames[hb->n++] = i;
            continue;
        }
        xsk_release(region->first + i);
        frames[n++] = i;
        if (n == ARRAY_SIZE(frames)) {
            afxdp_pool_push_bulk(region->pool, frames, n);
            n = 0;
        }
    }
    if (region) {
        afxdp_pool_push_bulk(region->pool, frames, n);
    }
    if (hb && hb->n) {
        uint32_t orig;

        COVERAGE_ADD(afxdp_frame_held_back, hb->n);
        atomic_add_relaxed(&umem_n_held_back, hb->n, &orig);
        ovs_list_push_back(&umem_held_back, &hb->node);
        umem_next_held_back_check = LLONG_MIN;
    } else if (hb) {
        free(hb->frames);
        free(hb);
    }

    if (xsk->slot) {
        id_pool_free_id(xsk_slots, xsk->slot);
    }
    free(xsk->name);
    free_cacheline(xsk);
}

/* Registers the region of 'xsk' with the kernel through 'xsk', with room
 * for TX metadata where the kernel has it.  Returns 0 or a positive errno
 * with an explanation in '*errp'. */
static int
umem_register(struct afxdp_xsk *xsk, char **errp)
    OVS_REQUIRES(umem_mutex)
{
    struct umem_region *region = xsk->region;
    struct afxdp_umem_reg reg = {
        .addr = (uintptr_t) region->area,
        .len = (uint64_t) region->n_frames * AFXDP_FRAME_SIZE,
        .chunk_size = AFXDP_FRAME_SIZE,
        .headroom = AFXDP_FRAME_HEADROOM,
        .flags = AFXDP_UMEM_TX_METADATA_LEN,
        .tx_metadata_len = sizeof(struct afxdp_tx_meta),
    };
    int error;

    if (!setsockopt(xsk->fd, SOL_XDP, XDP_UMEM_REG, &reg, sizeof reg)) {
        atomic_store_relaxed(&region->tx_meta_len, reg.tx_metadata_len);
        return 0;
    }

    /* EINVAL: a kernel without TX metadata, which rejects the flag. */
    error = errno;
    if (error == EINVAL) {
        reg.flags = 0;
        reg.tx_metadata_len = 0;
        error = (setsockopt(xsk->fd, SOL_XDP, XDP_UMEM_REG, &reg, sizeof reg)
                 ? errno : 0);
        if (!error) {
            atomic_store_relaxed(&region->tx_meta_len, 0);
            return 0;
        }
    }
    *errp = xasprintf("%s: cannot register the UMEM (%s)", xsk->name,
                      ovs_strerror(error));
    return error;
}

/* Returns true if the kernel finishes checksums for 'xsk' on request (TX
 * metadata). */
bool
afxdp_xsk_has_tx_meta(const struct afxdp_xsk *xsk)
{
    uint32_t len;

    atomic_read_relaxed(&xsk->region->tx_meta_len, &len);
    return len != 0;
}

/* Returns true if 'xsk' carries packets larger than a frame
 * (multi-buffer). */
bool
afxdp_xsk_has_sg(const struct afxdp_xsk *xsk)
{
    bool sg;

    atomic_read_relaxed(&xsk->region->sg, &sg);
    return sg;
}

/* Returns true if the kernel has multi-buffer AF_XDP sockets.  Asked once:
 * a kernel that knows the flag looks for the device (ifindex 0: none)
 * only after it has checked the flags, which an older one rejects. */
bool
afxdp_umem_kernel_has_sg(void)
{
    static struct ovsthread_once once = OVSTHREAD_ONCE_INITIALIZER;
    static bool has_sg;

    if (ovsthread_once_start(&once)) {
        struct sockaddr_xdp sxdp;
        int fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);

        if (fd >= 0) {
            memset(&sxdp, 0, sizeof sxdp);
            sxdp.sxdp_family = AF_XDP;
            sxdp.sxdp_flags = AFXDP_XDP_USE_SG;
            has_sg = (bind(fd, (struct sockaddr *) &sxdp, sizeof sxdp)
                      && errno == ENODEV);
            close(fd);
        }
        VLOG_INFO("AF_XDP multi-buffer: %s",
                  has_sg ? "available" : "not in this kernel");
        ovsthread_once_done(&once);
    }
    return has_sg;
}

/* Returns true if the kernel lets a copy-mode socket send more than
 * AFXDP_TX_BUDGET descriptors per call (XDP_MAX_TX_SKB_BUDGET, Linux
 * 6.17).  Asked once: a kernel that knows the option refuses it on a socket
 * without a tx ring with EACCES, an older one with ENOPROTOOPT. */
bool
afxdp_umem_kernel_has_tx_budget(void)
{
    static struct ovsthread_once once = OVSTHREAD_ONCE_INITIALIZER;
    static bool has_budget;

    if (ovsthread_once_start(&once)) {
        uint32_t budget = AFXDP_TX_BUDGET;
        int fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);

        if (fd >= 0) {
            has_budget = (setsockopt(fd, SOL_XDP, AFXDP_XDP_MAX_TX_SKB_BUDGET,
                                     &budget, sizeof budget)
                          && errno == EACCES);
            close(fd);
        }
        ovsthread_once_done(&once);
    }
    return has_budget;
}

/* The largest packet that afxdp sockets can carry on this kernel. */
uint32_t
afxdp_umem_max_packet(void)
{
    return afxdp_umem_kernel_has_sg() ? AFXDP_MAX_SG_PACKET : AFXDP_MAX_PACKET;
}

/* Returns true if a socket that wants 'copy' and, if 'need_sg',
 * multi-buffer, with a fill ring of 'ring_size', may join 'region'. */
static bool
region_fits(const struct umem_region *region, enum afxdp_xsk_copy copy,
            bool need_sg, uint32_t ring_size)
    OVS_REQUIRES(umem_mutex)
{
    bool sg;

    if (region->reserved + ring_size > region->n_frames / REGION_FILL_SHARE) {
        return false;
    }
    if (ovs_list_is_empty(&region->xsks)) {
        /* Its next socket registers it anew and decides. */
        return true;
    }
    atomic_read_relaxed(&region->sg, &sg);
    return ((!need_sg || sg)
            && !(copy == AFXDP_XSK_ZEROCOPY && !region->zero_copy)
            && !(copy == AFXDP_XSK_COPY && region->zero_copy));
}

/* Creates an AF_XDP socket on queue 'queue' of 'ifname' (index 'ifindex')
 * in 'region', as afxdp_xsk_create() does. */
static int
xsk_create(const char *ifname, int ifindex, uint32_t queue,
           enum afxdp_xsk_copy copy, uint32_t ring_size, bool need_sg,
           struct umem_region *region, struct afxdp_xsk **xskp, char **errp)
    OVS_REQUIRES(umem_mutex)
{
    struct afxdp_xsk *xsk, *anchor;
    int error;

    xsk = xzalloc_cacheline(sizeof *xsk);
    xsk->region = region;
    xsk->ring_size = ring_size;
    xsk->name = xasprintf("%s queue %"PRIu32, ifname, queue);
    xsk->fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
    if (xsk->fd < 0) {
        error = errno;
        *errp = xasprintf("%s: cannot create AF_XDP socket (%s)",
                          xsk->name, ovs_strerror(error));
        goto error;
    }
    if (!id_pool_alloc_id(xsk_slots, &xsk->slot)) {
        xsk->slot = 0;
        error = ENOSPC;
        *errp = xasprintf("%s: too many AF_XDP sockets", xsk->name);
        goto error;
    }

    /* Any bound socket of the region lends it to a new one.  With none
     * left, the kernel has released it and this socket registers it
     * anew. */
    anchor = (ovs_list_is_empty(&region->xsks) ? NULL
              : CONTAINER_OF(ovs_list_front(&region->xsks),
                             struct afxdp_xsk, node));
    if (!anchor) {
        error = umem_register(xsk, errp);
        if (error) {
            goto error;
        }
    }

    error = xsk_setup_rings(xsk, ring_size, errp);
    if (error) {
        goto error;
    }

    /* The kernel needs frames to receive into from the start. */
    while (ring_prod_free(&xsk->fill, 1)) {
        uint32_t before = xsk->fill.cached_prod;

        xsk_refill(xsk, AFXDP_POOL_NO_CACHE, 1);
        if (xsk->fill.cached_prod == before) {
            break;
        }
    }

    error = xsk_bind(xsk, ifindex, queue, copy, need_sg, anchor, errp);
    if (error) {
        goto error;
    }

    if (!anchor) {
        region->zero_copy = xsk->zero_copy;
    }
    region->reserved += ring_size;
    ovs_list_push_back(&region->xsks, &xsk->node);
    *xskp = xsk;
    return 0;

error:
    xsk_free(xsk);
    return error;
}

/* Creates an AF_XDP socket on queue 'queue' of 'ifname' (index 'ifindex')
 * with rings of 'ring_size' descriptors and its fill ring filled, in the
 * first region of the UMEM that has room for its fill ring and the copy
 * mode it wants (and multi-buffer if 'need_sg': the socket must carry
 * packets larger than a frame), or in a new region.  On success stores it
 * in '*xskp' and returns 0; otherwise returns a positive errno with an
 * explanation in '*errp'. */
int
afxdp_xsk_create(const char *ifname, int ifindex, uint32_t queue,
                 enum afxdp_xsk_copy copy, uint32_t ring_size, bool need_sg,
                 struct afxdp_xsk **xskp, char **errp)
{
    int error;

    *xskp = NULL;
    ovs_mutex_lock(&umem_mutex);
    error = umem_init(errp);
    for (uint32_t r = 0; !error; r++) {
        uint32_t n = n_regions();
        struct umem_region *region;

        if (r < n) {
            region = &umem_regions[r];
            if (!region_fits(region, copy, need_sg, ring_size)) {
                continue;
            }
        } else {
            region = region_create(errp);
            if (!region) {
                error = ENOMEM;
                break;
            }
        }

        error = xsk_create(ifname, ifindex, queue, copy, ring_size, need_sg,
                           region, xskp, errp);
        if (error == EOPNOTSUPP && r < n
            && !ovs_list_is_empty(&region->xsks)) {
            /* The region's copy mode, decided by its first socket, does
             * not suit this device: another region may. */
            free(*errp);
            *errp = NULL;
            error = 0;
            continue;
        }
        break;
    }
    ovs_mutex_unlock(&umem_mutex);
    return error;
}

/* Closes 'xsk' and returns every frame it held to the pool. */
void
afxdp_xsk_destroy(struct afxdp_xsk *xsk)
{
    if (xsk) {
        ovs_mutex_lock(&umem_mutex);
        xsk->region->reserved -= xsk->ring_size;
        ovs_list_remove(&xsk->node);
        xsk_free(xsk);
        ovs_mutex_unlock(&umem_mutex);
    }
}

int
afxdp_xsk_fd(const struct afxdp_xsk *xsk)
{
    return xsk->fd;
}

bool
afxdp_xsk_is_zero_copy(const struct afxdp_xsk *xsk)
{
    return xsk->zero_copy;
}

/* Lets one copy-mode transmit call of 'xsk' send up to 'budget'
 * descriptors, at most its tx ring's size (Linux 6.17).  Returns 0, or a
 * positive errno: ENOPROTOOPT if the kernel has a fixed budget of 32. */
int
afxdp_xsk_set_tx_budget(struct afxdp_xsk *xsk, uint32_t budget)
{
    if (budget == AFXDP_TX_BUDGET) {
        return 0;               /* Every kernel's. */
    }
    return (setsockopt(xsk->fd, SOL_XDP, AFXDP_XDP_MAX_TX_SKB_BUDGET,
                       &budget, sizeof budget)
            ? errno : 0);
}

/* Turns preferred busy polling on for 'xsk': its poller runs the device's
 * NAPI poll, 'budget' packets at most each time, from its receive and
 * transmit calls.  Returns 0, or a positive errno (ENOPROTOOPT: a kernel
 * before 5.11; EPERM: no CAP_NET_ADMIN). */
int
afxdp_xsk_set_busy_poll(struct afxdp_xsk *xsk, uint32_t budget)
{
    int usecs = BUSY_POLL_USECS;
    int prefer = 1;

    if (setsockopt(xsk->fd, SOL_SOCKET, SO_PREFER_BUSY_POLL, &prefer,
                   sizeof prefer)
        || setsockopt(xsk->fd, SOL_SOCKET, SO_BUSY_POLL, &usecs,
                      sizeof usecs)
        || setsockopt(xsk->fd, SOL_SOCKET, SO_BUSY_POLL_BUDGET, &budget,
                      sizeof budget)) {
        return errno;
    }
    xsk->busy_poll = true;
    afxdp_xsk_update_busy_poll(xsk);
    return 0;
}

/* Returns the id of the NAPI context that busy polling of 'xsk' runs, 0 if
 * the kernel gave it none (yet), and starts or stops the system calls that
 * busy poll accordingly: without a NAPI context they would do nothing. */
uint32_t
afxdp_xsk_update_busy_poll(struct afxdp_xsk *xsk)
{
    uint32_t id = afxdp_xsk_napi_id(xsk);

    atomic_store_relaxed(&xsk->busy_polling, xsk->busy_poll && id);
    return id;
}

/* Returns the id of the NAPI context that busy polling of 'xsk' runs: the
 * one that last delivered a packet to it, 0 before the first. */
uint32_t
afxdp_xsk_napi_id(const struct afxdp_xsk *xsk)
{
    uint32_t id = 0;
    socklen_t len = sizeof id;

    return (getsockopt(xsk->fd, SOL_SOCKET, SO_INCOMING_NAPI_ID, &id, &len)
            ? 0 : id);
}

/* Reads the kernel's XDP_STATISTICS of 'xsk'.  Returns 0 or a positive
 * errno. */
int
afxdp_xsk_get_stats(const struct afxdp_xsk *xsk, struct xdp_statistics *st)
{
    socklen_t optlen = sizeof *st;

    memset(st, 0, sizeof *st);
    return getsockopt(xsk->fd, SOL_XDP, XDP_STATISTICS, st, &optlen)
           ? errno : 0;
}

/* Checks rx descriptor 'd' of 'xsk'.  Returns its global frame, or
 * UINT32_MAX if it does not lie inside one of the region's frames (then it
 * is counted in 'stats' and its frame, if any, given back). */
static uint32_t
xsk_rx_frame(const struct afxdp_xsk *xsk, uint32_t user,
             const struct xdp_desc *d, struct afxdp_rx_stats *stats)
{
    const struct umem_region *region = xsk->region;
    uint32_t frame = region_frame(region, d->addr);

    if (OVS_UNLIKELY(frame == UINT32_MAX)) {
        COVERAGE_INC(afxdp_rx_invalid);
        stats->invalid++;
        return UINT32_MAX;
    }
    frame_set(frame, FRAME_IN_PACKET);
    if (OVS_UNLIKELY(d->len > AFXDP_FRAME_SIZE - d->addr % AFXDP_FRAME_SIZE)) {
        uint32_t i = frame - region->first;

        xsk_release(frame);
        COVERAGE_INC(afxdp_rx_invalid);
        stats->invalid++;
        afxdp_pool_put(region->pool, user, &i, 1);
        return UINT32_MAX;
    }
    return frame;
}

/* Takes the RX hash that the XDP program left in front of the packet that
 * starts at address 'addr' of 'region', if any, for 'packet'. */
static void
xsk_rx_meta(const struct umem_region *region, uint64_t addr,
            struct dp_packet *packet, struct afxdp_rx_stats *stats)
{
    struct afxdp_rx_meta *meta;

    if (addr % AFXDP_FRAME_SIZE < sizeof *meta) {
        return;
    }
    meta = ALIGNED_CAST(struct afxdp_rx_meta *,
                        region->area + addr - sizeof *meta);
    if (meta->flags == AFXDP_RX_META_HASH) {
        dp_packet_set_rss_hash(packet, meta->hash);
        stats->hashed++;
    }
    /* The program writes the flags for every packet it steers here;
     * clearing them keeps a stale value from ever being taken for a fresh
     * one. */
    meta->flags = 0;
}

/* Makes one dp_packet of the 'n' descriptors of a packet that arrived in
 * several frames (multi-buffer), starting at 'first' in the rx ring, and
 * gives the frames back.  Returns the packet, or NULL if it was dropped
 * (counted in 'stats'). */
static struct dp_packet *
xsk_rx_chain(struct afxdp_xsk *xsk, uint32_t user, uint32_t first,
             uint32_t n, bool rx_meta, uint32_t max_len,
             struct afxdp_rx_stats *stats)
{
    const struct umem_region *region = xsk->region;
    const struct xdp_desc *descs = xsk->rx.descs;
    uint32_t frames[AFXDP_MAX_SEGS];
    struct dp_packet *packet = NULL;
    uint32_t len = 0, k = 0;
    bool bad = n > AFXDP_MAX_SEGS;

    for (uint32_t i = 0; i < n; i++) {
        const struct xdp_desc *d = &descs[(first + i) & xsk->rx.mask];
        uint32_t frame = xsk_rx_frame(xsk, user, d, stats);

        if (frame == UINT32_MAX) {
            bad = true;
            continue;
        }
        /* Copied out below: the frames go back to the pool. */
        xsk_release(frame);
        frame -= region->first;
        if (k < ARRAY_SIZE(frames)) {
            frames[k++] = frame;
            len += d->len;
        } else {
            afxdp_pool_put(region->pool, user, &frame, 1);
        }
    }

    if (bad) {
        if (n > AFXDP_MAX_SEGS) {
            COVERAGE_INC(afxdp_rx_invalid);
            stats->invalid++;
        }
    } else if (len > max_len) {
        stats->over_mtu++;
    } else {
        const struct xdp_desc *d = &descs[first & xsk->rx.mask];

        packet = dp_packet_new_with_headroom(len, DP_NETDEV_HEADROOM);
        for (uint32_t i = 0; i < n; i++) {
            d = &descs[(first + i) & xsk->rx.mask];
            dp_packet_put(packet, region->area + d->addr, d->len);
        }
        if (rx_meta) {
            xsk_rx_meta(region, descs[first & xsk->rx.mask].addr, packet,
                        stats);
        }
        COVERAGE_INC(afxdp_rx_multi_buffer);
        stats->multi_buffer++;
    }
    afxdp_pool_put(region->pool, user, frames, k);
    return packet;
}

/* Receives up to NETDEV_MAX_BURST packets from 'xsk' into 'batch', each in
 * the frame it arrived in or, if it took several, copied out of them; and
 * stores in '*qfill' (if nonnull) how many more descriptors are waiting.
 * Packets longer than 'max_len' are dropped.  If 'rx_meta', the XDP
 * program wrote a struct afxdp_rx_meta in front of each packet: a valid
 * hash there becomes the packet's RSS hash.  Adds what it dropped and
 * hashed to '*stats'.  Returns the number received. */
int
afxdp_xsk_recv(struct afxdp_xsk *xsk, struct dp_packet_batch *batch,
               bool rx_meta, uint32_t max_len, int *qfill,
               struct afxdp_rx_stats *stats)
{
    const struct umem_region *region = xsk->region;
    const struct xdp_desc *descs = xsk->rx.descs;
    uint32_t user = pool_user();
    bool busy_polling;
    uint32_t n, i;

    xsk_refill(xsk, user, RING_BATCH / 2);
    atomic_read_relaxed(&xsk->busy_polling, &busy_polling);
    if (busy_polling || ring_needs_wakeup(&xsk->fill)) {
        /* With busy polling, the call runs the device's NAPI poll here,
         * which fills the rx ring. */
        recvfrom(xsk->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
    }

    n = ring_cons_peek(&xsk->rx, RX_PEEK);

    /* The kernel wrote the packets on another core, and their dp_packets
     * were last touched when their frames were freed: start fetching both
     * for the whole batch before initializing the first. */
    for (i = 0; i < MIN(n, NETDEV_MAX_BURST); i++) {
        const struct xdp_desc *d = &descs[(xsk->rx.cached_cons + i)
                                          & xsk->rx.mask];
        uint32_t frame = region_frame(region, d->addr);

        if (OVS_LIKELY(frame != UINT32_MAX)) {
            OVS_PREFETCH(region->area + d->addr);
            OVS_PREFETCH_WRITE(&umem_packets[frame]);
            if (rx_meta) {
                /* Usually the cache line before the packet's first. */
                OVS_PREFETCH_WRITE(region->area + d->addr
                                   - sizeof(struct afxdp_rx_meta));
            }
        }
    }

    for (i = 0; i < n && dp_packet_batch_size(batch) < NETDEV_MAX_BURST; i++) {
        uint32_t pos = xsk->rx.cached_cons + i;
        const struct xdp_desc *d = &descs[pos & xsk->rx.mask];
        struct dp_packet *packet;
        uint32_t frame;

        if (OVS_UNLIKELY(d->options & AFXDP_XDP_PKT_CONTD)) {
            /* The kernel publishes a packet's descriptors together: its
             * last one is here, unless more than a peek's worth came. */
            uint32_t end = i;

            while (end < n
                   && descs[(xsk->rx.cached_cons + end) & xsk->rx.mask].options
                      & AFXDP_XDP_PKT_CONTD) {
                end++;
                if (end == n && n < xsk->rx.size) {
                    n = ring_cons_peek(&xsk->rx, n + AFXDP_MAX_SEGS);
                }
            }
            if (end == n && end - i <= AFXDP_MAX_SEGS) {
                /* Not all published yet: wait for the rest. */
                break;
            }
            /* A chain too long to be ours is dropped whole, its end
             * included if it is here. */
            end -= end == n;
            packet = xsk_rx_chain(xsk, user, pos, end - i + 1, rx_meta,
                                  max_len, stats);
            i = end;
            if (packet) {
                dp_packet_batch_add(batch, packet);
            }
            continue;
        }

        frame = xsk_rx_frame(xsk, user, d, stats);
        if (frame == UINT32_MAX) {
            continue;
        }
        if (OVS_UNLIKELY(d->len < ETH_HEADER_LEN || d->len > max_len
                         || (rx_meta && d->addr % AFXDP_FRAME_SIZE
                                        < sizeof(struct afxdp_rx_meta)))) {
            if (d->len < ETH_HEADER_LEN) {
                COVERAGE_INC(afxdp_rx_runt);
                stats->runt++;
            } else if (d->len > max_len) {
                stats->over_mtu++;
            } else {
                COVERAGE_INC(afxdp_rx_invalid);
                stats->invalid++;
            }
            xsk_release(frame);
            frame -= region->first;
            afxdp_pool_put(region->pool, user, &frame, 1);
            continue;
        }

        packet = &umem_packets[frame];
        dp_packet_use_afxdp(packet, region->area + d->addr, AFXDP_FRAME_SIZE,
                            d->addr % AFXDP_FRAME_SIZE);
        dp_packet_set_size(packet, d->len);
        if (rx_meta) {
            xsk_rx_meta(region, d->addr, packet, stats);
        }
        dp_packet_batch_add(batch, packet);
    }
    if (i) {
        ring_cons_release(&xsk->rx, i);
    }

    if (qfill) {
        *qfill = xsk->rx.cached_prod - xsk->rx.cached_cons;
    }
    return dp_packet_batch_size(batch);
}

/* Returns the address in the region of 'xsk' of the data of 'packet', a
 * packet received on an afxdp port, or UINT64_MAX if its frame is in
 * another region, or its data has left its frame or leaves no room for
 * 'meta_len' bytes of TX metadata in front of it (then it is sent as a
 * copy). */
static uint64_t
xsk_packet_addr(const struct afxdp_xsk *xsk, const struct dp_packet *packet,
                uint32_t meta_len, uint32_t *framep)
{
    uint32_t frame = packet - umem_packets;
    const char *data = dp_packet_data(packet);
    const char *start = frame_data(frame);

    /* With TX metadata, the kernel wants its room inside the frame, in
     * front of the packet, whether a descriptor uses it or not. */
    if (frame / REGION_FRAMES != xsk->region->index
        || data < start + meta_len
        || data + dp_packet_size(packet) > start + AFXDP_FRAME_SIZE) {
        return UINT64_MAX;
    }
    *framep = frame;
    return frame_addr(frame, data - start);
}

static void
xsk_kick_tx(struct afxdp_xsk *xsk)
{
    static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 20);
    bool busy_polling;

    /* In copy mode the kernel transmits only from within sendto(), and at
     * most a small budget of descriptors per call (32 before Linux 6.17's
     * XDP_MAX_TX_SKB_BUDGET): it says EAGAIN while some are left.  A batch
     * of packets in chained frames takes several calls. */
    atomic_read_relaxed(&xsk->busy_polling, &busy_polling);
    if (xsk->zero_copy && !busy_polling && !ring_needs_wakeup(&xsk->tx)) {
        return;
    }
    for (int i = 0; i < TX_KICKS_MAX; i++) {
        if (sendto(xsk->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0) {
            return;
        }
        switch (errno) {
        case EAGAIN:
            if (xsk->zero_copy || !ring_prod_pending(&xsk->tx)) {
                return;
            }
            continue;
        case EBUSY:
        case ENOBUFS:
        case ENETDOWN:
        case ENXIO:
            /* Transient, or the link is down: the descriptors wait. */
            return;
        default:
            COVERAGE_INC(afxdp_tx_wakeup_error);
            VLOG_WARN_RL(&rl, "%s: transmit wakeup failed (%s)", xsk->name,
                         ovs_strerror(errno));
            return;
        }
    }
}

/* Copies 'packet', larger than a frame, into 'n' fresh frames and queues
 * them on 'xsk''s tx ring at 'pos' as one chain of descriptors, with TX
 * metadata 'meta' in front of the first if nonnull.  Returns false, having
 * queued nothing, if the pool has too few free frames. */
static bool
xsk_tx_chain(struct afxdp_xsk *xsk, uint32_t user,
             const struct dp_packet *packet, uint32_t n, uint32_t pos,
             const struct afxdp_tx_meta *meta)
{
    const struct umem_region *region = xsk->region;
    struct xdp_desc *descs = xsk->tx.descs;
    const char *data = dp_packet_data(packet);
    uint32_t left = dp_packet_size(packet);
    uint32_t frames[AFXDP_MAX_SEGS];
    size_t got = afxdp_pool_get(region->pool, user, frames, n);

    if (got < n) {
        /* The pool gave what it had: give it back. */
        afxdp_pool_put(region->pool, user, frames, got);
        return false;
    }
    for (uint32_t i = 0; i < n; i++) {
        struct xdp_desc *d = &descs[(pos + i) & xsk->tx.mask];
        uint32_t len = MIN(left, AFXDP_MAX_PACKET);

        xsk_take(xsk, region->first + frames[i]);
        d->addr = (uint64_t) frames[i] * AFXDP_FRAME_SIZE + AFXDP_RX_OFFSET;
        d->len = len;
        d->options = i + 1 < n ? AFXDP_XDP_PKT_CONTD : 0;
        memcpy(region->area + d->addr, data, len);
        data += len;
        left -= len;
    }
    if (meta) {
        memcpy(region->area + descs[pos & xsk->tx.mask].addr - sizeof *meta,
               meta, sizeof *meta);
        descs[pos & xsk->tx.mask].options |= AFXDP_XDP_TX_METADATA;
    }
    return true;
}

/* Prepares the checksums of 'packet' for sending with TX metadata (see
 * afxdp_csum_tx_prepare()) and counts how they will be finished. */
static enum afxdp_csum_tx
xsk_tx_csum(struct dp_packet *packet, struct afxdp_tx_meta *meta,
            struct afxdp_tx_stats *stats)
{
    enum afxdp_csum_tx csum = afxdp_csum_tx_prepare(packet, meta);

    stats->csum_meta += csum == AFXDP_CSUM_TX_META;
    stats->csum_software += csum == AFXDP_CSUM_TX_SOFTWARE;
    return csum;
}

/* Sends the packets of 'batch' on 'xsk' and takes ownership of them.
 * Packets received on an afxdp port go from their own frame; others are
 * copied into a fresh frame, or several chained ones if they are larger
 * (multi-buffer).  If 'csum_meta' (see afxdp_xsk_has_tx_meta()), a
 * partial checksum is finished by the kernel; otherwise the caller has
 * finished every checksum (its port advertises no checksum offload, so
 * netdev_send() did).  Updates '*stats'. */
void
afxdp_xsk_send(struct afxdp_xsk *xsk, struct dp_packet_batch *batch,
               bool csum_meta, struct afxdp_tx_stats *stats)
{
    struct umem_region *region = xsk->region;
    struct xdp_desc *descs = xsk->tx.descs;
    struct afxdp_tx_stats before = *stats;
    uint32_t user = pool_user();
    struct dp_packet *packet;
    uint32_t n_free, n = 0;
    uint32_t meta_len, max_len;
    bool sg;

    atomic_read_relaxed(&region->tx_meta_len, &meta_len);
    atomic_read_relaxed(&region->sg, &sg);
    csum_meta &= meta_len != 0;
    max_len = sg ? AFXDP_MAX_SG_PACKET : AFXDP_MAX_PACKET;

    xsk_complete(xsk, user);
    n_free = ring_prod_free(&xsk->tx, dp_packet_batch_size(batch));

    DP_PACKET_BATCH_FOR_EACH (i, packet, batch) {
        enum afxdp_csum_tx csum = AFXDP_CSUM_TX_NONE;
        struct afxdp_tx_meta meta;
        uint64_t addr = UINT64_MAX;
        uint32_t len, frame;
        struct xdp_desc *d;

        len = dp_packet_size(packet);
        if (n >= n_free) {
            stats->ring_full++;
            dp_packet_delete(packet);
            continue;
        }
        if (OVS_UNLIKELY(len > AFXDP_MAX_PACKET)) {
            uint32_t n_segs = DIV_ROUND_UP(len, AFXDP_MAX_PACKET);

            if (len > max_len) {
                stats->too_big++;
            } else if ((n_free = ring_prod_free(&xsk->tx, n + n_segs))
                       < n + n_segs) {
                stats->ring_full++;
            } else {
                if (csum_meta) {
                    csum = xsk_tx_csum(packet, &meta, stats);
                }
                if (xsk_tx_chain(xsk, user, packet, n_segs,
                                 xsk->tx.cached_prod + n,
                                 csum == AFXDP_CSUM_TX_META ? &meta : NULL)) {
                    COVERAGE_INC(afxdp_tx_multi_buffer);
                    stats->multi_buffer++;
                    stats->copied++;
                    n += n_segs;
                } else {
                    stats->no_frame++;
                }
            }
            dp_packet_delete(packet);
            continue;
        }

        if (csum_meta) {
            csum = xsk_tx_csum(packet, &meta, stats);
        }

        if (packet->source == DPBUF_AFXDP) {
            addr = xsk_packet_addr(xsk, packet, meta_len, &frame);
        }
        if (addr != UINT64_MAX) {
            stats->zero_copy++;
            xsk_hold(xsk, frame);
        } else if (!afxdp_pool_get(region->pool, user, &frame, 1)) {
            stats->no_frame++;
            dp_packet_delete(packet);
            continue;
        } else {
            addr = (uint64_t) frame * AFXDP_FRAME_SIZE + AFXDP_RX_OFFSET;
            memcpy(region->area + addr, dp_packet_data(packet), len);
            frame += region->first;
            stats->copied++;
            dp_packet_delete(packet);
            xsk_take(xsk, frame);
        }

        d = &descs[(xsk->tx.cached_prod + n) & xsk->tx.mask];
        d->addr = addr;
        d->len = len;
        d->options = 0;
        if (csum == AFXDP_CSUM_TX_META) {
            memcpy(region->area + addr - sizeof meta, &meta, sizeof meta);
            d->options = AFXDP_XDP_TX_METADATA;
        }
        n++;
    }

    if (n) {
        ring_prod_submit(&xsk->tx, n);
    }
    /* Descriptors left from earlier batches count too, but only if the
     * kernel has not taken them since (an empty batch, all of it sent by
     * XDP transmit, needs no system call). */
    if (n || ring_prod_pending(&xsk->tx)) {
        xsk_kick_tx(xsk);
    }

    COVERAGE_ADD(afxdp_tx_zero_copy, stats->zero_copy - before.zero_copy);
    COVERAGE_ADD(afxdp_tx_copy, stats->copied - before.copied);
    COVERAGE_ADD(afxdp_tx_ring_full, stats->ring_full - before.ring_full);
}

/* For a port that has stopped sending: kicks the kernel again for
 * descriptors still in 'xsk''s tx ring (a sendto() that the device's full
 * queue turned away leaves them there), and gives the frames of the
 * packets sent back to the pool.  Until the next send, the last packets
 * would wait in the tx ring and their frames in the completion ring.  The
 * caller must own the sending side of 'xsk', as afxdp_xsk_send()'s caller
 * does. */
void
afxdp_xsk_reclaim(struct afxdp_xsk *xsk)
{
    if (ring_prod_pending(&xsk->tx)) {
        xsk_kick_tx(xsk);
    }
    xsk_complete(xsk, pool_user());
}

/* Answers the pools' flush requests for the calling thread's caches, as
 * its next get or put of frames would (see afxdp-pool.h): for a thread
 * that may stay idle for long while another runs short of frames. */
void
afxdp_umem_poll_caches(void)
{
    uint32_t slot = *cache_slot_get();
    uint32_t n = n_regions();

    if (slot == SLOT_UNSET || slot == AFXDP_POOL_NO_CACHE) {
        return;
    }
    for (uint32_t r = 0; r < n; r++) {
        afxdp_pool_poll(umem_regions[r].pool, slot);
    }
}

static void
pool_stats_add(struct afxdp_pool_stats *sum, const struct afxdp_pool_stats *s)
{
    sum->n_frames += s->n_frames;
    sum->n_shared += s->n_shared;
    sum->n_cached += s->n_cached;
    sum->n_out += s->n_out;
    sum->n_flush_requests += s->n_flush_requests;
}

/* The state of the pools of all regions, and how many sockets share the
 * UMEM. */
void
afxdp_umem_get_stats(struct afxdp_pool_stats *stats, uint32_t *n_sockets)
{
    uint32_t n = n_regions();

    memset(stats, 0, sizeof *stats);
    *n_sockets = 0;
    for (uint32_t r = 0; r < n; r++) {
        struct afxdp_pool_stats rs;

        afxdp_pool_get_stats(umem_regions[r].pool, &rs);
        pool_stats_add(stats, &rs);
    }
    if (n) {
        ovs_mutex_lock(&umem_mutex);
        for (uint32_t r = 0; r < n; r++) {
            *n_sockets += ovs_list_size(&umem_regions[r].xsks);
        }
        ovs_mutex_unlock(&umem_mutex);
    }
}

/* Where the frames of 'region' are, by their states: adds them to
 * '*in_rings', '*in_packets', '*held_back' and '*n_free'. */
static void
region_count(const struct umem_region *region, uint32_t *in_rings,
             uint32_t *in_packets, uint32_t *held_back, uint32_t *n_free)
{
    for (uint32_t i = 0; i < region->n_frames; i++) {
        uint16_t holder;

        atomic_read_relaxed(&umem_holder[region->first + i], &holder);
        switch (holder) {
        case FRAME_FREE:
            (*n_free)++;
            break;
        case FRAME_IN_PACKET:
            (*in_packets)++;
            break;
        case FRAME_HELD_BACK:
            (*held_back)++;
            break;
        default:
            (*in_rings)++;
            break;
        }
    }
}

/* The descriptors in 'r' now, by its shared indices. */
static uint32_t
ring_used(const struct afxdp_ring *r)
{
    uint32_t prod, cons;

    if (!r->map) {
        return 0;
    }
    atomic_read_relaxed(r->producer, &prod);
    atomic_read_relaxed(r->consumer, &cons);
    return prod - cons;
}

/* The rings of 'xsk' whose need-wakeup flag is set: the kernel waits for a
 * system call to look at them again.  (The ring counts beside it, by
 * contrast, cannot tell what the device holds: the kernel publishes how
 * far it consumed a ring lazily, a fill ring's when it next delivers
 * packets.) */
static const char *
xsk_wakeups(const struct afxdp_xsk *xsk)
{
    bool fill = xsk->fill.map && ring_needs_wakeup(&xsk->fill);
    bool tx = xsk->tx.map && ring_needs_wakeup(&xsk->tx);

    return fill && tx ? "fill, tx" : fill ? "fill" : tx ? "tx" : "none";
}

/* afxdp/pool-show: the pool's own books (free frames in the shared list
 * and in thread caches) and, counted apart from them, where each frame is
 * by its state.  The two must agree: "unaccounted" is the total less the
 * pool's free frames and the frames elsewhere, 0 unless a frame was lost
 * or is in two places at once (and then the counts of frames taken while
 * in use or freed twice say which). */
static void
afxdp_umem_show(struct unixctl_conn *conn, int argc OVS_UNUSED,
                const char *argv[] OVS_UNUSED, void *aux OVS_UNUSED)
{
    struct ds s = DS_EMPTY_INITIALIZER;
    uint32_t in_rings = 0, in_packets = 0, held_back = 0, state_free = 0;
    uint64_t taken_in_use, freed_twice, written;
    struct afxdp_pool_stats stats;
    uint32_t n_sockets;
    uint32_t n = n_regions();

    afxdp_umem_get_stats(&stats, &n_sockets);
    ds_put_format(&s, "frames: %"PRIu32" of %d bytes\n",
                  stats.n_frames, AFXDP_FRAME_SIZE);

    ovs_mutex_lock(&umem_mutex);
    for (uint32_t r = 0; r < n; r++) {
        const struct umem_region *region = &umem_regions[r];
        uint32_t in = 0, packets = 0, held = 0, n_free = 0;
        const struct afxdp_xsk *xsk;
        bool sg;

        region_count(region, &in, &packets, &held, &n_free);
        in_rings += in;
        in_packets += packets;
        held_back += held;
        state_free += n_free;
        atomic_read_relaxed(&region->sg, &sg);
        ds_put_format(&s, "region %"PRIu32": %"PRIu32" frames (%s), "
                      "%"PRIuSIZE" sockets, %"PRIu32" frames reserved for "
                      "fill rings, %"PRIu32" in socket rings",
                      r, region->n_frames,
                      region->hugepages ? "huge pages" : "4 KiB pages",
                      ovs_list_size(&region->xsks), region->reserved, in);
        if (!ovs_list_is_empty(&region->xsks)) {
            ds_put_format(&s, ", %s%s",
                          region->zero_copy ? "zero-copy" : "copy mode",
                          sg ? ", multi-buffer" : "");
        }
        ds_put_char(&s, '\n');

        LIST_FOR_EACH (xsk, node, &region->xsks) {
            ds_put_format(&s, "  %s: %"PRIu32" frames; fill %"PRIu32", "
                          "rx %"PRIu32", tx %"PRIu32", completion %"PRIu32
                          "; wakeup asked for: %s\n",
                          xsk->name, region_held_by(region, xsk->slot),
                          ring_used(&xsk->fill), ring_used(&xsk->rx),
                          ring_used(&xsk->tx), ring_used(&xsk->comp),
                          xsk_wakeups(xsk));
        }
    }
    ovs_mutex_unlock(&umem_mutex);

    ds_put_format(&s, "free in shared list: %"PRIu32"\n", stats.n_shared);
    ds_put_format(&s, "free in thread caches: %"PRIu32"\n", stats.n_cached);
    ovs_mutex_lock(&slot_mutex);
    ds_put_format(&s, "thread caches: %"PRIu32" threads\n", n_cache_slots);
    ovs_mutex_unlock(&slot_mutex);
    ds_put_format(&s, "caches asked back (pool ran dry): %"PRIu32"\n",
                  stats.n_flush_requests);
    ds_put_format(&s, "in socket rings: %"PRIu32"\n", in_rings);
    ds_put_format(&s, "in packets: %"PRIu32"\n", in_packets);
    ds_put_format(&s, "held back for the kernel: %"PRIu32"\n", held_back);
    ds_put_format(&s, "free by frame state: %"PRIu32"\n", state_free);
    ds_put_format(&s, "unaccounted: %"PRId64"\n",
                  (int64_t) stats.n_frames - stats.n_shared - stats.n_cached
                  - in_rings - in_packets - held_back);
    atomic_read_relaxed(&umem_n_taken_in_use, &taken_in_use);
    atomic_read_relaxed(&umem_n_freed_twice, &freed_twice);
    atomic_read_relaxed(&umem_n_written_after_close, &written);
    ds_put_format(&s, "taken from the pool while in use: %"PRIu64"\n",
                  taken_in_use);
    ds_put_format(&s, "freed while not in a packet: %"PRIu64"\n",
                  freed_twice);
    ds_put_format(&s, "written by a device after their socket closed: "
                  "%"PRIu64"\n", written);
    ds_put_format(&s, "sockets: %"PRIu32"\n", n_sockets);
    unixctl_command_reply(conn, ds_cstr(&s));
    ds_destroy(&s);
}
