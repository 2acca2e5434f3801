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

#include "netdev-afxdp.h"

#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <linux/ethtool.h>
#include <linux/if_xdp.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "afxdp-csum.h"
#include "afxdp-flow.h"
#include "afxdp-umem.h"
#include "afxdp-xdp.h"
#include "bpf/afxdp-prog.h"
#include "dp-packet.h"
#include "dpif-offload.h"
#include "netdev-linux-private.h"
#include "netdev-provider.h"
#include "openvswitch/dynamic-string.h"
#include "openvswitch/poll-loop.h"
#include "openvswitch/shash.h"
#include "openvswitch/thread.h"
#include "openvswitch/vlog.h"
#include "ovs-atomic.h"
#include "packets.h"
#include "smap.h"
#include "socket-util.h"
#include "timeval.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(netdev_afxdp);

/* The largest MTU one frame carries, with room for a VLAN tag. */
#define AFXDP_FRAME_MTU (AFXDP_MAX_PACKET - VLAN_ETH_HEADER_LEN)

enum afxdp_mode {
    AFXDP_MODE_BEST_EFFORT,     /* Native with zero-copy, native, generic. */
    AFXDP_MODE_NATIVE_ZC,
    AFXDP_MODE_NATIVE,
    AFXDP_MODE_GENERIC,
};

static const char *const afxdp_mode_names[] = {
    [AFXDP_MODE_BEST_EFFORT] = "best-effort",
    [AFXDP_MODE_NATIVE_ZC] = "native-with-zerocopy",
    [AFXDP_MODE_NATIVE] = "native",
    [AFXDP_MODE_GENERIC] = "generic",
};

/* The options an afxdp interface takes; any other is refused, so that a
 * typo does not pass for a default. */
static const char *const afxdp_option_names[] = {
    "n_rxq", "start-queue", "xdp-mode", "ring-size", "rx-hash", "xdp-xmit",
    "rx-csum-partial", "tx-csum-offload", "xdp-program", "busy-poll",
    "busy-poll-budget", "tx-budget", "pass-to-kernel",
};

/* options:busy-poll-budget: default and largest. */
#define AFXDP_BUSY_POLL_BUDGET 64
#define AFXDP_BUSY_POLL_BUDGET_MAX 1024


/* options:pass-to-kernel, parsed. */
struct afxdp_steer {
    uint32_t flags;                     /* AFXDP_STEER_*. */
    size_t n_rules;
    struct afxdp_steer_rule rules[AFXDP_STEER_MAX_RULES];
};

/* options:rx-csum-partial. */
enum afxdp_rx_csum {
    AFXDP_RX_CSUM_AUTO,         /* On for devices with local senders. */
    AFXDP_RX_CSUM_ON,
    AFXDP_RX_CSUM_OFF,
};

static const char *const afxdp_rx_csum_names[] = {
    [AFXDP_RX_CSUM_AUTO] = "auto",
    [AFXDP_RX_CSUM_ON] = "true",
    [AFXDP_RX_CSUM_OFF] = "false",
};

/* One way to set a port up: where the program runs, how the sockets copy. */
struct afxdp_attempt {
    enum afxdp_xdp_attach attach;
    enum afxdp_xsk_copy copy;
};

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

/* How often the main thread asks the kernel whether the device of a port
 * that may use XDP transmit takes XDP frames (for veth, it depends on the
 * peer), brings the device's addresses up to date in the program of a
 * port that steers packets for them to the kernel, and looks for the NAPI
 * ids of a port that busy polls. */
#define AFXDP_RECHECK_MS 1000

/* Empty polls of a queue between two reclaims of its socket's completion
 * ring (netdev_afxdp_rxq_recv()). */
#define AFXDP_RECLAIM_POLLS 1024

/* afxdp netdevs in existence, and when the main thread next looks at
 * their devices (afxdp_recheck_class(): a change of the device, and for
 * ports that may use XDP transmit, steer packets for the device's own
 * addresses or busy poll, what those depend on). */
static struct atomic_count afxdp_n_ports = ATOMIC_COUNT_INIT(0);
static long long int afxdp_next_check = LLONG_MIN;

/* An afxdp port.
 *
 * Thread-safety
 * =============
 *
 * Every member is written under the netdev_linux mutex of its netdev, by
 * the main thread (set_config(), reconfigure(), the MTU hooks, the XDP
 * transmit check in netdev_afxdp_run()).  The datapath's threads call
 * rxq_recv() and send() without that mutex, never while reconfigure()
 * runs (dpif-netdev stops polling a port to reconfigure it), and read:
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
 * The rest (requested_*, the reasons and names for the status) belongs
 * to the main thread under the mutex: those members are OVS_GUARDED and
 * the functions that use them require the mutex (OVS_REQUIRES), which
 * clang's thread-safety analysis checks. */
struct netdev_afxdp {
    /* Set by set_config(), applied by reconfigure(). */
    int requested_n_rxq OVS_GUARDED;
    int requested_start_queue OVS_GUARDED;
    enum afxdp_mode requested_mode OVS_GUARDED;
    char *requested_program OVS_GUARDED;        /* NULL: built-in. */
    uint32_t requested_ring_size OVS_GUARDED;
    bool requested_rx_hash OVS_GUARDED;
    bool requested_xdp_xmit OVS_GUARDED;
    enum afxdp_rx_csum requested_rx_csum OVS_GUARDED;
    bool requested_tx_csum OVS_GUARDED;
    bool requested_busy_poll OVS_GUARDED;
    int requested_busy_poll_budget OVS_GUARDED;
    int requested_tx_budget OVS_GUARDED;
    char *requested_pass OVS_GUARDED;           /* NULL: none. */
    struct afxdp_steer *requested_steer OVS_GUARDED;
    int requested_mtu OVS_GUARDED;      /* The device's, as last known. */

    /* In effect.  'n_queues' is 0 while the port is not set up, and then
     * 'error' may say why. */
    int n_queues;
    char *error OVS_GUARDED;
    int start_queue;
    enum afxdp_mode mode;
    char *program OVS_GUARDED;
    uint32_t ring_size;
    bool rx_hash;               /* As requested; see 'rx_meta' for use. */
    bool rx_meta;               /* The program writes struct afxdp_rx_meta. */
    bool xdp_xmit;              /* As requested; see 'xmit_on' for use. */
    bool xmit_possible;         /* XDP transmit, if the device takes it. */
    atomic_bool xmit_on;        /* XDP transmit in use. */
    ATOMIC(const char *) xmit_reason;   /* Why XDP transmit is not used. */
    enum afxdp_rx_csum rx_csum; /* As requested; see 'rx_partial'. */
    bool rx_partial;            /* Looks for partial checksums. */
    const char *rx_partial_reason OVS_GUARDED;  /* Why not, if auto. */
    bool tx_csum;               /* As requested; see 'tx_csum_meta'. */
    bool tx_csum_meta;          /* Kernel finishes checksums: advertised. */
    const char *tx_csum_reason OVS_GUARDED;     /* Why not, if on. */
    enum afxdp_xdp_attach attach;
    bool zero_copy;
    bool multi_buffer;          /* Every socket carries jumbo packets. */
    bool busy_poll;             /* As requested. */
    bool busy_poll_on;          /* In effect on every socket. */
    uint64_t napi_ids_seen;     /* afxdp_update_busy_poll(), as the status
                                 * last showed it. */
    int busy_poll_budget;
    char *busy_poll_status OVS_GUARDED;
    int tx_budget;              /* As requested. */
    char *tx_budget_status OVS_GUARDED;
    char *pass OVS_GUARDED;     /* As requested. */
    bool steer_local;           /* Steers for the device's addresses. */
    bool flow_offload;          /* The program runs offloaded flows. */
    int ifindex;                /* The device's, while set up. */
    ATOMIC(const char *) frames_reason; /* Why flows cannot send to the
                                         * device from XDP; NULL if they
                                         * can. */
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

static uint64_t counter_get(const atomic_uint64_t *);

static struct netdev_afxdp *
netdev_afxdp_of(const struct netdev *netdev)
{
    return netdev_linux_cast(netdev)->afxdp;
}

/* Returns the index of 's' among the 'n' strings in 'names', or -1. */
static int
afxdp_name_index(const char *const names[], size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(s, names[i])) {
            return i;
        }
    }
    return -1;
}

static bool
afxdp_mode_from_string(const char *s, enum afxdp_mode *mode)
{
    int i = afxdp_name_index(afxdp_mode_names, ARRAY_SIZE(afxdp_mode_names),
                             s);

    if (i >= 0) {
        *mode = i;
    }
    return i >= 0;
}

static size_t
afxdp_attempts(enum afxdp_mode mode, int zero_copy,
               struct afxdp_attempt attempts[3])
{
    switch (mode) {
    case AFXDP_MODE_BEST_EFFORT:
        /* Where the kernel says whether the device has zero-copy, the
         * sockets ask for the mode they can have: a zero-copy socket only
         * joins a region of the UMEM in zero-copy mode, a copy-mode socket
         * one in copy mode (afxdp-umem.h).  Otherwise the kernel picks. */
        if (zero_copy > 0) {
            attempts[0] = (struct afxdp_attempt) { AFXDP_XDP_NATIVE,
                                                   AFXDP_XSK_ZEROCOPY };
            attempts[1] = (struct afxdp_attempt) { AFXDP_XDP_NATIVE,
                                                   AFXDP_XSK_COPY };
            attempts[2] = (struct afxdp_attempt) { AFXDP_XDP_GENERIC,
                                                   AFXDP_XSK_COPY };
            return 3;
        }
        attempts[0] = (struct afxdp_attempt) {
            AFXDP_XDP_NATIVE, zero_copy ? AFXDP_XSK_ANY : AFXDP_XSK_COPY };
        attempts[1] = (struct afxdp_attempt) { AFXDP_XDP_GENERIC,
                                               AFXDP_XSK_COPY };
        return 2;
    case AFXDP_MODE_NATIVE_ZC:
        attempts[0] = (struct afxdp_attempt) { AFXDP_XDP_NATIVE,
                                               AFXDP_XSK_ZEROCOPY };
        return 1;
    case AFXDP_MODE_NATIVE:
        attempts[0] = (struct afxdp_attempt) { AFXDP_XDP_NATIVE,
                                               AFXDP_XSK_COPY };
        return 1;
    case AFXDP_MODE_GENERIC:
        attempts[0] = (struct afxdp_attempt) { AFXDP_XDP_GENERIC,
                                               AFXDP_XSK_COPY };
        return 1;
    }
    OVS_NOT_REACHED();
}

