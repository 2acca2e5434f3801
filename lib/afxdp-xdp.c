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

#include "afxdp-xdp.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_link.h>
#include <linux/net_namespace.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "afxdp-flow.h"
#include "afxdp-umem.h"
#include "bpf/afxdp-prog.h"
#include "dp-packet.h"
#include "netlink.h"
#include "netlink-socket.h"
#include "openvswitch/dynamic-string.h"
#include "openvswitch/ofpbuf.h"
#include "openvswitch/vlog.h"
#include "ovs-thread.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(afxdp_xdp);

/* Kernel 6.3 or later; linux/bpf.h may be older. */
#ifndef BPF_F_XDP_DEV_BOUND_ONLY
#define BPF_F_XDP_DEV_BOUND_ONLY (1U << 6)
#endif

/* The kernel's "netdev" generic netlink family (linux/netdev.h, which may
 * be older than the kernel): the device's XDP RX metadata features. */
#define AFXDP_NETDEV_FAMILY "netdev"
#define AFXDP_NETDEV_CMD_DEV_GET 1
#define AFXDP_NETDEV_A_DEV_IFINDEX 1
#define AFXDP_NETDEV_A_DEV_XDP_FEATURES 3
#define AFXDP_NETDEV_A_DEV_XDP_RX_METADATA_FEATURES 5
#define AFXDP_NETDEV_A_DEV_XSK_FEATURES 6
#define AFXDP_NETDEV_XDP_ACT_NDO_XMIT 4
#define AFXDP_NETDEV_XDP_ACT_XSK_ZEROCOPY 8
#define AFXDP_NETDEV_XDP_RX_METADATA_HASH 2
#define AFXDP_NETDEV_XDP_RX_METADATA_VLAN_TAG 4
#define AFXDP_NETDEV_XSK_FLAGS_TX_CHECKSUM 2
#define AFXDP_NETDEV_CMD_QUEUE_GET 10
#define AFXDP_NETDEV_A_QUEUE_ID 1
#define AFXDP_NETDEV_A_QUEUE_IFINDEX 2
#define AFXDP_NETDEV_A_QUEUE_TYPE 3
#define AFXDP_NETDEV_A_QUEUE_XSK 7     /* Linux 6.15. */
#define AFXDP_NETDEV_QUEUE_TYPE_RX 0
#define AFXDP_NETDEV_QUEUE_TYPE_TX 1

#ifndef BPF_F_TEST_XDP_LIVE_FRAMES
#define BPF_F_TEST_XDP_LIVE_FRAMES (1U << 1)
#endif

/* The object file of bpf/afxdp-redirect.c, compiled by clang at build
 * time. */
static const unsigned char afxdp_redirect_obj[] = {
#include "bpf/afxdp-redirect.inc"
};

struct afxdp_xdp {
    struct bpf_object *obj;
    int map_fd;                 /* 'xsks_map'. */
    uint32_t first_queue;       /* Its key for the port's queue 0. */
    int link_fd;                /* Attachment; closing it detaches. */
    uint32_t prog_id;
    bool bound;                 /* A program bound to the device. */
    bool rx_hash;               /* It passes the device's RX hash. */
    char *rx_hash_status;       /* "device", "off" or why it is not used. */
    char *rx_vlan_status;       /* "device" (tags put back) or why not. */
    bool flow_table;            /* Runs the shared offloaded flows. */

    /* XDP transmit: only with our transmitting program attached natively,
     * which is then in the kernel's XDP dispatcher, so that BPF_PROG_RUN
     * does not wait for an RCU grace period to put it there. */
    int ifindex;
    int prog_fd;
    struct afxdp_xmit_slot *xmit_slots;     /* Map 'xmit_slots', mapped. */
    size_t xmit_slots_size;
    struct afxdp_xmit_ctl *xmit_ctl;        /* Map 'xmit_ctl', mapped. */
    size_t xmit_ctl_size;
    const char *xmit_status;    /* NULL if usable, otherwise why not. */

    /* Steering: the addresses in 'steer_addrs', as last set. */
    struct in6_addr *steer_addrs;
    size_t n_steer_addrs;
};

static const char *afxdp_xdp_map_xmit(struct afxdp_xdp *);
static void afxdp_xdp_unmap_xmit(struct afxdp_xdp *);

/* libbpf explains its failures at its WARN level, and the callers here
 * report each failure once in their own words, so libbpf's messages are
 * kept below warning level. */
static int
afxdp_libbpf_print(enum libbpf_print_level level, const char *format,
                   va_list args)
{
    enum vlog_level vlevel = level == LIBBPF_WARN ? VLL_INFO : VLL_DBG;

    if (!vlog_is_enabled(&this_module, vlevel)) {
        return 0;
    }

    struct ds s = DS_EMPTY_INITIALIZER;

    ds_put_format_valist(&s, format, args);
    ds_chomp(&s, '\n');
    vlog(&this_module, vlevel, "libbpf: %s", ds_cstr(&s));
    ds_destroy(&s);
    return 0;
}

static void
afxdp_xdp_init(void)
{
    static struct ovsthread_once once = OVSTHREAD_ONCE_INITIALIZER;

    if (ovsthread_once_start(&once)) {
        libbpf_set_print(afxdp_libbpf_print);
        ovsthread_once_done(&once);
    }
}

const char *
afxdp_xdp_attach_name(enum afxdp_xdp_attach attach)
{
    return attach == AFXDP_XDP_NATIVE ? "native" : "generic";
}

/* Stores in '*prog_id' the id of the XDP program attached to 'ifindex' in
 * any mode, or 0 if there is none.  Returns 0 or a positive errno. */
int
afxdp_xdp_query(int ifindex, uint32_t *prog_id)
{
    LIBBPF_OPTS(bpf_xdp_query_opts, opts);
    int error;

    *prog_id = 0;
    error = bpf_xdp_query(ifindex, 0, &opts);
    if (error) {
        return -error;
    }
    *prog_id = (opts.prog_id ? opts.prog_id
                : opts.drv_prog_id ? opts.drv_prog_id
                : opts.skb_prog_id ? opts.skb_prog_id
                : opts.hw_prog_id);
    return 0;
}

static struct bpf_object *
afxdp_xdp_open(const char *path, char **errp)
{
    LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = "afxdp-redirect");
    struct bpf_object *obj;

    obj = (path
           ? bpf_object__open_file(path, NULL)
           : bpf_object__open_mem(afxdp_redirect_obj,
                                  sizeof afxdp_redirect_obj, &opts));
    if (!obj) {
        *errp = xasprintf("cannot open XDP object %s (%s)",
                          path ? path : "afxdp-redirect",
                          ovs_strerror(errno));
    }
    return obj;
}

/* The "netdev" family's number, or a positive errno if the kernel has
 * none.  Looked up by the main thread before any other thread asks. */
static int
afxdp_netdev_family(void)
{
    static int family;

    if (!family) {
        int error = nl_lookup_genl_family(AFXDP_NETDEV_FAMILY, &family);

        if (error) {
            family = -error;
        }
    }
    return family;
}

/* Asks the kernel for the XDP features of device 'ifindex' (attribute
 * AFXDP_NETDEV_A_DEV_XDP_FEATURES, AFXDP_NETDEV_A_DEV_XDP_RX_METADATA_
 * FEATURES or AFXDP_NETDEV_A_DEV_XSK_FEATURES in 'attr').  Returns 0 and
 * stores them in '*features', or a positive errno and the reason in
 * '*reason' (a static string). */
