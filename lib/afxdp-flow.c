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

#include "afxdp-flow.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/membarrier.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "flow.h"
#include "id-pool.h"
#include "netlink.h"
#include "odp-netlink.h"
#include "odp-util.h"
#include "openvswitch/dynamic-string.h"
#include "openvswitch/match.h"
#include "openvswitch/vlog.h"
#include "ovs-atomic.h"
#include "ovs-thread.h"
#include "packets.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(afxdp_flow);

BUILD_ASSERT_DECL(sizeof(struct afxdp_flow_key) % 8 == 0);
BUILD_ASSERT_DECL(sizeof(struct afxdp_flow_stats) == 24);

/* The shared maps, in the order of 'map_defs'. */
enum afxdp_flow_map {
    MAP_CFG,
    MAP_MASKS,
    MAP_TABLE,
    MAP_STATS,
    MAP_COUNTERS,
    MAP_CACHE,
    N_MAPS
};

static const struct afxdp_flow_map_def {
    const char *name;
    enum bpf_map_type type;
    uint32_t key_size;
    uint32_t value_size;
    uint32_t max_entries;
    uint32_t flags;
} map_defs[N_MAPS] = {
    [MAP_CFG] = { AFXDP_FLOW_CFG_NAME, BPF_MAP_TYPE_ARRAY, 4,
                  sizeof(struct afxdp_flow_cfg), 1, 0 },
    [MAP_MASKS] = { AFXDP_FLOW_MASKS_NAME, BPF_MAP_TYPE_HASH, 4,
                    sizeof(struct afxdp_flow_mask), AFXDP_FLOW_MAX_MASKS,
                    BPF_F_NO_PREALLOC },
    [MAP_TABLE] = { AFXDP_FLOW_TABLE_NAME, BPF_MAP_TYPE_HASH,
                    sizeof(struct afxdp_flow_lookup),
                    sizeof(struct afxdp_flow_action), AFXDP_FLOW_MAX,
                    BPF_F_NO_PREALLOC },
    /* Its size depends on the CPUs: see afxdp_flow_capacity(). */
    [MAP_STATS] = { AFXDP_FLOW_STATS_NAME, BPF_MAP_TYPE_PERCPU_ARRAY, 4,
                    sizeof(struct afxdp_flow_stats), 0, 0 },
    [MAP_COUNTERS] = { AFXDP_FLOW_COUNTERS_NAME, BPF_MAP_TYPE_PERCPU_ARRAY,
                       4, sizeof(uint64_t), AFXDP_FLOW_N_COUNTERS, 0 },
    /* Its size too: see afxdp_flow_cache_entries(). */
    [MAP_CACHE] = { AFXDP_FLOW_CACHE_NAME, BPF_MAP_TYPE_PERCPU_ARRAY, 4,
                    sizeof(struct afxdp_flow_cache_entry), 0, 0 },
};

/* Set once by afxdp_flow_init(), then read-only. */
static int map_fds[N_MAPS] = { -1, -1, -1, -1, -1, -1 };
/* The possible CPUs, as many as 'flow_stats' has entries for each flow. */
static int n_cpus;

/* The flows that the table holds, at most AFXDP_FLOW_MAX: as many as
 * AFXDP_FLOW_STATS_BUDGET bytes of per-CPU statistics allow. */
static uint32_t capacity;
/* The entries of 'flow_cache', a power of 2, and 64 - its log2. */
static uint32_t cache_entries;
static uint32_t cache_shift;
static const char *init_reason;
static int init_error;

/* Mask slots, as in 'flow_masks'. */
struct afxdp_flow_slot {
    uint32_t id;                /* 0: free. */
    unsigned int n_flows;
    struct afxdp_flow_key mask;
};

/* The table's books, one set per process as the maps are, whichever
 * offload provider (datapath) installs the flows. */
static struct ovs_mutex flow_mutex = OVS_MUTEX_INITIALIZER;
static struct afxdp_flow_slot slots[AFXDP_FLOW_MAX_MASKS]
    OVS_GUARDED_BY(flow_mutex);
static uint32_t n_slots OVS_GUARDED_BY(flow_mutex);    /* In 'flow_cfg'. */

/* The table's generation, in 'flow_cfg' (see afxdp-prog.h): odd from
 * the first change after it was last settled, until afxdp_flow_reclaim()
 * settles it.  'n_changes' counts the changes. */
static uint64_t gen OVS_GUARDED_BY(flow_mutex);
static uint64_t n_changes OVS_GUARDED_BY(flow_mutex);
static uint32_t next_mask_id OVS_GUARDED_BY(flow_mutex) = 1;
static struct id_pool *stats_ids OVS_GUARDED_BY(flow_mutex);

/* Statistics entries of removed flows, not yet back in 'stats_ids': a
 * program that found the flow just before its removal may still count
 * into its entry, until the kernel's RCU grace period that began after
 * the removal ends (afxdp_flow_reclaim()). */
