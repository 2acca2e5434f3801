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

/* The XDP program's flow parser against Open vSwitch's.
 *
 *   ovstest test-afxdp-parse < FRAMES
 *
 * FRAMES holds one Ethernet frame a line, in hex (afxdp-offload-diff.py
 * frames).  Each goes through the built-in object's afxdp_parse_probe
 * program by BPF_PROG_RUN, which runs the parser of the flow offload, and
 * through flow_extract(): the program must either leave the frame to user
 * space or make of it exactly the key that afxdp-flow makes of Open
 * vSwitch's flow, and it must leave it if Open vSwitch found a field that
 * the program does not parse (a second VLAN tag, MPLS, ...).  Prints how
 * many frames the program took and left; each disagreement is printed
 * with the frame and fails the test.
 *
 * The same run checks the program's steering (options:pass-to-kernel),
 * which shares the parser, against steer_expected() below: a model of
 * what afxdp-prog.h says steering does, reading the frame's bytes by
 * itself, with the addresses and rules of 'steer_addrs' and
 * 'steer_rules'. */

#include <config.h>
#undef NDEBUG

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "afxdp-flow.h"
#include "bpf/afxdp-prog.h"
#include "dp-packet.h"
#include "flow.h"
#include "openvswitch/dynamic-string.h"
#include "ovstest.h"
#include "packets.h"
#include "util.h"

static const unsigned char obj_bytes[] = {
#include "bpf/afxdp-redirect.inc"
};

/* The index of the loopback device, on which a BPF_PROG_RUN receives. */
#define LOOPBACK_IFINDEX 1

static void
print_key_diff(const struct afxdp_flow_key *got,
               const struct afxdp_flow_key *want)
{
    const uint8_t *g = (const uint8_t *) got;
    const uint8_t *w = (const uint8_t *) want;

    for (size_t i = 0; i < sizeof *got; i++) {
        if (g[i] != w[i]) {
            printf("  key byte %"PRIuSIZE": program %02x, Open vSwitch %02x\n",
                   i, g[i], w[i]);
        }
    }
}

/* The device's addresses and the rules that steering runs with here,
 * chosen among the addresses, ports and EtherTypes of the frames that
 * afxdp-offload-diff.py makes. */
static const char *const steer_addrs[] = { "10.0.0.2", "fd00::2" };
static const struct {
    uint16_t ethertype, port;
    uint8_t proto;
} steer_rules[] = {
    { 0x88b5, 0, 0 },           /* By EtherType. */
    { ETH_TYPE_IP, 0, IPPROTO_SCTP },
    { ETH_TYPE_IP, 80, IPPROTO_TCP },
    { ETH_TYPE_IP, 53, IPPROTO_UDP },
    { ETH_TYPE_IPV6, 443, IPPROTO_TCP },
    { ETH_TYPE_IPV6, 0, IPPROTO_UDP },
};

static bool
steer_rule(uint16_t ethertype, uint8_t proto, uint16_t port)
{
    for (size_t i = 0; i < ARRAY_SIZE(steer_rules); i++) {
        if (steer_rules[i].ethertype == ethertype
            && steer_rules[i].proto == proto && steer_rules[i].port == port) {
            return true;
        }
    }
    return false;
}

/* Whether the 16 bytes at 'addr' (an IPv6 address), or the 4 at 'addr' if
 * 'ipv4', are one of steer_addrs[]. */
static bool
steer_local(const uint8_t *addr, bool ipv4)
{
    for (size_t i = 0; i < ARRAY_SIZE(steer_addrs); i++) {
        bool is_ipv6 = strchr(steer_addrs[i], ':') != NULL;
        uint8_t a[16];

        if (is_ipv6 != ipv4) {
            ovs_assert(inet_pton(ipv4 ? AF_INET : AF_INET6, steer_addrs[i],
                                 a) == 1);
            if (!memcmp(a, addr, ipv4 ? 4 : 16)) {
                return true;
            }
        }
    }
    return false;
}

static bool
ipv6_ext(uint8_t nh)
{
    return (nh == 0 || nh == 43 || nh == 44 || nh == 50 || nh == 51
            || nh == 59 || nh == 60 || nh == 135 || nh == 139 || nh == 140);
}

/* A rule by protocol, or by the destination port of a TCP, UDP or SCTP
 * header at 'l4' (if 'has_l4', and with 'n' bytes from 'l4' on). */
