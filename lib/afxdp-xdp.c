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
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/if_link.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "bpf/afxdp-prog.h"
#include "openvswitch/dynamic-string.h"
#include "openvswitch/vlog.h"
#include "ovs-thread.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(afxdp_xdp);

/* The object file of bpf/afxdp-redirect.c, compiled by clang at build
 * time. */
static const unsigned char afxdp_redirect_obj[] = {
#include "bpf/afxdp-redirect.inc"
};

struct afxdp_xdp {
    struct bpf_object *obj;
    int map_fd;                 /* 'xsks_map'. */
    int link_fd;                /* Attachment; closing it detaches. */
    uint32_t prog_id;
};

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

/* Finds the XDP program and the XSKMAP of 'obj' and loads it into the
 * kernel. */
static int
afxdp_xdp_load(struct bpf_object *obj, const char *path,
               struct bpf_program **progp, int *map_fd, char **errp)
{
    const char *name = path ? path : "afxdp-redirect";
    struct bpf_program *prog = NULL, *p;
    struct bpf_map *map;
    int error;

    bpf_object__for_each_program (p, obj) {
        if (bpf_program__type(p) == BPF_PROG_TYPE_XDP) {
            prog = p;
            break;
        }
    }
    if (!prog) {
        *errp = xasprintf("%s has no XDP program", name);
        return EINVAL;
    }

    map = bpf_object__find_map_by_name(obj, AFXDP_XSKS_MAP_NAME);
    if (!map || bpf_map__type(map) != BPF_MAP_TYPE_XSKMAP) {
        *errp = xasprintf("%s does not define an XSKMAP named '%s'",
                          name, AFXDP_XSKS_MAP_NAME);
        return EINVAL;
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

/* Loads the XDP program from the object file 'path' (our own if NULL) and
 * attaches it to 'ifname' (whose index is 'ifindex') in mode 'attach'
 * through a bpf_link.  On success stores it in '*xdpp' and returns 0.  On
 * failure returns a positive errno, stores an explanation in '*errp' (to be
 * freed by the caller), and leaves the interface as it was. */
int
afxdp_xdp_attach(const char *ifname, int ifindex, const char *path,
                 enum afxdp_xdp_attach attach, struct afxdp_xdp **xdpp,
                 char **errp)
{
    LIBBPF_OPTS(bpf_link_create_opts, opts);
    struct bpf_prog_info info;
    uint32_t info_len = sizeof info;
    struct bpf_program *prog;
    struct bpf_object *obj;
    uint32_t prog_id;
    int map_fd, fd;
    int error;

    afxdp_xdp_init();
    *xdpp = NULL;

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

    obj = afxdp_xdp_open(path, errp);
    if (!obj) {
        return EINVAL;
    }
    error = afxdp_xdp_load(obj, path, &prog, &map_fd, errp);
    if (error) {
        goto error;
    }

    opts.flags = (attach == AFXDP_XDP_NATIVE
                  ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE);
    fd = bpf_link_create(bpf_program__fd(prog), ifindex, BPF_XDP, &opts);
    if (fd < 0) {
        error = -fd;
        *errp = xasprintf("cannot attach XDP program to %s in %s mode (%s)",
                          ifname, afxdp_xdp_attach_name(attach),
                          ovs_strerror(error));
        goto error;
    }

    memset(&info, 0, sizeof info);
    error = bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &info_len);

    struct afxdp_xdp *xdp = xzalloc(sizeof *xdp);
    xdp->obj = obj;
    xdp->map_fd = map_fd;
    xdp->link_fd = fd;
    xdp->prog_id = error ? 0 : info.id;
    *xdpp = xdp;
    return 0;

error:
    bpf_object__close(obj);
    return error;
}

/* Detaches and unloads the program.  The XSKMAP goes with it. */
void
afxdp_xdp_detach(struct afxdp_xdp *xdp)
{
    if (xdp) {
        close(xdp->link_fd);
        bpf_object__close(xdp->obj);
        free(xdp);
    }
}

/* Steers the packets of receive queue 'queue' to the AF_XDP socket 'fd'.
 * Returns 0 or a positive errno. */
int
afxdp_xdp_set_socket(struct afxdp_xdp *xdp, uint32_t queue, int fd)
{
    int error = bpf_map_update_elem(xdp->map_fd, &queue, &fd, BPF_ANY);

    return error ? -error : 0;
}

/* Lets the packets of receive queue 'queue' go to the kernel's stack. */
void
afxdp_xdp_clear_socket(struct afxdp_xdp *xdp, uint32_t queue)
{
    bpf_map_delete_elem(xdp->map_fd, &queue);
}

uint32_t
afxdp_xdp_prog_id(const struct afxdp_xdp *xdp)
{
    return xdp->prog_id;
}