static uint32_t *retired OVS_GUARDED_BY(flow_mutex);
static size_t n_retired OVS_GUARDED_BY(flow_mutex);
static size_t allocated_retired OVS_GUARDED_BY(flow_mutex);

struct afxdp_flow {
    struct afxdp_flow_lookup lookup;
    int slot;
    uint32_t stats;
    odp_port_t out_port;
};

/* How many flows the table holds on a host with 'cpus' possible CPUs:
 * their statistics take sizeof(struct afxdp_flow_stats) bytes per flow
 * and CPU, allocated up front by the kernel, so fewer flows on a host
 * with many CPUs (65536 up to 21 CPUs, 21845 with 64, 5461 with 256). */
static uint32_t
afxdp_flow_capacity(int cpus)
{
    size_t per_flow = sizeof(struct afxdp_flow_stats) * cpus;

    return MIN(AFXDP_FLOW_MAX, AFXDP_FLOW_STATS_BUDGET / per_flow);
}

/* How many entries each CPU's flow cache has on a host with 'cpus'
 * possible CPUs (see afxdp-prog.h). */
static uint32_t
afxdp_flow_cache_entries(int cpus)
{
    size_t fit = (AFXDP_FLOW_CACHE_BUDGET
                  / (sizeof(struct afxdp_flow_cache_entry) * cpus));
    uint32_t n = AFXDP_FLOW_CACHE_MAX;

    while (n > AFXDP_FLOW_CACHE_MIN && n > fit) {
        n /= 2;
    }
    return n;
}

static int
afxdp_flow_create_maps(void)
{
    n_cpus = libbpf_num_possible_cpus();
    if (n_cpus <= 0) {
        VLOG_WARN("cannot tell the number of possible CPUs (%s)",
                  ovs_strerror(-n_cpus));
        return n_cpus ? -n_cpus : EINVAL;
    }
    capacity = afxdp_flow_capacity(n_cpus);
    if (capacity < AFXDP_FLOW_MAX) {
        VLOG_INFO("the XDP flow table holds %"PRIu32" flows: their "
                  "statistics take %"PRIuSIZE" bytes each on each of %d "
                  "possible CPUs", capacity,
                  sizeof(struct afxdp_flow_stats), n_cpus);
    }
    cache_entries = afxdp_flow_cache_entries(n_cpus);
    cache_shift = 64 - raw_ctz(cache_entries);
    if (cache_entries < AFXDP_FLOW_CACHE_MAX) {
        VLOG_INFO("the XDP flow cache has %"PRIu32" entries on each of %d "
                  "possible CPUs", cache_entries, n_cpus);
    }
    for (int i = 0; i < N_MAPS; i++) {
        const struct afxdp_flow_map_def *d = &map_defs[i];
        LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = d->flags);
        uint32_t max_entries = (d->max_entries ? d->max_entries
                                : i == MAP_CACHE ? cache_entries
                                : capacity);
        int fd = bpf_map_create(d->type, d->name, d->key_size,
                                d->value_size, max_entries, &opts);

        if (fd < 0) {
            int error = errno;

            VLOG_WARN("cannot create BPF map %s for flow offload (%s)",
                      d->name, ovs_strerror(error));
            return error;
        }
        map_fds[i] = fd;
    }

    ovs_mutex_lock(&flow_mutex);
    stats_ids = id_pool_create(0, capacity);
    ovs_mutex_unlock(&flow_mutex);
    return 0;
}

/* Creates the shared maps, once per process.  Returns 0 if they exist,
 * otherwise a positive errno, with why in '*reason' if 'reason' is
 * nonnull. */
int
afxdp_flow_init(const char **reason)
{
    static struct ovsthread_once once = OVSTHREAD_ONCE_INITIALIZER;

    if (ovsthread_once_start(&once)) {
        init_error = afxdp_flow_create_maps();
        if (init_error) {
            for (int i = 0; i < N_MAPS; i++) {
                if (map_fds[i] >= 0) {
                    close(map_fds[i]);
                    map_fds[i] = -1;
                }
            }
            init_reason = "the kernel refused the flow table's maps";
        }
        ovsthread_once_done(&once);
    }
    if (init_error && reason) {
        *reason = init_reason;
    }
    return init_error;
}

/* Makes the flow table's maps of our object 'obj', not yet loaded, the
 * process's shared ones.  An object without them (a user's) is left
 * alone.  Returns 0 or a positive errno. */
int
afxdp_flow_reuse_maps(struct bpf_object *obj)
{
    if (afxdp_flow_init(NULL)) {
        return 0;               /* The object keeps maps of its own. */
    }
    for (int i = 0; i < N_MAPS; i++) {
        struct bpf_map *map = bpf_object__find_map_by_name(obj,
                                                           map_defs[i].name);
        int error;

        if (!map) {
            continue;
        }
        error = bpf_map__reuse_fd(map, map_fds[i]);
        if (error) {
            return -error;
        }
    }
    return 0;
}

/* Translation. */

#define FIELD(NAME) { #NAME, offsetof(struct flow, NAME), \
                      sizeof ((struct flow *) NULL)->NAME }