static bool
steer_ip_rule(uint16_t ethertype, uint8_t proto, const uint8_t *l4,
              bool has_l4, size_t n)
{
    if (steer_rule(ethertype, proto, 0)) {
        return true;
    }
    return (has_l4 && n >= 4
            && (proto == IPPROTO_TCP || proto == IPPROTO_UDP
                || proto == IPPROTO_SCTP)
            && steer_rule(ethertype, proto, (l4[2] << 8) | l4[3]));
}

/* Whether steering with AFXDP_STEER_LOCAL and AFXDP_STEER_RULES passes the
 * 'n' bytes of frame 'p' to the kernel, by afxdp-prog.h's description. */
static bool
steer_expected(const uint8_t *p, size_t n)
{
    uint16_t type = (p[12] << 8) | p[13];
    const uint8_t *l3 = p + 14;

    n -= 14;
    if (steer_rule(type, 0, 0)) {
        return true;
    }
    if (type == ETH_TYPE_ARP) {
        return (n >= 28 && l3[0] == 0 && l3[1] == 1 && l3[2] == 8
                && l3[3] == 0 && l3[4] == 6 && l3[5] == 4
                && steer_local(l3 + 24, true));
    } else if (type == ETH_TYPE_IP) {
        unsigned int ihl = l3[0] & 0xf;
        bool later = ((l3[6] << 8) | l3[7]) & 0x1fff;

        return (n >= 20 && ihl >= 5
                && (steer_local(l3 + 16, true)
                    || steer_ip_rule(type, l3[9], l3 + 20,
                                     ihl == 5 && !later, n - 20)));
    } else if (type == ETH_TYPE_IPV6) {
        const uint8_t *l4 = l3 + 40;

        return (n >= 40
                && (steer_local(l3 + 24, false)
                    || (l3[6] == IPPROTO_ICMPV6 && n >= 40 + 24
                        && l4[0] == 135 && steer_local(l4 + 8, false))
                    || steer_ip_rule(type, l3[6], l4, !ipv6_ext(l3[6]),
                                     n - 40)));
    }
    return false;
}

/* Fills the object's steering maps with steer_addrs[] and steer_rules[],
 * and turns steering on. */
static void
steer_setup(struct bpf_object *obj)
{
    struct afxdp_steer_cfg cfg = {
        .flags = AFXDP_STEER_LOCAL | AFXDP_STEER_RULES,
    };
    struct bpf_map *map;
    uint32_t zero = 0;
    uint8_t one = 1;

    map = bpf_object__find_map_by_name(obj, AFXDP_STEER_ADDRS_NAME);
    ovs_assert(map);
    for (size_t i = 0; i < ARRAY_SIZE(steer_addrs); i++) {
        struct afxdp_steer_addr key;
        struct in6_addr a;
        ovs_be32 a4;

        if (inet_pton(AF_INET, steer_addrs[i], &a4) == 1) {
            in6_addr_set_mapped_ipv4(&a, a4);
        } else {
            ovs_assert(ipv6_parse(steer_addrs[i], &a));
        }
        memcpy(key.addr, &a, sizeof key.addr);
        ovs_assert(!bpf_map_update_elem(bpf_map__fd(map), &key, &one,
                                        BPF_ANY));
    }
    map = bpf_object__find_map_by_name(obj, AFXDP_STEER_RULES_NAME);
    ovs_assert(map);
    for (size_t i = 0; i < ARRAY_SIZE(steer_rules); i++) {
        struct afxdp_steer_rule key = {
            .ethertype = htons(steer_rules[i].ethertype),
            .proto = steer_rules[i].proto,
            .port = htons(steer_rules[i].port),
        };

        ovs_assert(!bpf_map_update_elem(bpf_map__fd(map), &key, &one,
                                        BPF_ANY));
    }
    map = bpf_object__find_map_by_name(obj, AFXDP_STEER_CFG_NAME);
    ovs_assert(map);
    ovs_assert(!bpf_map_update_elem(bpf_map__fd(map), &zero, &cfg,
                                    BPF_ANY));
}

/* Runs 'frame' through the probe; returns the probe's verdict. */
static void
probe_frame(int prog_fd, int map_fd, const struct dp_packet *frame,
            struct afxdp_parse_probe *probe)
{
    LIBBPF_OPTS(bpf_test_run_opts, opts,
                .data_in = dp_packet_data(frame),
                .data_size_in = dp_packet_size(frame));
    uint32_t zero = 0;

    memset(probe, 0xa5, sizeof *probe);
    ovs_assert(!bpf_map_update_elem(map_fd, &zero, probe, BPF_ANY));
    if (bpf_prog_test_run_opts(prog_fd, &opts)) {
        ovs_fatal(errno, "BPF_PROG_RUN");
    }
    ovs_assert(!bpf_map_lookup_elem(map_fd, &zero, probe));
}

