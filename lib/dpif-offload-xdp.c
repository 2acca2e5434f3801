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

/*
 * The "xdp" flow offload provider of the userspace datapath.
 * ===========================================================
 *
 * With other_config:hw-offload=true, dpif-netdev hands each megaflow it
 * installs to the provider of its in_port.  This one claims afxdp ports
 * and mirrors the megaflows that the XDP program can execute exactly
 * (afxdp-flow.h) into the program's flow table, so that their packets are
 * forwarded or dropped in XDP without reaching user space.  dpif-netdev
 * keeps every flow (a "synced" provider): a packet that XDP does not take
 * still finds its flow in the PMD's classifier.
 *
 * A megaflow comes once per PMD thread, with one id (its "mega ufid") and
 * a reference to each PMD's copy; the table entry lives while one of them
 * does.  Installation, modification and deletion are asynchronous, as
 * dpif-netdev allows (EINPROGRESS): a put or a delete, which a PMD thread
 * may make, only queues the request, and the provider's own thread
 * carries the requests out in order and reports each back through the
 * callback that came with it.  That thread alone waits for what a flow
 * change needs: a port's mutex (held by the main thread through a
 * reconfiguration), the kernel's maps, the end of an RCU grace period
 * before a statistics entry is reused (afxdp-flow.h).
 *
 * Statistics are the program's, returned cumulatively for dpif-netdev to
 * add to its own, and never go back: a flow taken out of XDP keeps what it
 * counted there.  dpif-netdev asks for a flow's statistics through the
 * provider of its in_port, so a deleted port stays reachable for that
 * ("departed", answering only get_netdev()) until dpif-netdev has deleted
 * the last flow that came in by it.
 *
 * Thread-safety: the callbacks come from PMD, handler, revalidator and
 * main threads.  'mutex' guards the flows, departed ports and counters;
 * 'queue_mutex' only the queue, so that a put or delete never waits for
 * more than a list insertion.  get_netdev() reads RCU-protected maps
 * only.  The order is 'mutex', then a port's netdev mutex.
 */

#include <config.h>

#include <errno.h>
#include <pthread.h>

#include "afxdp-flow.h"
#include "cmap.h"
#include "coverage.h"
#include "dpif.h"
#include "dpif-offload.h"
#include "dpif-offload-provider.h"
#include "netdev-afxdp.h"
#include "netdev-provider.h"
#include "odp-util.h"
#include "openvswitch/dynamic-string.h"
#include "openvswitch/hmap.h"
#include "openvswitch/json.h"
#include "openvswitch/list.h"
#include "openvswitch/match.h"
#include "openvswitch/vlog.h"
#include "ovs-rcu.h"
#include "ovs-thread.h"
#include "smap.h"
#include "timeval.h"
#include "util.h"
#include "uuid.h"

VLOG_DEFINE_THIS_MODULE(dpif_offload_xdp);

/* A put from a PMD thread whose copy of the flow was another one before:
 * dpif-netdev deleted a flow and made it again before the deletion came. */
COVERAGE_DEFINE(xdp_offload_ref_replaced);
/* A deletion of a copy that a later put had already replaced. */
COVERAGE_DEFINE(xdp_offload_del_unmatched);

/* How many refusals dpif/offload/show remembers. */
#define XDP_OFFLOAD_N_REFUSALS 16

/* One PMD thread's copy of an offloaded megaflow. */
struct xdp_offload_ref {
    unsigned int pmd_id;
    void *flow_reference;
};

/* A megaflow that dpif-netdev counts as offloaded: in the XDP table, or
 * taken out of it again (by a change XDP cannot follow, or by its port's
 * removal), until dpif-netdev deletes it. */
struct xdp_offload_flow {
    struct hmap_node node;      /* In 'flows', by 'ufid'. */
    ovs_u128 ufid;
    odp_port_t in_port;
    struct afxdp_flow *entry;   /* NULL: not in the XDP table. */
    struct xdp_offload_ref *refs;
    size_t n_refs;
    struct afxdp_flow_stats_snapshot base;  /* Of entries taken out. */
    struct afxdp_flow_stats_snapshot stats; /* In all, as last read. */
    uint64_t entry_packets;     /* 'entry''s packets, as last read. */
    long long int entry_used;   /* When they were seen to move, or 0. */
};

struct xdp_offload_refusal {
    ovs_u128 ufid;
    odp_port_t in_port;
    char *reason;
};

/* A port that dpif-netdev deleted while flows that came in by it remain:
 * dpif-netdev reaches those flows' statistics and deletion through it. */
struct xdp_offload_departed {
    struct cmap_node node;      /* In 'departed', by 'port_no'. */
    odp_port_t port_no;
    struct netdev *netdev;
    size_t n_flows;             /* Flows in 'flows' with this in_port. */
};

/* A put or delete, queued for the provider's thread. */
struct xdp_offload_op {
    struct ovs_list node;       /* In 'queue'. */
    bool put;                   /* Otherwise a delete. */
    ovs_u128 ufid;
    odp_port_t in_port;
    unsigned int pmd_id;
    void *flow_reference;
    struct dpif_offload_flow_cb_data cb;
    long long int queued;       /* time_usec(). */

