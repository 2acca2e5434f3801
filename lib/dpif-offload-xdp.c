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
 * does.  Installation, modification and deletion are synchronous: when
 * the call returns, the program sees the change.  Statistics are the
 * program's, returned cumulatively for dpif-netdev to add to its own.
 *
 * Thread-safety: the callbacks come from PMD, handler, revalidator and
 * main threads; 'mutex' serializes them and afxdp-flow.
 */

#include <config.h>

#include <errno.h>

#include "afxdp-flow.h"
#include "dpif.h"
#include "dpif-offload.h"
#include "dpif-offload-provider.h"
#include "netdev-afxdp.h"
#include "netdev-provider.h"
#include "odp-util.h"
#include "openvswitch/dynamic-string.h"
#include "openvswitch/hmap.h"
#include "openvswitch/json.h"
#include "openvswitch/match.h"
#include "openvswitch/vlog.h"
#include "ovs-rcu.h"
#include "ovs-thread.h"
#include "smap.h"
#include "timeval.h"
#include "util.h"
#include "uuid.h"

VLOG_DEFINE_THIS_MODULE(dpif_offload_xdp);

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
};

struct xdp_offload_refusal {
    ovs_u128 ufid;
    odp_port_t in_port;
    char *reason;
};

struct xdp_offload {
    struct dpif_offload offload;

    struct ovs_mutex mutex;
    struct hmap flows OVS_GUARDED;
    dpif_offload_flow_unreference_cb *unreference_cb OVS_GUARDED;
    uint64_t n_installed OVS_GUARDED;   /* Ever. */
    uint64_t n_refused OVS_GUARDED;     /* Ever. */
    uint64_t n_puts OVS_GUARDED;        /* Ever. */
    uint64_t put_us OVS_GUARDED;        /* Time spent in them. */
    uint64_t put_us_max OVS_GUARDED;
    struct xdp_offload_refusal refusals[XDP_OFFLOAD_N_REFUSALS]
        OVS_GUARDED;
    unsigned int next_refusal OVS_GUARDED;
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
    *offloadp = &x->offload;
    return 0;
}

static bool
xdp_offload_can_offload(struct dpif_offload *offload OVS_UNUSED,
                        struct netdev *netdev)
{
    return xdp_is_afxdp(netdev);
}

static int
xdp_offload_port_add(struct dpif_offload *offload, struct netdev *netdev,
                     odp_port_t port_no)
{
    struct dpif_offload_port *port = xzalloc(sizeof *port);

    if (!dpif_offload_port_mgr_add(offload, port, netdev, port_no, false)) {
        free(port);
        return EEXIST;
    }
    return 0;
}

static void
xdp_offload_port_free(struct dpif_offload_port *port)
{
    netdev_close(port->netdev);
    free(port);
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
    xdp_offload_flow_unload(flow);
    hmap_remove(&x->flows, &flow->node);
    for (size_t i = 0; unreference && i < flow->n_refs; i++) {
        if (x->unreference_cb) {
            x->unreference_cb(flow->refs[i].pmd_id,
                              flow->refs[i].flow_reference);
        }
    }
    free(flow->refs);
    free(flow);
}

static int
xdp_offload_port_del(struct dpif_offload *offload, odp_port_t port_no)
{
    struct xdp_offload *x = xdp_offload_cast(offload);
    struct xdp_offload_flow *flow;
    struct dpif_offload_port *port;

    /* Nothing that comes in or goes out by the port stays in XDP.  The
     * flows that go out by it stay until dpif-netdev deletes them; those
     * that come in by it are given back now, as dpif-netdev can no longer
     * reach this provider for them once the port is gone. */
    ovs_mutex_lock(&x->mutex);
    HMAP_FOR_EACH_SAFE (flow, node, &x->flows) {
        if (flow->in_port == port_no) {
            xdp_offload_flow_free(x, flow, true);
        } else if (flow->entry
                   && afxdp_flow_out_port(flow->entry) == port_no) {
            xdp_offload_flow_unload(flow);
        }
    }
    ovs_mutex_unlock(&x->mutex);

    port = dpif_offload_port_mgr_remove(offload, port_no);
    if (port) {
        ovsrcu_postpone(xdp_offload_port_free, port);
    }
    return 0;
}

static void
xdp_offload_close(struct dpif_offload *offload)
{
    struct xdp_offload *x = xdp_offload_cast(offload);
    struct dpif_offload_port *port;
    struct xdp_offload_flow *flow;

    DPIF_OFFLOAD_PORT_FOR_EACH (port, offload) {
        xdp_offload_port_del(offload, port->port_no);
    }
    ovs_mutex_lock(&x->mutex);
    HMAP_FOR_EACH_SAFE (flow, node, &x->flows) {
        xdp_offload_flow_free(x, flow, true);
    }
    for (int i = 0; i < XDP_OFFLOAD_N_REFUSALS; i++) {
        free(x->refusals[i].reason);
    }
    ovs_mutex_unlock(&x->mutex);
    hmap_destroy(&x->flows);
    ovs_mutex_destroy(&x->mutex);
    dpif_offload_destroy(offload);
    free(x);
}

