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

#ifndef BENCH_FRAME_H
#define BENCH_FRAME_H 1

/* The frames that the benchmark's generators send (bench-afpacket-gen.c,
 * bench-xdp-loop.c). */

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint16_t
bench_ip_checksum(const uint8_t *p, size_t n)
{
    uint32_t sum = 0;

    for (size_t i = 0; i + 1 < n; i += 2) {
        sum += (p[i] << 8) | p[i + 1];
    }
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return ~sum & 0xffff;
}

/* Writes to 'f' an IPv4/UDP frame of 'len' bytes (without the FCS, at
 * least 42) to Ethernet address 'dst' and UDP port 'dport', from the
 * generator's addresses (02:00:00:00:0b:01, 10.0.0.1 to 10.0.0.2, UDP
 * port 10000), without a UDP checksum. */
static inline void
bench_build_frame(uint8_t *f, size_t len, const uint8_t dst[6],
                  uint16_t dport)
{
    static const uint8_t src[6] = { 0x02, 0, 0, 0, 0x0b, 0x01 };
    uint8_t *ip = f + 14, *udp = ip + 20;
    size_t ip_len = len - 14;
    uint16_t csum;

    memset(f, 0, len);
    memcpy(f, dst, 6);
    memcpy(f + 6, src, 6);
    f[12] = 0x08;
    ip[0] = 0x45;
    ip[2] = ip_len >> 8;
    ip[3] = ip_len & 0xff;
    ip[8] = 64;
    ip[9] = 17;
    ip[12] = 10; ip[13] = 0; ip[14] = 0; ip[15] = 1;
    ip[16] = 10; ip[17] = 0; ip[18] = 0; ip[19] = 2;
    csum = bench_ip_checksum(ip, 20);
    ip[10] = csum >> 8;
    ip[11] = csum & 0xff;
    udp[0] = 10000 >> 8;
    udp[1] = 10000 & 0xff;
    udp[2] = dport >> 8;
    udp[3] = dport & 0xff;
    udp[4] = (ip_len - 20) >> 8;
    udp[5] = (ip_len - 20) & 0xff;
}

#endif /* bench-frame.h */