static int
afxdp_xdp_probe(int ifindex, uint16_t attr, uint64_t *features,
                const char **reason)
{
    static const struct nl_policy policy[] = {
        [AFXDP_NETDEV_A_DEV_XDP_FEATURES] = {
            .type = NL_A_U64, .optional = true },
        [AFXDP_NETDEV_A_DEV_XDP_RX_METADATA_FEATURES] = {
            .type = NL_A_U64, .optional = true },
        [AFXDP_NETDEV_A_DEV_XSK_FEATURES] = {
            .type = NL_A_U64, .optional = true },
    };
    struct nlattr *attrs[ARRAY_SIZE(policy)];
    struct ofpbuf request, *reply;
    int family = afxdp_netdev_family();
    int error;

    if (family < 0) {
        *reason = "kernel has no netdev netlink family";
        return -family;
    }

    ofpbuf_init(&request, 0);
    nl_msg_put_genlmsghdr(&request, 0, family, NLM_F_REQUEST,
                          AFXDP_NETDEV_CMD_DEV_GET, 1);
    nl_msg_put_u32(&request, AFXDP_NETDEV_A_DEV_IFINDEX, ifindex);
    error = nl_transact(NETLINK_GENERIC, &request, &reply);
    ofpbuf_uninit(&request);
    if (error) {
        static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(1, 5);

        VLOG_INFO_RL(&rl, "cannot query the XDP features of device %d (%s)",
                     ifindex, ovs_strerror(error));
        *reason = "cannot query the device's XDP features";
        return error;
    }

    if (!nl_policy_parse(reply, NLMSG_HDRLEN + GENL_HDRLEN, policy, attrs,
                         ARRAY_SIZE(policy))
        || !attrs[attr]) {
        *reason = "kernel does not report the device's XDP features";
        error = EOPNOTSUPP;
    } else {
        *features = nl_attr_get_u64(attrs[attr]);
    }
    ofpbuf_delete(reply);
    return error;
}

/* Asks the kernel whether queue 'queue' of device 'ifindex' still has an
 * AF_XDP buffer pool, in its receiving or its sending half.  The kernel
 * releases a closed socket's pool from a workqueue, having first told a
 * zero-copy driver to let go of its frames: once the queue has none, the
 * driver is done with them.  Returns 1 if it has one, 0 if it has none
 * (or the device or queue is gone), or a negative errno if the kernel
 * cannot tell (before Linux 6.15, which reports the pool). */
int
afxdp_xdp_queue_has_pool(int ifindex, uint32_t queue)
{
    static const struct nl_policy policy[] = {
        [AFXDP_NETDEV_A_QUEUE_XSK] = { .type = NL_A_NESTED,
                                       .optional = true },
    };
    static const int types[] = { AFXDP_NETDEV_QUEUE_TYPE_RX,
                                 AFXDP_NETDEV_QUEUE_TYPE_TX };
    int family = afxdp_netdev_family();

    if (family < 0) {
        return family;
    }
    if (!ovs_kernel_is_version_or_newer(6, 15)) {
        return -EOPNOTSUPP;
    }
    for (size_t i = 0; i < ARRAY_SIZE(types); i++) {
        struct nlattr *attrs[ARRAY_SIZE(policy)];
        struct ofpbuf request, *reply;
        bool has;
        int error;

        ofpbuf_init(&request, 0);
        nl_msg_put_genlmsghdr(&request, 0, family, NLM_F_REQUEST,
                              AFXDP_NETDEV_CMD_QUEUE_GET, 1);
        nl_msg_put_u32(&request, AFXDP_NETDEV_A_QUEUE_IFINDEX, ifindex);
        nl_msg_put_u32(&request, AFXDP_NETDEV_A_QUEUE_TYPE, types[i]);
        nl_msg_put_u32(&request, AFXDP_NETDEV_A_QUEUE_ID, queue);
        error = nl_transact(NETLINK_GENERIC, &request, &reply);
        ofpbuf_uninit(&request);
        if (error == ENODEV || error == EINVAL) {
            /* No such device or queue (any more): nothing holds it.  (A
             * device that is down answers ENOENT: its driver may still
             * have the frames posted, so that counts as "can't tell".) */
            continue;
        } else if (error) {
            return -error;
        }
        has = (nl_policy_parse(reply, NLMSG_HDRLEN + GENL_HDRLEN, policy,
                               attrs, ARRAY_SIZE(policy))
               && attrs[AFXDP_NETDEV_A_QUEUE_XSK]);
        ofpbuf_delete(reply);
        if (has) {
            return 1;
        }
    }
    return 0;
}

/* Asks the kernel whether device 'ifindex' hands programs bound to it the
 * XDP RX metadata 'feature' (an AFXDP_NETDEV_XDP_RX_METADATA_* bit).
 * Returns 0 if it does, otherwise a positive errno and the reason in
 * '*reason' ('missing' if the device lacks it, or a static string). */
static int
afxdp_xdp_probe_rx_meta(int ifindex, uint64_t feature, const char *missing,
                        const char **reason)
{
    uint64_t features;
    int error;

    error = afxdp_xdp_probe(ifindex,
                            AFXDP_NETDEV_A_DEV_XDP_RX_METADATA_FEATURES,
                            &features, reason);
    if (!error && !(features & feature)) {
        *reason = missing;
        error = EOPNOTSUPP;
    }
    return error;
}

/* Asks the kernel whether the zero-copy AF_XDP driver of device 'ifindex'
 * finishes the checksums that TX metadata asks for (Linux 6.8 and later).
 * Returns NULL if it does, otherwise why not (a static string). */
const char *
afxdp_xdp_probe_xsk_csum(int ifindex)
{
    const char *reason;
    uint64_t features;

    if (afxdp_xdp_probe(ifindex, AFXDP_NETDEV_A_DEV_XSK_FEATURES,
                        &features, &reason)) {
        return reason;
    }
    return (features & AFXDP_NETDEV_XSK_FLAGS_TX_CHECKSUM ? NULL
            : "zero-copy driver does not finish checksums");
}

/* Asks the kernel whether device 'ifindex' takes XDP frames to transmit.
 * Returns NULL if it does, and stores in '*zero_copy' whether it has
 * zero-copy AF_XDP; otherwise returns why not. */
static const char *
afxdp_xdp_probe_xmit(int ifindex, bool *zero_copy)
{
    const char *reason;
    uint64_t features;

    if (afxdp_xdp_probe(ifindex, AFXDP_NETDEV_A_DEV_XDP_FEATURES,
                        &features, &reason)) {
        return reason;
    } else if (!(features & AFXDP_NETDEV_XDP_ACT_NDO_XMIT)) {
        return "device does not take XDP frames to transmit";
    }
    *zero_copy = features & AFXDP_NETDEV_XDP_ACT_XSK_ZEROCOPY;
    return NULL;
}

/* Asks the kernel for link 'ifindex', in the network namespace that
 * 'netnsid' names in ours (-1: ours).  Returns the reply, to be freed by
 * the caller, or NULL. */
static struct ofpbuf *
afxdp_xdp_get_link(int ifindex, int32_t netnsid)
{
    struct ofpbuf request, *reply;
    struct ifinfomsg *ifi;
    int error;

    ofpbuf_init(&request, 0);
    nl_msg_put_nlmsghdr(&request, sizeof *ifi, RTM_GETLINK, NLM_F_REQUEST);
    ifi = ofpbuf_put_zeros(&request, sizeof *ifi);
    ifi->ifi_family = AF_UNSPEC;
    ifi->ifi_index = ifindex;
    if (netnsid >= 0) {
        nl_msg_put_u32(&request, IFLA_TARGET_NETNSID, netnsid);
    }
    error = nl_transact(NETLINK_ROUTE, &request, &reply);
    ofpbuf_uninit(&request);
    return error ? NULL : reply;
}

/* Asks the kernel for the veth peer of device 'ifindex': its index, in the
 * network namespace that '*netnsid' names in ours (-1: ours), and the id
 * of its XDP program in '*prog_id' (0: none).  Returns false if
 * 'ifindex' is not a veth or the kernel does not say. */