/* Fields the program does not parse, each zero in every packet that it
 * does not leave to user space: a megaflow may match them only as zero. */
static const struct {
    const char *name;
    size_t ofs;
    size_t size;
} zero_fields[] = {
    FIELD(tunnel), FIELD(metadata), FIELD(regs), FIELD(skb_priority),
    FIELD(pkt_mark), FIELD(dp_hash), FIELD(in_port), FIELD(recirc_id),
    FIELD(ct_state), FIELD(ct_nw_proto), FIELD(ct_zone), FIELD(ct_mark),
    FIELD(packet_type), FIELD(ct_label), FIELD(conj_id),
    FIELD(actset_output), FIELD(vlans), FIELD(mpls_lse), FIELD(ct_nw_src),
    FIELD(ct_nw_dst), FIELD(ct_ipv6_src), FIELD(ct_ipv6_dst),
    FIELD(nd_target), FIELD(nsh), FIELD(ct_tp_src), FIELD(ct_tp_dst),
    FIELD(igmp_group_ip4),
};

static const char *
afxdp_flow_field_name(size_t ofs)
{
    for (size_t i = 0; i < ARRAY_SIZE(zero_fields); i++) {
        if (ofs >= zero_fields[i].ofs
            && ofs < zero_fields[i].ofs + zero_fields[i].size) {
            return zero_fields[i].name;
        }
    }
    return "a field";
}

/* Stores in 'key' the fields of 'flow' that the program parses, laid out
 * as it lays them out. */
static void
afxdp_flow_key_from_flow(const struct flow *flow, struct afxdp_flow_key *key)
{
    memset(key, 0, sizeof *key);
    key->dl_type = flow->dl_type;
    key->vlan_tpid = flow->vlans[0].tpid;
    memcpy(key->dl_dst, flow->dl_dst.ea, ETH_ADDR_LEN);
    memcpy(key->dl_src, flow->dl_src.ea, ETH_ADDR_LEN);
    key->vlan_tci = flow->vlans[0].tci;
    key->nw_frag = flow->nw_frag;
    key->nw_tos = flow->nw_tos;
    key->nw_ttl = flow->nw_ttl;
    key->nw_proto = flow->nw_proto;
    key->tp_src = flow->tp_src;
    key->tp_dst = flow->tp_dst;
    key->tcp_flags = flow->tcp_flags;
    key->nw_src = flow->nw_src;
    key->nw_dst = flow->nw_dst;
    key->ipv6_label = flow->ipv6_label;
    memcpy(key->ipv6_src, &flow->ipv6_src, 16);
    memcpy(key->ipv6_dst, &flow->ipv6_dst, 16);
    memcpy(key->arp_sha, flow->arp_sha.ea, ETH_ADDR_LEN);
    memcpy(key->arp_tha, flow->arp_tha.ea, ETH_ADDR_LEN);
}

/* Clears in 'flow' the fields that afxdp_flow_key_from_flow() takes. */
static void
afxdp_flow_clear_parsed(struct flow *flow)
{
    flow->dl_type = 0;
    flow->vlans[0].qtag = 0;
    flow->dl_dst = eth_addr_zero;
    flow->dl_src = eth_addr_zero;
    flow->nw_frag = flow->nw_tos = flow->nw_ttl = flow->nw_proto = 0;
    flow->tp_src = flow->tp_dst = flow->tcp_flags = 0;
    flow->nw_src = flow->nw_dst = flow->ipv6_label = 0;
    memset(&flow->ipv6_src, 0, sizeof flow->ipv6_src);
    memset(&flow->ipv6_dst, 0, sizeof flow->ipv6_dst);
    flow->arp_sha = eth_addr_zero;
    flow->arp_tha = eth_addr_zero;
}

/* Stores in 'key' what the program's parser must make of the packet that
 * miniflow_extract() made 'flow' of, if it takes it, and returns NULL; or
 * returns the name of a field that the program does not parse and that is
 * not zero in 'flow', in which case the program must leave the packet to
 * user space.  (For the tests.) */
const char *
afxdp_flow_expected_key(const struct flow *flow, struct afxdp_flow_key *key)
{
    const uint8_t *p;
    struct flow rest;

    afxdp_flow_key_from_flow(flow, key);
    rest = *flow;
    afxdp_flow_clear_parsed(&rest);
    rest.in_port.odp_port = 0;
    rest.packet_type = 0;
    p = (const uint8_t *) &rest;
    for (size_t i = 0; i < sizeof rest; i++) {
        if (p[i]) {
            return afxdp_flow_field_name(i);
        }
    }
    return NULL;
}

static bool
afxdp_flow_translate_match(const struct match *match, int in_ifindex,
                           struct afxdp_flow_rule *rule, char **reason)
{
    const struct flow *mask = &match->wc.masks;
    const uint64_t *v, *m;
    struct flow rest;

    if (mask->in_port.odp_port != u32_to_odp(UINT32_MAX)) {
        *reason = xstrdup("in_port is not matched exactly");
        return false;
    }
    if ((match->flow.packet_type ^ htonl(PT_ETH)) & mask->packet_type) {
        *reason = xstrdup("packet_type is not Ethernet");
        return false;
    }

