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

/* The options of an afxdp interface: their grammar, defaults, checks and
 * the provider's set_config() and get_config().  Every option is defined
 * once, in afxdp_option_table[], from which struct afxdp_options is
 * parsed, compared, copied and reported.  Touches the netdev only to
 * store the requested options under its mutex. */

#include <config.h>

#include "netdev-afxdp.h"

#include <errno.h>
#include <netinet/in.h>
#include <net/if.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "netdev-afxdp-private.h"
#include "netdev-provider.h"
#include "openvswitch/dynamic-string.h"
#include "smap.h"

static const char *const afxdp_mode_names[] = {
    [AFXDP_MODE_BEST_EFFORT] = "best-effort",
    [AFXDP_MODE_NATIVE_ZC] = "native-with-zerocopy",
    [AFXDP_MODE_NATIVE] = "native",
    [AFXDP_MODE_GENERIC] = "generic",
};

static const char *const afxdp_rx_csum_names[] = {
    [AFXDP_RX_CSUM_AUTO] = "auto",
    [AFXDP_RX_CSUM_ON] = "true",
    [AFXDP_RX_CSUM_OFF] = "false",
};

enum afxdp_option_type {
    AFXDP_OPT_INT,              /* An int in ['min', 'max']. */
    AFXDP_OPT_BOOL,             /* A bool: "true" or "false". */
    AFXDP_OPT_ENUM,             /* An int: the index of one of 'names'. */
    AFXDP_OPT_STRING,           /* A char *, NULL if absent or empty. */
};

/* One option.  Every option needs the port set up again when it changes
 * (reconfigure()), since each decides how its sockets or its program are
 * made. */
struct afxdp_option {
    const char *name;
    enum afxdp_option_type type;
    size_t offset;              /* Of its value in struct afxdp_options. */
    int dflt;                   /* INT, BOOL, ENUM: the default. */
    int min, max;               /* INT. */
    const char *const *names;   /* ENUM: the values' names... */
    size_t n_names;             /* ...and how many. */
    const char *expected;       /* ENUM: the values, for an error. */
    bool shown;                 /* get_config() reports it at its default
                                 * too. */

    /* Checks the option against the others, all parsed, in 'opts' of the
     * port named 'name' (and may complete its parsed form).  Returns NULL
     * or an error message. */
    char *(*check)(const char *name, struct afxdp_options *opts);
};

static char *afxdp_check_start_queue(const char *, struct afxdp_options *);
static char *afxdp_check_ring_size(const char *, struct afxdp_options *);
static char *afxdp_check_program(const char *, struct afxdp_options *);
static char *afxdp_check_tx_budget(const char *, struct afxdp_options *);
static char *afxdp_check_pass(const char *, struct afxdp_options *);

#define OPT(NAME, TYPE, MEMBER) \
    .name = NAME, .type = AFXDP_OPT_##TYPE, \
    .offset = offsetof(struct afxdp_options, MEMBER)

/* The options an afxdp interface takes, in the order an error lists
 * them; any other is refused, so that a typo does not pass for a
 * default. */
static const struct afxdp_option afxdp_option_table[] = {
    { OPT("n_rxq", INT, n_rxq), .dflt = 1, .min = 1,
      .max = AFXDP_MAX_QUEUES, .shown = true },
    { OPT("start-queue", INT, start_queue), .dflt = 0, .min = 0,
      .max = AFXDP_MAX_QUEUE_END - 1, .check = afxdp_check_start_queue },
    { OPT("xdp-mode", ENUM, mode), .dflt = AFXDP_MODE_BEST_EFFORT,
      .names = afxdp_mode_names, .n_names = ARRAY_SIZE(afxdp_mode_names),
      .expected = "best-effort, native-with-zerocopy, native or generic",
      .shown = true },
    { OPT("ring-size", INT, ring_size), .dflt = AFXDP_RING_SIZE, .min = 64,
      .max = AFXDP_RING_SIZE_MAX, .shown = true,
      .check = afxdp_check_ring_size },
    { OPT("rx-hash", BOOL, rx_hash), .dflt = true },
    { OPT("xdp-xmit", BOOL, xdp_xmit), .dflt = true },
    { OPT("rx-csum-partial", ENUM, rx_csum), .dflt = AFXDP_RX_CSUM_AUTO,
      .names = afxdp_rx_csum_names,
      .n_names = ARRAY_SIZE(afxdp_rx_csum_names),
      .expected = "auto, true or false" },
    { OPT("tx-csum-offload", BOOL, tx_csum), .dflt = true },
    { OPT("xdp-program", STRING, program), .check = afxdp_check_program },
    { OPT("busy-poll", BOOL, busy_poll), .dflt = false },
    { OPT("busy-poll-budget", INT, busy_poll_budget),
      .dflt = AFXDP_BUSY_POLL_BUDGET, .min = 1,
      .max = AFXDP_BUSY_POLL_BUDGET_MAX },
    { OPT("tx-budget", INT, tx_budget), .dflt = AFXDP_TX_BUDGET,
      .min = AFXDP_TX_BUDGET, .max = AFXDP_RING_SIZE_MAX,
      .check = afxdp_check_tx_budget },
    { OPT("pass-to-kernel", STRING, pass), .check = afxdp_check_pass },
    { OPT("peer-xdp", BOOL, peer_xdp), .dflt = false },
};