static bool
afxdp_xdp_veth_peer(int ifindex, int *peer, int32_t *netnsid,
                    uint32_t *prog_id)
{
    static const struct nl_policy link_policy[] = {
        [IFLA_LINK] = { .type = NL_A_U32, .optional = true },
        [IFLA_LINKINFO] = { .type = NL_A_NESTED, .optional = true },
        [IFLA_LINK_NETNSID] = { .type = NL_A_U32, .optional = true },
        [IFLA_XDP] = { .type = NL_A_NESTED, .optional = true },
    };
    struct nlattr *attrs[ARRAY_SIZE(link_policy)];
    const struct nlattr *kind, *attached, *id;
    struct ofpbuf *reply;
    bool ok = false;

    reply = afxdp_xdp_get_link(ifindex, -1);
    if (!reply) {
        return false;
    }
    if (!nl_policy_parse(reply, NLMSG_HDRLEN + sizeof(struct ifinfomsg),
                         link_policy, attrs, ARRAY_SIZE(link_policy))
        || !attrs[IFLA_LINK] || !attrs[IFLA_LINKINFO]) {
        ofpbuf_delete(reply);
        return false;
    }
    kind = nl_attr_find_nested(attrs[IFLA_LINKINFO], IFLA_INFO_KIND);
    *peer = nl_attr_get_u32(attrs[IFLA_LINK]);
    *netnsid = (attrs[IFLA_LINK_NETNSID]
                ? nl_attr_get_u32(attrs[IFLA_LINK_NETNSID]) : -1);
    if (!kind || strcmp(nl_attr_get_string(kind), "veth")) {
        ofpbuf_delete(reply);
        return false;
    }
    ofpbuf_delete(reply);

    reply = afxdp_xdp_get_link(*peer, *netnsid);
    if (reply
        && nl_policy_parse(reply, NLMSG_HDRLEN + sizeof(struct ifinfomsg),
                           link_policy, attrs, ARRAY_SIZE(link_policy))
        && attrs[IFLA_XDP]) {
        attached = nl_attr_find_nested(attrs[IFLA_XDP], IFLA_XDP_ATTACHED);
        id = nl_attr_find_nested(attrs[IFLA_XDP], IFLA_XDP_PROG_ID);
        if (attached) {
            *prog_id = (nl_attr_get_u8(attached) == XDP_ATTACHED_NONE ? 0
                        : id ? nl_attr_get_u32(id) : UINT32_MAX);
            ok = true;
        }
    }
    ofpbuf_delete(reply);
    return ok;
}

/* The id of the program that afxdp_xdp_peer_prog() loaded; 0 until it
 * has. */
static atomic_uint32_t peer_prog_id = 0;

/* The program that afxdp_xdp_peer_attach() puts on veth peers: it passes
 * every packet to the stack.  Loaded once, when first needed; its fd in
 * '*fdp'.  Returns 0 or a positive errno. */
static int
afxdp_xdp_peer_prog(int *fdp)
{
    static struct ovsthread_once once = OVSTHREAD_ONCE_INITIALIZER;
    static int fd = -1;
    static int error;

    if (ovsthread_once_start(&once)) {
        const struct bpf_insn insns[] = {
            { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0,
              .imm = XDP_PASS },
            { .code = BPF_JMP | BPF_EXIT },
        };
        struct bpf_prog_info info;
        uint32_t len = sizeof info;

        fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "afxdp_peer_pass",
                           "Dual BSD/GPL", insns, ARRAY_SIZE(insns), NULL);
        memset(&info, 0, sizeof info);
        if (fd < 0) {
            error = errno;
        } else if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
            error = errno;
            close(fd);
            fd = -1;
        } else {
            atomic_store(&peer_prog_id, info.id);
        }
        ovsthread_once_done(&once);
    }
    *fdp = fd;
    return error;
}

/* Whether 'prog_id' is that of the program afxdp_xdp_peer_attach() puts
 * on veth peers.  Loads nothing: before the program is loaded, no peer
 * runs it. */
static bool
afxdp_xdp_is_peer_prog(uint32_t prog_id)
{
    uint32_t id;

    atomic_read(&peer_prog_id, &id);
    return id && prog_id == id;
}

/* The id that our network namespace gives the namespace of 'netns_fd', or
 * -1 if it gives none or the kernel does not say. */
static int32_t
afxdp_netns_id(int netns_fd)
{
    static const struct nl_policy policy[] = {
        [NETNSA_NSID] = { .type = NL_A_U32 },
    };
    const size_t hdr_len = NLMSG_ALIGN(sizeof(struct rtgenmsg));
    struct nlattr *attrs[ARRAY_SIZE(policy)];
    struct ofpbuf request, *reply;
    int32_t id = -1;

    ofpbuf_init(&request, 0);
    nl_msg_put_nlmsghdr(&request, hdr_len, RTM_GETNSID, NLM_F_REQUEST);
    ofpbuf_put_zeros(&request, hdr_len);
    nl_msg_put_u32(&request, NETNSA_FD, netns_fd);
    if (!nl_transact(NETLINK_ROUTE, &request, &reply)) {
        if (nl_policy_parse(reply, NLMSG_HDRLEN + hdr_len, policy, attrs,
                            ARRAY_SIZE(policy))) {
            id = nl_attr_get_u32(attrs[NETNSA_NSID]);
        }
        ofpbuf_delete(reply);
    }
    ofpbuf_uninit(&request);
    return id;
}

/* Opens the network namespace that 'netnsid' names in ours.  The kernel
 * gives no way from an id to a namespace: this looks among those that
 * "ip netns" and container runtimes name in /run, then those of the
 * processes (but ours: most processes share it).  Returns its fd, or
 * -1. */
static int
afxdp_netns_open(int32_t netnsid)
{
    static const char *const dirs[] = {
        "/run/netns", "/run/docker/netns", "/proc",
    };
    static const char own_path[] = "/proc/self/ns/net";
    struct stat own;

    if (stat(own_path, &own)) {
        memset(&own, 0, sizeof own);
    }
    for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
        bool proc = !strcmp(dirs[i], "/proc");
        struct dirent *de;
        DIR *dir;

        dir = opendir(dirs[i]);
        if (!dir) {
            continue;
        }
        while ((de = readdir(dir)) != NULL) {
            char *path;
            int fd;

            if (de->d_name[0] == '.'
                || (proc && !isdigit((unsigned char) de->d_name[0]))) {
                continue;
            }
            path = xasprintf("%s/%s%s", dirs[i], de->d_name,
                             proc ? "/ns/net" : "");
            fd = open(path, O_RDONLY | O_CLOEXEC);
            free(path);
            if (fd >= 0) {
                struct stat st;

                if (!fstat(fd, &st) && st.st_ino == own.st_ino
                    && st.st_dev == own.st_dev) {
                    close(fd);
                    continue;
                }
                if (afxdp_netns_id(fd) == netnsid) {
                    closedir(dir);
                    return fd;
                }
                close(fd);
            }
        }
        closedir(dir);
    }
    return -1;
}

/* What afxdp_xdp_peer_thread() does, and what it got. */
struct afxdp_peer_link {
    int netns_fd;               /* -1: ours. */
    int ifindex;
    int prog_fd;
    int link_fd;                /* Out: -1 on failure. */
    int error;                  /* Out. */
};

/* Attaches the program of 'arg_' to its device, in native mode through a
 * bpf_link, from within the device's network namespace, where the link
 * resolves the index.  A thread of its own, since it leaves ours. */
static void *
afxdp_xdp_peer_thread(void *arg_)
{
    struct afxdp_peer_link *arg = arg_;
    LIBBPF_OPTS(bpf_link_create_opts, opts);

    arg->link_fd = -1;
    if (arg->netns_fd >= 0 && setns(arg->netns_fd, CLONE_NEWNET)) {
        arg->error = errno;
        return NULL;
    }
    opts.flags = XDP_FLAGS_DRV_MODE;
    arg->link_fd = bpf_link_create(arg->prog_fd, arg->ifindex, BPF_XDP,
                                   &opts);
    arg->error = arg->link_fd < 0 ? errno : 0;
    return NULL;
}

