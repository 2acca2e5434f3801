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
  afxdp-traffic.py IFACE DST-MAC sizes FIRST LAST STEP
      One IPv4/UDP frame of each size from FIRST to LAST bytes by STEP, and
      of each size around the limits of one and two AF_XDP frames and of
      XDP transmit, with a payload that differs by size.  The frames within
      4 bytes of LAST carry an 802.1Q tag (VLAN 10): LAST is the MTU plus
      18 bytes, and only a tagged frame may be that long.  Prints, instead
      of the count, each frame's length and SHA-256, one a line.
  afxdp-traffic.py IFACE DST-MAC csum wire|offload
      The frames of csum_frames(), below: TCP and UDP over IPv4 and IPv6,
      each with a wrong, a correct, and a partial checksum (the folded
      pseudo-header sum that a sender with checksum offload leaves), and
      VXLAN and Geneve packets around a TCP packet with a partial one.  Prints,
      instead of the count, the frames as they must arrive through Open
      vSwitch, in hex, one a line: wrong and correct checksums unchanged,
      partial ones finished, and tagged " offload" if the receiver gets them
      to finish ("offload") rather than finished on the wire ("wire").
  afxdp-traffic.py IFACE SRC-MAC capture COUNT SECONDS [digest]
      Receives frames from SRC-MAC on IFACE until COUNT have arrived or
      SECONDS have passed, and prints each in hex, one a line (with
      "digest": its length and SHA-256, as "sizes" does).  A frame the
      kernel marks as having a checksum still to finish (CHECKSUM_PARTIAL)
      is printed with that checksum finished, tagged " offload".  If the
      environment names a file in AFXDP_CAPTURE_READY, creates it once
      the socket receives, for the sender to wait for.

  afxdp-traffic.py verify
      Reads frames in hex, one a line, as "capture" prints them, and prints
      for each whether its TCP or UDP checksum is right ("ok") or not
      ("bad"), and its protocols.