    /* Puts only. */
    struct match match;
    struct nlattr *actions;
    size_t actions_len;
};

struct xdp_offload {
    struct dpif_offload offload;

    struct ovs_mutex mutex;
    struct hmap flows OVS_GUARDED;
    struct cmap departed;       /* Written under 'mutex'. */
    dpif_offload_flow_unreference_cb *unreference_cb OVS_GUARDED;
    uint64_t n_installed OVS_GUARDED;   /* Ever. */
    uint64_t n_refused OVS_GUARDED;     /* Ever. */
    uint64_t n_puts OVS_GUARDED;        /* Ever. */
    uint64_t put_us OVS_GUARDED;        /* From request to done, in all. */
    uint64_t put_us_max OVS_GUARDED;
    struct xdp_offload_refusal refusals[XDP_OFFLOAD_N_REFUSALS]
        OVS_GUARDED;
    unsigned int next_refusal OVS_GUARDED;

    /* Requests for the provider's thread, started with the first, all
     * under 'queue_mutex' but 'thread', which only the caller of close()
     * reads once the thread has started. */
    struct ovs_mutex queue_mutex;
    pthread_cond_t queue_cond;
    struct ovs_list queue OVS_GUARDED;
    size_t n_queued OVS_GUARDED;        /* Queued or being carried out. */
    size_t n_queued_max OVS_GUARDED;
    bool thread_started OVS_GUARDED;
    bool exiting OVS_GUARDED;
    pthread_t thread;
};

static struct xdp_offload *
xdp_offload_cast(const struct dpif_offload *offload)
{
    return CONTAINER_OF(offload, struct xdp_offload, offload);
}

static bool
xdp_is_afxdp(const struct netdev *netdev)
{
    const char *type = netdev_get_type(netdev);

    return !strcmp(type, "afxdp") || !strcmp(type, "afxdp-nonpmd");
}

/* The flows of 'x' in the XDP table. */
static size_t
xdp_offload_n_loaded(const struct xdp_offload *x)
    OVS_REQUIRES(x->mutex)
{
    const struct xdp_offload_flow *flow;
    size_t n = 0;

    HMAP_FOR_EACH (flow, node, &x->flows) {
        n += flow->entry != NULL;
    }
    return n;
}

static int
xdp_offload_open(const struct dpif_offload_class *class, struct dpif *dpif,
                 struct dpif_offload **offloadp)
{
    struct xdp_offload *x = xzalloc(sizeof *x);

    dpif_offload_init(&x->offload, class, dpif);
    ovs_mutex_init(&x->mutex);
    hmap_init(&x->flows);
    cmap_init(&x->departed);
    ovs_mutex_init(&x->queue_mutex);
    xpthread_cond_init(&x->queue_cond, NULL);
    ovs_list_init(&x->queue);
    *offloadp = &x->offload;
    return 0;
}

static bool
xdp_offload_can_offload(struct dpif_offload *offload OVS_UNUSED,
                        struct netdev *netdev)
{
    return xdp_is_afxdp(netdev);
}

static uint32_t
xdp_offload_port_hash(odp_port_t port_no)
{
    return hash_int(odp_to_u32(port_no), 0);
}

static struct xdp_offload_departed *
xdp_offload_departed_find(const struct xdp_offload *x, odp_port_t port_no)
{
    struct xdp_offload_departed *d;

    CMAP_FOR_EACH_WITH_HASH (d, node, xdp_offload_port_hash(port_no),
                             &x->departed) {
        if (d->port_no == port_no) {
            return d;
        }
    }
    return NULL;
}

static void
xdp_offload_departed_free(struct xdp_offload_departed *d)
{
    netdev_close(d->netdev);
    free(d);
}

static void
xdp_offload_departed_remove(struct xdp_offload *x,
                            struct xdp_offload_departed *d)
    OVS_REQUIRES(x->mutex)
{
    cmap_remove(&x->departed, &d->node, xdp_offload_port_hash(d->port_no));
    ovsrcu_postpone(xdp_offload_departed_free, d);
}

static int
xdp_offload_port_add(struct dpif_offload *offload, struct netdev *netdev,
                     odp_port_t port_no)
{
    struct xdp_offload *x = xdp_offload_cast(offload);
    struct dpif_offload_port *port = xzalloc(sizeof *port);
    struct xdp_offload_departed *d;

    if (!dpif_offload_port_mgr_add(offload, port, netdev, port_no, false)) {
        free(port);
        return EEXIST;
    }

    /* The flows left by a deleted port of the same number are reached
     * through this one from now on. */
    ovs_mutex_lock(&x->mutex);
    d = xdp_offload_departed_find(x, port_no);
    if (d) {
        xdp_offload_departed_remove(x, d);
    }
    ovs_mutex_unlock(&x->mutex);
    return 0;
}

static void
xdp_offload_port_free(struct dpif_offload_port *port)
{
    netdev_close(port->netdev);
    free(port);
}