/* For a veth, device 'ifindex', whose peer takes no XDP frames (no XDP
 * program, GRO off: a container's side, as created), attaches to the peer
 * a program that passes every packet to the stack: the veth then takes
 * XDP frames, and offloaded flows can send to it.  The program is held by
 * a bpf_link, so that it goes with the link, or with the process.  On
 * success stores the link in '*peer' for afxdp_xdp_peer_detach() and
 * returns NULL; otherwise returns why not. */
const char *
afxdp_xdp_peer_attach(int ifindex, struct afxdp_xdp_peer *peer)
{
    struct afxdp_peer_link arg;
    uint32_t prog_id;
    int32_t netnsid;
    int error, fd;

    peer->link_fd = -1;
    if (!afxdp_xdp_veth_peer(ifindex, &arg.ifindex, &netnsid, &prog_id)) {
        return "not a veth, or the kernel does not say what its peer runs";
    }
    if (prog_id) {
        return (afxdp_xdp_is_peer_prog(prog_id)
                ? "the peer runs the program already (another port's)"
                : "the peer runs another XDP program");
    }
    error = afxdp_xdp_peer_prog(&fd);
    if (error) {
        VLOG_WARN("cannot load the XDP program for veth peers (%s)",
                  ovs_strerror(error));
        return "cannot load the program for the peer";
    }
    arg.netns_fd = netnsid >= 0 ? afxdp_netns_open(netnsid) : -1;
    if (netnsid >= 0 && arg.netns_fd < 0) {
        return "cannot find the peer's network namespace";
    }
    arg.prog_fd = fd;
    xpthread_join(ovs_thread_create("afxdp_peer", afxdp_xdp_peer_thread,
                                    &arg), NULL);
    if (arg.netns_fd >= 0) {
        close(arg.netns_fd);
    }
    if (arg.link_fd < 0) {
        VLOG_WARN("cannot attach an XDP program to the veth peer (index %d,"
                  " netnsid %"PRId32") of device %d (%s)", arg.ifindex,
                  netnsid, ifindex, ovs_strerror(arg.error));
        return "the kernel refused a program on the peer";
    }
    peer->link_fd = arg.link_fd;
    return NULL;
}

/* Takes the program that afxdp_xdp_peer_attach() put on a veth peer off
 * it again. */
void
afxdp_xdp_peer_detach(struct afxdp_xdp_peer *peer)
{
    if (peer->link_fd >= 0) {
        close(peer->link_fd);
        peer->link_fd = -1;
    }
}

/* For a veth, whether its peer runs an XDP program (but the pass-through
 * one of afxdp_xdp_peer_attach(), which gives XDP frames to the stack as
 * a peer without a program does): 1 if it does, 0 if it does not, -1 if
 * device 'ifindex' is not a veth or the kernel does not say (the peer may
 * be in another network namespace, which the kernel names by an id of
 * ours). */
static int
afxdp_xdp_veth_peer_has_prog(int ifindex)
{
    uint32_t prog_id;
    int32_t netnsid;
    int peer;

    if (!afxdp_xdp_veth_peer(ifindex, &peer, &netnsid, &prog_id)) {
        return -1;
    }
    return prog_id && !afxdp_xdp_is_peer_prog(prog_id);
}

/* Why user space should not send through XDP transmit to device 'ifindex',
 * or NULL if it should.  A veth whose peer runs no XDP program (it takes
 * XDP frames because its peer has GRO on: a container's side, typically)
 * makes a socket buffer of every frame anyway.  There each run of the
 * transmit program (BPF_PROG_RUN with live frames) leaves the kernel a
 * page pool to destroy once its pages come back from the sockets that
 * hold them; a kernel worker on the sending CPU retries that every second,
 * and each release walks all the pools left (Linux 6.18: 45% of the PMD's
 * core in mem_allocator_disconnect() seconds after a TCP request-response
 * test through such a port had ended, whose latency was 61-84 us on
 * average against 23-27 us through the socket: make bench-tcp). */
static const char *
afxdp_xdp_xmit_peer_obstacle(int ifindex)
{
    return (!afxdp_xdp_veth_peer_has_prog(ifindex)
            ? "veth peer runs no XDP program" : NULL);
}

/* Returns NULL if the kernel lets an XDP program call
 * bpf_xdp_adjust_meta(), which the RX hash and XDP transmit need (the
 * first to put the hash in front of the packet, the second to take
 * metadata away from it), otherwise why not.  Some builds refuse the
 * helper to every XDP program ("program of this type cannot use helper
 * bpf_xdp_adjust_meta"), and so do kernels before 4.15.  Asked once, by
 * loading a program of four instructions that calls it. */
static const char *
afxdp_xdp_probe_meta(void)
{
    static struct ovsthread_once once = OVSTHREAD_ONCE_INITIALIZER;
    static const char *reason;

    if (ovsthread_once_start(&once)) {
        const struct bpf_insn insns[] = {
            /* r2 = -4; r0 = bpf_xdp_adjust_meta(r1, r2); return XDP_PASS */
            { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_2,
              .imm = -4 },
            { .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_xdp_adjust_meta },
            { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0,
              .imm = XDP_PASS },
            { .code = BPF_JMP | BPF_EXIT },
        };
        int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "afxdp_meta_probe",
                               "Dual BSD/GPL", insns, ARRAY_SIZE(insns),
                               NULL);

        if (fd >= 0) {
            close(fd);
        } else if (errno == EINVAL) {
            reason = "the kernel refuses bpf_xdp_adjust_meta() to XDP "
                     "programs";
            VLOG_INFO("%s: no RX hash and no XDP transmit", reason);
        } else {
            /* Not the helper's fault (no privilege, no memory): the
             * programs' own loading will tell. */
            VLOG_INFO("cannot probe bpf_xdp_adjust_meta() (%s)",
                      ovs_strerror(errno));
        }
        ovsthread_once_done(&once);
    }
    return reason;
}

/* Returns NULL if device 'ifindex' is better served by XDP transmit than
 * by the RX hash program, which cannot transmit: when it takes XDP frames
 * to transmit and has no zero-copy AF_XDP (whose sockets transmit without
 * a copy), i.e. when its sockets would be in copy mode and XDP transmit
 * spares a socket buffer per packet sent.  Otherwise returns why not. */
static const char *
afxdp_xdp_probe_xmit_preferred(int ifindex)
{
    bool zero_copy = false;
    const char *reason = afxdp_xdp_probe_xmit(ifindex, &zero_copy);

    return (reason ? reason
            : zero_copy ? "device has zero-copy AF_XDP"
            : afxdp_xdp_xmit_peer_obstacle(ifindex));
}

/* Asks the kernel whether device 'ifindex' has zero-copy AF_XDP.  Returns
 * 1 if it does, 0 if it does not, -1 if the kernel does not say (before
 * Linux 6.3). */
int
afxdp_xdp_probe_zero_copy(int ifindex)
{
    const char *reason;
    uint64_t features;

    if (afxdp_xdp_probe(ifindex, AFXDP_NETDEV_A_DEV_XDP_FEATURES,
                        &features, &reason)) {
        return -1;
    }
    return (features & AFXDP_NETDEV_XDP_ACT_XSK_ZEROCOPY) != 0;
}

/* Finds the XDP program and the XSKMAP of 'obj' and loads it into the
 * kernel.  In our own object ('path' null) the program is the one named
 * 'prog_name', bound to device 'ifindex' if that is nonzero, its XDP
 * transmit maps get room for 'n_xmit' queues, and its XSKMAP for queues up
 * to 'queue_end'; in a user's, the first XDP program, whose XSKMAP must
 * have that room. */