/* Returns the number of receive queues of device 'name', or 0 if unknown. */
static int
afxdp_device_n_rxq(const char *name)
{
    struct dirent *de;
    char *path;
    DIR *dir;
    int n = 0;

    path = xasprintf("%s/%s/queues", "/sys/class/net", name);
    dir = opendir(path);
    free(path);
    if (!dir) {
        return 0;
    }
    while ((de = readdir(dir)) != NULL) {
        n += !strncmp(de->d_name, "rx-", 3);
    }
    closedir(dir);
    return n;
}

/* What of device 'name' a setup depends on beyond the port's options: its
 * index (a device deleted and created again has a new one) and its number
 * of receive queues.  0 if there is no such device. */
static uint64_t
afxdp_device_digest(const char *name)
{
    int ifindex = if_nametoindex(name);

    return (ifindex
            ? ((uint64_t) ifindex << 32) | (uint32_t) afxdp_device_n_rxq(name)
            : 0);
}

/* netdev-linux calls this, with the netdev's mutex held, once it has
 * changed the flags of the device of 'netdev' (the datapath puts it in
 * promiscuous mode when it adds the port): notes the device's mode. */
void
netdev_afxdp_flags_changed(struct netdev *netdev)
    OVS_NO_THREAD_SAFETY_ANALYSIS
{
    struct netdev_linux *dev = netdev_linux_cast(netdev);
    int ifindex = if_nametoindex(netdev_get_name(netdev));

    dev->afxdp->promisc_ifindex = (dev->ifi_flags & IFF_PROMISC ? ifindex
                                   : 0);
}

/* If device 'name' (index 'ifindex') replaces one that was in promiscuous
 * mode, puts it in promiscuous mode too.  The datapath does it once, when
 * it adds the port, so a driver unbound and bound again would come back
 * filtering out the frames to the addresses behind the bridge (a NIC does;
 * a veth does not filter). */
static void
afxdp_promisc_follow(struct netdev_afxdp *afxdp, const char *name,
                     int ifindex)
{
    struct ifreq ifr;

    if (!afxdp->promisc_ifindex || afxdp->promisc_ifindex == ifindex) {
        return;
    }
    memset(&ifr, 0, sizeof ifr);
    if (!af_inet_ifreq_ioctl(name, &ifr, SIOCGIFFLAGS, "SIOCGIFFLAGS")
        && !(ifr.ifr_flags & IFF_PROMISC)) {
        ifr.ifr_flags |= IFF_PROMISC;
        if (!af_inet_ifreq_ioctl(name, &ifr, SIOCSIFFLAGS, "SIOCSIFFLAGS")) {
            VLOG_INFO("%s: a new device by this name, put in promiscuous "
                      "mode as the one it replaces was", name);
        }
    }
    afxdp->promisc_ifindex = ifindex;
}

/* Returns an error message if the receive queues 'start' to 'start' + 'n'
 * - 1 are not all among the queues that device 'name' has now, else NULL
 * (also if the count cannot be read: the bind will tell). */
static char *
afxdp_check_queues(const char *name, int start, int n)
{
    int dev_n_rxq = afxdp_device_n_rxq(name);

    if (!dev_n_rxq || start + n <= dev_n_rxq) {
        return NULL;
    } else if (start) {
        return xasprintf("%s: start-queue %d and n_rxq %d need queues %d to "
                         "%d, but the device has %d receive queue%s", name,
                         start, n, start, start + n - 1, dev_n_rxq,
                         dev_n_rxq == 1 ? "" : "s");
    } else {
        return xasprintf("%s: n_rxq %d exceeds the %d receive queue%s of "
                         "the device", name, n, dev_n_rxq,
                         dev_n_rxq == 1 ? "" : "s");
    }
}

int
netdev_afxdp_construct(struct netdev *netdev)
{
    struct netdev_linux *dev = netdev_linux_cast(netdev);
    struct netdev_afxdp *afxdp;
    int error;

    error = netdev_linux_construct(netdev);
    if (error) {
        return error;
    }

    /* Until reconfigure() knows whether the kernel finishes checksums for
     * the port's sockets, OVS finishes every checksum before it sends
     * packets here.  TSO packets are always segmented first. */
    netdev->ol_flags = 0;

    afxdp = xzalloc(sizeof *afxdp);
    ovs_mutex_lock(&dev->mutex);
    afxdp->requested_n_rxq = 1;
    afxdp->requested_busy_poll_budget = AFXDP_BUSY_POLL_BUDGET;
    afxdp->requested_tx_budget = AFXDP_TX_BUDGET;
    afxdp->requested_mode = AFXDP_MODE_BEST_EFFORT;
    afxdp->requested_ring_size = AFXDP_RING_SIZE;
    afxdp->requested_rx_hash = true;
    afxdp->requested_xdp_xmit = true;
    afxdp->requested_rx_csum = AFXDP_RX_CSUM_AUTO;
    afxdp->requested_tx_csum = true;
    atomic_init(&afxdp->tx_unconfigured, 0);
    atomic_init(&afxdp->xmit_on, false);
    atomic_init(&afxdp->xmit_reason, "off");
    atomic_init(&afxdp->frames_reason, "the port is not set up");
    atomic_count_inc(&afxdp_n_ports);
    dev->afxdp = afxdp;
    ovs_mutex_unlock(&dev->mutex);

    /* No queue until reconfigure() sets the port up. */
    netdev->n_rxq = 0;
    netdev->n_txq = 0;
    netdev_request_reconfigure(netdev);
    return 0;
}

static void
afxdp_teardown(struct netdev_linux *dev)
    OVS_REQUIRES(dev->mutex)
{
    struct netdev_afxdp *afxdp = dev->afxdp;

    /* The XSKMAP holds references to the sockets, and the kernel frees a
     * map some time after its last user is gone: emptied first, it lets
     * the sockets go (and their queues be bound again) as soon as they are
     * closed.  Then the program goes, so that no packet is steered to a
     * socket that is going away. */
    for (int i = 0; afxdp->xdp && i < afxdp->n_queues; i++) {
        afxdp_xdp_clear_socket(afxdp->xdp, i);
    }
    atomic_store_relaxed(&afxdp->xmit_on, false);
    afxdp->xmit_possible = false;
    afxdp->flow_offload = false;
    atomic_store_relaxed(&afxdp->frames_reason, "the port is not set up");
    afxdp->steer_local = false;
    afxdp->rx_partial = false;
    afxdp->tx_csum_meta = false;
    afxdp_xdp_detach(afxdp->xdp);
    afxdp->xdp = NULL;
    for (int i = 0; i < afxdp->n_queues; i++) {
        afxdp_xsk_destroy(afxdp->xsks[i]);
        ovs_spin_destroy(&afxdp->txqs[i].lock);
    }
    free(afxdp->xsks);
    afxdp->xsks = NULL;
    free_cacheline(afxdp->txqs);
    afxdp->txqs = NULL;
    afxdp->n_queues = 0;
    free(afxdp->program);
    afxdp->program = NULL;
    free(afxdp->pass);
    afxdp->pass = NULL;
    free(afxdp->busy_poll_status);
    afxdp->busy_poll_status = NULL;
    free(afxdp->tx_budget_status);
    afxdp->tx_budget_status = NULL;
}

/* Called by the flow offload provider once the port has left the datapath
 * (dpif-netdev has closed its queues), while the provider still holds the
 * netdev for the flows that came in by it: gives the kernel's resources
 * back now, as destruction would, so that the device is free for the next
 * user (the same port added again is a new netdev).  Reconfiguring the
 * netdev sets it up anew. */
void
netdev_afxdp_release(struct netdev *netdev)
{
    struct netdev_linux *dev = netdev_linux_cast(netdev);

    ovs_mutex_lock(&dev->mutex);
    if (dev->afxdp && (dev->afxdp->xdp || dev->afxdp->n_queues)) {
        afxdp_teardown(dev);
        netdev_request_reconfigure(netdev);
    }
    ovs_mutex_unlock(&dev->mutex);
}

void
netdev_afxdp_destruct(struct netdev *netdev)
{
    struct netdev_linux *dev = netdev_linux_cast(netdev);
    struct netdev_afxdp *afxdp = dev->afxdp;

    ovs_mutex_lock(&dev->mutex);
    afxdp_teardown(dev);
    free(afxdp->error);
    free(afxdp->requested_program);
    free(afxdp->requested_pass);
    free(afxdp->requested_steer);
    free(afxdp);
    dev->afxdp = NULL;
    ovs_mutex_unlock(&dev->mutex);
    atomic_count_dec(&afxdp_n_ports);

    netdev_linux_destruct(netdev);
}

/* Returns NULL if afxdp ports can carry packets of MTU 'mtu', otherwise an
 * explanation for device 'name' (to be freed by the caller). */
static char *
afxdp_check_mtu(const char *name, int mtu)
{
    int max_mtu = afxdp_umem_max_packet() - VLAN_ETH_HEADER_LEN;

    if (mtu <= max_mtu) {
        return NULL;
    } else if (afxdp_umem_kernel_has_sg()) {
        return xasprintf("%s: MTU %d is larger than the %d bytes that "
                         "AF_XDP carries in %d chained frames; lower it, "
                         "e.g. with mtu_request", name, mtu, max_mtu,
                         AFXDP_MAX_SEGS);
    } else {
        return xasprintf("%s: MTU %d is larger than the %d bytes an AF_XDP "
                         "frame carries, and this kernel has no multi-buffer "
                         "AF_XDP (Linux 6.6) to chain frames; lower it, "
                         "e.g. with mtu_request", name, mtu, max_mtu);
    }
}

/* Follows the MTU of 'netdev''s device, now 'mtu': packets up to it pass,
 * and a port whose sockets cannot carry them is set up again (and says
 * why, if it cannot be). */
static void
afxdp_set_mtu(struct netdev_linux *dev, int mtu)
    OVS_REQUIRES(dev->mutex)
{
    struct netdev_afxdp *afxdp = dev->afxdp;

    atomic_store_relaxed(&afxdp->max_frame, mtu + VLAN_ETH_HEADER_LEN);
    if (mtu == afxdp->requested_mtu) {
        return;
    }
    afxdp->requested_mtu = mtu;
    if (afxdp->n_queues
        ? mtu > AFXDP_FRAME_MTU && !afxdp->multi_buffer
        : afxdp->error != NULL) {
        netdev_request_reconfigure(&dev->up);
    }
}

/* Called by netdev-linux before it sets the device's MTU to 'mtu'.
 * Returns EINVAL if AF_XDP cannot carry it.  Changes nothing: the port
 * follows the MTU once the kernel has taken it (netdev_afxdp_mtu_changed()),
 * so that one the kernel refuses leaves the port as it was. */