/* The netdev of port 'port_no' of 'x', if it has not been deleted. */
static struct netdev *
xdp_offload_live_netdev(const struct xdp_offload *x, odp_port_t port_no)
{
    struct dpif_offload_port *port;

    port = dpif_offload_port_mgr_find_by_odp_port(&x->offload, port_no);
    return port ? port->netdev : NULL;
}

/* Adds the statistics of 'b' to 'a'. */
static void
xdp_offload_stats_add(struct afxdp_flow_stats_snapshot *a,
                      const struct afxdp_flow_stats_snapshot *b)
{
    a->packets += b->packets;
    a->bytes += b->bytes;
    a->used = MAX(a->used, b->used);
    a->tcp_flags |= b->tcp_flags;
}

/* Reads the statistics of 'flow', in and out of XDP, into 'flow->stats'. */
static void
xdp_offload_flow_read_stats(struct xdp_offload_flow *flow)
{
    flow->stats = flow->base;
    if (flow->entry) {
        struct afxdp_flow_stats_snapshot s;

        afxdp_flow_get_stats(flow->entry, &s);
        /* The program keeps no time: the flow was used when its count
         * moved since the last read, to within the reads' interval (a
         * revalidator round), which idle timeouts of seconds allow. */
        if (s.packets != flow->entry_packets) {
            flow->entry_packets = s.packets;
            flow->entry_used = time_msec();
        }
        s.used = flow->entry_used;
        xdp_offload_stats_add(&flow->stats, &s);
    }
}

/* Takes 'flow' out of the XDP table: its packets go to user space.  Its
 * statistics so far stay with it, so that the flow's never go back. */
static void
xdp_offload_flow_unload(struct xdp_offload_flow *flow)
{
    if (flow->entry) {
        xdp_offload_flow_read_stats(flow);
        flow->base = flow->stats;
        afxdp_flow_remove(flow->entry);
        flow->entry = NULL;
    }
}

/* Forgets 'flow', out of the XDP table, giving back to dpif-netdev the
 * references it holds if 'unreference'. */
static void
xdp_offload_flow_free(struct xdp_offload *x, struct xdp_offload_flow *flow,
                      bool unreference)
    OVS_REQUIRES(x->mutex)
{
    struct xdp_offload_departed *d;

    xdp_offload_flow_unload(flow);
    hmap_remove(&x->flows, &flow->node);
    d = xdp_offload_departed_find(x, flow->in_port);
    if (d && !--d->n_flows) {
        xdp_offload_departed_remove(x, d);
    }
    for (size_t i = 0; unreference && i < flow->n_refs; i++) {
        if (x->unreference_cb) {
            x->unreference_cb(flow->refs[i].pmd_id,
                              flow->refs[i].flow_reference);
        }
    }
    free(flow->refs);
    free(flow);
}

/* Takes port 'port_no' out of 'x'; 'release' if it has left the datapath,
 * so that its netdev gives its kernel resources back at once, though the
 * provider may keep it a while. */
static void
xdp_offload_port_del__(struct xdp_offload *x, odp_port_t port_no,
                       bool release)
{
    struct dpif_offload *offload = &x->offload;
    struct xdp_offload_flow *flow;
    struct dpif_offload_port *port;
    size_t n_in = 0;

    port = dpif_offload_port_mgr_find_by_odp_port(offload, port_no);
    if (!port) {
        return;
    }

    /* Nothing that comes in or goes out by the port stays in XDP.  All
     * those flows stay, with what they counted in XDP, until dpif-netdev
     * deletes them; it reaches the ones that came in by the port through
     * the port's number, which stays ours ("departed") until then. */
    ovs_mutex_lock(&x->mutex);
    HMAP_FOR_EACH (flow, node, &x->flows) {
        if (flow->in_port == port_no) {
            xdp_offload_flow_unload(flow);
            n_in++;
        } else if (flow->entry
                   && afxdp_flow_out_port(flow->entry) == port_no) {
            xdp_offload_flow_unload(flow);
        }
    }
    if (n_in) {
        struct xdp_offload_departed *d = xzalloc(sizeof *d);

        d->port_no = port_no;
        d->netdev = netdev_ref(port->netdev);
        d->n_flows = n_in;
        /* In before the port is out, so that a reader always finds one. */
        cmap_insert(&x->departed, &d->node, xdp_offload_port_hash(port_no));
    }
    port = dpif_offload_port_mgr_remove(offload, port_no);
    ovs_mutex_unlock(&x->mutex);

    if (port) {
        if (release) {
            netdev_afxdp_release(port->netdev);
        }
        ovsrcu_postpone(xdp_offload_port_free, port);
    }
}

/* dpif-netdev calls this once the port has left the datapath. */
static int
xdp_offload_port_del(struct dpif_offload *offload, odp_port_t port_no)
{
    xdp_offload_port_del__(xdp_offload_cast(offload), port_no, true);
    return 0;
}

static void xdp_offload_thread_stop(struct xdp_offload *);