static int
afxdp_xdp_load(struct bpf_object *obj, const char *path,
               const char *prog_name, int ifindex, uint32_t n_xmit,
               uint32_t queue_end, struct bpf_program **progp, int *map_fd,
               char **errp)
{
    const char *name = path ? path : "afxdp-redirect";
    struct bpf_program *prog = NULL, *p;
    struct bpf_map *map;
    int error;

    bpf_object__for_each_program (p, obj) {
        bool match = (bpf_program__type(p) == BPF_PROG_TYPE_XDP
                      && !prog
                      && (path || !strcmp(bpf_program__name(p),
                                          prog_name)));

        if (match) {
            prog = p;
        }
        bpf_program__set_autoload(p, match);
    }
    if (!prog) {
        *errp = xasprintf("%s has no XDP program", name);
        return EINVAL;
    }
    if (!path && ifindex) {
        bpf_program__set_ifindex(prog, ifindex);
        bpf_program__set_flags(prog, (bpf_program__flags(prog)
                                      | BPF_F_XDP_DEV_BOUND_ONLY));
    }
    if (!path && afxdp_umem_kernel_has_sg()) {
        /* Our programs read only a packet's first buffer, or use helpers
         * that know of the others: they take packets spread over several
         * pages (multi-buffer), which also lets a veth peer keep a jumbo
         * MTU while they are attached. */
        bpf_program__set_flags(prog, (bpf_program__flags(prog)
                                      | BPF_F_XDP_HAS_FRAGS));
    }

    if (!path && n_xmit) {
        map = bpf_object__find_map_by_name(obj, AFXDP_XMIT_SLOTS_NAME);
        if (map) {
            bpf_map__set_max_entries(map, n_xmit * AFXDP_XMIT_BURST);
        }
        map = bpf_object__find_map_by_name(obj, AFXDP_XMIT_CTL_NAME);
        if (map) {
            bpf_map__set_max_entries(map, n_xmit);
        }
    }

    map = bpf_object__find_map_by_name(obj, AFXDP_XSKS_MAP_NAME);
    if (!map || bpf_map__type(map) != BPF_MAP_TYPE_XSKMAP) {
        *errp = xasprintf("%s does not define an XSKMAP named '%s'",
                          name, AFXDP_XSKS_MAP_NAME);
        return EINVAL;
    }
    if (bpf_map__max_entries(map) < queue_end) {
        if (path) {
            *errp = xasprintf("the XSKMAP '%s' of %s has %"PRIu32" entries, "
                              "too few for queue %"PRIu32,
                              AFXDP_XSKS_MAP_NAME, name,
                              bpf_map__max_entries(map), queue_end - 1);
            return EINVAL;
        }
        bpf_map__set_max_entries(map, queue_end);
    }

    if (!path) {
        error = afxdp_flow_reuse_maps(obj);
        if (error) {
            *errp = xasprintf("cannot give %s the shared flow table (%s)",
                              name, ovs_strerror(error));
            return error;
        }
    }

    error = bpf_object__load(obj);
    if (error) {
        *errp = xasprintf("cannot load XDP program from %s (%s)",
                          name, ovs_strerror(-error));
        return -error;
    }

    *progp = prog;
    *map_fd = bpf_map__fd(map);
    return 0;
}

/* Returns the offset of the instructions in the kernel's struct bpf_prog,
 * from the kernel's BTF (the member 'insns', which recent kernels keep in an
 * anonymous union), or -1 if it cannot be told. */
static int
afxdp_xdp_insns_offset__(const struct btf *btf, const struct btf_type *t,
                         int base)
{
    const struct btf_member *m = btf_members(t);

    for (int i = 0; i < btf_vlen(t); i++, m++) {
        const struct btf_type *mt = btf__type_by_id(btf, m->type);
        const char *name = btf__name_by_offset(btf, m->name_off);
        int offset = base + btf_member_bit_offset(t, i) / 8;

        if (name && !strcmp(name, "insns")) {
            return offset;
        } else if ((!name || !name[0]) && mt && btf_is_composite(mt)) {
            offset = afxdp_xdp_insns_offset__(btf, mt, offset);
            if (offset >= 0) {
                return offset;
            }
        }
    }
    return -1;
}

static int
afxdp_xdp_insns_offset(void)
{
    static struct ovsthread_once once = OVSTHREAD_ONCE_INITIALIZER;
    static int offset = -1;

    if (ovsthread_once_start(&once)) {
        struct btf *btf = btf__load_vmlinux_btf();
        int id = (btf ? btf__find_by_name_kind(btf, "bpf_prog",
                                               BTF_KIND_STRUCT)
                  : -1);

        if (id > 0) {
            offset = afxdp_xdp_insns_offset__(btf, btf__type_by_id(btf, id),
                                              0);
        }
        btf__free(btf);
        ovsthread_once_done(&once);
    }
    return offset;
}

/* The kernel keeps a program in the pages it allocates for it as
 * submitted: a header, then 8 bytes an instruction, rounded up to whole
 * pages.  Where the verifier's rewrites (inlined helpers and map lookups,
 * context accesses) outgrow them, the kernel moves the program to larger
 * pages, and the kernels this was seen on (6.18, 7.2) leave a program
 * bound to a device registered with the device at its old address:
 * deleting the device while the program is loaded then reads freed memory,
 * an oops with the RTNL lock held, which stops all networking on the host.
 * Closing such a program before it is attached is safe.
 *
 * So the program that we bind carries room that the verifier removes before
 * it rewrites (AFXDP_VERIFIER_ROOM), and this checks, after loading
 * 'prog' (of 'ifname'), that it did stay in its pages: returns 0, or
 * EFBIG with an explanation in '*errp' if it did not.  A kernel that does
 * not tell the program's size or its header's (no BTF, or the program's
 * instructions hidden from this process) is trusted to the room. */
static int
afxdp_xdp_check_bound(const struct bpf_program *prog, const char *ifname,
                      char **errp)
{
    long page = sysconf(_SC_PAGESIZE);
    int header = afxdp_xdp_insns_offset();
    size_t insn = sizeof(struct bpf_insn);
    size_t submitted = bpf_program__insn_cnt(prog);
    struct bpf_prog_info info;
    uint32_t len = sizeof info;
    size_t pages, room, xlated;

    memset(&info, 0, sizeof info);
    if (header < 0 || page <= 0
        || bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len)
        || !info.xlated_prog_len) {
        VLOG_INFO("%s: cannot tell whether the kernel kept XDP program %s "
                  "in place (relying on its room for the verifier)",
                  ifname, bpf_program__name(prog));
        return 0;
    }

    pages = DIV_ROUND_UP(header + submitted * insn, page);
    room = (pages * page - header) / insn;
    xlated = info.xlated_prog_len / insn;
    if (xlated > room) {
        *errp = xasprintf("%s: the kernel moved XDP program %s, bound to the "
                          "device, while verifying it (%"PRIuSIZE
                          " instructions submitted, %"PRIuSIZE" after the "
                          "verifier, room for %"PRIuSIZE"): deleting the "
                          "device with it loaded could crash this kernel",
                          ifname, bpf_program__name(prog), submitted,
                          xlated, room);
        return EFBIG;
    }
    VLOG_INFO("%s: XDP program %s bound to the device: %"PRIuSIZE
              " instructions submitted, %"PRIuSIZE" after the verifier, "
              "room for %"PRIuSIZE, ifname, bpf_program__name(prog),
              submitted, xlated, room);
    return 0;
}

/* Where and how afxdp_xdp_attach() installs a program. */
struct afxdp_xdp_target {
    const char *ifname;
    int ifindex;
    const struct afxdp_xdp_config *cfg;
};

/* Writes steering flags 'flags', and whether offloaded flows finish
 * partial checksums, into our program's 'steer_cfg'.  Returns 0 or a
 * positive errno with an explanation in '*errp'. */
static int
afxdp_xdp_set_steer(struct bpf_object *obj, const char *ifname,
                    uint32_t flags, bool csum_partial, char **errp)
{
    struct bpf_map *map = bpf_object__find_map_by_name(obj,
                                                       AFXDP_STEER_CFG_NAME);
    struct afxdp_steer_cfg cfg = {
        .flags = flags,
        .csum_partial = csum_partial,
    };
    uint32_t zero = 0;
    int error;

    error = (!map ? ENOENT
             : -bpf_map_update_elem(bpf_map__fd(map), &zero, &cfg, BPF_ANY));
    if (error) {
        *errp = xasprintf("%s: cannot set up steering (%s)", ifname,
                          ovs_strerror(error));
    }
    return error;
}