static struct netdev *
xdp_offload_get_netdev(const struct dpif_offload *offload, odp_port_t port_no)
{
    struct dpif_offload_port *port;

    port = dpif_offload_port_mgr_find_by_odp_port(offload, port_no);
    return port ? port->netdev : NULL;
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
    const struct dpif_offload *offload;
};

static int
xdp_offload_output_ifindex(void *aux_, odp_port_t port_no,
                           const char **reason)
{
    struct xdp_offload_ports_aux *aux = aux_;
    struct netdev *netdev = xdp_offload_get_netdev(aux->offload, port_no);
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

            flow->refs[i].flow_reference = ref;
            return old;
        }
    }
    flow->refs = xrealloc(flow->refs, (flow->n_refs + 1) * sizeof *flow->refs);
    flow->refs[flow->n_refs++] = (struct xdp_offload_ref) { pmd_id, ref };
    return NULL;
}

static int
xdp_offload_flow_put(const struct dpif_offload *offload,
                     struct netdev *netdev, struct dpif_offload_flow_put *put,
                     void **previous_flow_reference)
{
    struct xdp_offload *x = xdp_offload_cast(offload);
    struct xdp_offload_ports_aux aux = { offload };
    const struct afxdp_flow_ports ports = {
        .output_ifindex = xdp_offload_output_ifindex,
        .aux = &aux,
    };
    struct xdp_offload_flow *flow;
    long long int start = time_usec();
    struct afxdp_flow_rule rule;
    const char *obstacle;
    char *reason = NULL;
    int in_ifindex;
    int error = 0;
    uint64_t us;

    obstacle = netdev_afxdp_flow_offload_obstacle(netdev, false, &in_ifindex);
    if (obstacle) {
        reason = xasprintf("in_port: %s", obstacle);
    } else {
        afxdp_flow_translate(put->match, in_ifindex, put->actions,
                             put->actions_len, &ports, &rule, &reason);
    }

    ovs_mutex_lock(&x->mutex);
    flow = xdp_offload_flow_find(x, put->ufid);
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
                flow->ufid = *put->ufid;
                flow->in_port = put->in_port;
                hmap_insert(&x->flows, &flow->node,
                            hash_bytes(put->ufid, sizeof *put->ufid, 0));
            }
            if (entry) {
                flow->entry = entry;
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
        xdp_offload_refuse(x, put->ufid, put->in_port, reason);
    }
    if (flow) {
        /* A flow that dpif-netdev counts as offloaded stays so, in XDP or
         * not, until it deletes it: its statistics go on from ours. */
        *previous_flow_reference = xdp_offload_flow_ref(flow, put->pmd_id,
                                                        put->flow_reference);
    } else {
        error = EOPNOTSUPP;
    }
    us = time_usec() - start;
    x->n_puts++;
    x->put_us += us;
    x->put_us_max = MAX(x->put_us_max, us);
    ovs_mutex_unlock(&x->mutex);
    return error;
}

static int
xdp_offload_flow_del(const struct dpif_offload *offload,
                     struct netdev *netdev OVS_UNUSED,
                     struct dpif_offload_flow_del *del)
{
    struct xdp_offload *x = xdp_offload_cast(offload);
    struct xdp_offload_flow *flow;
    int error = ENOENT;

    ovs_mutex_lock(&x->mutex);
    flow = xdp_offload_flow_find(x, del->ufid);
    if (flow) {
        for (size_t i = 0; i < flow->n_refs; i++) {
            if (flow->refs[i].pmd_id == del->pmd_id
                && flow->refs[i].flow_reference == del->flow_reference) {
                flow->refs[i] = flow->refs[--flow->n_refs];
                error = 0;
                break;
            }
        }
        if (!error && !flow->n_refs) {
            xdp_offload_flow_free(x, flow, false);
        }
    }
    ovs_mutex_unlock(&x->mutex);
    return error;
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

    netdev = xdp_offload_get_netdev(&x->offload, flow->in_port);
    if (netdev) {
        reason = netdev_afxdp_flow_offload_obstacle(netdev, false, &ifindex);
    }
    if (!reason && out != ODPP_NONE) {
        netdev = xdp_offload_get_netdev(&x->offload, out);
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
    ds_put_format(ds, "    flow puts: %"PRIu64", average %"PRIu64" us, "
                  "longest %"PRIu64" us\n", x->n_puts,
                  x->n_puts ? x->put_us / x->n_puts : 0, x->put_us_max);
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