    /* Whatever the program does not parse must be wanted zero. */
    rest = *mask;
    afxdp_flow_clear_parsed(&rest);
    rest.in_port.odp_port = 0;
    rest.packet_type = 0;
    v = (const uint64_t *) &match->flow;
    m = (const uint64_t *) &rest;
    for (size_t i = 0; i < sizeof rest / 8; i++) {
        if (v[i] & m[i]) {
            const uint8_t *vb = (const uint8_t *) &v[i];
            const uint8_t *mb = (const uint8_t *) &m[i];
            size_t j = 0;

            while (!(vb[j] & mb[j])) {
                j++;
            }
            *reason = xasprintf("matches a nonzero %s",
                                afxdp_flow_field_name(i * 8 + j));
            return false;
        }
    }

    afxdp_flow_key_from_flow(&match->flow, &rule->key);
    afxdp_flow_key_from_flow(mask, &rule->mask);
    rule->key.ifindex = in_ifindex;
    rule->mask.ifindex = UINT32_MAX;

    uint8_t *k = (uint8_t *) &rule->key;
    const uint8_t *km = (const uint8_t *) &rule->mask;
    for (size_t i = 0; i < sizeof rule->key; i++) {
        k[i] &= km[i];
    }
    return true;
}

static char *
afxdp_flow_action_reason(const struct nlattr *a, const char *why)
{
    struct ds s = DS_EMPTY_INITIALIZER;

    format_odp_actions(&s, a, a->nla_len, NULL);
    char *reason = xasprintf("action %s: %s", ds_cstr(&s), why);

    ds_destroy(&s);
    return reason;
}

/* Takes in '*action' the Ethernet addresses that set action 'a' (of
 * OVS_KEY_ATTR_ETHERNET, with a mask if 'masked') writes.  Returns false
 * for any other set action. */
static bool
afxdp_flow_set_eth(const struct nlattr *a, bool masked,
                   struct afxdp_flow_action *action)
{
    const struct nlattr *key = nl_attr_get(a);
    const struct ovs_key_ethernet *value, *mask;
    static const struct ovs_key_ethernet all_ones = {
        .eth_src = ETH_ADDR_C(ff, ff, ff, ff, ff, ff),
        .eth_dst = ETH_ADDR_C(ff, ff, ff, ff, ff, ff),
    };

    if (nl_attr_type(key) != OVS_KEY_ATTR_ETHERNET
        || nl_attr_get_size(key) != (masked ? 2 : 1) * sizeof *value) {
        return false;
    }
    value = nl_attr_get(key);
    mask = masked ? value + 1 : &all_ones;
    for (int i = 0; i < ETH_ADDR_LEN; i++) {
        const uint8_t dm = mask->eth_dst.ea[i], sm = mask->eth_src.ea[i];

        action->eth_dst[i] = ((action->eth_dst[i] & ~dm)
                              | (value->eth_dst.ea[i] & dm));
        action->eth_dst_mask[i] |= dm;
        action->eth_src[i] = ((action->eth_src[i] & ~sm)
                              | (value->eth_src.ea[i] & sm));
        action->eth_src_mask[i] |= sm;
    }
    action->flags |= AFXDP_FLOW_SET_ETH;
    return true;
}

/* Takes in '*action' the TTL or hop limit that set action 'a' (of
 * OVS_KEY_ATTR_IPV4 or OVS_KEY_ATTR_IPV6, masked) writes, for a megaflow
 * 'match' of that network protocol.  Returns false for a set action that
 * writes any other field of those headers or only some bits of the TTL,
 * and for one that is not of those headers. */
static bool
afxdp_flow_set_ttl(const struct nlattr *a, bool masked,
                   const struct match *match,
                   struct afxdp_flow_action *action)
{
    const struct nlattr *key = nl_attr_get(a);
    ovs_be16 dl_type = match->flow.dl_type;
    size_t size, ttl_ofs;

    switch (nl_attr_type(key)) {
    case OVS_KEY_ATTR_IPV4:
        size = sizeof(struct ovs_key_ipv4);
        ttl_ofs = offsetof(struct ovs_key_ipv4, ipv4_ttl);
        break;
    case OVS_KEY_ATTR_IPV6:
        size = sizeof(struct ovs_key_ipv6);
        ttl_ofs = offsetof(struct ovs_key_ipv6, ipv6_hlimit);
        break;
    default:
        return false;
    }
    if (!masked || nl_attr_get_size(key) != 2 * size
        || match->wc.masks.dl_type != OVS_BE16_MAX
        || dl_type != htons(nl_attr_type(key) == OVS_KEY_ATTR_IPV4
                            ? ETH_TYPE_IP : ETH_TYPE_IPV6)) {
        return false;
    }

