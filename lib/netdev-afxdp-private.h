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

#ifndef NETDEV_AFXDP_PRIVATE_H
#define NETDEV_AFXDP_PRIVATE_H 1

/*
 * The afxdp netdev's own state, shared by its files and by nothing else:
 *
 *   - netdev-afxdp.c: the port's life cycle (construction, setup from
 *     the requested options, teardown, MTU changes) and its data path
 *     (rxq_recv(), send());
 *
 *   - netdev-afxdp-options.c: the options an interface takes, defined
 *     once in a table that parses, compares, copies and reports them
 *     (set_config(), get_config());
 *
 *   - netdev-afxdp-watch.c: what the main thread follows of each port's
 *     device, once a second (netdev_afxdp_run()): the device itself and
 *     its queues, its promiscuous mode, its addresses, whether it takes
 *     XDP frames, its NAPI ids;
 *
 *   - netdev-afxdp-status.c: statistics (driven by a table of the
 *     queues' counters), status and the flow offload's questions.
 */

#include <stdbool.h>
#include <stdint.h>

#include "afxdp-umem.h"
#include "afxdp-xdp.h"
#include "bpf/afxdp-prog.h"
#include "netdev-linux-private.h"
#include "openvswitch/thread.h"
#include "ovs-atomic.h"
#include "packets.h"
#include "util.h"

struct smap;

/* The largest MTU one frame carries, with room for a VLAN tag. */
#define AFXDP_FRAME_MTU (AFXDP_MAX_PACKET - VLAN_ETH_HEADER_LEN)

/* options:busy-poll-budget: default and largest. */
#define AFXDP_BUSY_POLL_BUDGET 64
#define AFXDP_BUSY_POLL_BUDGET_MAX 1024

/* options:xdp-mode. */
enum afxdp_mode {
    AFXDP_MODE_BEST_EFFORT,     /* Native with zero-copy, native, generic. */
    AFXDP_MODE_NATIVE_ZC,
    AFXDP_MODE_NATIVE,
    AFXDP_MODE_GENERIC,
};

/* options:rx-csum-partial. */
enum afxdp_rx_csum {
    AFXDP_RX_CSUM_AUTO,         /* On for devices with local senders. */
    AFXDP_RX_CSUM_ON,
    AFXDP_RX_CSUM_OFF,
};

/* options:pass-to-kernel, parsed. */
struct afxdp_steer {
    uint32_t flags;                     /* AFXDP_STEER_*. */
    size_t n_rules;
    struct afxdp_steer_rule rules[AFXDP_STEER_MAX_RULES];
};

/* The options of an afxdp interface, parsed (netdev-afxdp-options.c).  A
 * string is NULL when the option is absent or empty. */
struct afxdp_options {
    int n_rxq;
    int start_queue;
    int mode;                   /* enum afxdp_mode. */
    int ring_size;
    bool rx_hash;
    bool xdp_xmit;
    int rx_csum;                /* enum afxdp_rx_csum. */
    bool tx_csum;
    char *program;              /* NULL: the built-in program. */
    bool busy_poll;
    int busy_poll_budget;
    int tx_budget;
    char *pass;                 /* As written; parsed into 'steer'. */
    struct afxdp_steer *steer;  /* NULL if 'pass' is. */
    bool peer_xdp;              /* A veth peer made to take XDP frames. */
};

void afxdp_options_init(struct afxdp_options *);
void afxdp_options_destroy(struct afxdp_options *);
void afxdp_options_clone(struct afxdp_options *dst,
                         const struct afxdp_options *src);
bool afxdp_options_equal(const struct afxdp_options *,
                         const struct afxdp_options *);

/* A queue: one socket.  Its transmit side is shared under 'lock' when the
 * datapath has more sending threads than queues.  Each group of counters
 * has one writer at a time (the rxq's poller; the lock's holder or the tx
 * queue's only user) and is read by any thread. */
struct netdev_afxdp_txq {
    PADDED_MEMBERS(CACHE_LINE_SIZE,
        atomic_uint64_t rx_packets;
        atomic_uint64_t rx_hashed;      /* With the device's RX hash. */
        atomic_uint64_t rx_runt;        /* Dropped: under 14 bytes. */
        atomic_uint64_t rx_invalid;     /* Dropped: bad descriptor. */
        atomic_uint64_t rx_csum_partial; /* Checksum left to finish. */
        atomic_uint64_t rx_multi_buffer; /* In several frames: copied. */
        atomic_uint64_t rx_over_mtu;    /* Dropped: longer than the MTU. */
        uint32_t idle_polls;            /* Since the last reclaim. */
    );
    PADDED_MEMBERS(CACHE_LINE_SIZE,
        struct ovs_spin lock;
        atomic_uint64_t zero_copy;
        atomic_uint64_t copied;
        atomic_uint64_t ring_full;
        atomic_uint64_t no_frame;
        atomic_uint64_t too_big;
        atomic_uint64_t over_mtu;       /* Dropped: longer than the MTU. */
        atomic_uint64_t multi_buffer;   /* Sent in several frames. */
        atomic_uint64_t xmit_redirected; /* To the XDP transmit path. */
        atomic_uint64_t xmit_invalid;   /* Dropped by XDP transmit. */
        atomic_uint64_t xmit_failed;    /* XDP transmit refused: socket. */
        atomic_uint64_t csum_meta;      /* Checksum finished by kernel. */
        atomic_uint64_t csum_software;  /* Checksum finished here. */
    );
};