Prints the number of frames the kernel accepted, and for "malformed" one
line per frame with its name.  Uses only the standard library.
"""

import hashlib
import os
import random
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


def sized_frame(dst, size, tagged=False):
    """A UDP frame of 'size' bytes whose payload is drawn from 'size',
    with an 802.1Q tag for VLAN 10 if 'tagged'."""
    rng = random.Random(size)
    pad = size - 14 - 20 - 8 - (4 if tagged else 0)
    payload = bytes(rng.getrandbits(8) for _ in range(pad))
    packet = ipv4(17, udp(7, 5001, payload))
    if tagged:
        return eth(dst, 0x8100, struct.pack("!HH", 10, 0x0800) + packet)
    return eth(dst, 0x0800, packet)


def frame_sizes(first, last, step):
    """FIRST to LAST by STEP, and the edges of one and two AF_XDP frames
    (3712 and 7424 bytes) and of an XDP transmit slot (3072 bytes)."""
    sizes = set(range(first, last + 1, step)) | {last - 4, last - 3, last}
    for edge in (3072, 3712, 7424):
        sizes |= {edge - 1, edge, edge + 1}
    return sorted(n for n in sizes if first <= n <= last)


def digest(frame):
    return "%d %s" % (len(frame), hashlib.sha256(frame).hexdigest())


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


IP6_SRC = socket.inet_pton(socket.AF_INET6, "fd00::1")
IP6_DST = socket.inet_pton(socket.AF_INET6, "fd00::2")
TCP, UDP = 6, 17


def fold(total):
    while total >> 16:
        total = (total & 0xffff) + (total >> 16)
    return total


def l4_packet(version, proto, sport, payload, check):
    """An IPv4 or IPv6 packet with a TCP or UDP header, whose L4 checksum
    is 'check': "wrong", "correct", "partial" or "zero"."""
    if proto == TCP:
        l4 = struct.pack("!HHIIBBHHH", sport, 8080, 1, 0, 0x50, 0x18, 1024,
                         0, 0) + payload
        csum_at = 16
    else:
        l4 = udp(sport, 8080, payload)
        csum_at = 6
    if version == 4:
        pseudo = (socket.inet_aton("10.1.1.1") + socket.inet_aton("10.1.1.2")
                  + struct.pack("!BBH", 0, proto, len(l4)))
    else:
        pseudo = IP6_SRC + IP6_DST + struct.pack("!IxxxB", len(l4), proto)
    right = csum(pseudo + l4) or 0xffff
    partial = fold(sum(struct.unpack("!%dH" % (len(pseudo) // 2), pseudo)))
    value = {"correct": right, "partial": partial, "zero": 0,
             "wrong": right ^ 0x5a5a}[check]
    assert check != "wrong" or value not in (right, partial, 0)
    finished = l4[:csum_at] + struct.pack("!H", right) + l4[csum_at + 2:]
    l4 = l4[:csum_at] + struct.pack("!H", value) + l4[csum_at + 2:]
    if check != "partial":
        finished = l4

    def ip(segment):
        if version == 4:
            return ipv4(proto, segment)
        return (struct.pack("!IHBB", 6 << 28, len(segment), proto, 64)
                + IP6_SRC + IP6_DST + segment)
    return ip(l4), ip(finished)


def csum_frames(dst):
    """(frame to send, frame expected, partial) for the "csum" mode."""
    frames = []
    for version, ethertype in ((4, 0x0800), (6, 0x86dd)):
        for proto in (TCP, UDP):
            checks = ["wrong", "correct", "partial"]
            if proto == UDP and version == 4:
                checks.append("zero")
            for i, check in enumerate(checks):
                payload = bytes((j * 7 + i) & 0xff
                                for j in range(100 + 300 * i))
                sent, finished = l4_packet(version, proto, 1000 + i,
                                           payload, check)
                frames.append((eth(dst, ethertype, sent),
                               eth(dst, ethertype, finished),
                               check == "partial"))
    # VXLAN and Geneve (outer UDP checksum 0) around IPv4 TCP with a partial
    # checksum: the inner checksum arrives finished, in any case.
    inner_mac = bytes.fromhex("0200000000bb")
    for port, tunnel_hdr in ((4789, bytes.fromhex("0800000000000100")),
                             (6081, bytes.fromhex("0000655800000100"))):
        sent, finished = l4_packet(4, TCP, 2000 + port % 100, b"inner" * 40,
                                   "partial")
        outer = []
        for inner in (sent, finished):
            frame = tunnel_hdr + eth(inner_mac, 0x0800, inner)
            outer.append(eth(dst, 0x0800,
                             ipv4(UDP, udp(3000, port, frame))))
        frames.append((outer[0], outer[1], False))
    return frames


def finish_partial(frame, csum_start, csum_offset):
    """'frame' with the checksum the kernel left to finish finished."""
    at = csum_start + csum_offset
    value = csum(frame[csum_start:])
    # The pseudo-header sum is already in the field, as the kernel left it.
    return frame[:at] + struct.pack("!H", value) + frame[at + 2:]


def capture(iface, src, count, seconds, as_digest=False):
    SOL_PACKET, PACKET_AUXDATA, TP_STATUS_CSUMNOTREADY = 263, 8, 1 << 3
    TP_STATUS_VLAN_VALID = 1 << 4
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                         socket.htons(0x0003))
    sock.bind((iface, 0))
    sock.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
    if os.environ.get("AFXDP_CAPTURE_READY"):
        open(os.environ["AFXDP_CAPTURE_READY"], "w").close()
    deadline = time.monotonic() + seconds
    got = 0
    while got < count and time.monotonic() < deadline:
        sock.settimeout(max(deadline - time.monotonic(), 0.01))
        try:
            frame, anc, _, addr = sock.recvmsg(65536, 64)
        except socket.timeout:
            break
        if addr[2] == socket.PACKET_OUTGOING or frame[6:12] != src:
            continue
        status = 0
        for level, kind, data in anc:
            if level == SOL_PACKET and kind == PACKET_AUXDATA:
                status = struct.unpack("I", data[:4])[0]
                tci, tpid = struct.unpack("HH", data[16:20])
        if status & TP_STATUS_VLAN_VALID:
            # The kernel took the tag out of the frame: put it back.
            frame = (frame[:12] + struct.pack("!HH", tpid or 0x8100, tci)
                     + frame[12:])
        tag = ""
        if status & TP_STATUS_CSUMNOTREADY:
            ethertype = struct.unpack("!H", frame[12:14])[0]
            if ethertype == 0x0800:
                start, proto = 14 + (frame[14] & 0xf) * 4, frame[23]
            else:
                start, proto = 54, frame[20]
            frame = finish_partial(frame, start, 16 if proto == TCP else 6)
            tag = " offload"
        print(digest(frame) if as_digest else frame.hex() + tag)
        sys.stdout.flush()
        got += 1


def verify(line):
    """Whether the TCP or UDP checksum of the IPv4 or IPv6 frame in 'line'
    (hex, as "capture" prints it) is right: "ok" or "bad", and the frame's
    L3 and L4 protocols.  A UDP checksum of 0 (none) is right."""
    frame = bytes.fromhex(line.split()[0])
    ethertype = struct.unpack("!H", frame[12:14])[0]
    if ethertype == 0x0800:
        ihl = (frame[14] & 0xf) * 4
        total, proto = struct.unpack("!H", frame[16:18])[0], frame[23]
        l4 = frame[14 + ihl:14 + total]
        pseudo = frame[26:34] + struct.pack("!BBH", 0, proto, len(l4))
        name = "ipv4"
    else:
        proto = frame[20]
        l4 = frame[54:54 + struct.unpack("!H", frame[18:20])[0]]
        pseudo = frame[22:54] + struct.pack("!IxxxB", len(l4), proto)
        name = "ipv6"
    name += " tcp" if proto == TCP else " udp"
    if proto == UDP and l4[6:8] == b"\0\0":
        return "ok " + name
    return ("ok " if csum(pseudo + l4) == 0 else "bad ") + name


def main():
    if sys.argv[1] == "verify":
        for line in sys.stdin:
            print(verify(line))
        return
    iface, dst, mode = sys.argv[1], mac(sys.argv[2]), sys.argv[3]
    if mode == "capture":
        capture(iface, dst, int(sys.argv[4]), float(sys.argv[5]),
                len(sys.argv) > 6 and sys.argv[6] == "digest")
        return
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
    elif mode == "sizes":
        first, last, step = (int(arg) for arg in sys.argv[4:7])
        for size in frame_sizes(first, last, step):
            frame = sized_frame(dst, size, size > last - 4)
            sock.send(frame)
            print(digest(frame))
            # Paced, so that no ring on the way overflows.
            time.sleep(0.002)
        return
    elif mode == "csum":
        offload = sys.argv[4] == "offload"
        for frame, expected, partial in csum_frames(dst):
            sock.send(frame)
            print(expected.hex() + (" offload" if partial and offload
                                    else ""))
        return
    else:
        sys.exit("afxdp-traffic.py: unknown mode %s" % mode)
    print("sent %d" % sent)


if __name__ == "__main__":
    main()