    /* The value, then the mask, which must select the TTL alone. */
    const uint8_t *value = nl_attr_get(key);
    const uint8_t *mask = value + size;
    for (size_t i = 0; i < size; i++) {
        if (mask[i] != (i == ttl_ofs ? UINT8_MAX : 0)) {
            return false;
        }
    }
    action->nw_ttl = value[ttl_ofs];
    action->flags |= AFXDP_FLOW_SET_TTL;
    return true;
}

/* The program executes, in this order: a TTL or hop limit change, a
 * pop_vlan, Ethernet address changes, a push_vlan, then one output or a
 * drop.  Datapath actions that come to that are taken; a TTL change may
 * come anywhere before the output, and Ethernet address changes and a
 * push_vlan in either order, as they touch different bytes. */
static bool
afxdp_flow_translate_actions(const struct match *match,
                             const struct nlattr *actions, size_t len,
                             const struct afxdp_flow_ports *ports,
                             struct afxdp_flow_rule *rule, char **reason)
{
    struct afxdp_flow_action *action = &rule->action;
    const struct nlattr *a;
    bool output = false;
    size_t left;

    memset(action, 0, sizeof *action);
    rule->out_port = ODPP_NONE;
    NL_ATTR_FOR_EACH_UNSAFE (a, left, actions, len) {
        int type = nl_attr_type(a);

        if (output) {
            *reason = afxdp_flow_action_reason(a, "comes after an output");
            return false;
        }
        switch (type) {
        case OVS_ACTION_ATTR_OUTPUT: {
            const char *why = NULL;
            odp_port_t port = nl_attr_get_odp_port(a);
            int ifindex = ports->output_ifindex(ports->aux, port, &why);

            if (!ifindex) {
                *reason = afxdp_flow_action_reason(a, why);
                return false;
            }
            action->ifindex = ifindex;
            rule->out_port = port;
            output = true;
            break;
        }
        case OVS_ACTION_ATTR_DROP:
            if (len != a->nla_len) {
                *reason = afxdp_flow_action_reason(a, "comes with others");
                return false;
            }
            break;
        case OVS_ACTION_ATTR_POP_VLAN: {
            const union flow_vlan_hdr *v = &match->flow.vlans[0];
            const union flow_vlan_hdr *vm = &match->wc.masks.vlans[0];

            if (action->flags & ~AFXDP_FLOW_SET_TTL) {
                *reason = afxdp_flow_action_reason(
                    a, "comes after another action");
                return false;
            }
            if (!(v->tci & vm->tci & htons(VLAN_CFI))) {
                *reason = afxdp_flow_action_reason(
                    a, "is for packets that may have no VLAN tag");
                return false;
            }
            action->flags |= AFXDP_FLOW_POP_VLAN;
            break;
        }
        case OVS_ACTION_ATTR_PUSH_VLAN: {
            const struct ovs_action_push_vlan *push = nl_attr_get(a);

            if (action->flags & AFXDP_FLOW_PUSH_VLAN) {
                *reason = afxdp_flow_action_reason(a, "comes twice");
                return false;
            }
            action->flags |= AFXDP_FLOW_PUSH_VLAN;
            action->vlan_tpid = push->vlan_tpid;
            action->vlan_tci = push->vlan_tci & htons(~VLAN_CFI);
            break;
        }
        case OVS_ACTION_ATTR_SET:
        case OVS_ACTION_ATTR_SET_MASKED: {
            bool masked = type == OVS_ACTION_ATTR_SET_MASKED;
            bool ttl_before = action->flags & AFXDP_FLOW_SET_TTL;

            if (afxdp_flow_set_eth(a, masked, action)) {
                break;
            }
            if (!afxdp_flow_set_ttl(a, masked, match, action)) {
                *reason = afxdp_flow_action_reason(a, "cannot run in XDP");
                return false;
            }
            if (ttl_before) {
                /* Two changes of the checksum in user space might not
                 * come to the one that XDP makes, bit for bit. */
                *reason = afxdp_flow_action_reason(a, "comes twice");
                return false;
            }
            break;
        }
        default:
            *reason = afxdp_flow_action_reason(a, "cannot run in XDP");
            return false;
        }
    }
    return true;
}

/* Translates the megaflow of 'match' on the device of index 'in_ifindex'
 * with datapath actions 'actions' into 'rule'.  Returns true if the
 * program can execute it exactly, otherwise false with why in '*reason'
 * (for the caller to free). */
bool
afxdp_flow_translate(const struct match *match, int in_ifindex,
                     const struct nlattr *actions, size_t actions_len,
                     const struct afxdp_flow_ports *ports,
                     struct afxdp_flow_rule *rule, char **reason)
{
    return (afxdp_flow_translate_match(match, in_ifindex, rule, reason)
            && afxdp_flow_translate_actions(match, actions, actions_len,
                                            ports, rule, reason));
}

/* The table. */

/* Writes the mask count 'n' and generation 'g' to 'flow_cfg'.  Returns
 * true if it did (the update of an array's element in range does not
 * fail, but for a fault). */
