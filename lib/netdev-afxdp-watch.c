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

/* What the main thread follows of each afxdp port's device, once a second
 * from netdev-linux's run hook (netdev_afxdp_run()): the device itself
 * and its number of queues (a port is set up again when they change),
 * its promiscuous mode, its addresses (for pass-to-kernel=local), whether
 * it takes XDP frames (for XDP transmit and offloaded flows) and the NAPI
 * ids of busy polling sockets.  Each check takes the port's mutex and
 * changes only what the port's struct netdev_afxdp documents as the main
 * thread's; the kernel requests (netlink, ioctl) that some take hold the
 * RTNL lock, which is why PMD threads never make them. */

#include <config.h>

#include "netdev-afxdp.h"

#include <dirent.h>
#include <errno.h>
#include <net/if.h>
#include <linux/sockios.h>
#include <string.h>

#include "netdev-afxdp-private.h"
#include "netdev-provider.h"
#include "openvswitch/poll-loop.h"
#include "openvswitch/shash.h"
#include "openvswitch/vlog.h"
#include "socket-util.h"
#include "timeval.h"

VLOG_DEFINE_THIS_MODULE(netdev_afxdp_watch);

/* How often the main thread looks at the devices of afxdp ports. */
#define AFXDP_RECHECK_MS 1000

/* afxdp netdevs in existence, and when the main thread next looks at
 * their devices. */
static struct atomic_count afxdp_n_ports = ATOMIC_COUNT_INIT(0);
static long long int afxdp_next_check = LLONG_MIN;

void
afxdp_watch_port_added(void)
{
    atomic_count_inc(&afxdp_n_ports);
}

void
afxdp_watch_port_removed(void)
{
    atomic_count_dec(&afxdp_n_ports);
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
uint64_t
afxdp_device_digest(const char *name)
{
    int ifindex = if_nametoindex(name);

    return (ifindex
            ? ((uint64_t) ifindex << 32) | (uint32_t) afxdp_device_n_rxq(name)
            : 0);
}

/* Returns an error message if the receive queues 'start' to 'start' + 'n'
 * - 1 are not all among the queues that device 'name' has now, else NULL
 * (also if the count cannot be read: the bind will tell). */
char *
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
void
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

/* Asks the kernel whether the device of 'netdev', which may use XDP
 * transmit, still takes XDP frames (for veth: whether its peer runs an XDP
 * program or GRO), and publishes the answer to the senders. */
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
const char *
afxdp_frames_obstacle(const struct netdev_afxdp *afxdp)
{
    return (afxdp->zero_copy ? "zero-copy sockets on the device"
            : afxdp_xdp_frames_obstacle(afxdp->ifindex));
}

/* Asks the kernel whether the device of 'netdev', whose program runs
 * offloaded flows, takes XDP frames, which flows that send to it need.
 * The flow offload provider reads the answer. */
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
 * device's own addresses to the kernel, the addresses the device has now:
 * when the port is set up, then once a second. */
void
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
afxdp_watch_busy_poll(struct netdev_afxdp *afxdp)
{
    uint64_t digest = 0;

    for (int i = 0; i < afxdp->n_queues; i++) {
        uint32_t id = afxdp_xsk_update_busy_poll(afxdp->xsks[i]);
        bool received = afxdp_counter_get(&afxdp->txqs[i].rx_packets) != 0;

        digest = digest * 0x100000001b3ULL + id * 2 + received;
    }
    return digest;
}

/* Looks at the device of the port of 'dev' once. */
static void
afxdp_watch_port(struct netdev_linux *dev)
    OVS_REQUIRES(dev->mutex)
{
    struct netdev_afxdp *afxdp = dev->afxdp;
    struct netdev *netdev = &dev->up;

    if (!afxdp) {
        return;
    }
    if (afxdp->device_digest != afxdp_device_digest(netdev_get_name(netdev))) {
        /* Its device went, came back or changed its queues. */
        netdev_request_reconfigure(netdev);
    } else if (afxdp->n_queues) {
        if (afxdp->xmit_possible) {
            afxdp_xmit_recheck(netdev, afxdp);
        }
        if (afxdp->steer_local) {
            afxdp_steer_sync(dev);
        }
        if (afxdp->flow_offload) {
            afxdp_frames_recheck(netdev, afxdp);
        }
        if (afxdp->busy_poll_on) {
            uint64_t digest = afxdp_watch_busy_poll(afxdp);

            if (digest != afxdp->napi_ids_seen) {
                afxdp->napi_ids_seen = digest;
                netdev_change_seq_changed(netdev);
            }
        }
    }
}

/* Looks at the device of every port of 'class'. */
static void
afxdp_watch_class(const struct netdev_class *class)
{
    struct shash_node *node;
    struct shash devices;

    shash_init(&devices);
    netdev_get_devices(class, &devices);
    SHASH_FOR_EACH (node, &devices) {
        struct netdev *netdev = node->data;
        struct netdev_linux *dev = netdev_linux_cast(netdev);

        ovs_mutex_lock(&dev->mutex);
        afxdp_watch_port(dev);
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
        afxdp_watch_class(&netdev_afxdp_class);
        afxdp_watch_class(&netdev_afxdp_nonpmd_class);
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