/* Opens the object file 't->cfg->path' (our own if NULL), loads its
 * program 'prog_name' (see afxdp_xdp_load()), bound to the device if
 * 'bind_to_device', with XDP transmit maps if 'xmit', sets its steering
 * up, and attaches it to the device through a bpf_link.  On success stores
 * the object, the program's fd and id (0 if unknown), the XSKMAP's and the
 * link's fds in 'xdp' and returns 0; on failure returns a positive errno
 * with an explanation in '*errp', having released everything. */
static int
afxdp_xdp_install(const struct afxdp_xdp_target *t, const char *prog_name,
                  bool bind_to_device, bool xmit, struct afxdp_xdp *xdp,
                  char **errp)
{
    const struct afxdp_xdp_config *cfg = t->cfg;
    LIBBPF_OPTS(bpf_link_create_opts, opts);
    struct bpf_prog_info info;
    uint32_t info_len = sizeof info;
    struct bpf_program *prog;
    struct bpf_object *obj;
    int map_fd, link_fd = -1;
    int error;

    obj = afxdp_xdp_open(cfg->path, errp);
    if (!obj) {
        return EINVAL;
    }
    error = afxdp_xdp_load(obj, cfg->path, prog_name,
                           bind_to_device ? t->ifindex : 0,
                           xmit ? cfg->n_queues : 0,
                           cfg->first_queue + cfg->n_queues, &prog, &map_fd,
                           errp);
    if (!error && bind_to_device) {
        error = afxdp_xdp_check_bound(prog, t->ifname, errp);
    }
    if (!error && (cfg->steer || cfg->csum_partial)) {
        error = afxdp_xdp_set_steer(obj, t->ifname, cfg->steer,
                                    cfg->csum_partial, errp);
    }
    if (!error) {
        opts.flags = (cfg->attach == AFXDP_XDP_NATIVE
                      ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE);
        link_fd = bpf_link_create(bpf_program__fd(prog), t->ifindex,
                                  BPF_XDP, &opts);
        if (link_fd < 0) {
            error = -link_fd;
            *errp = xasprintf("cannot attach XDP program to %s in %s mode "
                              "(%s)", t->ifname,
                              afxdp_xdp_attach_name(cfg->attach),
                              ovs_strerror(error));
        }
    }
    if (error) {
        bpf_object__close(obj);
        return error;
    }

    memset(&info, 0, sizeof info);
    xdp->prog_id = (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info,
                                           &info_len)
                    ? 0 : info.id);
    xdp->obj = obj;
    xdp->flow_table = (!cfg->path && strcmp(prog_name, AFXDP_PROG_PLAIN_NAME)
                       && !afxdp_flow_init(NULL));
    xdp->prog_fd = bpf_program__fd(prog);
    xdp->map_fd = map_fd;
    xdp->link_fd = link_fd;
    xdp->first_queue = cfg->first_queue;
    return 0;
}

/* Why a program bound to the device cannot run on it, as a status, or
 * NULL if one can: only ours, in native mode, and not where XDP
 * transmit's program goes in ('xmit_status' NULL), which is not bound:
 * user space runs it, and cannot run a bound program. */
static const char *
afxdp_xdp_bound_obstacle(const struct afxdp_xdp_config *cfg,
                         const char *xmit_status)
{
    return (cfg->path ? "unavailable: xdp-program is set"
            : cfg->attach != AFXDP_XDP_NATIVE ? "unavailable: generic mode"
            : !xmit_status ? "unavailable: XDP transmit in use"
            : NULL);
}

/* Whether a program bound to device 'ifindex' can ask it for the XDP RX
 * metadata 'feature' (see afxdp_xdp_bound_obstacle() for 'cfg' and
 * 'xmit_status', afxdp_xdp_probe_rx_meta() for 'missing').  Stores the
 * status in '*status' ("device", or why not), with its detail, if any, in
 * '*reason'. */
static bool
afxdp_xdp_bound_feature(const struct afxdp_xdp_config *cfg,
                        const char *xmit_status, int ifindex,
                        uint64_t feature, const char *missing,
                        const char **status, const char **reason)
{
    *status = afxdp_xdp_bound_obstacle(cfg, xmit_status);
    if (*status) {
        return false;
    }
    if (afxdp_xdp_probe_rx_meta(ifindex, feature, missing, reason)) {
        *status = "unavailable";
        return false;
    }
    *status = "device";
    return true;
}

/* Returns "STATUS: DETAIL" if 'detail' is nonnull, otherwise 'status',
 * as a string for the caller to free. */
static char *
afxdp_xdp_status(const char *status, const char *detail)
{
    return detail ? xasprintf("%s: %s", status, detail) : xstrdup(status);
}

/* Loads the XDP program from the object file 'cfg->path' (our own if
 * NULL) and attaches it to 'ifname' (whose index is 'ifindex') in mode
 * 'cfg->attach' through a bpf_link.  With our own program, in native
 * mode: 'cfg->xmit' asks for XDP transmit, which takes precedence over the
 * programs bound to the device when the RX hash is asked for too but the
 * device is better served by XDP transmit, and always without the RX hash
 * (XDP transmit's program then takes over whenever the device starts
 * taking XDP frames); otherwise a program bound to the device passes its
 * RX hash, if 'cfg->rx_hash' and the device provides it, and puts back
 * the VLAN tags that the device keeps beside packets, where it tells
 * them.  On success stores it in '*xdpp' and returns 0.  On failure
 * returns a positive errno, stores an explanation in '*errp' (to be freed
 * by the caller), and leaves the interface as it was. */
int
afxdp_xdp_attach(const char *ifname, int ifindex,
                 const struct afxdp_xdp_config *cfg,
                 struct afxdp_xdp **xdpp, char **errp)
{
    const struct afxdp_xdp_target t = {
        .ifname = ifname,
        .ifindex = ifindex,
        .cfg = cfg,
    };
    const char *path = cfg->path;
    const char *xmit_status = (!cfg->xmit ? "off"
                               : path ? "xdp-program is set"
                               : cfg->attach != AFXDP_XDP_NATIVE
                               ? "generic mode"
                               : NULL);
    const char *hash_status = "off", *vlan_status;
    const char *no_meta;
    const char *hash_reason = NULL, *vlan_reason = NULL;
    bool rx_hash = false, rx_vlan = false;
    char *bound_error = NULL;
    struct afxdp_xdp *xdp;
    bool flows = false;
    uint32_t prog_id;
    int error;

    afxdp_xdp_init();
    no_meta = afxdp_xdp_probe_meta();
    *xdpp = NULL;
    if (path && cfg->steer) {
        *errp = xasprintf("%s: steering needs the built-in XDP program",
                          ifname);
        return EINVAL;
    }

    error = afxdp_xdp_query(ifindex, &prog_id);
    if (error) {
        *errp = xasprintf("cannot query the XDP program of %s (%s)",
                          ifname, ovs_strerror(error));
        return error;
    }
    if (prog_id) {
        *errp = xasprintf("%s already has an XDP program (id %"PRIu32") "
                          "that afxdp did not attach; it is left in place",
                          ifname, prog_id);
        return EBUSY;
    }