int
netdev_afxdp_verify_mtu_size(const struct netdev *netdev, int mtu)
{
    static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 20);
    char *err = afxdp_check_mtu(netdev_get_name(netdev), mtu);

    if (err) {
        VLOG_WARN_RL(&rl, "%s", err);
        free(err);
        return EINVAL;
    }
    return 0;
}

/* Called by netdev-linux, under the netdev_linux mutex, when the device
 * has taken MTU 'mtu': right after netdev-linux set it, or when the kernel
 * reports it, whoever set it.  (The analysis cannot see the caller's mutex
 * as this netdev's.) */
void
netdev_afxdp_mtu_changed(struct netdev *netdev, int mtu)
    OVS_NO_THREAD_SAFETY_ANALYSIS
{
    afxdp_set_mtu(netdev_linux_cast(netdev), mtu);
}

/* Options. */

static int
afxdp_parse_int(const struct netdev *netdev, const struct smap *args,
                const char *key, int dflt, int min, int max, int *value,
                char **errp)
{
    const char *s = smap_get(args, key);

    if (!s) {
        *value = dflt;
        return 0;
    }
    if (!str_to_int(s, 10, value) || *value < min || *value > max) {
        *errp = xasprintf("%s: invalid %s '%s': expected an integer from "
                          "%d to %d", netdev_get_name(netdev), key, s,
                          min, max);
        return EINVAL;
    }
    return 0;
}

/* Parses option 'key' of 'args' as "true" or "false" ('def' if absent)
 * into '*value'.  Returns 0, or EINVAL with an explanation in '*errp'. */
static int
afxdp_parse_bool(const struct netdev *netdev, const struct smap *args,
                 const char *key, bool def, bool *value, char **errp)
{
    const char *s = smap_get_def(args, key, def ? "true" : "false");

    if (!strcmp(s, "true")) {
        *value = true;
    } else if (!strcmp(s, "false")) {
        *value = false;
    } else {
        *errp = xasprintf("%s: invalid %s '%s': expected true or false",
                          netdev_get_name(netdev), key, s);
        return EINVAL;
    }
    return 0;
}

/* Parses options:rx-csum-partial of 'args' into '*rx_csum'.  Returns 0,
 * or EINVAL with an explanation in '*errp'. */
static int
afxdp_parse_rx_csum(const struct netdev *netdev, const struct smap *args,
                    enum afxdp_rx_csum *rx_csum, char **errp)
{
    const char *s = smap_get_def(args, "rx-csum-partial", "auto");
    int i = afxdp_name_index(afxdp_rx_csum_names,
                             ARRAY_SIZE(afxdp_rx_csum_names), s);

    if (i >= 0) {
        *rx_csum = i;
        return 0;
    }
    *errp = xasprintf("%s: invalid rx-csum-partial '%s': expected auto, "
                      "true or false", netdev_get_name(netdev), s);
    return EINVAL;
}

/* Adds a steering rule for EtherType 'type', IP protocol 'proto' and
 * destination port 'port' (host byte order; 0 for any) to 'steer'.
 * Returns false if there are too many. */
static bool
afxdp_steer_add(struct afxdp_steer *steer, uint16_t type, uint8_t proto,
                uint16_t port)
{
    if (steer->n_rules >= AFXDP_STEER_MAX_RULES) {
        return false;
    }
    steer->rules[steer->n_rules++] = (struct afxdp_steer_rule) {
        .ethertype = htons(type),
        .proto = proto,
        .port = htons(port),
    };
    steer->flags |= AFXDP_STEER_RULES;
    return true;
}

/* Parses one item of options:pass-to-kernel into 'steer'.  Returns false
 * if it is not one. */
static bool
afxdp_parse_pass_item(const char *item, struct afxdp_steer *steer,
                      bool *too_many)
{
    static const struct {
        const char *name;
        uint8_t proto;
        bool ports;
        bool ipv4, ipv6;
    } protos[] = {
        { "tcp", IPPROTO_TCP, true, true, true },
        { "udp", IPPROTO_UDP, true, true, true },
        { "sctp", IPPROTO_SCTP, true, true, true },
        { "icmp", IPPROTO_ICMP, false, true, false },
        { "icmpv6", IPPROTO_ICMPV6, false, false, true },
        { "proto", 0, false, true, true },
    };
    const char *colon = strchr(item, ':');
    size_t len = colon ? colon - item : strlen(item);
    unsigned int value;

    *too_many = false;
    if (!strcmp(item, "local")) {
        steer->flags |= AFXDP_STEER_LOCAL;
        return true;
    }
    if (!strncmp(item, "0x", 2)) {
        if (str_to_uint(item, 16, &value)
            && value >= ETH_TYPE_MIN && value <= UINT16_MAX) {
            *too_many = !afxdp_steer_add(steer, value, 0, 0);
            return true;
        }
        return false;
    }
    for (size_t i = 0; i < ARRAY_SIZE(protos); i++) {
        uint8_t proto = protos[i].proto;
        uint16_t port = 0;

        if (strlen(protos[i].name) != len
            || strncmp(item, protos[i].name, len)) {
            continue;
        }
        if (!proto) {
            /* proto:N, any IP protocol by number. */
            if (!colon || !str_to_uint(colon + 1, 10, &value)
                || !value || value > UINT8_MAX) {
                return false;
            }
            proto = value;
        } else if (colon) {
            if (!protos[i].ports || !str_to_uint(colon + 1, 10, &value)
                || !value || value > UINT16_MAX) {
                return false;
            }
            port = value;
        }
        *too_many = ((protos[i].ipv4
                      && !afxdp_steer_add(steer, ETH_TYPE_IP, proto, port))
                     || (protos[i].ipv6
                         && !afxdp_steer_add(steer, ETH_TYPE_IPV6, proto,
                                             port)));
        return true;
    }
    return false;
}

/* Parses options:pass-to-kernel value 's' into a new '*steerp'.  Returns 0,
 * or EINVAL with an explanation in '*errp'. */
static int
afxdp_parse_pass(const struct netdev *netdev, const char *s,
                 struct afxdp_steer **steerp, char **errp)
{
    struct afxdp_steer *steer = xzalloc(sizeof *steer);
    char *copy = xstrdup(s);
    char *save_ptr = NULL;
    int error = 0;

    for (char *item = strtok_r(copy, ", ", &save_ptr); item;
         item = strtok_r(NULL, ", ", &save_ptr)) {
        bool too_many;

        if (!afxdp_parse_pass_item(item, steer, &too_many)) {
            *errp = xasprintf("%s: invalid pass-to-kernel item '%s': "
                              "expected local, an EtherType (0x88cc), tcp, "
                              "udp or sctp with an optional :PORT, icmp, "
                              "icmpv6 or proto:NUMBER",
                              netdev_get_name(netdev), item);
            error = EINVAL;
            break;
        } else if (too_many) {
            *errp = xasprintf("%s: pass-to-kernel has more than %d rules",
                              netdev_get_name(netdev),
                              AFXDP_STEER_MAX_RULES);
            error = EINVAL;
            break;
        }
    }
    free(copy);
    if (error) {
        free(steer);
        steer = NULL;
    }
    *steerp = steer;
    return error;
}