/* An afxdp port.
 *
 * Thread-safety
 * =============
 *
 * Every member is written under the netdev_linux mutex of its netdev, by
 * the main thread (set_config(), reconfigure(), the MTU hooks, the
 * once-a-second checks of netdev_afxdp_run()).  The datapath's threads
 * call rxq_recv() and send() without that mutex, never while
 * reconfigure() runs (dpif-netdev stops polling a port to reconfigure
 * it), and read:
 *
 *   - plainly, what reconfigure() sets and only reconfigure() changes:
 *     'n_queues', 'xsks', 'txqs', 'xdp', 'rx_meta', 'rx_partial',
 *     'tx_csum_meta', 'xmit_possible';
 *
 *   - atomically (relaxed), what changes while the port is in use:
 *     'xmit_on' (the main thread's XDP transmit check), 'max_frame' (the
 *     MTU hooks), and the counters of 'txqs' and 'tx_unconfigured';
 *
 *   - under 'txqs[i].lock', when the datapath shares tx queue i between
 *     threads, the queue's socket's transmit side.
 *
 * The rest (the options, the reasons and names for the status) belongs
 * to the main thread under the mutex: those members are OVS_GUARDED and
 * the functions that use them require the mutex (OVS_REQUIRES), which
 * clang's thread-safety analysis checks. */
struct netdev_afxdp {
    /* Set by set_config(), applied by reconfigure(). */
    struct afxdp_options requested OVS_GUARDED;
    int requested_mtu OVS_GUARDED;      /* The device's, as last known. */

    /* In effect.  'n_queues' is 0 while the port is not set up, and then
     * 'error' may say why; otherwise 'applied' holds the options it was
     * set up with. */
    int n_queues;
    char *error OVS_GUARDED;
    struct afxdp_options applied OVS_GUARDED;
    bool rx_meta;               /* The program writes struct afxdp_rx_meta. */
    bool xmit_possible;         /* XDP transmit, if the device takes it. */
    atomic_bool xmit_on;        /* XDP transmit in use. */
    ATOMIC(const char *) xmit_reason;   /* Why XDP transmit is not used. */
    bool rx_partial;            /* Looks for partial checksums. */
    const char *rx_partial_reason OVS_GUARDED;  /* Why not, if auto. */
    bool tx_csum_meta;          /* Kernel finishes checksums: advertised. */
    const char *tx_csum_reason OVS_GUARDED;     /* Why not, if on. */
    enum afxdp_xdp_attach attach;
    bool zero_copy;
    bool multi_buffer;          /* Every socket carries jumbo packets. */
    bool busy_poll_on;          /* In effect on every socket. */
    uint64_t napi_ids_seen;     /* afxdp_watch_busy_poll(), as the status
                                 * last showed it. */
    char *busy_poll_status OVS_GUARDED;
    char *tx_budget_status OVS_GUARDED;
    bool steer_local;           /* Steers for the device's addresses. */
    bool flow_offload;          /* The program runs offloaded flows. */
    int ifindex;                /* The device's, while set up. */
    ATOMIC(const char *) frames_reason; /* Why flows cannot send to the
                                         * device from XDP; NULL if they
                                         * can. */
    struct afxdp_xdp_peer peer; /* options:peer-xdp's program. */
    const char *peer_xdp_status; /* NULL: option off. */
    /* The device as the last setup found it (afxdp_device_digest()): a
     * port set up again when it changes, so that a device deleted and
     * created again (a driver reloaded), or given more queues after a
     * setup that lacked them, is taken up without a change of options. */
    uint64_t device_digest;
    /* The device last seen in promiscuous mode (its ifindex), noted when
     * netdev-linux changes its flags: a device that replaces it is put in
     * it too. */
    int promisc_ifindex;
    bool kernel_counts_xsk_drops;       /* In the device's rx_dropped. */
    struct afxdp_xdp *xdp;
    struct afxdp_xsk **xsks;            /* [n_queues]. */
    struct netdev_afxdp_txq *txqs;      /* [n_queues]. */
    atomic_uint64_t tx_unconfigured;    /* Dropped: port not set up. */

    /* The longest frame the port receives and sends: its MTU plus an
     * Ethernet header and a VLAN tag.  Follows MTU changes. */
    atomic_uint32_t max_frame;
};

static inline struct netdev_afxdp *
netdev_afxdp_of(const struct netdev *netdev)
{
    return netdev_linux_cast(netdev)->afxdp;
}

/* Adds 'n' to 'counter', which has one writer at a time: a read and a
 * store, not a read-modify-write. */
static inline void
afxdp_counter_add(atomic_uint64_t *counter, uint64_t n)
{
    uint64_t value;

    if (n) {
        atomic_read_relaxed(counter, &value);
        atomic_store_relaxed(counter, value + n);
    }
}

static inline uint64_t
afxdp_counter_get(const atomic_uint64_t *counter_)
{
    atomic_uint64_t *counter = CONST_CAST(atomic_uint64_t *, counter_);
    uint64_t value;

    atomic_read_relaxed(counter, &value);
    return value;
}

/* netdev-afxdp-watch.c. */
void afxdp_watch_port_added(void);
void afxdp_watch_port_removed(void);
uint64_t afxdp_device_digest(const char *name);
char *afxdp_check_queues(const char *name, int start, int n);
void afxdp_promisc_follow(struct netdev_afxdp *, const char *name,
                          int ifindex);
void afxdp_steer_sync(struct netdev_linux *dev) OVS_REQUIRES(dev->mutex);
const char *afxdp_frames_obstacle(const struct netdev_afxdp *);

#endif /* netdev-afxdp-private.h */