    if (!xmit_status) {
        xmit_status = no_meta;
    }
    if (cfg->rx_hash && !xmit_status) {
        xmit_status = afxdp_xdp_probe_xmit_preferred(ifindex);
    }
    if (cfg->rx_hash) {
        rx_hash = afxdp_xdp_bound_feature(
            cfg, xmit_status, ifindex, AFXDP_NETDEV_XDP_RX_METADATA_HASH,
            "driver does not provide the RX hash to XDP",
            &hash_status, &hash_reason);
        if (rx_hash && no_meta) {
            /* The VLAN tags do not need it. */
            rx_hash = false;
            hash_status = "unavailable";
            hash_reason = no_meta;
        }
    }
    rx_vlan = afxdp_xdp_bound_feature(
        cfg, xmit_status, ifindex, AFXDP_NETDEV_XDP_RX_METADATA_VLAN_TAG,
        "driver does not provide VLAN tags to XDP",
        &vlan_status, &vlan_reason);

    xdp = xzalloc(sizeof *xdp);
    if (rx_hash || rx_vlan) {
        /* A kernel or libbpf that cannot load or attach the program bound
         * to the device gets one of the others. */
        const char *name = (!rx_vlan ? AFXDP_PROG_HASH_NAME
                            : !rx_hash ? AFXDP_PROG_VLAN_NAME
                            : AFXDP_PROG_HASH_VLAN_NAME);

        if (afxdp_xdp_install(&t, name, true, false, xdp, &bound_error)) {
            hash_status = rx_hash ? "unavailable" : hash_status;
            vlan_status = rx_vlan ? "unavailable" : vlan_status;
            rx_hash = rx_vlan = false;
        } else {
            xdp->bound = true;
        }
    }
    if (!xdp->bound && !xmit_status) {
        /* The transmitting program needs helpers of Linux 5.18: a kernel
         * that refuses it gets the plain one. */
        char *xmit_error = NULL;

        if (afxdp_xdp_install(&t, AFXDP_PROG_XMIT_NAME, false, true, xdp,
                              &xmit_error)) {
            VLOG_INFO("%s: XDP transmit unavailable: %s", ifname,
                      xmit_error);
            free(xmit_error);
            xmit_status = "the kernel refuses the XDP transmit program";
        }
    }
    if (!xdp->bound && xmit_status && !path) {
        /* The program that runs offloaded flows needs a helper of Linux
         * 5.18: a kernel that refuses it gets the plain one. */
        char *flows_error = NULL;

        flows = !afxdp_xdp_install(&t, AFXDP_PROG_FLOWS_NAME, false, false,
                                   xdp, &flows_error);
        if (!flows) {
            VLOG_INFO("%s: XDP flow offload unavailable: %s", ifname,
                      flows_error);
            free(flows_error);
        }
    }
    if (!xdp->bound && xmit_status && !flows) {
        error = afxdp_xdp_install(&t, AFXDP_PROG_PLAIN_NAME, false, false,
                                  xdp, errp);
        if (error) {
            free(bound_error);
            free(xdp);
            return error;
        }
    }

    xdp->rx_hash = rx_hash;
    xdp->rx_hash_status = afxdp_xdp_status(
        hash_status, (cfg->rx_hash && !strcmp(hash_status, "unavailable")
                      ? (bound_error ? bound_error : hash_reason)
                      : NULL));
    xdp->rx_vlan_status = afxdp_xdp_status(
        vlan_status, (!strcmp(vlan_status, "unavailable")
                      ? (bound_error ? bound_error : vlan_reason)
                      : NULL));
    free(bound_error);
    xdp->ifindex = ifindex;
    xdp->xmit_status = (xmit_status ? xmit_status
                        : afxdp_xdp_map_xmit(xdp));
    *xdpp = xdp;
    return 0;
}

static void *
afxdp_xdp_mmap(struct bpf_object *obj, const char *name, size_t *sizep)
{
    struct bpf_map *map = bpf_object__find_map_by_name(obj, name);
    long page = sysconf(_SC_PAGESIZE);
    size_t size;
    void *p;

    if (!map) {
        return NULL;
    }
    size = ROUND_UP((size_t) bpf_map__value_size(map)
                    * bpf_map__max_entries(map), page);
    p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
             bpf_map__fd(map), 0);
    if (p == MAP_FAILED) {
        VLOG_WARN("cannot map %s (%s)", name, ovs_strerror(errno));
        return NULL;
    }
    *sizep = size;
    return p;
}

/* Maps the XDP transmit maps of our transmitting program.  Returns
 * NULL on success, otherwise why XDP transmit is unavailable. */
static const char *
afxdp_xdp_map_xmit(struct afxdp_xdp *xdp)
{
    xdp->xmit_slots = afxdp_xdp_mmap(xdp->obj, AFXDP_XMIT_SLOTS_NAME,
                                     &xdp->xmit_slots_size);
    xdp->xmit_ctl = afxdp_xdp_mmap(xdp->obj, AFXDP_XMIT_CTL_NAME,
                                   &xdp->xmit_ctl_size);
    if (!xdp->xmit_slots || !xdp->xmit_ctl) {
        afxdp_xdp_unmap_xmit(xdp);
        return "cannot map the transmit slots";
    }
    return NULL;
}

static void
afxdp_xdp_unmap_xmit(struct afxdp_xdp *xdp)
{
    if (xdp->xmit_slots) {
        munmap(xdp->xmit_slots, xdp->xmit_slots_size);
        xdp->xmit_slots = NULL;
    }
    if (xdp->xmit_ctl) {
        munmap(xdp->xmit_ctl, xdp->xmit_ctl_size);
        xdp->xmit_ctl = NULL;
    }
}

/* Detaches and unloads the program.  The XSKMAP goes with it. */
void
afxdp_xdp_detach(struct afxdp_xdp *xdp)
{
    if (xdp) {
        afxdp_xdp_unmap_xmit(xdp);
        close(xdp->link_fd);
        bpf_object__close(xdp->obj);
        free(xdp->rx_hash_status);
        free(xdp->rx_vlan_status);
        free(xdp->steer_addrs);
        free(xdp);
    }
}

/* Steers the packets of the port's receive queue 'queue' to the AF_XDP
 * socket 'fd'.  Returns 0 or a positive errno. */
int
afxdp_xdp_set_socket(struct afxdp_xdp *xdp, uint32_t queue, int fd)
{
    uint32_t key = xdp->first_queue + queue;
    int error = bpf_map_update_elem(xdp->map_fd, &key, &fd, BPF_ANY);

    return error ? -error : 0;
}

/* Lets the packets of the port's receive queue 'queue' go to the kernel's
 * stack. */
void
afxdp_xdp_clear_socket(struct afxdp_xdp *xdp, uint32_t queue)
{
    uint32_t key = xdp->first_queue + queue;

    bpf_map_delete_elem(xdp->map_fd, &key);
}

static int
afxdp_xdp_steer_map(const struct afxdp_xdp *xdp, const char *name)
{
    struct bpf_map *map = bpf_object__find_map_by_name(xdp->obj, name);

    return map ? bpf_map__fd(map) : -1;
}

/* Gives the kernel's stack the packets that match one of the 'n' 'rules'
 * (with AFXDP_STEER_RULES set up by afxdp_xdp_attach()).  Called once, on
 * a program just attached.  Returns 0 or a positive errno. */
int
afxdp_xdp_steer_rules(struct afxdp_xdp *xdp,
                      const struct afxdp_steer_rule *rules, size_t n)
{
    int fd = afxdp_xdp_steer_map(xdp, AFXDP_STEER_RULES_NAME);
    const uint8_t one = 1;

    for (size_t i = 0; i < n; i++) {
        if (fd < 0 || bpf_map_update_elem(fd, &rules[i], &one, BPF_ANY)) {
            return fd < 0 ? ENOENT : errno;
        }
    }
    return 0;
}

static bool
afxdp_addr_in(const struct in6_addr *addr, const struct in6_addr *addrs,
              size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!memcmp(addr, &addrs[i], sizeof *addr)) {
            return true;
        }
    }
    return false;
}

/* Makes the device's own addresses, for steering (AFXDP_STEER_LOCAL), the
 * 'n' in 'addrs' (IPv4 ones mapped), at most AFXDP_STEER_MAX_ADDRS of
 * them.  New ones are added before old ones are removed, so that an
 * address that stays is never missing.  Sets '*changed' if the set
 * differs from the last one.  Returns 0 or a positive errno. */