int
netdev_afxdp_set_config(struct netdev *netdev, const struct smap *args,
                        char **errp)
{
    struct netdev_linux *dev = netdev_linux_cast(netdev);
    struct netdev_afxdp *afxdp = dev->afxdp;
    const char *name = netdev_get_name(netdev);
    const char *mode_s, *program, *pass;
    struct afxdp_steer *steer = NULL;
    enum afxdp_rx_csum rx_csum;
    enum afxdp_mode mode;
    bool rx_hash, xdp_xmit, tx_csum, busy_poll;
    int n_rxq, start_queue, ring_size;
    int busy_poll_budget, tx_budget;
    struct smap_node *node;
    int error;

    SMAP_FOR_EACH (node, args) {
        if (afxdp_name_index(afxdp_option_names,
                             ARRAY_SIZE(afxdp_option_names), node->key) < 0) {
            struct ds known = DS_EMPTY_INITIALIZER;

            for (size_t i = 0; i < ARRAY_SIZE(afxdp_option_names); i++) {
                ds_put_format(&known, "%s%s", i ? ", " : "",
                              afxdp_option_names[i]);
            }
            *errp = xasprintf("%s: unknown option '%s'; afxdp ports take %s",
                              name, node->key, ds_cstr(&known));
            ds_destroy(&known);
            return EINVAL;
        }
    }

    error = afxdp_parse_int(netdev, args, "n_rxq", 1, 1, AFXDP_MAX_QUEUES,
                            &n_rxq, errp);
    if (!error) {
        error = afxdp_parse_int(netdev, args, "start-queue", 0, 0,
                                AFXDP_MAX_QUEUE_END - n_rxq, &start_queue,
                                errp);
    }
    if (!error) {
        error = afxdp_parse_int(netdev, args, "ring-size", AFXDP_RING_SIZE,
                                64, AFXDP_RING_SIZE_MAX, &ring_size, errp);
    }
    if (!error) {
        error = afxdp_parse_int(netdev, args, "busy-poll-budget",
                                AFXDP_BUSY_POLL_BUDGET, 1,
                                AFXDP_BUSY_POLL_BUDGET_MAX,
                                &busy_poll_budget, errp);
    }
    if (!error) {
        error = afxdp_parse_int(netdev, args, "tx-budget", AFXDP_TX_BUDGET,
                                AFXDP_TX_BUDGET, AFXDP_RING_SIZE_MAX,
                                &tx_budget, errp);
    }
    if (error) {
        return error;
    }
    if (!is_pow2(ring_size)) {
        *errp = xasprintf("%s: invalid ring-size %d: not a power of 2",
                          name, ring_size);
        return EINVAL;
    }
    if (tx_budget > ring_size) {
        *errp = xasprintf("%s: tx-budget %d exceeds the ring-size, %d",
                          name, tx_budget, ring_size);
        return EINVAL;
    }

    mode_s = smap_get_def(args, "xdp-mode", "best-effort");
    if (!afxdp_mode_from_string(mode_s, &mode)) {
        *errp = xasprintf("%s: unknown xdp-mode '%s': expected best-effort, "
                          "native-with-zerocopy, native or generic",
                          name, mode_s);
        return EINVAL;
    }

    error = afxdp_parse_bool(netdev, args, "rx-hash", true, &rx_hash, errp);
    if (!error) {
        error = afxdp_parse_bool(netdev, args, "xdp-xmit", true, &xdp_xmit,
                                 errp);
    }
    if (!error) {
        error = afxdp_parse_bool(netdev, args, "tx-csum-offload", true,
                                 &tx_csum, errp);
    }
    if (!error) {
        error = afxdp_parse_bool(netdev, args, "busy-poll", false,
                                 &busy_poll, errp);
    }
    if (!error) {
        error = afxdp_parse_rx_csum(netdev, args, &rx_csum, errp);
    }
    if (error) {
        return error;
    }

    program = smap_get(args, "xdp-program");
    if (program && !*program) {
        program = NULL;
    }
    if (program && access(program, R_OK)) {
        *errp = xasprintf("%s: cannot read xdp-program %s (%s)", name,
                          program, ovs_strerror(errno));
        return EINVAL;
    }

    pass = smap_get(args, "pass-to-kernel");
    if (pass && !pass[strspn(pass, ", ")]) {
        pass = NULL;
    }
    if (pass) {
        if (program) {
            *errp = xasprintf("%s: pass-to-kernel is done by the built-in "
                              "XDP program, and xdp-program replaces it",
                              name);
            return EINVAL;
        }
        error = afxdp_parse_pass(netdev, pass, &steer, errp);
        if (error) {
            return error;
        }
    }

    ovs_mutex_lock(&dev->mutex);
    /* A queue range is refused if the device lacks it when it is asked
     * for.  One that the device has come to lack since (a driver bound
     * again, with its default channels) is the port's to wait for, with
     * the reason in its status: refusing it here would make the bridge
     * delete the port. */
    if (n_rxq != afxdp->requested_n_rxq
        || start_queue != afxdp->requested_start_queue) {
        *errp = afxdp_check_queues(name, start_queue, n_rxq);
        if (*errp) {
            ovs_mutex_unlock(&dev->mutex);
            free(steer);
            return EINVAL;
        }
    }
    if (!afxdp->xdp) {
        /* Not set up yet: a program already on the interface is someone
         * else's, and it stays. */
        int ifindex = if_nametoindex(name);
        uint32_t prog_id;

        if (ifindex && !afxdp_xdp_query(ifindex, &prog_id) && prog_id) {
            ovs_mutex_unlock(&dev->mutex);
            free(steer);
            *errp = xasprintf("%s: the interface already has an XDP program "
                              "(id %"PRIu32") that afxdp did not attach; it "
                              "is left in place", name, prog_id);
            return EBUSY;
        }
    }
    if (n_rxq != afxdp->requested_n_rxq
        || start_queue != afxdp->requested_start_queue
        || busy_poll != afxdp->requested_busy_poll
        || busy_poll_budget != afxdp->requested_busy_poll_budget
        || tx_budget != afxdp->requested_tx_budget
        || !nullable_string_is_equal(pass, afxdp->requested_pass)
        || mode != afxdp->requested_mode
        || ring_size != afxdp->requested_ring_size
        || rx_hash != afxdp->requested_rx_hash
        || xdp_xmit != afxdp->requested_xdp_xmit
        || rx_csum != afxdp->requested_rx_csum
        || tx_csum != afxdp->requested_tx_csum
        || !nullable_string_is_equal(program, afxdp->requested_program)) {
        afxdp->requested_n_rxq = n_rxq;
        afxdp->requested_start_queue = start_queue;
        afxdp->requested_busy_poll = busy_poll;
        afxdp->requested_busy_poll_budget = busy_poll_budget;
        afxdp->requested_tx_budget = tx_budget;
        free(afxdp->requested_pass);
        afxdp->requested_pass = nullable_xstrdup(pass);
        free(afxdp->requested_steer);
        afxdp->requested_steer = steer;
        steer = NULL;
        afxdp->requested_mode = mode;
        afxdp->requested_ring_size = ring_size;
        afxdp->requested_rx_hash = rx_hash;
        afxdp->requested_xdp_xmit = xdp_xmit;
        afxdp->requested_rx_csum = rx_csum;
        afxdp->requested_tx_csum = tx_csum;
        free(afxdp->requested_program);
        afxdp->requested_program = nullable_xstrdup(program);
        netdev_request_reconfigure(netdev);
    }
    ovs_mutex_unlock(&dev->mutex);
    free(steer);
    return 0;
}

int
netdev_afxdp_get_config(const struct netdev *netdev, struct smap *args)
{
    struct netdev_linux *dev = netdev_linux_cast(netdev);
    struct netdev_afxdp *afxdp = dev->afxdp;

    ovs_mutex_lock(&dev->mutex);
    smap_add_format(args, "n_rxq", "%d", afxdp->requested_n_rxq);
    if (afxdp->requested_start_queue) {
        smap_add_format(args, "start-queue", "%d",
                        afxdp->requested_start_queue);
    }
    smap_add(args, "xdp-mode", afxdp_mode_names[afxdp->requested_mode]);
    smap_add_format(args, "ring-size", "%"PRIu32,
                    afxdp->requested_ring_size);
    if (!afxdp->requested_rx_hash) {
        smap_add(args, "rx-hash", "false");
    }
    if (!afxdp->requested_xdp_xmit) {
        smap_add(args, "xdp-xmit", "false");
    }
    if (afxdp->requested_rx_csum != AFXDP_RX_CSUM_AUTO) {
        smap_add(args, "rx-csum-partial",
                 afxdp_rx_csum_names[afxdp->requested_rx_csum]);
    }
    if (!afxdp->requested_tx_csum) {
        smap_add(args, "tx-csum-offload", "false");
    }
    if (afxdp->requested_program) {
        smap_add(args, "xdp-program", afxdp->requested_program);
    }
    if (afxdp->requested_busy_poll) {
        smap_add(args, "busy-poll", "true");
    }
    if (afxdp->requested_busy_poll_budget != AFXDP_BUSY_POLL_BUDGET) {
        smap_add_format(args, "busy-poll-budget", "%d",
                        afxdp->requested_busy_poll_budget);
    }
    if (afxdp->requested_tx_budget != AFXDP_TX_BUDGET) {
        smap_add_format(args, "tx-budget", "%d", afxdp->requested_tx_budget);
    }
    if (afxdp->requested_pass) {
        smap_add(args, "pass-to-kernel", afxdp->requested_pass);
    }
    ovs_mutex_unlock(&dev->mutex);
    return 0;
}

/* Decides whether the freshly set up port of 'dev' sends through XDP
 * transmit (see afxdp-xdp.h): as requested, where the program allows it,
 * with copy-mode sockets (a zero-copy socket transmits without a copy)
 * and while the device takes XDP frames. */
static void
afxdp_xmit_setup(struct netdev_linux *dev)
    OVS_REQUIRES(dev->mutex)
{
    struct netdev_afxdp *afxdp = dev->afxdp;
    const char *reason;

    afxdp->xdp_xmit = afxdp->requested_xdp_xmit;
    if (!afxdp->xdp_xmit) {
        reason = "off";
    } else if (afxdp->zero_copy) {
        reason = "zero-copy sockets";
    } else {
        reason = afxdp_xdp_xmit_unsupported(afxdp->xdp);
        afxdp->xmit_possible = !reason;
        if (!reason) {
            reason = afxdp_xdp_xmit_obstacle(afxdp->xdp);
        }
    }
    atomic_store_relaxed(&afxdp->xmit_reason, reason);
    atomic_store_relaxed(&afxdp->xmit_on, !reason);
}

/* Asks the kernel whether the device of 'netdev', which may use XDP
 * transmit, still takes XDP frames (for veth: whether its peer runs an XDP
 * program or GRO), and publishes the answer to the senders.  In the main
 * thread, every AFXDP_RECHECK_MS (netdev_afxdp_run()): the request
 * takes the RTNL lock, which a sender must not wait for. */
static void
afxdp_xmit_recheck(struct netdev *netdev, struct netdev_afxdp *afxdp)
{
    const char *reason;
    bool was_on;

    reason = afxdp_xdp_xmit_obstacle(afxdp->xdp);
    atomic_store_relaxed(&afxdp->xmit_reason, reason);
    atomic_read_relaxed(&afxdp->xmit_on, &was_on);
    if (was_on != !reason) {
        atomic_store_relaxed(&afxdp->xmit_on, !reason);
        if (reason) {
            VLOG_INFO("%s: XDP transmit stopped: %s",
                      netdev_get_name(netdev), reason);
        } else {
            VLOG_INFO("%s: XDP transmit resumed", netdev_get_name(netdev));
        }
        /* For the status in the database. */
        netdev_change_seq_changed(netdev);
    }
}

/* Why flows that run in XDP cannot send to the device of 'afxdp' (set up),
 * or NULL if they can.  Not into a device with zero-copy sockets: XDP
 * frames redirected there share its queues with the sockets' transmit,
 * and virtio_net (Linux 7.2) crashed under that in make check-nic (a NULL
 * virtqueue in its XDP transmit, from a veth's program). */
static const char *
afxdp_frames_obstacle(const struct netdev_afxdp *afxdp)
{
    return (afxdp->zero_copy ? "zero-copy sockets on the device"
            : afxdp_xdp_frames_obstacle(afxdp->ifindex));
}

/* Asks the kernel whether the device of 'netdev', whose program runs
 * offloaded flows, takes XDP frames, which flows that send to it need.  In
 * the main thread, every AFXDP_RECHECK_MS, as for XDP transmit: the flow
 * offload provider reads the answer. */
static void
afxdp_frames_recheck(struct netdev *netdev, struct netdev_afxdp *afxdp)
{
    const char *reason = afxdp_frames_obstacle(afxdp);
    const char *old;

    atomic_read_relaxed(&afxdp->frames_reason, &old);
    if (old != reason) {
        atomic_store_relaxed(&afxdp->frames_reason, reason);
        netdev_change_seq_changed(netdev);
    }
}

/* Gives the program of the port of 'dev', which steers packets for the
 * device's own addresses to the kernel, the addresses the device has now.
 * In the main thread: when the port is set up, then every
 * AFXDP_RECHECK_MS (netdev_afxdp_run()). */
static void
afxdp_steer_sync(struct netdev_linux *dev)
    OVS_REQUIRES(dev->mutex)
{
    static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(1, 5);
    const char *name = netdev_get_name(&dev->up);
    struct in6_addr *addrs = NULL, *masks = NULL;
    bool changed;
    int n = 0;
    int error;

    /* OVS keeps the host's addresses cached, and refreshes them when the
     * kernel reports a change. */
    if (netdev_get_addrs(name, &addrs, &masks, &n)) {
        n = 0;
    }
    error = afxdp_xdp_steer_addrs(dev->afxdp->xdp, addrs, n, &changed);
    if (error) {
        VLOG_WARN_RL(&rl, "%s: cannot steer all of the device's addresses "
                     "to the kernel (%s)", name, ovs_strerror(error));
    }
    if (changed) {
        VLOG_INFO("%s: %"PRIuSIZE" of the device's addresses steered to the "
                  "kernel", name, afxdp_xdp_n_steer_addrs(dev->afxdp->xdp));
        /* For the status in the database. */
        netdev_change_seq_changed(&dev->up);
    }
    free(addrs);
    free(masks);
}

