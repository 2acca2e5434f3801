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

/* The benchmark's loop generator, kernel half (see bench-xdp-loop.c).
 *
 * Attached to one end of a veth pair whose other end is slot 0 of 'out':
 * every frame it receives goes both back into the loop (transmitted on
 * slot 0, so received here again) and out of slot 1, the device that
 * feeds the port under test, as an XDP frame.  The frames that circulate
 * are the generator: each turn of the loop sends one copy.  Before it
 * goes, a frame's UDP destination port moves on to the next of 'n_flows'
 * ports, so that the copies spread over that many flows. */

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

/* The first UDP destination port, as the loader's frames have it. */
#define FIRST_PORT 9

/* Set by the loader before it loads the program: the only datum in the
 * object's .rodata. */
volatile const __u32 n_flows = 1;

struct {
    __uint(type, BPF_MAP_TYPE_DEVMAP);
    __uint(max_entries, 2);
    __type(key, __u32);
    __type(value, __u32);
} out SEC(".maps");

SEC("xdp")
int
xdp_loop(struct xdp_md *ctx)
{
    void *data = (void *) (long) ctx->data;
    void *end = (void *) (long) ctx->data_end;
    struct ethhdr *eth = data;
    struct iphdr *ip = (void *) (eth + 1);
    struct udphdr *udp = (void *) (ip + 1);

    if ((void *) (udp + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP)
        || ip->ihl != 5 || ip->protocol != IPPROTO_UDP) {
        return XDP_DROP;        /* Not ours: it leaves the loop. */
    }
    if (n_flows > 1) {
        __u32 i = bpf_ntohs(udp->dest) - FIRST_PORT + 1;

        udp->dest = bpf_htons(FIRST_PORT + (i < n_flows ? i : 0));
        udp->check = 0;         /* None, rather than a wrong one. */
    }
    return bpf_redirect_map(&out, 0, BPF_F_BROADCAST);
}

char _license[] SEC("license") = "Dual BSD/GPL";