static void
test_afxdp_parse_main(int argc OVS_UNUSED, char *argv[] OVS_UNUSED)
{
    size_t n_frames = 0, n_taken = 0, n_left = 0, n_wrong = 0;
    size_t n_steered = 0, n_steer_wrong = 0;
    struct bpf_program *prog = NULL, *p;
    struct ds line = DS_EMPTY_INITIALIZER;
    struct bpf_object *obj;
    struct bpf_map *map;
    int prog_fd, map_fd;

    obj = bpf_object__open_mem(obj_bytes, sizeof obj_bytes, NULL);
    if (!obj) {
        ovs_fatal(errno, "cannot open the built-in XDP object");
    }
    bpf_object__for_each_program (p, obj) {
        bool probe = !strcmp(bpf_program__name(p),
                             AFXDP_PARSE_PROBE_PROG_NAME);

        bpf_program__set_autoload(p, probe);
        if (probe) {
            prog = p;
        }
    }
    ovs_assert(prog);
    /* As the ports load it on Linux 6.6 and later: frames of any length
     * go through. */
    bpf_program__set_flags(prog, (bpf_program__flags(prog)
                                  | BPF_F_XDP_HAS_FRAGS));
    if (bpf_object__load(obj)) {
        ovs_fatal(errno, "cannot load %s", AFXDP_PARSE_PROBE_PROG_NAME);
    }
    prog_fd = bpf_program__fd(prog);
    map = bpf_object__find_map_by_name(obj, AFXDP_PARSE_PROBE_MAP_NAME);
    ovs_assert(map);
    map_fd = bpf_map__fd(map);
    steer_setup(obj);

    while (!ds_get_line(&line, stdin)) {
        struct afxdp_flow_key want;
        struct afxdp_parse_probe probe;
        struct dp_packet *frame;
        const char *unparsed;
        struct flow flow;
        const char *end;

        frame = dp_packet_new(0);
        end = dp_packet_put_hex(frame, ds_cstr(&line), NULL);
        if (*end || dp_packet_size(frame) < ETH_HEADER_LEN) {
            ovs_fatal(0, "not a frame in hex: %s", ds_cstr(&line));
        }
        n_frames++;

        probe_frame(prog_fd, map_fd, frame, &probe);
        if (probe.parsed > 1 || probe.steered > 1) {
            ovs_fatal(0, "the probe did not run");
        }
        if (probe.steered != steer_expected(dp_packet_data(frame),
                                            dp_packet_size(frame))) {
            n_steer_wrong++;
            printf("frame %"PRIuSIZE" %s the kernel by steering, "
                   "against its description:\n  %s\n", n_frames,
                   probe.steered ? "passed to" : "not passed to",
                   ds_cstr(&line));
        }
        n_steered += probe.steered;

        /* flow_extract() moves the data pointers of the copy it is
         * given; the probe had the frame as it was. */
        pkt_metadata_init(&frame->md, 0);
        flow_extract(frame, &flow);
        unparsed = afxdp_flow_expected_key(&flow, &want);
        want.ifindex = LOOPBACK_IFINDEX;

        if (!probe.parsed) {
            n_left++;
        } else if (unparsed) {
            n_wrong++;
            printf("frame %"PRIuSIZE" taken, but Open vSwitch found %s in "
                   "it, which the program does not parse:\n  %s\n",
                   n_frames, unparsed, ds_cstr(&line));
        } else if (memcmp(&probe.key, &want, sizeof want)) {
            n_wrong++;
            printf("frame %"PRIuSIZE" parsed differently:\n  %s\n",
                   n_frames, ds_cstr(&line));
            print_key_diff(&probe.key, &want);
        } else {
            n_taken++;
        }
        dp_packet_delete(frame);
    }
    ds_destroy(&line);
    bpf_object__close(obj);

    printf("%"PRIuSIZE" frames: %"PRIuSIZE" parsed as Open vSwitch does, "
           "%"PRIuSIZE" left to user space, %"PRIuSIZE" wrong\n",
           n_frames, n_taken, n_left, n_wrong);
    printf("steering: %"PRIuSIZE" frames passed to the kernel, "
           "%"PRIuSIZE" not, %"PRIuSIZE" against its description\n",
           n_steered, n_frames - n_steered, n_steer_wrong);
    exit(n_wrong || !n_taken || n_steer_wrong || !n_steered
         || n_steered == n_frames ? 1 : 0);
}

OVSTEST_REGISTER("test-afxdp-parse", test_afxdp_parse_main);