/* Has each busy polling socket of 'afxdp' busy poll if the kernel has
 * given it a NAPI context, which before Linux 6.13 it does when the socket
 * receives its first packet, and later at bind for zero-copy sockets only.
 * Returns a digest of what the status says of them. */
static uint64_t
afxdp_update_busy_poll(struct netdev_afxdp *afxdp)
{
    uint64_t digest = 0;

    for (int i = 0; i < afxdp->n_queues; i++) {
        uint32_t id = afxdp_xsk_update_busy_poll(afxdp->xsks[i]);
        bool received = counter_get(&afxdp->txqs[i].rx_packets) != 0;

        digest = digest * 0x100000001b3ULL + id * 2 + received;
    }
    return digest;
}

/* Rechecks every port of 'class' that may use XDP transmit, updates the
 * addresses of those that steer for them, and the status of those that
 * busy poll once their NAPI ids change. */
static void
afxdp_recheck_class(const struct netdev_class *class)
{
    struct shash_node *node;
    struct shash devices;

    shash_init(&devices);
    netdev_get_devices(class, &devices);
    SHASH_FOR_EACH (node, &devices) {
        struct netdev *netdev = node->data;
        struct netdev_linux *dev = netdev_linux_cast(netdev);
        const char *name = netdev_get_name(netdev);

        ovs_mutex_lock(&dev->mutex);
        if (dev->afxdp && dev->afxdp->device_digest
                          != afxdp_device_digest(name)) {
            /* Its device went, came back or changed its queues. */
            netdev_request_reconfigure(netdev);
        } else if (dev->afxdp && dev->afxdp->n_queues) {
            if (dev->afxdp->xmit_possible) {
                afxdp_xmit_recheck(netdev, dev->afxdp);
            }
            if (dev->afxdp->steer_local) {
                afxdp_steer_sync(dev);
            }
            if (dev->afxdp->flow_offload) {
                afxdp_frames_recheck(netdev, dev->afxdp);
            }
            if (dev->afxdp->busy_poll_on) {
                uint64_t digest = afxdp_update_busy_poll(dev->afxdp);

                if (digest != dev->afxdp->napi_ids_seen) {
                    dev->afxdp->napi_ids_seen = digest;
                    netdev_change_seq_changed(netdev);
                }
            }
        }
        ovs_mutex_unlock(&dev->mutex);
        netdev_close(netdev);
    }
    shash_destroy(&devices);
}

/* Called by netdev-linux from the main loop. */
void
netdev_afxdp_run(void)
{
    long long int now;

    afxdp_umem_run();
    if (!atomic_count_get(&afxdp_n_ports)) {
        return;
    }
    now = time_msec();
    if (now >= afxdp_next_check) {
        afxdp_next_check = now + AFXDP_RECHECK_MS;
        afxdp_recheck_class(&netdev_afxdp_class);
        afxdp_recheck_class(&netdev_afxdp_nonpmd_class);
    }
}

void
netdev_afxdp_wait(void)
{
    afxdp_umem_wait();
    if (atomic_count_get(&afxdp_n_ports)) {
        poll_timer_wait_until(afxdp_next_check);
    }
}

/* Returns true if the driver of device 'name' is one whose received packets
 * come from senders on this host, which may leave checksums partial: veth
 * (containers) and tun/tap (VMs). */
static bool
afxdp_device_has_local_senders(const char *name)
{
    struct ethtool_drvinfo info;
    struct ifreq ifr;

    memset(&info, 0, sizeof info);
    memset(&ifr, 0, sizeof ifr);
    info.cmd = ETHTOOL_GDRVINFO;
    ifr.ifr_data = (void *) &info;
    if (af_inet_ifreq_ioctl(name, &ifr, SIOCETHTOOL, "ETHTOOL_GDRVINFO")) {
        return false;
    }
    return !strcmp(info.driver, "veth") || !strcmp(info.driver, "tun");
}

/* Decides, for the freshly set up port of 'dev' on device 'name' (index
 * 'ifindex'), whether received packets are examined for partial checksums
 * and whether the kernel finishes the checksums of packets sent. */
static void
afxdp_csum_setup(struct netdev_linux *dev, const char *name, int ifindex)
    OVS_REQUIRES(dev->mutex)
{
    struct netdev_afxdp *afxdp = dev->afxdp;

    afxdp->rx_csum = afxdp->requested_rx_csum;
    afxdp->rx_partial_reason = NULL;
    if (afxdp->rx_csum == AFXDP_RX_CSUM_AUTO) {
        afxdp->rx_partial = afxdp_device_has_local_senders(name);
        if (!afxdp->rx_partial) {
            afxdp->rx_partial_reason = "not a veth or tap device";
        }
    } else {
        afxdp->rx_partial = afxdp->rx_csum == AFXDP_RX_CSUM_ON;
    }

    afxdp->tx_csum = afxdp->requested_tx_csum;
    afxdp->tx_csum_reason = (!afxdp->tx_csum ? NULL
                             : !afxdp_xsk_has_tx_meta(afxdp->xsks[0])
                             ? "kernel has no AF_XDP TX metadata"
                             : afxdp->zero_copy
                             ? afxdp_xdp_probe_xsk_csum(ifindex)
                             : NULL);
    afxdp->tx_csum_meta = afxdp->tx_csum && !afxdp->tx_csum_reason;
}

/* Reads /sys/class/net/'name'/'file', an integer.  Returns it, or -1. */
static long long int
afxdp_read_sysfs(const char *name, const char *file)
{
    char *path = xasprintf("%s/%s/%s", "/sys/class/net", name, file);
    long long int value = -1;
    FILE *stream = fopen(path, "r");

    if (stream) {
        if (fscanf(stream, "%lld", &value) != 1) {
            value = -1;
        }
        fclose(stream);
    }
    free(path);
    return value;
}

/* Turns preferred busy polling on for the sockets of the freshly set up
 * port of 'dev' on device 'name', if requested, and says in the status
 * whether it is in effect and whether the device leaves NAPI to it. */
static void
afxdp_busy_poll_setup(struct netdev_linux *dev, const char *name)
    OVS_REQUIRES(dev->mutex)
{
    struct netdev_afxdp *afxdp = dev->afxdp;
    long long int defer, timeout;
    int error = 0;

    afxdp->busy_poll = afxdp->requested_busy_poll;
    afxdp->busy_poll_budget = afxdp->requested_busy_poll_budget;
    afxdp->busy_poll_on = false;
    afxdp->napi_ids_seen = 0;
    if (!afxdp->busy_poll) {
        afxdp->busy_poll_status = xstrdup("off");
        return;
    }
    for (int i = 0; !error && i < afxdp->n_queues; i++) {
        error = afxdp_xsk_set_busy_poll(afxdp->xsks[i],
                                        afxdp->busy_poll_budget);
    }
    if (error) {
        /* Sockets set before the failure busy poll: harmless, each such
         * poll does what softirq would have done. */
        afxdp->busy_poll_status = xasprintf(
            "unavailable: %s",
            error == ENOPROTOOPT
            ? "kernel has no preferred busy polling (Linux 5.11)"
            : error == EPERM ? "needs CAP_NET_ADMIN"
            : ovs_strerror(error));
        VLOG_WARN("%s: busy polling %s", name, afxdp->busy_poll_status);
        return;
    }

    /* Without both, the device's interrupts (or, on veth, its peer's
     * transmits) keep scheduling NAPI in softirq as well. */
    afxdp->busy_poll_on = true;
    defer = afxdp_read_sysfs(name, "napi_defer_hard_irqs");
    timeout = afxdp_read_sysfs(name, "gro_flush_timeout");
    afxdp->busy_poll_status = xasprintf(
        "on: budget %d%s", afxdp->busy_poll_budget,
        defer > 0 && timeout > 0 ? ""
        : "; the device's napi_defer_hard_irqs and gro_flush_timeout are "
          "not both set, so softirq polls too");
}

/* Adds status:busy-poll of 'afxdp' to 'args': as decided at setup and,
 * when it is on, the NAPI context each queue's busy polling runs. */
static void
afxdp_busy_poll_status(const struct netdev_linux *dev, struct smap *args)
    OVS_REQUIRES(dev->mutex)
{
    const struct netdev_afxdp *afxdp = dev->afxdp;
    struct ds s = DS_EMPTY_INITIALIZER;

    ds_put_cstr(&s, afxdp->busy_poll_status);
    if (afxdp->busy_poll_on) {
        bool none = false;

        ds_put_cstr(&s, "; NAPI ids");
        for (int i = 0; i < afxdp->n_queues; i++) {
            uint32_t id = afxdp_xsk_napi_id(afxdp->xsks[i]);

            if (id) {
                ds_put_format(&s, " %"PRIu32, id);
            } else if (counter_get(&afxdp->txqs[i].rx_packets)) {
                ds_put_cstr(&s, " none");
                none = true;
            } else {
                ds_put_cstr(&s, " none yet");
            }
        }
        if (none) {
            ds_put_cstr(&s, "; a queue without one is not busy polled (since "
                        "Linux 6.13, only zero-copy sockets get one)");
        }
    }
    smap_add(args, "busy-poll", ds_cstr(&s));
    ds_destroy(&s);
}

/* Lets each copy-mode transmit call of the freshly set up port of 'dev'
 * on device 'name' send up to its tx-budget descriptors, where the kernel
 * allows it, and says in the status what it sends. */
static void
afxdp_tx_budget_setup(struct netdev_linux *dev, const char *name)
    OVS_REQUIRES(dev->mutex)
{
    struct netdev_afxdp *afxdp = dev->afxdp;
    int budget = afxdp->requested_tx_budget;
    int error = 0;

    afxdp->tx_budget = budget;
    if (afxdp->zero_copy) {
        afxdp->tx_budget_status = xstrdup("the driver's (zero-copy)");
        return;
    }
    if (!afxdp_umem_kernel_has_tx_budget()) {
        afxdp->tx_budget_status = xasprintf(
            "%d: kernel has no XDP_MAX_TX_SKB_BUDGET (Linux 6.17)",
            AFXDP_TX_BUDGET);
        if (budget != AFXDP_TX_BUDGET) {
            VLOG_WARN("%s: tx-budget %s", name, afxdp->tx_budget_status);
        }
        return;
    }
    for (int i = 0; !error && i < afxdp->n_queues; i++) {
        error = afxdp_xsk_set_tx_budget(afxdp->xsks[i], budget);
    }
    if (error) {
        /* The sockets set before the failure keep their budget: only the
         * number of system calls a batch takes differs. */
        afxdp->tx_budget_status = xasprintf("%d: %s", AFXDP_TX_BUDGET,
                                            ovs_strerror(error));
        VLOG_WARN("%s: tx-budget %s", name, afxdp->tx_budget_status);
    } else {
        afxdp->tx_budget_status = xasprintf("%d", budget);
    }
}

