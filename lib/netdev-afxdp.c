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

/* The afxdp netdev's port life cycle and data path: construction and
 * destruction, setup from the requested options (netdev-afxdp-options.c)
 * in reconfigure(), teardown, MTU changes, and rxq_recv() and send(),
 * which PMD threads call.  Statistics and status are in
 * netdev-afxdp-status.c, the once-a-second checks of each port's device
 * in netdev-afxdp-watch.c, the state they share in netdev-afxdp-private.h.
 */

#include <config.h>

#include "netdev-afxdp.h"

#include <errno.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "afxdp-csum.h"
#include "dp-packet.h"
#include "netdev-afxdp-private.h"
#include "netdev-provider.h"
#include "openvswitch/poll-loop.h"
#include "openvswitch/vlog.h"
#include "socket-util.h"

VLOG_DEFINE_THIS_MODULE(netdev_afxdp);

/* One way to set a port up: where the program runs, how the sockets copy. */
struct afxdp_attempt {
    enum afxdp_xdp_attach attach;
    enum afxdp_xsk_copy copy;
};

/* Empty polls of a queue between two reclaims of its socket's completion
 * ring (netdev_afxdp_rxq_recv()). */
#define AFXDP_RECLAIM_POLLS 1024

/* Fills 'attempts' with the ways to set up a port in xdp-mode 'mode', in
 * the order to try them, and returns how many.  'zero_copy' says whether
 * the device has zero-copy sockets, for best-effort: 1 or 0, or negative
 * if the kernel does not say. */
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
    afxdp_options_init(&afxdp->requested);
    afxdp_options_init(&afxdp->applied);
    atomic_init(&afxdp->tx_unconfigured, 0);
    atomic_init(&afxdp->xmit_on, false);
    atomic_init(&afxdp->xmit_reason, "off");
    atomic_init(&afxdp->frames_reason, "the port is not set up");
    afxdp->peer.link_fd = -1;
    afxdp_watch_port_added();
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
    afxdp_xdp_peer_detach(&afxdp->peer);
    afxdp->peer_xdp_status = NULL;
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
    afxdp_options_destroy(&afxdp->applied);
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
    afxdp_options_destroy(&afxdp->requested);
    free(afxdp);
    dev->afxdp = NULL;
    ovs_mutex_unlock(&dev->mutex);
    afxdp_watch_port_removed();

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

    if (!afxdp->applied.xdp_xmit) {
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

/* Whether a port on device 'name' with options:rx-csum-partial 'rx_csum'
 * examines the packets it receives for partial checksums.  If not, and
 * 'reasonp' is nonnull, says why in '*reasonp' when the option did not
 * ask for that. */
static bool
afxdp_rx_partial_wanted(int rx_csum, const char *name,
                        const char **reasonp)
{
    if (rx_csum == AFXDP_RX_CSUM_AUTO) {
        if (afxdp_device_has_local_senders(name)) {
            return true;
        }
        if (reasonp) {
            *reasonp = "not a veth or tap device";
        }
        return false;
    }
    return rx_csum == AFXDP_RX_CSUM_ON;
}

/* Decides, for the freshly set up port of 'dev' on device 'name' (index
 * 'ifindex'), whether received packets are examined for partial checksums
 * and whether the kernel finishes the checksums of packets sent. */
static void
afxdp_csum_setup(struct netdev_linux *dev, const char *name, int ifindex)
    OVS_REQUIRES(dev->mutex)
{
    struct netdev_afxdp *afxdp = dev->afxdp;

    afxdp->rx_partial_reason = NULL;
    afxdp->rx_partial = afxdp_rx_partial_wanted(afxdp->applied.rx_csum, name,
                                                &afxdp->rx_partial_reason);

    afxdp->tx_csum_reason = (!afxdp->applied.tx_csum ? NULL
                             : !afxdp_xsk_has_tx_meta(afxdp->xsks[0])
                             ? "kernel has no AF_XDP TX metadata"
                             : afxdp->zero_copy
                             ? afxdp_xdp_probe_xsk_csum(ifindex)
                             : NULL);
    afxdp->tx_csum_meta = afxdp->applied.tx_csum && !afxdp->tx_csum_reason;
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
    int budget = afxdp->applied.busy_poll_budget;
    long long int defer, timeout;
    int error = 0;

    afxdp->busy_poll_on = false;
    afxdp->napi_ids_seen = 0;
    if (!afxdp->applied.busy_poll) {
        afxdp->busy_poll_status = xstrdup("off");
        return;
    }
    for (int i = 0; !error && i < afxdp->n_queues; i++) {
        error = afxdp_xsk_set_busy_poll(afxdp->xsks[i], budget);
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
        "on: budget %d%s", budget,
        defer > 0 && timeout > 0 ? ""
        : "; the device's napi_defer_hard_irqs and gro_flush_timeout are "
          "not both set, so softirq polls too");
}

/* Lets each copy-mode transmit call of the freshly set up port of 'dev'
 * on device 'name' send up to its tx-budget descriptors, where the kernel
 * allows it, and says in the status what it sends. */
static void
afxdp_tx_budget_setup(struct netdev_linux *dev, const char *name)
    OVS_REQUIRES(dev->mutex)
{
    struct netdev_afxdp *afxdp = dev->afxdp;
    int budget = afxdp->applied.tx_budget;
    int error = 0;

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

/* Makes one attempt at setting the port of 'dev' up on device 'name'
 * (index 'ifindex', MTU 'mtu') as 'cfg' and 'attempt' say: the program,
 * the pass-to-kernel rules, a socket per queue.  Returns 0, or a positive
 * errno with an explanation in '*errp' and the port half set up, for
 * afxdp_teardown(). */
static int
afxdp_setup_attempt(struct netdev_linux *dev, const char *name, int ifindex,
                    int mtu, struct afxdp_xdp_config *cfg,
                    const struct afxdp_attempt *attempt, char **errp)
    OVS_REQUIRES(dev->mutex)
{
    struct netdev_afxdp *afxdp = dev->afxdp;
    const struct afxdp_options *opts = &afxdp->requested;
    const struct afxdp_steer *steer = opts->steer;
    int n = opts->n_rxq;
    int error;

    afxdp->xsks = xcalloc(n, sizeof *afxdp->xsks);
    afxdp->txqs = xzalloc_cacheline(n * sizeof *afxdp->txqs);
    for (int i = 0; i < n; i++) {
        ovs_spin_init(&afxdp->txqs[i].lock);
    }
    afxdp->n_queues = n;

    cfg->attach = attempt->attach;
    error = afxdp_xdp_attach(name, ifindex, cfg, &afxdp->xdp, errp);
    if (!error && steer && steer->n_rules) {
        error = afxdp_xdp_steer_rules(afxdp->xdp, steer->rules,
                                      steer->n_rules);
        if (error) {
            *errp = xasprintf("%s: cannot set up pass-to-kernel (%s)",
                              name, ovs_strerror(error));
        }
    }
    afxdp->zero_copy = true;
    afxdp->multi_buffer = true;
    for (int i = 0; !error && i < n; i++) {
        struct afxdp_xsk *xsk;

        error = afxdp_xsk_create(name, ifindex, opts->start_queue + i,
                                 attempt->copy, opts->ring_size,
                                 mtu > AFXDP_FRAME_MTU, &afxdp->xsks[i],
                                 errp);
        if (error) {
            break;
        }
        xsk = afxdp->xsks[i];
        afxdp->zero_copy &= afxdp_xsk_is_zero_copy(xsk);
        afxdp->multi_buffer &= afxdp_xsk_has_sg(xsk);
        error = afxdp_xdp_set_socket(afxdp->xdp, i, afxdp_xsk_fd(xsk));
        if (error) {
            *errp = xasprintf("%s: cannot add the socket of queue %d to the "
                              "XSKMAP (%s)", name, i, ovs_strerror(error));
        }
    }
    return error;
}

/* Decides, for the port of 'dev' on device 'name' (index 'ifindex'), set
 * up by 'attempt', what of its optional features it uses. */
static void
afxdp_setup_features(struct netdev_linux *dev, const char *name,
                     int ifindex, const struct afxdp_attempt *attempt)
    OVS_REQUIRES(dev->mutex)
{
    struct netdev_afxdp *afxdp = dev->afxdp;
    const struct afxdp_steer *steer;

    afxdp_options_clone(&afxdp->applied, &afxdp->requested);
    steer = afxdp->applied.steer;
    afxdp->attach = attempt->attach;
    afxdp->rx_meta = afxdp_xdp_has_rx_hash(afxdp->xdp);
    afxdp->ifindex = ifindex;
    afxdp_xmit_setup(dev);
    afxdp_csum_setup(dev, name, ifindex);
    afxdp_busy_poll_setup(dev, name);
    afxdp_tx_budget_setup(dev, name);
    afxdp->steer_local = steer && steer->flags & AFXDP_STEER_LOCAL;
    if (afxdp->steer_local) {
        afxdp_steer_sync(dev);
    }
    afxdp->flow_offload = (afxdp->attach == AFXDP_XDP_NATIVE
                           && !afxdp->applied.program
                           && afxdp_xdp_has_flow_table(afxdp->xdp));
    if (afxdp->flow_offload) {
        const char *reason = afxdp_frames_obstacle(afxdp);

        if (reason && afxdp->applied.peer_xdp && !afxdp->zero_copy) {
            /* A veth whose peer takes no XDP frames (a container's, as
             * created): a pass-through program there makes it. */
            afxdp->peer_xdp_status = afxdp_xdp_peer_attach(ifindex,
                                                           &afxdp->peer);
            if (!afxdp->peer_xdp_status) {
                afxdp->peer_xdp_status = "on";
                reason = afxdp_frames_obstacle(afxdp);
            }
        } else if (afxdp->applied.peer_xdp) {
            afxdp->peer_xdp_status = (reason ? reason
                                      : "off: the device takes XDP frames");
        }
        atomic_store_relaxed(&afxdp->frames_reason, reason);
    } else if (afxdp->applied.peer_xdp) {
        afxdp->peer_xdp_status = "off: the port's program runs no flows";
    }
    /* A veth or tun driver counts what its XDP program fails to redirect
     * (a socket without room) among its own drops. */
    afxdp->kernel_counts_xsk_drops = (afxdp->attach == AFXDP_XDP_NATIVE
                                      && afxdp_device_has_local_senders(name));
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
    const struct afxdp_options *opts = &afxdp->requested;
    struct afxdp_attempt attempts[3];
    int ifindex = if_nametoindex(name);
    struct afxdp_xdp_config xdp_cfg = {
        .path = opts->program,
        .rx_hash = opts->rx_hash,
        .xmit = opts->xdp_xmit,
        .first_queue = opts->start_queue,
        .n_queues = opts->n_rxq,
        .steer = opts->steer ? opts->steer->flags : 0,
        /* The offloaded flows finish partial checksums where the port
         * would. */
        .csum_partial = (!opts->program
                         && afxdp_rx_partial_wanted(opts->rx_csum, name,
                                                    NULL)),
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
    n_attempts = afxdp_attempts(opts->mode,
                                (opts->mode == AFXDP_MODE_BEST_EFFORT
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
    *errp = afxdp_check_queues(name, opts->start_queue, opts->n_rxq);
    if (*errp) {
        return EINVAL;
    }

    for (size_t a = 0; a < n_attempts; a++) {
        char *err = NULL;

        error = afxdp_setup_attempt(dev, name, ifindex, mtu, &xdp_cfg,
                                    &attempts[a], &err);
        if (!error) {
            free(*errp);
            *errp = NULL;
            afxdp_setup_features(dev, name, ifindex, &attempts[a]);
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

/* Whether the port of 'dev' is set up as it would be now. */
static bool
afxdp_config_current(const struct netdev_linux *dev)
    OVS_REQUIRES(dev->mutex)
{
    const struct netdev_afxdp *afxdp = dev->afxdp;

    return (afxdp->n_queues
            && (afxdp->device_digest
                == afxdp_device_digest(netdev_get_name(&dev->up)))
            && afxdp_options_equal(&afxdp->applied, &afxdp->requested)
            && (afxdp->multi_buffer
                || afxdp->requested_mtu <= AFXDP_FRAME_MTU));
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
        afxdp_counter_add(&q->rx_runt, stats.runt);
        afxdp_counter_add(&q->rx_invalid, stats.invalid);
        afxdp_counter_add(&q->rx_over_mtu, stats.over_mtu);
        afxdp_counter_add(&q->rx_multi_buffer, stats.multi_buffer);
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
        afxdp_counter_add(&q->rx_csum_partial, n_partial);
    }
    afxdp_counter_add(&q->rx_packets, n);
    afxdp_counter_add(&q->rx_hashed, stats.hashed);
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
            afxdp_counter_add(&txq->xmit_redirected, xs.redirected);
            if (OVS_UNLIKELY(xs.invalid | xs.failed)) {
                afxdp_counter_add(&txq->xmit_invalid, xs.invalid);
                afxdp_counter_add(&txq->xmit_failed, xs.failed);
            }
        }
    }
    afxdp_xsk_send(afxdp->xsks[qid], batch, afxdp->tx_csum_meta, &stats);
    afxdp_counter_add(&txq->csum_meta, stats.csum_meta);
    afxdp_counter_add(&txq->csum_software, stats.csum_software);
    afxdp_counter_add(&txq->zero_copy, stats.zero_copy);
    afxdp_counter_add(&txq->copied, stats.copied);
    afxdp_counter_add(&txq->ring_full, stats.ring_full);
    afxdp_counter_add(&txq->no_frame, stats.no_frame);
    afxdp_counter_add(&txq->too_big, stats.too_big);
    if (OVS_UNLIKELY(over_mtu | stats.multi_buffer)) {
        afxdp_counter_add(&txq->over_mtu, over_mtu);
        afxdp_counter_add(&txq->multi_buffer, stats.multi_buffer);
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