static bool
afxdp_flow_write_cfg(uint32_t n, uint64_t g)
    OVS_REQUIRES(flow_mutex)
{
    struct afxdp_flow_cfg cfg = {
        .n_slots = n, .cache_shift = cache_shift, .gen = g,
    };
    uint32_t zero = 0;

    if (bpf_map_update_elem(map_fds[MAP_CFG], &zero, &cfg, BPF_ANY)) {
        static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(1, 5);

        VLOG_WARN_RL(&rl, "cannot update the flow table's configuration "
                     "(%s)", ovs_strerror(errno));
        return false;
    }
    n_slots = n;
    gen = g;
    return true;
}

static void
afxdp_flow_write_n_slots(void)
    OVS_REQUIRES(flow_mutex)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < AFXDP_FLOW_MAX_MASKS; i++) {
        if (slots[i].id) {
            n = i + 1;
        }
    }
    if (n != n_slots) {
        afxdp_flow_write_cfg(n, gen);
    }
}

/* Called before each change of the table's maps, in the same critical
 * section as the change: the programs stop using their flow caches
 * until afxdp_flow_reclaim() settles the generation again.  Returns false
 * if the generation could not be made odd, in which case the table must
 * not change. */
static bool
afxdp_flow_unsettle(void)
    OVS_REQUIRES(flow_mutex)
{
    n_changes++;
    return (gen & 1) || afxdp_flow_write_cfg(n_slots, gen + 1);
}

/* Returns the slot that holds 'mask', taking a new one if needed, or -1
 * with the reason in '*reason'. */
static int
afxdp_flow_slot_get(const struct afxdp_flow_key *mask, const char **reason)
    OVS_REQUIRES(flow_mutex)
{
    struct afxdp_flow_mask value;
    int free_slot = -1;

    for (int i = 0; i < AFXDP_FLOW_MAX_MASKS; i++) {
        if (!slots[i].id) {
            if (free_slot < 0) {
                free_slot = i;
            }
        } else if (!memcmp(&slots[i].mask, mask, sizeof *mask)) {
            return i;
        }
    }
    if (free_slot < 0) {
        *reason = "all " OVS_STRINGIZE(AFXDP_FLOW_MAX_MASKS)
                  " megaflow masks of the XDP flow table are in use";
        return -1;
    }

    memset(&value, 0, sizeof value);
    value.id = next_mask_id++;
    value.mask = *mask;
    if (!afxdp_flow_unsettle()
        || bpf_map_update_elem(map_fds[MAP_MASKS], &free_slot, &value,
                               BPF_ANY)) {
        *reason = "the kernel refused a new mask";
        return -1;
    }
    slots[free_slot].id = value.id;
    slots[free_slot].mask = *mask;
    slots[free_slot].n_flows = 0;
    afxdp_flow_write_n_slots();
    return free_slot;
}

static void
afxdp_flow_slot_put(int slot)
    OVS_REQUIRES(flow_mutex)
{
    if (--slots[slot].n_flows == 0) {
        /* No flow refers to the mask's id any more: a program that still
         * reads the old mask finds nothing with it. */
        afxdp_flow_unsettle();
        bpf_map_delete_elem(map_fds[MAP_MASKS], &slot);
        slots[slot].id = 0;
        afxdp_flow_write_n_slots();
    }
}

/* Waits until no XDP program still runs with what the table held before
 * the call: every program runs inside an RCU read-side critical section
 * of the kernel (the driver's NAPI poll, generic XDP or BPF_PROG_RUN), and
 * MEMBARRIER_CMD_GLOBAL returns after a grace period of the kernel's RCU
 * (Linux 4.3).  A kernel that refuses it (one with nohz_full CPUs) gets a
 * wait far longer than a program takes on one packet. */
static void
afxdp_flow_wait_for_programs(void)
{
    if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0)) {
        static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(1, 60);

        VLOG_INFO_RL(&rl, "membarrier (%s): waiting 10 ms for the XDP "
                     "programs instead", ovs_strerror(errno));
        xnanosleep(10 * 1000 * 1000);
    }
}

/* Returns the statistics entries of the flows removed so far to the pool,
 * once no program can count into them any more, and settles the table's
 * generation, so that the programs use their flow caches again, if the
 * table did not change meanwhile.  Takes as long as a grace period of the
 * kernel's RCU (milliseconds) if there is anything to do: the offload
 * provider calls it from its own thread, between flow changes.  Returns
 * how many statistics entries were reclaimed. */
size_t
afxdp_flow_reclaim(void)
{
    uint64_t changes;
    bool unsettled;
    uint32_t *ids;
    size_t n;

    ovs_mutex_lock(&flow_mutex);
    ids = retired;
    n = n_retired;
    retired = NULL;
    n_retired = allocated_retired = 0;
    changes = n_changes;
    unsettled = gen & 1;
    ovs_mutex_unlock(&flow_mutex);

    if (n || unsettled) {
        afxdp_flow_wait_for_programs();
        ovs_mutex_lock(&flow_mutex);
        for (size_t i = 0; i < n; i++) {
            id_pool_free_id(stats_ids, ids[i]);
        }
        if ((gen & 1) && n_changes == changes) {
            /* Every change came before the grace period began. */
            afxdp_flow_write_cfg(n_slots, gen + 1);
        }
        ovs_mutex_unlock(&flow_mutex);
    }
    free(ids);
    return n;
}

