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

/* What an afxdp port tells: its statistics (the queues' counters, named
 * and classified once in tables), its status, and whether the flow
 * offload provider may run flows in and out of it.  Reads the port under
 * its mutex and changes nothing. */

#include <config.h>

#include "netdev-afxdp.h"

#include <linux/if_xdp.h>
#include <stddef.h>
#include <string.h>

#include "afxdp-flow.h"
#include "dpif-offload.h"
#include "netdev-afxdp-private.h"
#include "netdev-provider.h"
#include "openvswitch/dynamic-string.h"
#include "smap.h"

/* What a counter of a queue adds to the port's standard statistics. */
enum afxdp_counter_kind {
    AFXDP_COUNT,                /* Nothing. */
    AFXDP_RX_DROP,              /* A received packet dropped. */
    AFXDP_TX_DROP,              /* A packet to send dropped. */
};

/* The counters of a queue (struct netdev_afxdp_txq) that the port's custom
 * statistics show, summed over its queues, in this order. */
static const struct {
    const char *name;
    size_t offset;
    enum afxdp_counter_kind kind;
} afxdp_queue_counters[] = {
#define C(NAME, MEMBER, KIND) \
    { NAME, offsetof(struct netdev_afxdp_txq, MEMBER), AFXDP_##KIND }
    C("rx_hash_packets", rx_hashed, COUNT),
    C("rx_csum_partial_packets", rx_csum_partial, COUNT),
    C("rx_dropped_runt", rx_runt, RX_DROP),
    C("rx_dropped_invalid", rx_invalid, RX_DROP),
    C("rx_dropped_over_mtu", rx_over_mtu, RX_DROP),
    C("rx_multi_buffer_packets", rx_multi_buffer, COUNT),
    C("tx_zero_copy_packets", zero_copy, COUNT),
    C("tx_copied_packets", copied, COUNT),
    C("tx_dropped_ring_full", ring_full, TX_DROP),
    C("tx_dropped_no_frame", no_frame, TX_DROP),
    C("tx_dropped_too_big", too_big, TX_DROP),
    C("tx_dropped_over_mtu", over_mtu, TX_DROP),
    C("tx_multi_buffer_packets", multi_buffer, COUNT),
    C("tx_csum_offload_packets", csum_meta, COUNT),
    C("tx_csum_software_packets", csum_software, COUNT),
    C("tx_xdp_xmit_redirected", xmit_redirected, COUNT),
    C("tx_dropped_xdp_xmit_invalid", xmit_invalid, TX_DROP),
    C("tx_xdp_xmit_refused", xmit_failed, COUNT),
#undef C
};

/* The kernel's statistics of a socket that the custom statistics show for
 * each queue, as xsk_queue_N_NAME. */
static const struct {
    const char *name;
    size_t offset;
} afxdp_xsk_counters[] = {
#define X(FIELD) { #FIELD, offsetof(struct xdp_statistics, FIELD) }
    X(rx_dropped),
    X(rx_invalid_descs),
    X(tx_invalid_descs),
    X(rx_ring_full),
    X(rx_fill_ring_empty_descs),
    X(tx_ring_empty_descs),
#undef X
};

/* Returns the sum over the queues of 'afxdp' of the counter at 'offset' in
 * struct netdev_afxdp_txq. */
static uint64_t
afxdp_queue_sum(const struct netdev_afxdp *afxdp, size_t offset)
{
    uint64_t n = 0;

    for (int i = 0; i < afxdp->n_queues; i++) {
        const char *txq = (const char *) &afxdp->txqs[i];

        n += afxdp_counter_get(ALIGNED_CAST(const atomic_uint64_t *,
                                            txq + offset));
    }
    return n;
}

/* Returns the packets of 'kind' that the port of 'afxdp' dropped. */
static uint64_t
afxdp_dropped(const struct netdev_afxdp *afxdp, enum afxdp_counter_kind kind)
{
    uint64_t n = 0;

    for (size_t i = 0; i < ARRAY_SIZE(afxdp_queue_counters); i++) {
        if (afxdp_queue_counters[i].kind == kind) {
            n += afxdp_queue_sum(afxdp, afxdp_queue_counters[i].offset);
        }
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
    uint64_t n = afxdp_dropped(afxdp, AFXDP_RX_DROP);

    for (int i = 0; !afxdp->kernel_counts_xsk_drops && i < afxdp->n_queues;
         i++) {
        struct xdp_statistics st;

        if (!afxdp_xsk_get_stats(afxdp->xsks[i], &st)) {
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
        stats->tx_dropped += (afxdp_dropped(dev->afxdp, AFXDP_TX_DROP)
                              + afxdp_counter_get(
                                  &dev->afxdp->tx_unconfigured));
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

/* Adds the per-queue custom statistics of 'afxdp' to 'cs'. */
static void
afxdp_queue_stats(const struct netdev_afxdp *afxdp,
                  struct netdev_custom_stats *cs, size_t *allocated)
{
    char name[NETDEV_CUSTOM_STATS_NAME_SIZE];

    for (int i = 0; i < afxdp->n_queues; i++) {
        struct xdp_statistics st;

        if (!afxdp_xsk_get_stats(afxdp->xsks[i], &st)) {
            for (size_t j = 0; j < ARRAY_SIZE(afxdp_xsk_counters); j++) {
                const char *p = (const char *) &st;

                snprintf(name, sizeof name, "xsk_queue_%d_%s", i,
                         afxdp_xsk_counters[j].name);
                add_counter(cs, allocated, name,
                            *ALIGNED_CAST(const uint64_t *,
                                          p + afxdp_xsk_counters[j].offset));
            }
        }
        snprintf(name, sizeof name, "xsk_queue_%d_rx_packets", i);
        add_counter(cs, allocated, name,
                    afxdp_counter_get(&afxdp->txqs[i].rx_packets));
    }
}

int
netdev_afxdp_get_custom_stats(const struct netdev *netdev,
                              struct netdev_custom_stats *cs)
{
    struct netdev_linux *dev = netdev_linux_cast(netdev);
    struct netdev_afxdp *afxdp = dev->afxdp;
    struct afxdp_pool_stats pool;
    size_t allocated = 0;
    uint32_t n_sockets;

    cs->size = 0;
    cs->counters = NULL;

    ovs_mutex_lock(&dev->mutex);
    afxdp_queue_stats(afxdp, cs, &allocated);
    for (size_t i = 0; i < ARRAY_SIZE(afxdp_queue_counters); i++) {
        add_counter(cs, &allocated, afxdp_queue_counters[i].name,
                    afxdp_queue_sum(afxdp, afxdp_queue_counters[i].offset));
    }
    add_counter(cs, &allocated, "tx_dropped_unconfigured",
                afxdp_counter_get(&afxdp->tx_unconfigured));
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
    } else if (afxdp->applied.program) {
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
    if (dev->afxdp->peer_xdp_status) {
        smap_add(args, "peer-xdp", dev->afxdp->peer_xdp_status);
    }
}

/* Adds status:busy-poll of the port of 'dev' to 'args': as decided at
 * setup and, when it is on, the NAPI context each queue's busy polling
 * runs. */
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
            } else if (afxdp_counter_get(&afxdp->txqs[i].rx_packets)) {
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

/* Adds the status of the port of 'dev' for the features that transmit
 * and checksums use to 'args'. */
static void
afxdp_xmit_csum_status(const struct netdev_linux *dev, struct smap *args)
    OVS_REQUIRES(dev->mutex)
{
    const struct netdev_afxdp *afxdp = dev->afxdp;
    const char *reason;
    bool xmit_on;

    atomic_read_relaxed(&afxdp->xmit_reason, &reason);
    if (!afxdp->applied.xdp_xmit) {
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
    if (!afxdp->n_queues) {
        smap_add(args, "xdp-mode", "unconfigured");
        if (afxdp->error) {
            smap_add(args, "afxdp-error", afxdp->error);
        }
        goto out;
    }
    smap_add(args, "xdp-mode",
             afxdp->attach == AFXDP_XDP_GENERIC ? "generic"
             : afxdp->zero_copy ? "native-with-zerocopy" : "native");
    smap_add(args, "zero-copy", afxdp->zero_copy ? "true" : "false");
    smap_add_format(args, "n_rxq", "%d", afxdp->n_queues);
    if (afxdp->applied.start_queue) {
        smap_add_format(args, "start-queue", "%d",
                        afxdp->applied.start_queue);
    }
    smap_add_format(args, "xdp-prog-id", "%"PRIu32,
                    afxdp_xdp_prog_id(afxdp->xdp));
    smap_add(args, "xdp-program",
             afxdp->applied.program ? afxdp->applied.program : "built-in");
    smap_add(args, "rx-hash", afxdp_xdp_rx_hash_status(afxdp->xdp));
    smap_add(args, "rx-vlan", afxdp_xdp_rx_vlan_status(afxdp->xdp));
    smap_add(args, "multi-buffer",
             afxdp->multi_buffer ? "on"
             : !afxdp_umem_kernel_has_sg()
             ? "off: kernel has no multi-buffer AF_XDP"
             : "off: zero-copy driver without it");
    afxdp_xmit_csum_status(dev, args);
    if (dpif_offload_enabled()) {
        afxdp_flow_offload_status(dev, args);
    }
    afxdp_busy_poll_status(dev, args);
    smap_add(args, "tx-budget", afxdp->tx_budget_status);
    if (afxdp->applied.pass) {
        smap_add(args, "pass-to-kernel", afxdp->applied.pass);
    }
    if (afxdp->steer_local) {
        smap_add_format(args, "pass-to-kernel-addresses", "%"PRIuSIZE,
                        afxdp_xdp_n_steer_addrs(afxdp->xdp));
    }
out:
    ovs_mutex_unlock(&dev->mutex);
    return 0;
}