static void
xdp_offload_close(struct dpif_offload *offload)
{
    struct xdp_offload *x = xdp_offload_cast(offload);
    struct xdp_offload_departed *d;
    struct dpif_offload_port *port;
    struct xdp_offload_flow *flow;

    /* What was asked before is done first. */
    xdp_offload_thread_stop(x);

    /* The ports may still be in a datapath that is not being destroyed. */
    DPIF_OFFLOAD_PORT_FOR_EACH (port, offload) {
        xdp_offload_port_del__(x, port->port_no, false);
    }
    ovs_mutex_lock(&x->mutex);
    HMAP_FOR_EACH_SAFE (flow, node, &x->flows) {
        xdp_offload_flow_free(x, flow, true);
    }
    CMAP_FOR_EACH (d, node, &x->departed) {
        xdp_offload_departed_remove(x, d);
    }
    for (int i = 0; i < XDP_OFFLOAD_N_REFUSALS; i++) {
        free(x->refusals[i].reason);
    }
    ovs_mutex_unlock(&x->mutex);
    afxdp_flow_reclaim();
    hmap_destroy(&x->flows);
    cmap_destroy(&x->departed);
    ovs_mutex_destroy(&x->mutex);
    ovs_mutex_destroy(&x->queue_mutex);
    xpthread_cond_destroy(&x->queue_cond);
    dpif_offload_destroy(offload);
    free(x);
}

/* The netdev of port 'port_no', or of the deleted port of that number
 * whose flows dpif-netdev still has. */
static struct netdev *
xdp_offload_get_netdev(const struct dpif_offload *offload, odp_port_t port_no)
{
    const struct xdp_offload *x = xdp_offload_cast(offload);
    const struct xdp_offload_departed *d;
    struct netdev *netdev;

    netdev = xdp_offload_live_netdev(x, port_no);
    if (!netdev) {
        d = xdp_offload_departed_find(x, port_no);
        netdev = d ? d->netdev : NULL;
    }
    return netdev;
}

static void
xdp_offload_register_unreference_cb(const struct dpif_offload *offload,
                                    dpif_offload_flow_unreference_cb *cb)
{
    struct xdp_offload *x = xdp_offload_cast(offload);

    ovs_mutex_lock(&x->mutex);
    x->unreference_cb = cb;
    ovs_mutex_unlock(&x->mutex);
}

static struct xdp_offload_flow *
xdp_offload_flow_find(const struct xdp_offload *x, const ovs_u128 *ufid)
    OVS_REQUIRES(x->mutex)
{
    struct xdp_offload_flow *flow;

    HMAP_FOR_EACH_WITH_HASH (flow, node, hash_bytes(ufid, sizeof *ufid, 0),
                             &x->flows) {
        if (ovs_u128_equals(flow->ufid, *ufid)) {
            return flow;
        }
    }
    return NULL;
}

static void
xdp_offload_refuse(struct xdp_offload *x, const ovs_u128 *ufid,
                   odp_port_t in_port, char *reason)
    OVS_REQUIRES(x->mutex)
{
    struct xdp_offload_refusal *r;

    r = &x->refusals[x->next_refusal++ % XDP_OFFLOAD_N_REFUSALS];
    free(r->reason);
    r->ufid = *ufid;
    r->in_port = in_port;
    r->reason = reason;
    x->n_refused++;
    VLOG_DBG("flow "UUID_FMT" on port %"PRIu32" stays in user space: %s",
             UUID_ARGS((const struct uuid *) ufid), odp_to_u32(in_port),
             reason);
}

struct xdp_offload_ports_aux {
    const struct xdp_offload *x;
};

static int
xdp_offload_output_ifindex(void *aux_, odp_port_t port_no,
                           const char **reason)
{
    struct xdp_offload_ports_aux *aux = aux_;
    struct netdev *netdev = xdp_offload_live_netdev(aux->x, port_no);
    int ifindex;

    if (!netdev) {
        *reason = "the port is not an afxdp port";
        return 0;
    }
    *reason = netdev_afxdp_flow_offload_obstacle(netdev, true, &ifindex);
    return *reason ? 0 : ifindex;
}

/* Adds 'ref' for 'pmd_id' to 'flow', or replaces that PMD's, in which case
 * returns the one it replaces. */
static void *
xdp_offload_flow_ref(struct xdp_offload_flow *flow, unsigned int pmd_id,
                     void *ref)
{
    for (size_t i = 0; i < flow->n_refs; i++) {
        if (flow->refs[i].pmd_id == pmd_id) {
            void *old = flow->refs[i].flow_reference;

            if (old != ref) {
                COVERAGE_INC(xdp_offload_ref_replaced);
            }
            flow->refs[i].flow_reference = ref;
            return old;
        }
    }
    flow->refs = xrealloc(flow->refs, (flow->n_refs + 1) * sizeof *flow->refs);
    flow->refs[flow->n_refs++] = (struct xdp_offload_ref) { pmd_id, ref };
    return NULL;
}

/* Carries out the put 'op': the megaflow into the XDP table if the
 * program can execute it, otherwise out of it.  Stores in '*previous' the
 * reference of the same PMD thread that the flow held before, if any. */
