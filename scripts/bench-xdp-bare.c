/* The benchmark's reference row: the least an XDP program can do with the
 * generator's packets on port A's device.  Built by scripts/bench.sh once
 * for each test: without SINK_IFINDEX it drops every packet (rxdrop), with
 * it it sends every packet to that device (l2fwd), as an offloaded flow
 * does, by bpf_redirect() to an ifindex.  With PASS (scripts/bench-tcp.sh)
 * it passes every packet to the network stack: a namespace's veth with
 * such a program takes XDP frames from its peer. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int
bare(struct xdp_md *ctx)
{
#if defined(PASS)
    return XDP_PASS;
#elif defined(SINK_IFINDEX)
    return bpf_redirect(SINK_IFINDEX, 0);
#else
    return XDP_DROP;
#endif
}

char _license[] SEC("license") = "Dual BSD/GPL";
