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
 * with the frame and fails the test. */

#include <config.h>
#undef NDEBUG

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
        if (probe.parsed > 1) {
            ovs_fatal(0, "the probe did not run");
        }

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
    exit(n_wrong || !n_taken ? 1 : 0);
}

OVSTEST_REGISTER("test-afxdp-parse", test_afxdp_parse_main);
