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

/* The benchmark's skb generator: 64-byte IPv4/UDP frames through an
 * AF_PACKET socket, bypassing the qdisc, 64 per sendmmsg() call, so that
 * the receiving veth sees skbs (and can hash them) rather than the XDP
 * frames xdp-trafficgen sends.
 *
 *   bench-afpacket-gen IFACE DST-MAC FLOWS SECONDS [RATE]
 *
 * FLOWS UDP destination ports, one after another; at most RATE frames per
 * second, if given and nonzero (in bursts of 64).  Prints the number of
 * frames the kernel accepted. */

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bench-frame.h"

#define FRAME_LEN 60
#define BURST 64
#define MAX_FLOWS 65535

/* One frame per flow. */
static uint8_t frames[MAX_FLOWS * FRAME_LEN];

int
main(int argc, char *argv[])
{
    struct sockaddr_ll addr;
    struct mmsghdr msgs[BURST];
    struct iovec iov[BURST];
    unsigned int mac[6];
    uint8_t dst[6];
    int flows, one = 1, fd;
    double seconds, rate, start_ns;
    uint64_t sent = 0;
    struct timespec now, end;

    if ((argc != 5 && argc != 6)
        || sscanf(argv[2], "%x:%x:%x:%x:%x:%x", &mac[0], &mac[1], &mac[2],
                  &mac[3], &mac[4], &mac[5]) != 6) {
        fprintf(stderr, "usage: %s IFACE DST-MAC FLOWS SECONDS [RATE]\n",
                argv[0]);
        return 2;
    }
    for (int i = 0; i < 6; i++) {
        dst[i] = mac[i];
    }
    flows = atoi(argv[3]);
    seconds = atof(argv[4]);
    rate = argc == 6 ? atof(argv[5]) : 0;
    if (flows < 1 || flows > MAX_FLOWS || seconds <= 0) {
        fprintf(stderr, "%s: bad FLOWS or SECONDS\n", argv[0]);
        return 2;
    }

    fd = socket(AF_PACKET, SOCK_RAW, 0);
    if (fd < 0) {
        perror("socket");
        return 1;
    }
    setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof one);
    memset(&addr, 0, sizeof addr);
    addr.sll_family = AF_PACKET;
    addr.sll_ifindex = if_nametoindex(argv[1]);
    if (!addr.sll_ifindex
        || bind(fd, (struct sockaddr *) &addr, sizeof addr)) {
        perror(argv[1]);
        return 1;
    }

    for (int i = 0; i < flows; i++) {
        bench_build_frame(frames + (size_t) i * FRAME_LEN, FRAME_LEN, dst,
                          1 + i);
    }

    clock_gettime(CLOCK_MONOTONIC, &end);
    start_ns = end.tv_sec * 1e9 + end.tv_nsec;
    end.tv_sec += (time_t) seconds;
    for (int next = 0;;) {
        for (int i = 0; i < BURST; i++) {
            iov[i].iov_base = frames + (size_t) next * FRAME_LEN;
            iov[i].iov_len = FRAME_LEN;
            memset(&msgs[i].msg_hdr, 0, sizeof msgs[i].msg_hdr);
            msgs[i].msg_hdr.msg_iov = &iov[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
            next = next + 1 == flows ? 0 : next + 1;
        }
        int n = sendmmsg(fd, msgs, BURST, 0);
        if (n > 0) {
            sent += n;
        }
        do {
            /* Paced: wait until the frames sent so far are due. */
            clock_gettime(CLOCK_MONOTONIC, &now);
        } while (rate > 0
                 && now.tv_sec * 1e9 + now.tv_nsec - start_ns
                    < sent / rate * 1e9);
        if (now.tv_sec > end.tv_sec
            || (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec)) {
            break;
        }
    }
    printf("sent %llu\n", (unsigned long long) sent);
    return 0;
}