static int
xdp_offload_do_put(struct xdp_offload *x, const struct xdp_offload_op *op,
                   void **previous)
{
    struct xdp_offload_ports_aux aux = { x };
    const struct afxdp_flow_ports ports = {
        .output_ifindex = xdp_offload_output_ifindex,
        .aux = &aux,
    };
    struct netdev *netdev = xdp_offload_live_netdev(x, op->in_port);
    struct xdp_offload_flow *flow;
    struct afxdp_flow_rule rule;
    const char *obstacle;
    char *reason = NULL;
    int in_ifindex;
    int error = 0;
    uint64_t us;

    obstacle = (netdev
                ? netdev_afxdp_flow_offload_obstacle(netdev, false,
                                                     &in_ifindex)
                : "the port was deleted");
    if (obstacle) {
        reason = xasprintf("in_port: %s", obstacle);
    } else {
        afxdp_flow_translate(&op->match, in_ifindex, op->actions,
                             op->actions_len, &ports, &rule, &reason);
    }

    ovs_mutex_lock(&x->mutex);
    flow = xdp_offload_flow_find(x, &op->ufid);
    if (!reason
        && (xdp_offload_live_netdev(x, op->in_port) != netdev
            || (rule.out_port != ODPP_NONE
                && !xdp_offload_live_netdev(x, rule.out_port)))) {
        /* port_del() took a port out while this was translated. */
        reason = xstrdup("a port of the flow was deleted");
    }
    if (!reason) {
        const char *why = NULL;

        if (flow && flow->entry
            && afxdp_flow_replace(flow->entry, &rule, &why)) {
            /* Its key changed (the in_port's device has a new index), or
             * the kernel refused the change: in anew, if it can be. */
            xdp_offload_flow_unload(flow);
            why = NULL;
        }
        if (!flow || !flow->entry) {
            struct afxdp_flow *entry = afxdp_flow_install(&rule, &why);

            if (entry && !flow) {
                flow = xzalloc(sizeof *flow);
                flow->ufid = op->ufid;
                flow->in_port = op->in_port;
                hmap_insert(&x->flows, &flow->node,
                            hash_bytes(&op->ufid, sizeof op->ufid, 0));
            }
            if (entry) {
                flow->entry = entry;
                flow->entry_packets = 0;
                flow->entry_used = 0;
                x->n_installed++;
            }
        }
        if (why) {
            reason = xstrdup(why);
        }
    }
    if (reason) {
        /* Whatever the flow did in XDP, it does no longer: its packets go
         * to user space. */
        if (flow) {
            xdp_offload_flow_unload(flow);
        }
        xdp_offload_refuse(x, &op->ufid, op->in_port, reason);
    }
    if (flow) {
        /* A flow that dpif-netdev counts as offloaded stays so, in XDP or
         * not, until it deletes it: its statistics go on from ours. */
        *previous = xdp_offload_flow_ref(flow, op->pmd_id,
                                         op->flow_reference);
    } else {
        error = EOPNOTSUPP;
    }
    us = time_usec() - op->queued;
    x->n_puts++;
    x->put_us += us;
    x->put_us_max = MAX(x->put_us_max, us);
    ovs_mutex_unlock(&x->mutex);
    return error;
}

/* Carries out the delete 'op': the PMD thread's reference goes, and the
 * flow with the last one. */
static int
xdp_offload_do_del(struct xdp_offload *x, const struct xdp_offload_op *op)
{
    struct xdp_offload_flow *flow;
    int error = ENOENT;

    ovs_mutex_lock(&x->mutex);
    flow = xdp_offload_flow_find(x, &op->ufid);
    if (flow) {
        for (size_t i = 0; i < flow->n_refs; i++) {
            if (flow->refs[i].pmd_id == op->pmd_id
                && flow->refs[i].flow_reference == op->flow_reference) {
                flow->refs[i] = flow->refs[--flow->n_refs];
                error = 0;
                break;
            }
        }
        if (!error && !flow->n_refs) {
            xdp_offload_flow_free(x, flow, false);
        }
    }
    if (error) {
        COVERAGE_INC(xdp_offload_del_unmatched);
    }
    ovs_mutex_unlock(&x->mutex);
    return error;
}

static void
xdp_offload_execute(struct xdp_offload *x, struct xdp_offload_op *op)
{
    void *previous = NULL;
    int error;

    error = (op->put
             ? xdp_offload_do_put(x, op, &previous)
             : xdp_offload_do_del(x, op));
    dpif_offload_datapath_flow_op_continue(&op->cb, NULL, op->pmd_id,
                                           op->flow_reference, previous,
                                           error);
    free(op->actions);
    free(op);
}

/* The provider's thread: carries out the queued requests in order and,
 * when there are none, returns the statistics entries of removed flows
 * to the table once the programs are done with them, and lets the
 * programs use their flow caches again (afxdp_flow_reclaim()).  Exits
 * when asked to and nothing is left to do. */