/* Sets the port of 'dev' up as requested, one attempt after another, on a
 * device whose MTU is 'mtu'.  Returns 0 or a positive errno with an
 * explanation in '*errp'. */
static int
afxdp_setup(struct netdev_linux *dev, const char *name, int mtu,
            char **errp)
    OVS_REQUIRES(dev->mutex)
{
    struct netdev_afxdp *afxdp = dev->afxdp;
    const struct afxdp_steer *steer = afxdp->requested_steer;
    struct afxdp_attempt attempts[3];
    int n = afxdp->requested_n_rxq;
    int start = afxdp->requested_start_queue;
    int ifindex = if_nametoindex(name);
    struct afxdp_xdp_config xdp_cfg = {
        .path = afxdp->requested_program,
        .rx_hash = afxdp->requested_rx_hash,
        .xmit = afxdp->requested_xdp_xmit,
        .first_queue = start,
        .n_queues = n,
        .steer = steer ? steer->flags : 0,
    };
    size_t n_attempts;
    int error = 0;

    if (!ifindex) {
        error = errno;
        *errp = xasprintf("%s: no such interface (%s)", name,
                          ovs_strerror(error));
        return error;
    }
    afxdp_promisc_follow(afxdp, name, ifindex);
    n_attempts = afxdp_attempts(afxdp->requested_mode,
                                (afxdp->requested_mode
                                 == AFXDP_MODE_BEST_EFFORT
                                 ? afxdp_xdp_probe_zero_copy(ifindex) : -1),
                                attempts);
    if (!mtu) {
        mtu = ETH_PAYLOAD_MAX;
    }
    atomic_store_relaxed(&afxdp->max_frame, mtu + VLAN_ETH_HEADER_LEN);
    afxdp->requested_mtu = mtu;
    *errp = afxdp_check_mtu(name, mtu);
    if (*errp) {
        return EINVAL;
    }
    /* The device may have lost queues since the options were checked (a
     * driver reloaded with its default channels): then the port waits,
     * without an XDP program, which some drivers (virtio_net) would take
     * as a reason to refuse the channel change that it waits for. */
    *errp = afxdp_check_queues(name, start, n);
    if (*errp) {
        return EINVAL;
    }

    for (size_t a = 0; a < n_attempts; a++) {
        char *err = NULL;

        afxdp->xsks = xcalloc(n, sizeof *afxdp->xsks);
        afxdp->txqs = xzalloc_cacheline(n * sizeof *afxdp->txqs);
        for (int i = 0; i < n; i++) {
            ovs_spin_init(&afxdp->txqs[i].lock);
        }
        afxdp->n_queues = n;

        xdp_cfg.attach = attempts[a].attach;
        error = afxdp_xdp_attach(name, ifindex, &xdp_cfg, &afxdp->xdp, &err);
        if (!error && steer && steer->n_rules) {
            error = afxdp_xdp_steer_rules(afxdp->xdp, steer->rules,
                                          steer->n_rules);
            if (error) {
                err = xasprintf("%s: cannot set up pass-to-kernel (%s)",
                                name, ovs_strerror(error));
            }
        }
        afxdp->zero_copy = true;
        afxdp->multi_buffer = true;
        for (int i = 0; !error && i < n; i++) {
            error = afxdp_xsk_create(name, ifindex, start + i,
                                     attempts[a].copy,
                                     afxdp->requested_ring_size,
                                     mtu > AFXDP_FRAME_MTU,
                                     &afxdp->xsks[i], &err);
            if (!error) {
                afxdp->zero_copy &= afxdp_xsk_is_zero_copy(afxdp->xsks[i]);
                afxdp->multi_buffer &= afxdp_xsk_has_sg(afxdp->xsks[i]);
                error = afxdp_xdp_set_socket(afxdp->xdp, i,
                                             afxdp_xsk_fd(afxdp->xsks[i]));
                if (error) {
                    err = xasprintf("%s: cannot add the socket of queue %d "
                                    "to the XSKMAP (%s)", name, i,
                                    ovs_strerror(error));
                }
            }
        }

        if (!error) {
            free(*errp);
            *errp = NULL;
            afxdp->attach = attempts[a].attach;
            afxdp->mode = afxdp->requested_mode;
            afxdp->ring_size = afxdp->requested_ring_size;
            afxdp->rx_hash = afxdp->requested_rx_hash;
            afxdp->rx_meta = afxdp_xdp_has_rx_hash(afxdp->xdp);
            afxdp->program = nullable_xstrdup(afxdp->requested_program);
            afxdp->start_queue = start;
            afxdp_xmit_setup(dev);
            afxdp_csum_setup(dev, name, ifindex);
            afxdp_busy_poll_setup(dev, name);
            afxdp_tx_budget_setup(dev, name);
            afxdp->pass = nullable_xstrdup(afxdp->requested_pass);
            afxdp->steer_local = steer && steer->flags & AFXDP_STEER_LOCAL;
            if (afxdp->steer_local) {
                afxdp_steer_sync(dev);
            }
            afxdp->flow_offload = (afxdp->attach == AFXDP_XDP_NATIVE
                                   && !afxdp->program
                                   && afxdp_xdp_has_flow_table(afxdp->xdp));
            afxdp->ifindex = ifindex;
            if (afxdp->flow_offload) {
                atomic_store_relaxed(&afxdp->frames_reason,
                                     afxdp_frames_obstacle(afxdp));
            }
            /* A veth or tun driver counts what its XDP program fails to
             * redirect (a socket without room) among its own drops. */
            afxdp->kernel_counts_xsk_drops
                = (afxdp->attach == AFXDP_XDP_NATIVE
                   && afxdp_device_has_local_senders(name));
            return 0;
        }

        afxdp_teardown(dev);
        if (*errp) {
            char *both = xasprintf("%s; %s", *errp, err);

            free(*errp);
            free(err);
            *errp = both;
        } else {
            *errp = err;
        }
        if (error == EBUSY) {
            /* Someone else's program, or a queue in use: another mode
             * would not help. */
            break;
        }
    }
    return error;
}

static bool
afxdp_config_current(const struct netdev_linux *dev)
    OVS_REQUIRES(dev->mutex)
{
    const struct netdev_afxdp *afxdp = dev->afxdp;

    return (afxdp->n_queues
            && (afxdp->device_digest
                == afxdp_device_digest(netdev_get_name(&dev->up)))
            && afxdp->n_queues == afxdp->requested_n_rxq
            && afxdp->start_queue == afxdp->requested_start_queue
            && afxdp->busy_poll == afxdp->requested_busy_poll
            && afxdp->busy_poll_budget == afxdp->requested_busy_poll_budget
            && afxdp->tx_budget == afxdp->requested_tx_budget
            && nullable_string_is_equal(afxdp->pass, afxdp->requested_pass)
            && afxdp->mode == afxdp->requested_mode
            && afxdp->ring_size == afxdp->requested_ring_size
            && afxdp->rx_hash == afxdp->requested_rx_hash
            && afxdp->xdp_xmit == afxdp->requested_xdp_xmit
            && afxdp->rx_csum == afxdp->requested_rx_csum
            && afxdp->tx_csum == afxdp->requested_tx_csum
            && (afxdp->multi_buffer
                || afxdp->requested_mtu <= AFXDP_FRAME_MTU)
            && nullable_string_is_equal(afxdp->program,
                                        afxdp->requested_program));
}

int
netdev_afxdp_reconfigure(struct netdev *netdev)
{
    struct netdev_linux *dev = netdev_linux_cast(netdev);
    struct netdev_afxdp *afxdp = dev->afxdp;
    char *err = NULL;
    int error = 0;
    int mtu;

    ovs_mutex_lock(&dev->mutex);
    if (afxdp_config_current(dev)) {
        goto out;
    }

    afxdp_teardown(dev);
    free(afxdp->error);
    afxdp->error = NULL;
    if (netdev_linux_get_mtu__(dev, &mtu)) {
        mtu = 0;                /* Unknown: the attach will tell. */
    }
    afxdp->device_digest = afxdp_device_digest(netdev_get_name(netdev));
    error = afxdp_setup(dev, netdev_get_name(netdev), mtu, &err);
    if (error) {
        /* The port stays, unconfigured: it receives nothing and counts
         * what it is asked to send as dropped, until its configuration
         * changes.  Failing here would make the datapath drop the port and
         * the bridge add it again, and fail again, on every change. */
        VLOG_ERR("%s", err);
        afxdp->error = err;
        error = 0;
    } else {
        VLOG_INFO("%s: %d queue%s, XDP program in %s mode, %s",
                  netdev_get_name(netdev), afxdp->n_queues,
                  afxdp->n_queues == 1 ? "" : "s",
                  afxdp_xdp_attach_name(afxdp->attach),
                  afxdp->zero_copy ? "zero-copy" : "copy mode");
    }
    /* Only what every transmit path of the port honours: the socket asks
     * the kernel, XDP transmit finishes checksums here. */
    netdev->ol_flags = (afxdp->tx_csum_meta
                        ? NETDEV_TX_OFFLOAD_TCP_CKSUM
                          | NETDEV_TX_OFFLOAD_UDP_CKSUM
                        : 0);
    /* The datapath wants at least one queue each way. */
    netdev->n_rxq = MAX(afxdp->n_queues, 1);
    netdev->n_txq = MAX(afxdp->n_queues, 1);
    netdev_change_seq_changed(netdev);

out:
    ovs_mutex_unlock(&dev->mutex);
    return error;
}

/* Data path. */

static void
counter_add(atomic_uint64_t *counter, uint64_t n)
{
    uint64_t value;

    /* One writer at a time: a read and a store, not a read-modify-write. */
    if (n) {
        atomic_read_relaxed(counter, &value);
        atomic_store_relaxed(counter, value + n);
    }
}

static uint64_t
counter_get(const atomic_uint64_t *counter_)
{
    atomic_uint64_t *counter = CONST_CAST(atomic_uint64_t *, counter_);
    uint64_t value;

    atomic_read_relaxed(counter, &value);
    return value;
}

int
netdev_afxdp_rxq_construct(struct netdev_rxq *rxq)
{
    /* Packets come from the port's AF_XDP sockets, not from an AF_PACKET
     * socket of the rxq's own. */
    netdev_rxq_linux_cast(rxq)->fd = -1;
    return 0;
}