/* Returns true if afxdp_flow_reclaim() has work to do: statistics entries
 * to reclaim or a generation to settle. */
bool
afxdp_flow_reclaim_pending(void)
{
    bool pending;

    ovs_mutex_lock(&flow_mutex);
    pending = n_retired || (gen & 1);
    ovs_mutex_unlock(&flow_mutex);
    return pending;
}

/* Zeroes statistics entry 'stats' on every CPU.  Returns 0 or a positive
 * errno. */
static int
afxdp_flow_zero_stats(uint32_t stats)
{
    struct afxdp_flow_stats *zeros = xcalloc(n_cpus, sizeof *zeros);
    int error = 0;

    if (bpf_map_update_elem(map_fds[MAP_STATS], &stats, zeros, BPF_ANY)) {
        error = errno;
    }
    free(zeros);
    return error;
}

static bool
afxdp_flow_alloc_stats(uint32_t *stats)
{
    bool ok;

    ovs_mutex_lock(&flow_mutex);
    ok = id_pool_alloc_id(stats_ids, stats);
    ovs_mutex_unlock(&flow_mutex);
    return ok;
}

/* Adds 'rule' to the table.  Returns the new flow, or NULL with the reason
 * in '*reason'. */
struct afxdp_flow *
afxdp_flow_install(const struct afxdp_flow_rule *rule, const char **reason)
{
    struct afxdp_flow_action action = rule->action;
    struct afxdp_flow *flow;
    uint32_t stats;
    int slot;

    if (afxdp_flow_init(reason)) {
        return NULL;
    }
    if (!afxdp_flow_alloc_stats(&stats)
        && (!afxdp_flow_reclaim() || !afxdp_flow_alloc_stats(&stats))) {
        *reason = "the XDP flow table is full";
        return NULL;
    }
    /* No program counts into the entry: it was never used, or was retired
     * before the last afxdp_flow_reclaim() and so is out of every
     * program's hands. */
    if (afxdp_flow_zero_stats(stats)) {
        *reason = "the kernel refused to reset a flow's statistics";
        ovs_mutex_lock(&flow_mutex);
        id_pool_free_id(stats_ids, stats);
        ovs_mutex_unlock(&flow_mutex);
        return NULL;
    }

    ovs_mutex_lock(&flow_mutex);
    slot = afxdp_flow_slot_get(&rule->mask, reason);
    if (slot < 0) {
        id_pool_free_id(stats_ids, stats);
        ovs_mutex_unlock(&flow_mutex);
        return NULL;
    }

    flow = xzalloc(sizeof *flow);
    flow->slot = slot;
    flow->stats = stats;
    flow->out_port = rule->out_port;
    flow->lookup.mask_id = slots[slot].id;
    flow->lookup.key = rule->key;
    action.stats = stats;
    if (!afxdp_flow_unsettle()
        || bpf_map_update_elem(map_fds[MAP_TABLE], &flow->lookup, &action,
                               BPF_NOEXIST)) {
        *reason = (errno == EEXIST ? "the same megaflow is offloaded already"
                   : errno == E2BIG ? "the XDP flow table is full"
                   : "the kernel refused the flow");
        id_pool_free_id(stats_ids, stats);
        slots[slot].n_flows++;
        afxdp_flow_slot_put(slot);
        ovs_mutex_unlock(&flow_mutex);
        free(flow);
        return NULL;
    }
    slots[slot].n_flows++;
    ovs_mutex_unlock(&flow_mutex);
    return flow;
}

/* Gives 'flow' the actions of 'rule', whose match must be the same.  Its
 * statistics go on.  Returns 0, or a positive errno with the reason in
 * '*reason', in which case 'flow' is as it was. */
int
afxdp_flow_replace(struct afxdp_flow *flow, const struct afxdp_flow_rule *rule,
                   const char **reason)
{
    struct afxdp_flow_action action = rule->action;
    bool same_mask;

    ovs_mutex_lock(&flow_mutex);
    same_mask = !memcmp(&slots[flow->slot].mask, &rule->mask,
                        sizeof rule->mask);
    ovs_mutex_unlock(&flow_mutex);
    if (!same_mask || memcmp(&flow->lookup.key, &rule->key,
                             sizeof rule->key)) {
        *reason = "the megaflow's match changed";
        return EINVAL;
    }
    action.stats = flow->stats;
    ovs_mutex_lock(&flow_mutex);
    if (!afxdp_flow_unsettle()
        || bpf_map_update_elem(map_fds[MAP_TABLE], &flow->lookup, &action,
                               BPF_EXIST)) {
        int error = errno;

        ovs_mutex_unlock(&flow_mutex);
        *reason = "the kernel refused the new actions";
        return error;
    }
    ovs_mutex_unlock(&flow_mutex);
    flow->out_port = rule->out_port;
    return 0;
}