static void *
xdp_offload_thread(void *x_)
{
    struct xdp_offload *x = x_;

    for (;;) {
        struct xdp_offload_op *op;

        ovs_mutex_lock(&x->queue_mutex);
        while (ovs_list_is_empty(&x->queue) && !x->exiting) {
            bool reclaim = afxdp_flow_reclaim_pending();

            if (!reclaim) {
                ovsrcu_quiesce_start();
                ovs_mutex_cond_wait(&x->queue_cond, &x->queue_mutex);
                ovsrcu_quiesce_end();
            } else {
                ovs_mutex_unlock(&x->queue_mutex);
                ovsrcu_quiesce_start();
                afxdp_flow_reclaim();
                ovsrcu_quiesce_end();
                ovs_mutex_lock(&x->queue_mutex);
            }
        }
        if (ovs_list_is_empty(&x->queue)) {
            ovs_mutex_unlock(&x->queue_mutex);
            break;
        }
        op = CONTAINER_OF(ovs_list_pop_front(&x->queue),
                          struct xdp_offload_op, node);
        ovs_mutex_unlock(&x->queue_mutex);

        xdp_offload_execute(x, op);

        ovs_mutex_lock(&x->queue_mutex);
        x->n_queued--;
        ovs_mutex_unlock(&x->queue_mutex);
        ovsrcu_quiesce();
    }
    return NULL;
}

/* Queues 'op' for the provider's thread, which it starts the first
 * time. */
static void
xdp_offload_enqueue(struct xdp_offload *x, struct xdp_offload_op *op)
{
    op->queued = time_usec();
    ovs_mutex_lock(&x->queue_mutex);
    if (!x->thread_started) {
        x->thread = ovs_thread_create("xdp_offload", xdp_offload_thread, x);
        x->thread_started = true;
    }
    ovs_list_push_back(&x->queue, &op->node);
    x->n_queued++;
    x->n_queued_max = MAX(x->n_queued_max, x->n_queued);
    xpthread_cond_signal(&x->queue_cond);
    ovs_mutex_unlock(&x->queue_mutex);
}

/* Has the provider's thread carry out what is queued, then exit. */
static void
xdp_offload_thread_stop(struct xdp_offload *x)
{
    bool started;

    ovs_mutex_lock(&x->queue_mutex);
    x->exiting = true;
    started = x->thread_started;
    xpthread_cond_signal(&x->queue_cond);
    ovs_mutex_unlock(&x->queue_mutex);
    if (started) {
        xpthread_join(x->thread, NULL);
    }
}

static int
xdp_offload_flow_put(const struct dpif_offload *offload,
                     struct netdev *netdev OVS_UNUSED,
                     struct dpif_offload_flow_put *put,
                     void **previous_flow_reference OVS_UNUSED)
{
    struct xdp_offload_op *op = xzalloc(sizeof *op);

    op->put = true;
    op->ufid = *put->ufid;
    op->in_port = put->in_port;
    op->pmd_id = put->pmd_id;
    op->flow_reference = put->flow_reference;
    op->cb = put->cb_data;
    op->match = *put->match;
    op->actions = xmemdup(put->actions, put->actions_len);
    op->actions_len = put->actions_len;
    xdp_offload_enqueue(xdp_offload_cast(offload), op);
    return EINPROGRESS;
}

static int
xdp_offload_flow_del(const struct dpif_offload *offload,
                     struct netdev *netdev OVS_UNUSED,
                     struct dpif_offload_flow_del *del)
{
    struct xdp_offload_op *op = xzalloc(sizeof *op);

    op->ufid = *del->ufid;
    op->in_port = del->in_port;
    op->pmd_id = del->pmd_id;
    op->flow_reference = del->flow_reference;
    op->cb = del->cb_data;
    xdp_offload_enqueue(xdp_offload_cast(offload), op);
    return EINPROGRESS;
}

/* Takes 'flow' out of XDP if its ports no longer allow it there: the
 * in_port's program was reconfigured, or the output's device stopped
 * taking XDP frames (a veth whose peer turned GRO off).  The revalidators
 * read every flow's statistics at least once a second, so this takes no
 * longer. */
static void
xdp_offload_flow_revalidate(struct xdp_offload *x,
                            struct xdp_offload_flow *flow)
    OVS_REQUIRES(x->mutex)
{
    odp_port_t out = afxdp_flow_out_port(flow->entry);
    struct netdev *netdev;
    const char *reason = NULL;
    int ifindex;

    netdev = xdp_offload_live_netdev(x, flow->in_port);
    if (netdev) {
        reason = netdev_afxdp_flow_offload_obstacle(netdev, false, &ifindex);
    }
    if (!reason && out != ODPP_NONE) {
        netdev = xdp_offload_live_netdev(x, out);
        if (netdev) {
            reason = netdev_afxdp_flow_offload_obstacle(netdev, true,
                                                        &ifindex);
        }
    }
    if (reason) {
        xdp_offload_flow_unload(flow);
        xdp_offload_refuse(x, &flow->ufid, flow->in_port,
                           xasprintf("taken out of XDP: %s", reason));
    }
}