#undef OPT

/* The value of option 'o' in 'opts', by type. */
static int *
opt_int(const struct afxdp_option *o, const struct afxdp_options *opts)
{
    return ALIGNED_CAST(int *, CONST_CAST(char *, (const char *) opts)
                               + o->offset);
}

static bool *
opt_bool(const struct afxdp_option *o, const struct afxdp_options *opts)
{
    return (bool *) (CONST_CAST(char *, (const char *) opts) + o->offset);
}

static char **
opt_string(const struct afxdp_option *o, const struct afxdp_options *opts)
{
    return ALIGNED_CAST(char **, CONST_CAST(char *, (const char *) opts)
                                 + o->offset);
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

/* Initializes 'opts' to every option's default. */
void
afxdp_options_init(struct afxdp_options *opts)
{
    memset(opts, 0, sizeof *opts);
    for (size_t i = 0; i < ARRAY_SIZE(afxdp_option_table); i++) {
        const struct afxdp_option *o = &afxdp_option_table[i];

        switch (o->type) {
        case AFXDP_OPT_INT:
        case AFXDP_OPT_ENUM:
            *opt_int(o, opts) = o->dflt;
            break;
        case AFXDP_OPT_BOOL:
            *opt_bool(o, opts) = o->dflt;
            break;
        case AFXDP_OPT_STRING:
            break;
        }
    }
}

void
afxdp_options_destroy(struct afxdp_options *opts)
{
    for (size_t i = 0; i < ARRAY_SIZE(afxdp_option_table); i++) {
        const struct afxdp_option *o = &afxdp_option_table[i];

        if (o->type == AFXDP_OPT_STRING) {
            free(*opt_string(o, opts));
            *opt_string(o, opts) = NULL;
        }
    }
    free(opts->steer);
    opts->steer = NULL;
}

/* Makes 'dst', which holds nothing to free, a copy of 'src'. */
void
afxdp_options_clone(struct afxdp_options *dst,
                    const struct afxdp_options *src)
{
    *dst = *src;
    for (size_t i = 0; i < ARRAY_SIZE(afxdp_option_table); i++) {
        const struct afxdp_option *o = &afxdp_option_table[i];

        if (o->type == AFXDP_OPT_STRING) {
            *opt_string(o, dst) = nullable_xstrdup(*opt_string(o, src));
        }
    }
    dst->steer = src->steer ? xmemdup(src->steer, sizeof *src->steer) : NULL;
}

/* Whether 'a' and 'b' ask for the same setup. */
bool
afxdp_options_equal(const struct afxdp_options *a,
                    const struct afxdp_options *b)
{
    for (size_t i = 0; i < ARRAY_SIZE(afxdp_option_table); i++) {
        const struct afxdp_option *o = &afxdp_option_table[i];
        bool same = true;

        switch (o->type) {
        case AFXDP_OPT_INT:
        case AFXDP_OPT_ENUM:
            same = *opt_int(o, a) == *opt_int(o, b);
            break;
        case AFXDP_OPT_BOOL:
            same = *opt_bool(o, a) == *opt_bool(o, b);
            break;
        case AFXDP_OPT_STRING:
            same = nullable_string_is_equal(*opt_string(o, a),
                                            *opt_string(o, b));
            break;
        }
        if (!same) {
            return false;
        }
    }
    return true;
}

/* Parses the value 's' of option 'o' of the port named 'name' into
 * 'opts'.  Returns NULL or an error message. */
static char *
afxdp_option_parse(const struct afxdp_option *o, const char *name,
                   const char *s, struct afxdp_options *opts)
{
    int i;

    switch (o->type) {
    case AFXDP_OPT_INT:
        if (!str_to_int(s, 10, opt_int(o, opts))
            || *opt_int(o, opts) < o->min || *opt_int(o, opts) > o->max) {
            return xasprintf("%s: invalid %s '%s': expected an integer "
                             "from %d to %d", name, o->name, s, o->min,
                             o->max);
        }
        return NULL;
    case AFXDP_OPT_BOOL:
        if (strcmp(s, "true") && strcmp(s, "false")) {
            return xasprintf("%s: invalid %s '%s': expected true or false",
                             name, o->name, s);
        }
        *opt_bool(o, opts) = !strcmp(s, "true");
        return NULL;
    case AFXDP_OPT_ENUM:
        i = afxdp_name_index(o->names, o->n_names, s);
        if (i < 0) {
            return xasprintf("%s: invalid %s '%s': expected %s", name,
                             o->name, s, o->expected);
        }
        *opt_int(o, opts) = i;
        return NULL;
    case AFXDP_OPT_STRING:
        free(*opt_string(o, opts));
        *opt_string(o, opts) = *s ? xstrdup(s) : NULL;
        return NULL;
    }
    OVS_NOT_REACHED();
}

/* The error for 'key', an option that afxdp ports do not take. */
static char *
afxdp_unknown_option(const char *name, const char *key)
{
    struct ds known = DS_EMPTY_INITIALIZER;

    for (size_t i = 0; i < ARRAY_SIZE(afxdp_option_table); i++) {
        ds_put_format(&known, "%s%s", i ? ", " : "",
                      afxdp_option_table[i].name);
    }
    char *err = xasprintf("%s: unknown option '%s'; afxdp ports take %s",
                          name, key, ds_cstr(&known));

    ds_destroy(&known);
    return err;
}

/* Parses 'args', the options of the port named 'name', into 'opts', which
 * the caller initialized, and checks them.  Returns NULL or an error
 * message, with 'opts' to be destroyed either way. */
static char *
afxdp_options_parse(const char *name, const struct smap *args,
                    struct afxdp_options *opts)
{
    struct smap_node *node;
    char *err = NULL;

    SMAP_FOR_EACH (node, args) {
        bool known = false;

        for (size_t i = 0; i < ARRAY_SIZE(afxdp_option_table); i++) {
            known |= !strcmp(node->key, afxdp_option_table[i].name);
        }
        if (!known) {
            return afxdp_unknown_option(name, node->key);
        }
    }
    for (size_t i = 0; !err && i < ARRAY_SIZE(afxdp_option_table); i++) {
        const struct afxdp_option *o = &afxdp_option_table[i];
        const char *s = smap_get(args, o->name);

        if (s) {
            err = afxdp_option_parse(o, name, s, opts);
        }
    }
    for (size_t i = 0; !err && i < ARRAY_SIZE(afxdp_option_table); i++) {
        const struct afxdp_option *o = &afxdp_option_table[i];

        if (o->check) {
            err = o->check(name, opts);
        }
    }
    return err;
}

static char *
afxdp_check_start_queue(const char *name, struct afxdp_options *opts)
{
    if (opts->start_queue + opts->n_rxq > AFXDP_MAX_QUEUE_END) {
        return xasprintf("%s: start-queue %d and n_rxq %d go past queue %d, "
                         "the last an afxdp port binds", name,
                         opts->start_queue, opts->n_rxq,
                         AFXDP_MAX_QUEUE_END - 1);
    }
    return NULL;
}

static char *
afxdp_check_ring_size(const char *name, struct afxdp_options *opts)
{
    if (!is_pow2(opts->ring_size)) {
        return xasprintf("%s: invalid ring-size %d: not a power of 2",
                         name, opts->ring_size);
    }
    return NULL;
}

static char *
afxdp_check_program(const char *name, struct afxdp_options *opts)
{
    if (opts->program && access(opts->program, R_OK)) {
        return xasprintf("%s: cannot read xdp-program %s (%s)", name,
                         opts->program, ovs_strerror(errno));
    }
    return NULL;
}

static char *
afxdp_check_tx_budget(const char *name, struct afxdp_options *opts)
{
    if (opts->tx_budget > opts->ring_size) {
        return xasprintf("%s: tx-budget %d exceeds the ring-size, %d",
                         name, opts->tx_budget, opts->ring_size);
    }
    return NULL;
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

/* Parses options:pass-to-kernel into 'opts->steer'.  A value of separators
 * only is no value. */
static char *
afxdp_check_pass(const char *name, struct afxdp_options *opts)
{
    char *copy, *save_ptr = NULL;
    char *err = NULL;

    if (opts->pass && !opts->pass[strspn(opts->pass, ", ")]) {
        free(opts->pass);
        opts->pass = NULL;
    }
    if (!opts->pass) {
        return NULL;
    }
    if (opts->program) {
        return xasprintf("%s: pass-to-kernel is done by the built-in XDP "
                         "program, and xdp-program replaces it", name);
    }

    opts->steer = xzalloc(sizeof *opts->steer);
    copy = xstrdup(opts->pass);
    for (char *item = strtok_r(copy, ", ", &save_ptr); item && !err;
         item = strtok_r(NULL, ", ", &save_ptr)) {
        bool too_many;

        if (!afxdp_parse_pass_item(item, opts->steer, &too_many)) {
            err = xasprintf("%s: invalid pass-to-kernel item '%s': "
                            "expected local, an EtherType (0x88cc), tcp, "
                            "udp or sctp with an optional :PORT, icmp, "
                            "icmpv6 or proto:NUMBER", name, item);
        } else if (too_many) {
            err = xasprintf("%s: pass-to-kernel has more than %d rules",
                            name, AFXDP_STEER_MAX_RULES);
        }
    }
    free(copy);
    return err;
}

/* Checks what 'opts', newly requested for the port of 'dev', asks of its
 * device.  Returns NULL or an error message, and in '*errorp' a positive
 * errno. */
static char *
afxdp_check_device(struct netdev_linux *dev, const struct afxdp_options *opts,
                   int *errorp)
    OVS_REQUIRES(dev->mutex)
{
    const struct netdev_afxdp *afxdp = dev->afxdp;
    const char *name = netdev_get_name(&dev->up);

    /* A queue range is refused if the device lacks it when it is asked
     * for.  One that the device has come to lack since (a driver bound
     * again, with its default channels) is the port's to wait for, with
     * the reason in its status: refusing it here would make the bridge
     * delete the port. */
    *errorp = EINVAL;
    if (opts->n_rxq != afxdp->requested.n_rxq
        || opts->start_queue != afxdp->requested.start_queue) {
        char *err = afxdp_check_queues(name, opts->start_queue,
                                       opts->n_rxq);
        if (err) {
            return err;
        }
    }
    if (!afxdp->xdp) {
        /* Not set up yet: a program already on the interface is someone
         * else's, and it stays. */
        int ifindex = if_nametoindex(name);
        uint32_t prog_id;

        if (ifindex && !afxdp_xdp_query(ifindex, &prog_id) && prog_id) {
            *errorp = EBUSY;
            return xasprintf("%s: the interface already has an XDP program "
                             "(id %"PRIu32") that afxdp did not attach; it "
                             "is left in place", name, prog_id);
        }
    }
    *errorp = 0;
    return NULL;
}

int
netdev_afxdp_set_config(struct netdev *netdev, const struct smap *args,
                        char **errp)
{
    struct netdev_linux *dev = netdev_linux_cast(netdev);
    struct netdev_afxdp *afxdp = dev->afxdp;
    struct afxdp_options opts;
    int error = EINVAL;

    afxdp_options_init(&opts);
    *errp = afxdp_options_parse(netdev_get_name(netdev), args, &opts);
    if (!*errp) {
        ovs_mutex_lock(&dev->mutex);
        *errp = afxdp_check_device(dev, &opts, &error);
        if (!*errp && !afxdp_options_equal(&opts, &afxdp->requested)) {
            afxdp_options_destroy(&afxdp->requested);
            afxdp->requested = opts;
            afxdp_options_init(&opts);
            netdev_request_reconfigure(netdev);
        }
        ovs_mutex_unlock(&dev->mutex);
    }
    afxdp_options_destroy(&opts);
    return *errp ? error : 0;
}

int
netdev_afxdp_get_config(const struct netdev *netdev, struct smap *args)
{
    struct netdev_linux *dev = netdev_linux_cast(netdev);
    const struct afxdp_options *opts;

    ovs_mutex_lock(&dev->mutex);
    opts = &dev->afxdp->requested;
    for (size_t i = 0; i < ARRAY_SIZE(afxdp_option_table); i++) {
        const struct afxdp_option *o = &afxdp_option_table[i];
        int value;

        switch (o->type) {
        case AFXDP_OPT_INT:
        case AFXDP_OPT_ENUM:
            value = *opt_int(o, opts);
            if (value != o->dflt || o->shown) {
                if (o->type == AFXDP_OPT_INT) {
                    smap_add_format(args, o->name, "%d", value);
                } else {
                    smap_add(args, o->name, o->names[value]);
                }
            }
            break;
        case AFXDP_OPT_BOOL:
            if (*opt_bool(o, opts) != o->dflt || o->shown) {
                smap_add(args, o->name,
                         *opt_bool(o, opts) ? "true" : "false");
            }
            break;
        case AFXDP_OPT_STRING:
            if (*opt_string(o, opts)) {
                smap_add(args, o->name, *opt_string(o, opts));
            }
            break;
        }
    }
    ovs_mutex_unlock(&dev->mutex);
    return 0;
}