/* Removes 'flow' from the table and frees it.  The program stops using it
 * before this returns, except for a packet it is executing it on right
 * now, which may still count in the flow's statistics entry: the entry is
 * reused only after afxdp_flow_reclaim(). */
void
afxdp_flow_remove(struct afxdp_flow *flow)
{
    if (!flow) {
        return;
    }
    ovs_mutex_lock(&flow_mutex);
    afxdp_flow_unsettle();
    if (bpf_map_delete_elem(map_fds[MAP_TABLE], &flow->lookup)) {
        VLOG_WARN("cannot remove a flow from the XDP flow table (%s)",
                  ovs_strerror(errno));
    }
    afxdp_flow_slot_put(flow->slot);
    if (n_retired >= allocated_retired) {
        retired = x2nrealloc(retired, &allocated_retired, sizeof *retired);
    }
    retired[n_retired++] = flow->stats;
    ovs_mutex_unlock(&flow_mutex);
    free(flow);
}

/* Reads the statistics of 'flow', summed over the CPUs, into 's', whose
 * 'used' is 0: the program keeps no time (see afxdp-prog.h).  A failed
 * read (which the kernel has no reason for) reads as nothing counted
 * yet. */
void
afxdp_flow_get_stats(const struct afxdp_flow *flow,
                     struct afxdp_flow_stats_snapshot *s)
{
    struct afxdp_flow_stats *per_cpu = xcalloc(n_cpus, sizeof *per_cpu);

    memset(s, 0, sizeof *s);
    if (!bpf_map_lookup_elem(map_fds[MAP_STATS], &flow->stats, per_cpu)) {
        for (int cpu = 0; cpu < n_cpus; cpu++) {
            s->packets += per_cpu[cpu].packets;
            s->bytes += per_cpu[cpu].bytes;
            s->tcp_flags |= per_cpu[cpu].tcp_flags;
        }
    }
    free(per_cpu);
}

odp_port_t
afxdp_flow_out_port(const struct afxdp_flow *flow)
{
    return flow->out_port;
}

size_t
afxdp_flow_n_masks(void)
{
    size_t n = 0;

    ovs_mutex_lock(&flow_mutex);
    for (int i = 0; i < AFXDP_FLOW_MAX_MASKS; i++) {
        n += slots[i].id != 0;
    }
    ovs_mutex_unlock(&flow_mutex);
    return n;
}

static size_t
afxdp_flow_count_keys(int fd, size_t key_size)
{
    uint8_t key[sizeof(struct afxdp_flow_lookup)];
    uint8_t next[sizeof key];
    size_t n = 0;

    ovs_assert(key_size <= sizeof key);
    if (bpf_map_get_next_key(fd, NULL, next)) {
        return 0;
    }
    do {
        n++;
        memcpy(key, next, key_size);
    } while (!bpf_map_get_next_key(fd, key, next));
    return n;
}

/* Counts the entries of the kernel's flow and mask maps, to check them
 * against the provider's books and afxdp_flow_n_masks(). */
void
afxdp_flow_count_kernel(size_t *n_flows_, size_t *n_masks_)
{
    *n_flows_ = *n_masks_ = 0;
    if (!afxdp_flow_init(NULL)) {
        *n_flows_ = afxdp_flow_count_keys(map_fds[MAP_TABLE],
                                          sizeof(struct afxdp_flow_lookup));
        *n_masks_ = afxdp_flow_count_keys(map_fds[MAP_MASKS],
                                          sizeof(uint32_t));
    }
}

/* Sums the program's counters over the CPUs.  All zero if the maps do not
 * exist. */
void
afxdp_flow_counters(uint64_t counters[AFXDP_FLOW_N_COUNTERS])
{
    uint64_t *values;

    memset(counters, 0, AFXDP_FLOW_N_COUNTERS * sizeof *counters);
    if (afxdp_flow_init(NULL)) {
        return;
    }
    values = xcalloc(n_cpus, sizeof *values);
    for (uint32_t i = 0; i < AFXDP_FLOW_N_COUNTERS; i++) {
        if (!bpf_map_lookup_elem(map_fds[MAP_COUNTERS], &i, values)) {
            for (int cpu = 0; cpu < n_cpus; cpu++) {
                counters[i] += values[cpu];
            }
        }
    }
    free(values);
}

const char *
afxdp_flow_counter_name(enum afxdp_flow_counter counter)
{
    switch (counter) {
    case AFXDP_FLOW_HIT: return "xdp_hits";
    case AFXDP_FLOW_MISS: return "xdp_misses";
    case AFXDP_FLOW_UNPARSED: return "xdp_unparsed";
    case AFXDP_FLOW_CSUM_FINISHED: return "xdp_csum_finished";
    case AFXDP_FLOW_ACTION_FAILED: return "xdp_action_failed";
    case AFXDP_FLOW_VLAN_FAILED: return "xdp_vlan_restore_failed";
    case AFXDP_FLOW_CACHE_HIT: return "xdp_cache_hits";
    case AFXDP_FLOW_N_COUNTERS: break;
    }
    return "unknown";
}