/* Whether a deletion of 'ufid' waits in the queue.  dpif-netdev reads a
 * flow's last statistics before it asks for the deletion: whatever asks
 * for them after that asks for a new flow of the same megaflow, which
 * must not start from the counts of the one that is going. */
static bool
xdp_offload_del_queued(struct xdp_offload *x, const ovs_u128 *ufid)
{
    const struct xdp_offload_op *op;
    bool found = false;

    ovs_mutex_lock(&x->queue_mutex);
    LIST_FOR_EACH (op, node, &x->queue) {
        if (!op->put && ovs_u128_equals(op->ufid, *ufid)) {
            found = true;
            break;
        }
    }
    ovs_mutex_unlock(&x->queue_mutex);
    return found;
}

static bool
xdp_offload_flow_stats(const struct dpif_offload *offload,
                       struct netdev *netdev OVS_UNUSED, const ovs_u128 *ufid,
                       struct dpif_flow_stats *stats,
                       struct dpif_flow_attrs *attrs)
{
    struct xdp_offload *x = xdp_offload_cast(offload);
    struct xdp_offload_flow *flow;

    ovs_mutex_lock(&x->mutex);
    flow = xdp_offload_flow_find(x, ufid);
    if (flow && xdp_offload_del_queued(x, ufid)) {
        flow = NULL;
    }
    if (flow) {
        if (flow->entry) {
            xdp_offload_flow_revalidate(x, flow);
        }
        xdp_offload_flow_read_stats(flow);
        stats->n_packets = flow->stats.packets;
        stats->n_bytes = flow->stats.bytes;
        stats->used = flow->stats.used;
        stats->tcp_flags = flow->stats.tcp_flags;
        attrs->offloaded = flow->entry != NULL;
        attrs->dp_layer = flow->entry ? "xdp" : "ovs";
    }
    ovs_mutex_unlock(&x->mutex);
    return flow != NULL;
}

static uint64_t
xdp_offload_flow_count(const struct dpif_offload *offload)
{
    struct xdp_offload *x = xdp_offload_cast(offload);
    uint64_t n;

    ovs_mutex_lock(&x->mutex);
    n = xdp_offload_n_loaded(x);
    ovs_mutex_unlock(&x->mutex);
    return n;
}

static void
xdp_offload_get_debug_text(struct xdp_offload *x, struct ds *ds)
    OVS_REQUIRES(x->mutex)
{
    uint64_t counters[AFXDP_FLOW_N_COUNTERS];
    const struct xdp_offload_departed *d;
    size_t kernel_flows, kernel_masks;
    struct dpif_offload_port *port;
    struct xdp_offload_flow *flow;

    DPIF_OFFLOAD_PORT_FOR_EACH (port, &x->offload) {
        const char *obstacle;
        size_t n = 0;
        int ifindex;

        HMAP_FOR_EACH (flow, node, &x->flows) {
            n += flow->entry && flow->in_port == port->port_no;
        }
        obstacle = netdev_afxdp_flow_offload_obstacle(port->netdev, false,
                                                      &ifindex);
        ds_put_format(ds, "  - %s: port_no: %"PRIu32", flows: %"PRIuSIZE
                      ", %s%s\n", netdev_get_name(port->netdev),
                      odp_to_u32(port->port_no), n,
                      obstacle ? "not offloading: " : "offloading",
                      obstacle ? obstacle : "");
    }
    afxdp_flow_count_kernel(&kernel_flows, &kernel_masks);
    ds_put_format(ds, "    flows: %"PRIuSIZE", masks: %"PRIuSIZE
                  " of %d, installed ever: %"PRIu64", refused ever: %"PRIu64
                  "\n", xdp_offload_n_loaded(x), afxdp_flow_n_masks(),
                  AFXDP_FLOW_MAX_MASKS, x->n_installed, x->n_refused);
    ds_put_format(ds, "    kernel maps: %"PRIuSIZE" flows, %"PRIuSIZE
                  " masks\n", kernel_flows, kernel_masks);
    ds_put_format(ds, "    datapath flows counted as offloaded: %"PRIuSIZE
                  "\n", hmap_count(&x->flows));
    ds_put_format(ds, "    flow puts: %"PRIu64", average %"PRIu64" us, "
                  "longest %"PRIu64" us\n", x->n_puts,
                  x->n_puts ? x->put_us / x->n_puts : 0, x->put_us_max);
    ovs_mutex_lock(&x->queue_mutex);
    ds_put_format(ds, "    requests not yet done: %"PRIuSIZE", at most %"
                  PRIuSIZE"\n", x->n_queued, x->n_queued_max);
    ovs_mutex_unlock(&x->queue_mutex);
    CMAP_FOR_EACH (d, node, &x->departed) {
        ds_put_format(ds, "    deleted port_no %"PRIu32": %"PRIuSIZE
                      " flows until the datapath deletes them\n",
                      odp_to_u32(d->port_no), d->n_flows);
    }
    afxdp_flow_counters(counters);
    for (int i = 0; i < AFXDP_FLOW_N_COUNTERS; i++) {
        ds_put_format(ds, "    %s: %"PRIu64"\n",
                      afxdp_flow_counter_name(i), counters[i]);
    }
    HMAP_FOR_EACH (flow, node, &x->flows) {
        if (flow->entry) {
            ds_put_format(ds, "    offloaded: ufid:"UUID_FMT" in_port %"PRIu32
                          "\n", UUID_ARGS((const struct uuid *) &flow->ufid),
                          odp_to_u32(flow->in_port));
        }
    }
    for (unsigned int i = 0; i < XDP_OFFLOAD_N_REFUSALS; i++) {
        const struct xdp_offload_refusal *r;

        r = &x->refusals[(x->next_refusal + i) % XDP_OFFLOAD_N_REFUSALS];
        if (r->reason) {
            ds_put_format(ds, "    refused: ufid:"UUID_FMT" in_port %"PRIu32
                          ": %s\n", UUID_ARGS((const struct uuid *) &r->ufid),
                          odp_to_u32(r->in_port), r->reason);
        }
    }
}