void
netdev_afxdp_rxq_destruct(struct netdev_rxq *rxq OVS_UNUSED)
{
}

/* For an afxdp-nonpmd port, polled by the main thread between waits: wakes
 * it when the queue's socket has packets to receive.  Runs in the thread
 * that reconfigures the port, so the socket cannot change meanwhile; a
 * port not set up wakes it when it is reconfigured. */
void
netdev_afxdp_rxq_wait(struct netdev_rxq *rxq)
{
    struct netdev_afxdp *afxdp = netdev_afxdp_of(rxq->netdev);

    if (rxq->queue_id < afxdp->n_queues) {
        poll_fd_wait(afxdp_xsk_fd(afxdp->xsks[rxq->queue_id]), POLLIN);
    }
}

int
netdev_afxdp_rxq_recv(struct netdev_rxq *rxq, struct dp_packet_batch *batch,
                      int *qfill)
{
    struct netdev_afxdp *afxdp = netdev_afxdp_of(rxq->netdev);
    struct afxdp_rx_stats stats;
    struct netdev_afxdp_txq *q;
    int qid = rxq->queue_id;
    uint32_t max_frame;
    int n;

    if (OVS_UNLIKELY(qid >= afxdp->n_queues)) {
        return EAGAIN;
    }
    q = &afxdp->txqs[qid];
    memset(&stats, 0, sizeof stats);
    atomic_read_relaxed(&afxdp->max_frame, &max_frame);
    n = afxdp_xsk_recv(afxdp->xsks[qid], batch, afxdp->rx_meta, max_frame,
                       qfill, &stats);
    if (OVS_UNLIKELY(stats.runt | stats.invalid | stats.over_mtu
                     | stats.multi_buffer)) {
        counter_add(&q->rx_runt, stats.runt);
        counter_add(&q->rx_invalid, stats.invalid);
        counter_add(&q->rx_over_mtu, stats.over_mtu);
        counter_add(&q->rx_multi_buffer, stats.multi_buffer);
    }
    if (!n) {
        /* Every so often while idle, the frames of sent packets go back
         * to the pool: a port that stopped sending would keep them in its
         * completion ring (only if no sender holds the queue), and a
         * thread that stopped receiving would keep its caches' frames
         * from a thread that runs short. */
        if (OVS_UNLIKELY(++q->idle_polls >= AFXDP_RECLAIM_POLLS)) {
            /* A sender holding the queue reclaims it itself; else the
             * next round tries again. */
            q->idle_polls = 0;
            afxdp_umem_poll_caches();
            if (!ovs_spin_trylock(&q->lock)) {
                afxdp_xsk_reclaim(afxdp->xsks[qid]);
                ovs_spin_unlock(&q->lock);
            }
        }
        return EAGAIN;
    }
    if (afxdp->rx_partial) {
        struct dp_packet *packet;
        uint64_t n_partial = 0;

        DP_PACKET_BATCH_FOR_EACH (i, packet, batch) {
            n_partial += afxdp_csum_rx_partial(packet);
        }
        counter_add(&q->rx_csum_partial, n_partial);
    }
    counter_add(&q->rx_packets, n);
    counter_add(&q->rx_hashed, stats.hashed);
    return 0;
}

/* Drops the packets of 'batch' longer than the port's MTU allows and
 * stores how many in '*n_dropped'. */
static void
afxdp_drop_over_mtu(struct netdev_afxdp *afxdp, struct dp_packet_batch *batch,
                    uint64_t *n_dropped)
{
    const size_t size = dp_packet_batch_size(batch);
    struct dp_packet *packet;
    uint32_t max_frame;
    size_t i;

    *n_dropped = 0;
    atomic_read_relaxed(&afxdp->max_frame, &max_frame);
    DP_PACKET_BATCH_FOR_EACH (j, packet, batch) {
        if (OVS_UNLIKELY(dp_packet_size(packet) > max_frame)) {
            goto slow;
        }
    }
    return;

slow:
    DP_PACKET_BATCH_REFILL_FOR_EACH (i, size, packet, batch) {
        if (dp_packet_size(packet) > max_frame) {
            dp_packet_delete(packet);
            (*n_dropped)++;
        } else {
            dp_packet_batch_add(batch, packet);
        }
    }
}

/* Sends 'batch' on tx queue 'qid' and counts what became of its packets,
 * and 'over_mtu' packets the caller dropped.  The caller serializes calls
 * for one queue: a queue's counters have one writer at a time. */
static void
afxdp_send__(struct netdev_afxdp *afxdp, int qid,
             struct dp_packet_batch *batch, uint64_t over_mtu)
{
    struct netdev_afxdp_txq *txq = &afxdp->txqs[qid];
    struct afxdp_tx_stats stats;

    memset(&stats, 0, sizeof stats);
    if (afxdp->xmit_possible) {
        bool xmit_on;

        atomic_read_relaxed(&afxdp->xmit_on, &xmit_on);
        if (xmit_on) {
            struct afxdp_xmit_stats xs = { 0, 0, 0 };
            struct dp_packet *packet;

            /* XDP frames carry no checksum request.  (Without the
             * offload advertised, netdev_send() finished them all.) */
            if (afxdp->tx_csum_meta) {
                DP_PACKET_BATCH_FOR_EACH (i, packet, batch) {
                    stats.csum_software += afxdp_csum_tx_finish(packet);
                }
            }
            afxdp_xdp_xmit(afxdp->xdp, qid, batch, &xs);
            counter_add(&txq->xmit_redirected, xs.redirected);
            if (OVS_UNLIKELY(xs.invalid | xs.failed)) {
                counter_add(&txq->xmit_invalid, xs.invalid);
                counter_add(&txq->xmit_failed, xs.failed);
            }
        }
    }
    afxdp_xsk_send(afxdp->xsks[qid], batch, afxdp->tx_csum_meta, &stats);
    counter_add(&txq->csum_meta, stats.csum_meta);
    counter_add(&txq->csum_software, stats.csum_software);
    counter_add(&txq->zero_copy, stats.zero_copy);
    counter_add(&txq->copied, stats.copied);
    counter_add(&txq->ring_full, stats.ring_full);
    counter_add(&txq->no_frame, stats.no_frame);
    counter_add(&txq->too_big, stats.too_big);
    if (OVS_UNLIKELY(over_mtu | stats.multi_buffer)) {
        counter_add(&txq->over_mtu, over_mtu);
        counter_add(&txq->multi_buffer, stats.multi_buffer);
    }
}

int
netdev_afxdp_batch_send(struct netdev *netdev, int qid,
                        struct dp_packet_batch *batch,
                        bool concurrent_txq OVS_UNUSED)
{
    struct netdev_afxdp *afxdp = netdev_afxdp_of(netdev);
    struct netdev_afxdp_txq *txq;
    uint64_t over_mtu;

    if (OVS_UNLIKELY(!afxdp->n_queues)) {
        uint64_t orig;

        atomic_add_relaxed(&afxdp->tx_unconfigured,
                           dp_packet_batch_size(batch), &orig);
        dp_packet_delete_batch(batch, true);
        return 0;
    }

    qid %= afxdp->n_queues;
    txq = &afxdp->txqs[qid];

    afxdp_drop_over_mtu(afxdp, batch, &over_mtu);
    /* Locked even if 'concurrent_txq' is false: the thread that polls the
     * queue's socket reclaims its completion ring while the port is idle
     * (netdev_afxdp_rxq_recv()).  Uncontended, but for that. */
    ovs_spin_lock(&txq->lock);
    afxdp_send__(afxdp, qid, batch, over_mtu);
    ovs_spin_unlock(&txq->lock);
    return 0;
}

void
free_afxdp_buf(struct dp_packet *packet)
{
    afxdp_umem_free_packet(packet);
}

/* Statistics and status. */

static uint64_t
afxdp_tx_dropped(const struct netdev_afxdp *afxdp)
{
    uint64_t n = counter_get(&afxdp->tx_unconfigured);

    for (int i = 0; i < afxdp->n_queues; i++) {
        const struct netdev_afxdp_txq *txq = &afxdp->txqs[i];

        n += (counter_get(&txq->ring_full) + counter_get(&txq->no_frame)
              + counter_get(&txq->too_big) + counter_get(&txq->over_mtu)
              + counter_get(&txq->xmit_invalid));
    }
    return n;
}

/* Received packets dropped: by us (runts, bad descriptors, over the MTU)
 * and by the kernel on the way to the sockets (no free frame, rx ring
 * full), unless the driver already counts those among the device's own
 * drops, as veth and tun do in native mode. */
static uint64_t
afxdp_rx_dropped(const struct netdev_afxdp *afxdp)
{
    uint64_t n = 0;

    for (int i = 0; i < afxdp->n_queues; i++) {
        const struct netdev_afxdp_txq *txq = &afxdp->txqs[i];
        struct xdp_statistics st;

        n += (counter_get(&txq->rx_runt) + counter_get(&txq->rx_invalid)
              + counter_get(&txq->rx_over_mtu));
        if (!afxdp->kernel_counts_xsk_drops
            && !afxdp_xsk_get_stats(afxdp->xsks[i], &st)) {
            n += st.rx_dropped + st.rx_ring_full;
        }
    }
    return n;
}

int
netdev_afxdp_get_stats(const struct netdev *netdev,
                       struct netdev_stats *stats)
{
    struct netdev_linux *dev = netdev_linux_cast(netdev);
    int error;

    error = netdev_linux_get_stats(netdev, stats);
    if (!error) {
        ovs_mutex_lock(&dev->mutex);
        stats->tx_dropped += afxdp_tx_dropped(dev->afxdp);
        stats->rx_dropped += afxdp_rx_dropped(dev->afxdp);
        ovs_mutex_unlock(&dev->mutex);
    }
    return error;
}

static void
add_counter(struct netdev_custom_stats *cs, size_t *allocated,
            const char *name, uint64_t value)
{
    if (cs->size >= *allocated) {
        cs->counters = x2nrealloc(cs->counters, allocated,
                                  sizeof *cs->counters);
    }
    ovs_strlcpy(cs->counters[cs->size].name, name,
                NETDEV_CUSTOM_STATS_NAME_SIZE);
    cs->counters[cs->size++].value = value;
}