int
afxdp_xdp_steer_addrs(struct afxdp_xdp *xdp, const struct in6_addr *addrs,
                      size_t n, bool *changed)
{
    int fd = afxdp_xdp_steer_map(xdp, AFXDP_STEER_ADDRS_NAME);
    struct in6_addr *in_map;
    const uint8_t one = 1;
    size_t n_in_map = 0;
    int error = 0;

    *changed = false;
    if (fd < 0) {
        return ENOENT;
    }
    n = MIN(n, AFXDP_STEER_MAX_ADDRS);
    in_map = xmalloc(MAX(n, 1) * sizeof *in_map);
    for (size_t i = 0; i < n; i++) {
        if (afxdp_addr_in(&addrs[i], in_map, n_in_map)) {
            continue;           /* Listed twice. */
        }
        if (!afxdp_addr_in(&addrs[i], xdp->steer_addrs, xdp->n_steer_addrs)) {
            *changed = true;
            if (bpf_map_update_elem(fd, &addrs[i], &one, BPF_ANY)) {
                error = errno;
                continue;       /* Tried again next time. */
            }
        }
        in_map[n_in_map++] = addrs[i];
    }
    for (size_t i = 0; i < xdp->n_steer_addrs; i++) {
        if (!afxdp_addr_in(&xdp->steer_addrs[i], in_map, n_in_map)) {
            *changed = true;
            bpf_map_delete_elem(fd, &xdp->steer_addrs[i]);
        }
    }
    free(xdp->steer_addrs);
    xdp->steer_addrs = in_map;
    xdp->n_steer_addrs = n_in_map;
    return error;
}

/* The number of the device's own addresses that steering knows. */
size_t
afxdp_xdp_n_steer_addrs(const struct afxdp_xdp *xdp)
{
    return xdp->n_steer_addrs;
}

uint32_t
afxdp_xdp_prog_id(const struct afxdp_xdp *xdp)
{
    return xdp->prog_id;
}

/* Whether the program attached writes the device's RX hash in front of
 * each packet. */
bool
afxdp_xdp_has_rx_hash(const struct afxdp_xdp *xdp)
{
    return xdp->rx_hash;
}

/* "device" if the RX hash comes from the device, "off" if it was not asked
 * for, otherwise why it is unavailable. */
const char *
afxdp_xdp_rx_hash_status(const struct afxdp_xdp *xdp)
{
    return xdp->rx_hash_status;
}

/* "device" if the program puts back in packets the VLAN tags that the
 * device keeps beside them, otherwise why it does not. */
const char *
afxdp_xdp_rx_vlan_status(const struct afxdp_xdp *xdp)
{
    return xdp->rx_vlan_status;
}

/* XDP transmit. */

/* NULL if this program can transmit for queues of the port (the device
 * may still refuse XDP frames, see afxdp_xdp_xmit_obstacle()), otherwise
 * why it cannot. */
const char *
afxdp_xdp_xmit_unsupported(const struct afxdp_xdp *xdp)
{
    return xdp->xmit_status;
}

/* Whether the attached program executes the flows offloaded to XDP
 * (afxdp-flow.h): ours does, where the kernel let the flow table's maps be
 * created. */
bool
afxdp_xdp_has_flow_table(const struct afxdp_xdp *xdp)
{
    return xdp->flow_table;
}

/* Asks the kernel whether device 'ifindex' takes XDP frames to transmit:
 * whether a program may redirect packets to it.  Returns NULL if it does,
 * otherwise why not.  It takes the RTNL lock: not for a datapath
 * thread. */
const char *
afxdp_xdp_frames_obstacle(int ifindex)
{
    bool zero_copy;

    return afxdp_xdp_probe_xmit(ifindex, &zero_copy);
}

/* Asks the kernel whether user space should send through XDP transmit
 * now: whether the device takes XDP frames to transmit and, for a veth,
 * whether its peer runs an XDP program (see
 * afxdp_xdp_xmit_peer_obstacle()).  Returns NULL if so, otherwise why not.
 * Any thread may call it. */
const char *
afxdp_xdp_xmit_obstacle(const struct afxdp_xdp *xdp)
{
    const char *reason;
    bool zero_copy;

    if (xdp->xmit_status) {
        return xdp->xmit_status;
    }
    reason = afxdp_xdp_probe_xmit(xdp->ifindex, &zero_copy);
    return reason ? reason : afxdp_xdp_xmit_peer_obstacle(xdp->ifindex);
}

/* Sends the packets of 'batch' that fit a slot (at most AFXDP_XMIT_MAX
 * bytes) through the device's XDP transmit path, from queue 'queue''s
 * slots, and frees them.  Leaves in 'batch' the packets it did not send,
 * for the caller to send another way: those too large, and all of them
 * if the kernel refused the run.  The caller serializes calls for one
 * queue.  Updates '*stats'. */
void
afxdp_xdp_xmit(struct afxdp_xdp *xdp, uint32_t queue,
               struct dp_packet_batch *batch, struct afxdp_xmit_stats *stats)
{
    struct afxdp_xmit_slot *slots = &xdp->xmit_slots[queue
                                                     * AFXDP_XMIT_BURST];
    struct afxdp_xmit_ctl *ctl = &xdp->xmit_ctl[queue];
    struct dp_packet *sent[AFXDP_XMIT_BURST];
    const size_t size = dp_packet_batch_size(batch);
    struct dp_packet *packet;
    uint32_t invalid;
    size_t i, n = 0, ran;

    DP_PACKET_BATCH_REFILL_FOR_EACH (i, size, packet, batch) {
        uint32_t len = dp_packet_size(packet);

        if (len < ETH_HEADER_LEN || len > AFXDP_XMIT_MAX
            || n >= AFXDP_XMIT_BURST) {
            dp_packet_batch_add(batch, packet);
            continue;
        }
        slots[n].len = len;
        slots[n].ifindex = xdp->ifindex;
        memcpy(slots[n].data, dp_packet_data(packet), len);
        sent[n++] = packet;
    }
    if (!n) {
        return;
    }

    struct {
        struct afxdp_xmit_meta meta;
        uint8_t frame[ETH_TOTAL_MIN];
    } in;
    struct xdp_md ctx = {
        .data = sizeof in.meta,
        .data_end = sizeof in,
    };
    LIBBPF_OPTS(bpf_test_run_opts, opts,
        .data_in = &in,
        .data_size_in = sizeof in,
        .ctx_in = &ctx,
        .ctx_size_in = sizeof ctx,
        .repeat = n,
        .batch_size = n,
        .flags = BPF_F_TEST_XDP_LIVE_FRAMES,
    );
    int error;

    memset(&in, 0, sizeof in);
    in.meta.magic = AFXDP_XMIT_MAGIC;
    in.meta.queue = queue;
    ctl->next = queue * AFXDP_XMIT_BURST;
    invalid = ctl->invalid;

    error = bpf_prog_test_run_opts(xdp->prog_fd, &opts);

    /* The program took a slot for each frame it ran on.  A run that
     * failed part of the way ran on the first ones: those are gone (or
     * dropped), the others go back to the caller, who sends them through
     * the socket, so that none is sent twice. */
    ran = MIN(ctl->next - queue * AFXDP_XMIT_BURST, n);
    if (error) {
        static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(1, 5);

        VLOG_WARN_RL(&rl, "XDP transmit on device %d failed after %"PRIuSIZE
                     " of %"PRIuSIZE" packets (%s)", xdp->ifindex, ran, n,
                     ovs_strerror(-error));
        stats->failed += n - ran;
    }
    stats->invalid += ctl->invalid - invalid;
    stats->redirected += ran - (ctl->invalid - invalid);
    for (i = 0; i < n; i++) {
        if (i < ran) {
            dp_packet_delete(sent[i]);
        } else {
            dp_packet_batch_add(batch, sent[i]);
        }
    }
}