static void
xdp_offload_get_debug_json(struct xdp_offload *x, struct json *json)
    OVS_REQUIRES(x->mutex)
{
    uint64_t counters[AFXDP_FLOW_N_COUNTERS];
    struct json *refusals = json_array_create_empty();

    json_object_put(json, "flows",
                    json_integer_create(xdp_offload_n_loaded(x)));
    json_object_put(json, "masks", json_integer_create(afxdp_flow_n_masks()));
    json_object_put(json, "installed", json_integer_create(x->n_installed));
    json_object_put(json, "refused", json_integer_create(x->n_refused));
    afxdp_flow_counters(counters);
    for (int i = 0; i < AFXDP_FLOW_N_COUNTERS; i++) {
        json_object_put(json, afxdp_flow_counter_name(i),
                        json_integer_create(counters[i]));
    }
    for (unsigned int i = 0; i < XDP_OFFLOAD_N_REFUSALS; i++) {
        const struct xdp_offload_refusal *r;

        r = &x->refusals[(x->next_refusal + i) % XDP_OFFLOAD_N_REFUSALS];
        if (r->reason) {
            json_array_add(refusals, json_string_create(r->reason));
        }
    }
    json_object_put(json, "last_refusals", refusals);
}

static void
xdp_offload_get_debug(const struct dpif_offload *offload, struct ds *ds,
                      struct json *json)
{
    struct xdp_offload *x = xdp_offload_cast(offload);

    ovs_mutex_lock(&x->mutex);
    if (json) {
        xdp_offload_get_debug_json(x, json);
    } else if (ds) {
        xdp_offload_get_debug_text(x, ds);
    }
    ovs_mutex_unlock(&x->mutex);
}

static void
xdp_offload_add_counter(struct netdev_custom_stats *stats, const char *name,
                        uint64_t value)
{
    struct netdev_custom_counter *c = &stats->counters[stats->size++];

    ovs_strlcpy(c->name, name, sizeof c->name);
    c->value = value;
}

static int
xdp_offload_get_global_stats(const struct dpif_offload *offload,
                             struct netdev_custom_stats *stats)
{
    struct xdp_offload *x = xdp_offload_cast(offload);
    uint64_t counters[AFXDP_FLOW_N_COUNTERS];

    afxdp_flow_counters(counters);
    stats->label = xstrdup(dpif_offload_name(offload));
    stats->counters = xcalloc(AFXDP_FLOW_N_COUNTERS + 4,
                              sizeof *stats->counters);
    stats->size = 0;
    ovs_mutex_lock(&x->mutex);
    xdp_offload_add_counter(stats, "flows", xdp_offload_n_loaded(x));
    xdp_offload_add_counter(stats, "installed", x->n_installed);
    xdp_offload_add_counter(stats, "refused", x->n_refused);
    xdp_offload_add_counter(stats, "put_us_average",
                            x->n_puts ? x->put_us / x->n_puts : 0);
    ovs_mutex_unlock(&x->mutex);
    for (int i = 0; i < AFXDP_FLOW_N_COUNTERS; i++) {
        xdp_offload_add_counter(stats, afxdp_flow_counter_name(i),
                                counters[i]);
    }
    return 0;
}

struct dpif_offload_class dpif_offload_xdp_class = {
    .type = "xdp",
    .impl_type = DPIF_OFFLOAD_IMPL_FLOWS_DPIF_SYNCED,
    .supported_dpif_types = (const char *const[]) { "netdev", NULL },
    .open = xdp_offload_open,
    .close = xdp_offload_close,
    .get_debug = xdp_offload_get_debug,
    .get_global_stats = xdp_offload_get_global_stats,
    .can_offload = xdp_offload_can_offload,
    .port_add = xdp_offload_port_add,
    .port_del = xdp_offload_port_del,
    .flow_count = xdp_offload_flow_count,
    .get_netdev = xdp_offload_get_netdev,
    .netdev_flow_put = xdp_offload_flow_put,
    .netdev_flow_del = xdp_offload_flow_del,
    .netdev_flow_stats = xdp_offload_flow_stats,
    .register_flow_unreference_cb = xdp_offload_register_unreference_cb,
};
