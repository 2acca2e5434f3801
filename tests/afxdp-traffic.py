#!/usr/bin/env python3
# Copyright (c) 2026 The ovs-afxdp authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at:
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""Sends raw Ethernet frames on an interface, for the afxdp system tests.

  afxdp-traffic.py IFACE DST-MAC flood SECONDS [FLOWS]
      64-byte IPv4/UDP frames, FLOWS source ports (default 1), as fast as
      one core allows, for SECONDS.
  afxdp-traffic.py IFACE DST-MAC malformed
      One of each malformed or edge-size frame in MALFORMED, below.
  afxdp-traffic.py IFACE DST-MAC size BYTES COUNT
      COUNT IPv4/UDP frames of BYTES bytes each (Ethernet header included).

Prints the number of frames the kernel accepted, and for "malformed" one
line per frame with its name.  Uses only the standard library.
"""

import socket
import struct
import sys
import time

SRC_MAC = bytes.fromhex("0200000000aa")


def mac(text):
    return bytes.fromhex(text.replace(":", ""))


def csum(data):
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while total >> 16:
        total = (total & 0xffff) + (total >> 16)
    return ~total & 0xffff


def ipv4(proto, payload, ihl=5, total=None, options=b""):
    hdr_len = ihl * 4
    if total is None:
        total = 20 + len(options) + len(payload)
    hdr = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, total & 0xffff, 1, 0,
                      64, proto, 0, socket.inet_aton("10.1.1.1"),
                      socket.inet_aton("10.1.1.2")) + options
    hdr = hdr[:10] + struct.pack("!H", csum(hdr[:max(hdr_len, 20)])) + hdr[12:]
    return hdr + payload


def udp(sport, dport, payload):
    return struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload


def eth(dst, ethertype, payload):
    return dst + SRC_MAC + struct.pack("!H", ethertype) + payload


def udp_frame(dst, sport, size):
    pad = max(size - 14 - 20 - 8, 0)
    return eth(dst, 0x0800, ipv4(17, udp(sport, 5001, b"\0" * pad)))


def malformed(dst):
    tcp_hdr = struct.pack("!HHIIBBHHH", 1234, 80, 1, 0, 0x50, 0x02, 1024,
                          0, 0)
    ip6_src = socket.inet_pton(socket.AF_INET6, "fd00::1")
    ip6_dst = socket.inet_pton(socket.AF_INET6, "fd00::2")

    def ipv6(next_hdr, payload, plen=None):
        if plen is None:
            plen = len(payload)
        return (struct.pack("!IHBB", 6 << 28, plen, next_hdr, 64)
                + ip6_src + ip6_dst + payload)

    return [
        ("ethernet header only", eth(dst, 0x0800, b"")),
        ("one byte of IPv4", eth(dst, 0x0800, b"\x45")),
        ("IPv4 header cut short", eth(dst, 0x0800, ipv4(17, b"")[:12])),
        ("IPv4 ihl 4", eth(dst, 0x0800, ipv4(17, udp(1, 2, b""), ihl=4))),
        ("IPv4 ihl 15 without options",
         eth(dst, 0x0800, ipv4(17, udp(1, 2, b""), ihl=15))),
        ("IPv4 total length above the frame",
         eth(dst, 0x0800, ipv4(17, udp(1, 2, b""), total=1400))),
        ("IPv4 total length below its header",
         eth(dst, 0x0800, ipv4(17, udp(1, 2, b""), total=8))),
        ("IPv4 version 7", eth(dst, 0x0800,
                               b"\x75" + ipv4(17, udp(1, 2, b""))[1:])),
        ("UDP header cut short", eth(dst, 0x0800, ipv4(17, b"\0\1\0"))),
        ("UDP length above the packet",
         eth(dst, 0x0800, ipv4(17, struct.pack("!HHHH", 1, 2, 900, 0)))),
        ("TCP header cut short", eth(dst, 0x0800, ipv4(6, tcp_hdr[:9]))),
        ("TCP data offset 15", eth(dst, 0x0800,
                                   ipv4(6, tcp_hdr[:12] + b"\xf0"
                                        + tcp_hdr[13:]))),
        ("TCP data offset 0", eth(dst, 0x0800,
                                  ipv4(6, tcp_hdr[:12] + b"\x00"
                                       + tcp_hdr[13:]))),
        ("ICMP header cut short", eth(dst, 0x0800, ipv4(1, b"\x08"))),
        ("IPv4 later fragment of UDP",
         eth(dst, 0x0800, ipv4(17, b"\0" * 3)[:6] + b"\x00\x10"
             + ipv4(17, b"\0" * 3)[8:])),
        ("IPv6 header cut short", eth(dst, 0x86dd, ipv6(17, b"")[:30])),
        ("IPv6 payload length above the frame",
         eth(dst, 0x86dd, ipv6(17, udp(1, 2, b""), plen=3000))),
        ("IPv6 hop-by-hop header cut short",
         eth(dst, 0x86dd, ipv6(0, b"\x11\x05"))),
        ("IPv6 fragment header cut short",
         eth(dst, 0x86dd, ipv6(44, b"\x11\x00\x00"))),
        ("IPv6 TCP header cut short", eth(dst, 0x86dd, ipv6(6, b"\0" * 7))),
        ("ICMPv6 neighbor solicitation cut short",
         eth(dst, 0x86dd, ipv6(58, b"\x87\x00\x00\x00"))),
        ("VLAN tag, nothing after", eth(dst, 0x8100, b"\x00\x0a")),
        ("two VLAN tags, nothing after",
         eth(dst, 0x88a8, b"\x00\x0a\x81\x00\x00\x0b")),
        ("ARP cut short", eth(dst, 0x0806, b"\x00\x01\x08\x00\x06")),
        ("MPLS label, nothing after", eth(dst, 0x8847, b"\x00\x01")),
        ("802.3 length field, LLC cut short", eth(dst, 0x0005, b"\xaa")),
        ("NSH cut short", eth(dst, 0x894f, b"\x00\x06")),
        ("minimum frame, 60 bytes", udp_frame(dst, 7, 60)),
        ("maximum frame for MTU 1500", udp_frame(dst, 8, 1514)),
    ]


def main():
    iface, dst, mode = sys.argv[1], mac(sys.argv[2]), sys.argv[3]
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    sock.bind((iface, 0))
    sent = 0
    if mode == "flood":
        seconds = float(sys.argv[4])
        flows = int(sys.argv[5]) if len(sys.argv) > 5 else 1
        frames = [udp_frame(dst, 10000 + i, 64) for i in range(flows)]
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for frame in frames * max(1, 256 // flows):
                try:
                    sock.send(frame)
                    sent += 1
                except OSError:
                    # ENOBUFS: the peer is not keeping up.
                    pass
    elif mode == "malformed":
        for name, frame in malformed(dst):
            sock.send(frame)
            sent += 1
            print("%s: %d bytes" % (name, len(frame)))
    elif mode == "size":
        size, count = int(sys.argv[4]), int(sys.argv[5])
        frame = udp_frame(dst, 9, size)
        for _ in range(count):
            sock.send(frame)
            sent += 1
    else:
        sys.exit("afxdp-traffic.py: unknown mode %s" % mode)
    print("sent %d" % sent)


if __name__ == "__main__":
    main()