int
netdev_afxdp_get_custom_stats(const struct netdev *netdev,
                              struct netdev_custom_stats *cs)
{
    struct netdev_linux *dev = netdev_linux_cast(netdev);
    struct netdev_afxdp *afxdp = dev->afxdp;
    struct afxdp_pool_stats pool;
    uint64_t zc = 0, copied = 0, ring_full = 0, no_frame = 0, too_big = 0;
    uint64_t hashed = 0, runt = 0, invalid = 0, rx_partial = 0;
    uint64_t csum_meta = 0, csum_software = 0;
    uint64_t rx_mb = 0, rx_over_mtu = 0, tx_mb = 0, tx_over_mtu = 0;
    uint64_t xmit_redirected = 0, xmit_invalid = 0, xmit_failed = 0;
    size_t allocated = 0;
    uint32_t n_sockets;
    char name[NETDEV_CUSTOM_STATS_NAME_SIZE];

    cs->size = 0;
    cs->counters = NULL;

    ovs_mutex_lock(&dev->mutex);
    for (int i = 0; i < afxdp->n_queues; i++) {
        const struct netdev_afxdp_txq *txq = &afxdp->txqs[i];
        struct xdp_statistics st;

        if (!afxdp_xsk_get_stats(afxdp->xsks[i], &st)) {
#define XSK_STAT(FIELD)                                                 \
            snprintf(name, sizeof name, "xsk_queue_%d_" #FIELD, i);     \
            add_counter(cs, &allocated, name, st.FIELD);
            XSK_STAT(rx_dropped);
            XSK_STAT(rx_invalid_descs);
            XSK_STAT(tx_invalid_descs);
            XSK_STAT(rx_ring_full);
            XSK_STAT(rx_fill_ring_empty_descs);
            XSK_STAT(tx_ring_empty_descs);
#undef XSK_STAT
        }
        snprintf(name, sizeof name, "xsk_queue_%d_rx_packets", i);
        add_counter(cs, &allocated, name, counter_get(&txq->rx_packets));
        hashed += counter_get(&txq->rx_hashed);
        rx_partial += counter_get(&txq->rx_csum_partial);
        csum_meta += counter_get(&txq->csum_meta);
        csum_software += counter_get(&txq->csum_software);
        runt += counter_get(&txq->rx_runt);
        invalid += counter_get(&txq->rx_invalid);
        zc += counter_get(&txq->zero_copy);
        copied += counter_get(&txq->copied);
        ring_full += counter_get(&txq->ring_full);
        no_frame += counter_get(&txq->no_frame);
        too_big += counter_get(&txq->too_big);
        tx_over_mtu += counter_get(&txq->over_mtu);
        tx_mb += counter_get(&txq->multi_buffer);
        rx_over_mtu += counter_get(&txq->rx_over_mtu);
        rx_mb += counter_get(&txq->rx_multi_buffer);
        xmit_redirected += counter_get(&txq->xmit_redirected);
        xmit_invalid += counter_get(&txq->xmit_invalid);
        xmit_failed += counter_get(&txq->xmit_failed);
    }
    add_counter(cs, &allocated, "rx_hash_packets", hashed);
    add_counter(cs, &allocated, "rx_csum_partial_packets", rx_partial);
    add_counter(cs, &allocated, "rx_dropped_runt", runt);
    add_counter(cs, &allocated, "rx_dropped_invalid", invalid);
    add_counter(cs, &allocated, "rx_dropped_over_mtu", rx_over_mtu);
    add_counter(cs, &allocated, "rx_multi_buffer_packets", rx_mb);
    add_counter(cs, &allocated, "tx_zero_copy_packets", zc);
    add_counter(cs, &allocated, "tx_copied_packets", copied);
    add_counter(cs, &allocated, "tx_dropped_ring_full", ring_full);
    add_counter(cs, &allocated, "tx_dropped_no_frame", no_frame);
    add_counter(cs, &allocated, "tx_dropped_too_big", too_big);
    add_counter(cs, &allocated, "tx_dropped_over_mtu", tx_over_mtu);
    add_counter(cs, &allocated, "tx_multi_buffer_packets", tx_mb);
    add_counter(cs, &allocated, "tx_csum_offload_packets", csum_meta);
    add_counter(cs, &allocated, "tx_csum_software_packets", csum_software);
    add_counter(cs, &allocated, "tx_xdp_xmit_redirected", xmit_redirected);
    add_counter(cs, &allocated, "tx_dropped_xdp_xmit_invalid", xmit_invalid);
    add_counter(cs, &allocated, "tx_xdp_xmit_refused", xmit_failed);
    add_counter(cs, &allocated, "tx_dropped_unconfigured",
                counter_get(&afxdp->tx_unconfigured));
    ovs_mutex_unlock(&dev->mutex);

    afxdp_umem_get_stats(&pool, &n_sockets);
    add_counter(cs, &allocated, "umem_frames", pool.n_frames);
    add_counter(cs, &allocated, "umem_frames_free_shared", pool.n_shared);
    add_counter(cs, &allocated, "umem_frames_free_cached", pool.n_cached);
    add_counter(cs, &allocated, "umem_frames_in_use", pool.n_out);
    add_counter(cs, &allocated, "umem_sockets", n_sockets);
    return 0;
}

/* Why the port of 'dev' runs no offloaded flows, or NULL if it does. */
static const char *
afxdp_flow_offload_obstacle__(const struct netdev_linux *dev)
    OVS_REQUIRES(dev->mutex)
{
    const struct netdev_afxdp *afxdp = dev->afxdp;
    const char *reason;

    if (!afxdp->n_queues) {
        return "the port is not set up";
    } else if (afxdp->program) {
        return "xdp-program is set";
    } else if (afxdp->attach != AFXDP_XDP_NATIVE) {
        return "generic mode";
    } else if (afxdp->flow_offload) {
        return NULL;
    }
    /* Either the flow table's maps or the program that runs flows. */
    reason = "the kernel refuses the program that runs flows (Linux 5.18)";
    afxdp_flow_init(&reason);
    return reason;
}

static void
afxdp_flow_offload_status(const struct netdev_linux *dev, struct smap *args)
    OVS_REQUIRES(dev->mutex)
{
    const char *reason = afxdp_flow_offload_obstacle__(dev);
    const char *out;

    atomic_read_relaxed(&dev->afxdp->frames_reason, &out);
    if (reason) {
        smap_add_format(args, "flow-offload", "unavailable: %s", reason);
    } else if (out) {
        smap_add_format(args, "flow-offload", "in only: %s", out);
    } else {
        smap_add(args, "flow-offload", "in and out");
    }
}

/* Returns NULL if XDP can run the offloaded flows of packets that arrive
 * on 'netdev' (if 'output' is false) or that flows send to it (if true),
 * storing the device's ifindex in '*ifindex'; otherwise returns why not.
 * Any thread may call it. */
const char *
netdev_afxdp_flow_offload_obstacle(struct netdev *netdev, bool output,
                                   int *ifindex)
{
    struct netdev_linux *dev = netdev_linux_cast(netdev);
    const char *reason;

    ovs_mutex_lock(&dev->mutex);
    *ifindex = 0;
    if (!dev->afxdp) {
        reason = "not an afxdp port";
    } else {
        reason = afxdp_flow_offload_obstacle__(dev);
        if (!reason && output) {
            atomic_read_relaxed(&dev->afxdp->frames_reason, &reason);
        }
        *ifindex = dev->afxdp->ifindex;
    }
    ovs_mutex_unlock(&dev->mutex);
    return reason;
}

int
netdev_afxdp_get_status(const struct netdev *netdev, struct smap *args)
{
    struct netdev_linux *dev = netdev_linux_cast(netdev);
    struct netdev_afxdp *afxdp = dev->afxdp;
    int error = netdev_linux_get_status(netdev, args);

    if (error) {
        return error;
    }

    ovs_mutex_lock(&dev->mutex);
    if (afxdp->n_queues) {
        smap_add(args, "xdp-mode",
                 afxdp->attach == AFXDP_XDP_GENERIC ? "generic"
                 : afxdp->zero_copy ? "native-with-zerocopy" : "native");
        smap_add(args, "zero-copy", afxdp->zero_copy ? "true" : "false");
        smap_add_format(args, "n_rxq", "%d", afxdp->n_queues);
        if (afxdp->start_queue) {
            smap_add_format(args, "start-queue", "%d", afxdp->start_queue);
        }
        smap_add_format(args, "xdp-prog-id", "%"PRIu32,
                        afxdp_xdp_prog_id(afxdp->xdp));
        smap_add(args, "xdp-program",
                 afxdp->program ? afxdp->program : "built-in");
        smap_add(args, "rx-hash", afxdp_xdp_rx_hash_status(afxdp->xdp));
        smap_add(args, "rx-vlan", afxdp_xdp_rx_vlan_status(afxdp->xdp));
        smap_add(args, "multi-buffer",
                 afxdp->multi_buffer ? "on"
                 : !afxdp_umem_kernel_has_sg()
                 ? "off: kernel has no multi-buffer AF_XDP"
                 : "off: zero-copy driver without it");

        const char *reason;

        atomic_read_relaxed(&afxdp->xmit_reason, &reason);
        if (!afxdp->xdp_xmit) {
            smap_add(args, "xdp-xmit", "off");
        } else if (!reason) {
            smap_add(args, "xdp-xmit", "on");
        } else {
            smap_add_format(args, "xdp-xmit", "unavailable: %s", reason);
        }

        if (afxdp->rx_partial) {
            smap_add(args, "rx-csum-partial", "on");
        } else if (afxdp->rx_partial_reason) {
            smap_add_format(args, "rx-csum-partial", "off: %s",
                            afxdp->rx_partial_reason);
        } else {
            smap_add(args, "rx-csum-partial", "off");
        }

        if (dpif_offload_enabled()) {
            afxdp_flow_offload_status(dev, args);
        }
        afxdp_busy_poll_status(dev, args);
        smap_add(args, "tx-budget", afxdp->tx_budget_status);
        if (afxdp->pass) {
            smap_add(args, "pass-to-kernel", afxdp->pass);
        }
        if (afxdp->steer_local) {
            smap_add_format(args, "pass-to-kernel-addresses", "%"PRIuSIZE,
                            afxdp_xdp_n_steer_addrs(afxdp->xdp));
        }

        bool xmit_on;

        atomic_read_relaxed(&afxdp->xmit_on, &xmit_on);
        if (afxdp->tx_csum_meta) {
            smap_add(args, "tx-csum-offload",
                     xmit_on ? "on, software under XDP transmit" : "on");
        } else if (afxdp->tx_csum_reason) {
            smap_add_format(args, "tx-csum-offload", "unavailable: %s",
                            afxdp->tx_csum_reason);
        } else {
            smap_add(args, "tx-csum-offload", "off");
        }
    } else {
        smap_add(args, "xdp-mode", "unconfigured");
        if (afxdp->error) {
            smap_add(args, "afxdp-error", afxdp->error);
        }
    }
    ovs_mutex_unlock(&dev->mutex);
    return 0;
}
