/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Copyright (c) 2026 The ovs-afxdp authors.
 *
 * XDP program for afxdp ports: a packet received on queue N goes to the
 * AF_XDP socket in slot N of 'xsks_map'; where no socket is bound to that
 * queue, the packet goes on to the kernel's network stack (XDP_PASS).
 */

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "afxdp-prog.h"

struct {
    __uint(type, BPF_MAP_TYPE_XSKMAP);
    __uint(max_entries, AFXDP_MAX_QUEUES);
    __type(key, __u32);
    __type(value, __u32);
} xsks_map SEC(".maps");

SEC("xdp")
int
afxdp_redirect(struct xdp_md *ctx)
{
    /* The lower bits of the flags are the action to take when the lookup
     * fails: an unbound queue passes the packet to the stack. */
    return bpf_redirect_map(&xsks_map, ctx->rx_queue_index, XDP_PASS);
}

char _license[] SEC("license") = "Dual BSD/GPL";
