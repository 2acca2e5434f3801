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

"""Differential test of flow offload to XDP, for the afxdp system tests.

  afxdp-offload-diff.py run SEED CASES OUT [EXPECTED]
      Runs CASES cases, numbered from SEED, against the running
      ovs-vswitchd (bridge br0, afxdp ports 1 to 3, each cabled to
      interface pN of namespace at_nsN, N = port - 1), and writes what
      each case produced to OUT, one JSON object a line.  With EXPECTED
      (the OUT of a run with hw-offload=false), compares each case with
      it as it goes, prints a reproducer for each that differs, and exits
      with status 1 if any did, or if no packet ran in XDP at all.
  afxdp-offload-diff.py show SEED
      Prints case SEED: its OpenFlow rules and packets.
  afxdp-offload-diff.py frames SEED COUNT
      Prints COUNT random frames, in hex, one a line, for the parser check
      (ovstest test-afxdp-parse): those of the cases, and as many again
      with a few bytes of their headers changed at random.

A case is made from its number alone: a random OpenFlow table (matches on
ports, L2, VLAN, L3 and L4 fields with masks and priorities; outputs,
drops, VLAN, Ethernet, IP and port rewrites, TTL changes, resubmits,
conntrack, controller and learn actions) and three phases of random
frames (VLAN and QinQ, IPv4 with options and fragments, IPv6 with
extension headers, ARP, ICMP, TCP, UDP and SCTP with right, wrong and
partial checksums (and some wrong IPv4 header checksums), some
left for the receiver's device to finish, truncated frames, frames above
1522 bytes and above an AF_XDP frame, broadcast and multicast), with
rules changed, deleted and added between phases.  Each phase's frames
are sent one at a time, each once the datapath is done with the last,
so that conntrack and learn see them in one order whatever path they
take.  What a case produced: the frames that left every port (as bytes,
partial checksums finished, in any order), the OpenFlow rules' packet and
byte counts (not those of learned rules: when learn changes them depends
on the revalidators), and the ports' packet counters.
"""

import ctypes
import importlib.util
import json
import os
import random
import socket
import struct
import subprocess
import sys
import time

N_PORTS = 3
MACS = ["02:00:00:00:00:01", "02:00:00:00:00:02", "02:00:00:00:00:03",
        "02:00:00:00:00:04", "ff:ff:ff:ff:ff:ff", "01:00:5e:00:00:01",
        "33:33:00:00:00:01"]
IP4 = ["10.0.0.1", "10.0.0.2", "10.0.1.3", "192.168.9.4"]
IP6 = ["fd00::1", "fd00::2", "fd00:0:0:1::3", "fe80::4"]
TP = [53, 80, 443, 1000, 4242]
VIDS = [10, 20, 30]
TIMEOUT = 10.0

SOL_PACKET, PACKET_AUXDATA, PACKET_VNET_HDR = 263, 8, 15
TP_STATUS_VLAN_VALID, TP_STATUS_VLAN_TPID_VALID = 1 << 4, 1 << 6
VIRTIO_NET_HDR_F_NEEDS_CSUM = 1


# Frames, with the checksum helpers of afxdp-traffic.py.

def _load_traffic():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "afxdp-traffic.py")
    spec = importlib.util.spec_from_file_location("afxdp_traffic", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_traffic = _load_traffic()
csum, fold, mac = _traffic.csum, _traffic.fold, _traffic.mac


def l4_header(r, proto, sport, dport, payload_len):
    if proto == 6:
        flags = r.choice([0x02, 0x12, 0x10, 0x18, 0x11, 0x04, 0x29])
        return struct.pack("!HHIIBBHHH", sport, dport, r.getrandbits(32),
                           r.getrandbits(32), 0x50, flags, 1024, 0, 0), 16
    if proto == 17:
        return struct.pack("!HHHH", sport, dport, 8 + payload_len, 0), 6
    if proto == 132:
        return struct.pack("!HHII", sport, dport, 0, 0), None
    return b"", None


def gen_frame(r):
    """A random frame, and (csum_start, csum_offset) if its L4 checksum is
    left for the sending device to finish (None otherwise)."""
    dst, src = mac(r.choice(MACS)), mac(r.choice(MACS[:4]))
    tags = b""
    kind = r.random()
    if kind < 0.2:
        tags = struct.pack("!HH", 0x8100, r.choice(VIDS) | r.randint(0, 7)
                           << 13)
    elif kind < 0.25:
        tags = struct.pack("!HHHH", 0x88a8, r.choice(VIDS), 0x8100,
                           r.choice(VIDS))
    l3 = r.choice(["ip4"] * 5 + ["ip6"] * 3 + ["arp", "other", "802.3",
                                                "mpls"])
    partial = None
    if l3 == "arp":
        body = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4,
                           r.choice([1, 2, 3]), src,
                           socket.inet_aton(r.choice(IP4)),
                           mac(r.choice(MACS)),
                           socket.inet_aton(r.choice(IP4)))
        ethertype = 0x0806
    elif l3 == "other":
        body, ethertype = bytes(r.getrandbits(8) for _ in range(40)), 0x88b5
    elif l3 == "802.3":
        body = b"\xaa\xaa\x03\x00\x00\x00\x08\x00" + b"\x11" * 30
        ethertype = len(body)
    elif l3 == "mpls":
        body = struct.pack("!I", (r.randint(16, 99) << 12) | 0x1ff) + b"x" * 30
        ethertype = 0x8847
    else:
        proto = r.choice([6, 6, 17, 17, 132, 1 if l3 == "ip4" else 58, 47])
        size = r.choice([0, 0, 0, 10, 10, 100, 100, 1400, 1600, 3000, 5000])
        payload = bytes((i * 13 + size) & 0xff for i in range(size))
        sport, dport = r.choice(TP), r.choice(TP)
        l4, csum_at = l4_header(r, proto, sport, dport, len(payload))
        if proto in (1, 58):
            l4 = struct.pack("!BBHHH", 8 if proto == 1 else 128, 0, 0, 1, 1)
            csum_at = 2
        l4 += payload
        if l3 == "ip4":
            saddr = socket.inet_aton(r.choice(IP4))
            daddr = socket.inet_aton(r.choice(IP4))
            pseudo = saddr + daddr + struct.pack("!BBH", 0, proto, len(l4))
            options = r.choice([b"", b"", b"", b"\x01\x01\x01\x00",
                                b"\x94\x04\x00\x00\x01\x00\x00\x00"])
            frag = r.choice([0, 0, 0, 0x2000, 0x0010, 0x4000])
        else:
            saddr = socket.inet_pton(socket.AF_INET6, r.choice(IP6))
            daddr = socket.inet_pton(socket.AF_INET6, r.choice(IP6))
            pseudo = saddr + daddr + struct.pack("!IxxxB", len(l4), proto)
        check = r.choice(["right", "right", "right", "wrong", "partial",
                          "device", "zero"])
        if csum_at is not None:
            right = csum((pseudo if proto != 1 else b"") + l4) or 0xffff
            part = fold(sum(struct.unpack("!%dH" % (len(pseudo) // 2),
                                          pseudo)))
            value = {"right": right, "wrong": right ^ 0x1234,
                     "partial": part, "device": part,
                     "zero": 0 if proto == 17 else right}[check]
            l4 = l4[:csum_at] + struct.pack("!H", value) + l4[csum_at + 2:]
        if l3 == "ip4":
            ihl = 5 + len(options) // 4
            hdr = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl,
                              r.choice([0, 0, 0x10, 0xb8, 0x03]),
                              4 * ihl + len(l4), r.getrandbits(16), frag,
                              r.choice([64, 1, 255]), proto, 0, saddr,
                              daddr) + options
            # Now and then a wrong header checksum, which a TTL change
            # must leave as wrong as user space leaves it.
            hcsum = csum(hdr) ^ (0x0110 if r.random() < 0.1 else 0)
            hdr = hdr[:10] + struct.pack("!H", hcsum) + hdr[12:]
            body, ethertype, l4_ofs = hdr + l4, 0x0800, len(hdr)
        else:
            ext = b""
            next_hdr = proto
            ext_kind = r.choice([None, None, None, 0, 44, 60])
            if ext_kind is not None:
                if ext_kind == 44:
                    ext = struct.pack("!BBHI", proto, 0, 0, 7)
                else:
                    ext = struct.pack("!BB6s", proto, 0, b"\x01\x04" + b"\0" * 4)
                next_hdr = ext_kind
            first = (6 << 28) | (r.choice([0, 0xb8]) << 20) | \
                r.choice([0, 0x12345])
            hdr = struct.pack("!IHBB", first, len(ext) + len(l4), next_hdr,
                              r.choice([64, 1])) + saddr + daddr + ext
            body, ethertype, l4_ofs = hdr + l4, 0x86dd, len(hdr)
        if check == "device" and csum_at is not None and proto != 1:
            partial = (14 + len(tags) + l4_ofs, csum_at)
    frame = dst + src + tags + struct.pack("!H", ethertype) + body
    if partial is None and r.random() < 0.1:
        frame = frame[:r.randint(14, len(frame))]
    return frame, partial


# OpenFlow tables.

def gen_match(r, table):
    m = []
    if r.random() < 0.6:
        m.append("in_port=%d" % r.randint(1, N_PORTS))
    if r.random() < 0.25:
        m.append("dl_dst=" + r.choice(MACS[:4] + [
            "01:00:00:00:00:00/01:00:00:00:00:00"]))
    if r.random() < 0.15:
        m.append("dl_src=" + r.choice(MACS[:4]))
    v = r.random()
    if v < 0.15:
        m.append("dl_vlan=%d" % r.choice(VIDS))
    elif v < 0.2:
        m.append("vlan_tci=0x0000/0x1000")
    elif v < 0.25:
        m.append("vlan_tci=0x1000/0x1000")
    l3 = r.choice([None, None, "ip", "ipv6", "arp", "tcp", "udp", "icmp",
                   "tcp6", "udp6", "icmp6", "sctp"])
    if l3:
        m.append(l3)
    if l3 in ("ip", "tcp", "udp", "icmp", "sctp"):
        if r.random() < 0.3:
            m.append("nw_src=%s/%d" % (r.choice(IP4), r.choice([8, 24, 32])))
        if r.random() < 0.3:
            m.append("nw_dst=%s/%d" % (r.choice(IP4), r.choice([16, 32])))
        if r.random() < 0.15:
            m.append("nw_tos=%d" % r.choice([0, 0x10, 0xb8]))
        if r.random() < 0.1:
            m.append("nw_ttl=%d" % r.choice([1, 64]))
        if r.random() < 0.15:
            m.append("ip_frag=" + r.choice(["no", "first", "later", "yes",
                                            "not_later"]))
    if l3 in ("ipv6", "tcp6", "udp6", "icmp6"):
        if r.random() < 0.3:
            m.append("ipv6_src=%s/%d" % (r.choice(IP6), r.choice([16, 64,
                                                                  128])))
        if r.random() < 0.3:
            m.append("ipv6_dst=%s/%d" % (r.choice(IP6), r.choice([64, 128])))
        if r.random() < 0.1:
            m.append("ipv6_label=0x12345")
    later = any(x in m for x in ("ip_frag=later", "ip_frag=yes"))
    if l3 in ("tcp", "udp", "sctp", "tcp6", "udp6") and not later:
        if r.random() < 0.4:
            m.append("tp_dst=%d" % r.choice(TP))
        if r.random() < 0.2:
            m.append("tp_src=0x%x/0xfff0" % r.choice(TP))
        if l3 in ("tcp", "tcp6") and r.random() < 0.2:
            m.append("tcp_flags=" + r.choice(["+syn", "+syn-ack", "+fin",
                                              "-ack"]))
    if l3 == "icmp" and r.random() < 0.4:
        m.append("icmp_type=%d" % r.choice([0, 8]))
    if l3 == "arp":
        if r.random() < 0.4:
            m.append("arp_op=%d" % r.choice([1, 2]))
        if r.random() < 0.3:
            m.append("arp_tpa=%s" % r.choice(IP4))
        if r.random() < 0.2:
            m.append("arp_sha=%s" % r.choice(MACS[:4]))
    if table == 1 and r.random() < 0.5:
        m.append("ct_state=" + r.choice(["+trk+new", "+trk+est", "-trk",
                                         "+trk+inv"]))
    return m, l3


def can_commit(match):
    # Open vSwitch refuses to commit what it tracked as invalid.
    return not any("+inv" in x for x in match)


def gen_actions(r, l3, table, learn_ok, commit_ok=True):
    a = []
    kind = r.random()
    if kind < 0.1:
        return "drop"
    if r.random() < 0.15:
        a.append("strip_vlan")
    if r.random() < 0.2:
        # On an untagged packet, pushes a tag.
        a.append("mod_vlan_vid:%d" % r.choice(VIDS))
    elif r.random() < 0.05:
        a.append("mod_vlan_pcp:%d" % r.randint(0, 7))
    if r.random() < 0.2:
        a.append("mod_dl_dst:" + r.choice(MACS[:4]))
    if r.random() < 0.15:
        a.append("mod_dl_src:" + r.choice(MACS[:4]))
    if l3 in ("ip", "tcp", "udp", "icmp", "sctp"):
        if r.random() < 0.15:
            a.append("mod_nw_dst:" + r.choice(IP4))
        if r.random() < 0.1:
            a.append("mod_nw_tos:%d" % r.choice([0, 0x20]))
    if l3 in ("ipv6", "tcp6", "udp6", "icmp6") and r.random() < 0.1:
        a.append("set_field:fd00::9->ipv6_dst")
    hop = l3 not in (None, "arp") and r.random() < 0.15
    if hop:
        # A router's hop: the TTL or hop limit, with the IPv4 header's
        # checksum; most often with a single output, as a router has.
        a.append(r.choice(["dec_ttl", "dec_ttl",
                           "mod_nw_ttl:%d" % r.randint(0, 255)]))
    if l3 in ("tcp", "udp", "tcp6", "udp6") and r.random() < 0.15:
        a.append("mod_tp_dst:%d" % r.choice(TP))
    extra = r.random()
    if table == 0 and extra < 0.1:
        a.append("resubmit(,1)")
    elif table == 0 and extra < 0.17 and l3 and l3 != "arp":
        a.append("ct(table=1,zone=%d)" % r.randint(1, 2))
        return ",".join(a)
    elif extra < 0.22 and l3 and l3 != "arp" and commit_ok:
        a.append("ct(commit,zone=1)")
    elif extra < 0.25:
        a.append("controller")
    elif extra < 0.29 and learn_ok:
        # Into a table that nothing resubmits to: when a learned rule
        # appears depends on the revalidators, with offload or not, and
        # would decide what later frames do.
        a.append("learn(table=2,priority=10,NXM_OF_ETH_DST[]="
                 "NXM_OF_ETH_SRC[],output:NXM_OF_IN_PORT[])")
    outs = r.choice([1, 1, 1, 2] if hop else [0, 1, 1, 1, 2, 3])
    for _ in range(outs):
        a.append(r.choice(["output:1", "output:2", "output:3", "in_port",
                           "all"] if r.random() < 0.2 else
                          ["output:1", "output:2", "output:3"]))
    return ",".join(a) or "drop"


def gen_rule(r, cookie, table, learn_ok=True):
    m, l3 = gen_match(r, table)
    return "table=%d,cookie=0x%x,priority=%d%s,actions=%s" % (
        table, cookie, r.randint(1, 100), "".join("," + x for x in m),
        gen_actions(r, l3, table, learn_ok, can_commit(m)))


def gen_case(seed):
    r = random.Random(seed)
    rules = [gen_rule(r, i + 1, 0) for i in range(r.randint(3, 10))]
    rules += [gen_rule(r, 0x100 + i, 1) for i in range(r.randint(0, 4))]
    rules.append("table=0,cookie=0xfff,priority=0,actions=drop")
    if r.random() < 0.4:
        # A router's hop from one port to another, which the IPv4 or IPv6
        # frames from it take where no rule of a higher priority wins.
        src = r.randint(1, N_PORTS)
        dst = r.choice([p for p in range(1, N_PORTS + 1) if p != src])
        rules.append("table=0,cookie=0x80,priority=%d,in_port=%d,%s,"
                     "actions=mod_dl_src:%s,mod_dl_dst:%s,dec_ttl,output:%d"
                     % (r.randint(60, 100), src, r.choice(["ip", "ipv6"]),
                        r.choice(MACS[:4]), r.choice(MACS[:4]), dst))
    phases = []
    next_cookie = 0x200
    for phase in range(3):
        mods = []
        if phase:
            for _ in range(r.randint(1, 3)):
                what = r.random()
                cookie = r.choice(range(1, len(rules)))
                if what < 0.4:
                    mods.append(["del-flows", "cookie=0x%x/-1" % cookie])
                elif what < 0.7:
                    mods.append(["add-flow", gen_rule(r, next_cookie, 0)])
                    next_cookie += 1
                else:
                    m, l3 = gen_match(r, 0)
                    mods.append(["mod-flows", "cookie=0x%x/-1,actions=%s" % (
                        cookie, gen_actions(r, None, 0, False))])
        frames = []
        for _ in range(r.randint(4, 12)):
            frame, partial = gen_frame(r)
            frames.append([r.randrange(N_PORTS), frame.hex(), partial])
        phases.append({"mods": mods, "frames": frames})
    return {"seed": seed, "rules": rules, "phases": phases}


# Open vSwitch.

# AFXDP_DIFF_PROFILE=FILE: where each run's time goes, by kind of call,
# appended to FILE at its end.
PROFILE_FILE = os.environ.get("AFXDP_DIFF_PROFILE")
PROFILE = {} if PROFILE_FILE else None


def profiled(name, fn, *args, **kwargs):
    if PROFILE is None:
        return fn(*args, **kwargs)
    start = time.monotonic()
    try:
        return fn(*args, **kwargs)
    finally:
        n = PROFILE.setdefault(name, [0, 0.0])
        n[0] += 1
        n[1] += time.monotonic() - start


class Unixctl:
    """ovs-appctl's JSON-RPC, without a process per call."""

    def __init__(self):
        rundir = os.environ.get("OVS_RUNDIR", ".")
        with open(os.path.join(rundir, "ovs-vswitchd.pid")) as f:
            pid = f.read().strip()
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(os.path.join(rundir, "ovs-vswitchd.%s.ctl" % pid))
        self.buf = b""
        self.id = 0

    def __call__(self, method, *params):
        return profiled("appctl " + method, self.call, method, *params)

    def call(self, method, *params):
        self.send(method, *params)
        return self.reply(method)

    def send(self, method, *params):
        self.id += 1
        self.sock.sendall(json.dumps({"method": method, "params": params,
                                      "id": self.id}).encode())

    def reply(self, method):
        decoder = json.JSONDecoder()
        while True:
            try:
                msg, end = decoder.raw_decode(self.buf.decode())
                self.buf = self.buf[end:]
                break
            except ValueError:
                data = self.sock.recv(1 << 20)
                if not data:
                    raise EOFError("ovs-vswitchd closed its control socket")
                self.buf += data
        if msg.get("error"):
            raise RuntimeError("%s: %s" % (method, msg["error"]))
        return msg["result"]


class Revalidation:
    """Revalidation rounds on demand.  ovs-appctl revalidator/wait returns
    when the round in progress ends, which may have begun before the
    call, and the revalidators start one only every max-revalidator
    (100 ms at least) unless something changed; two waits in a row take
    about 160 ms.  Here the revalidators are paused (no round is in
    progress then), a wait is queued on a second connection, and resuming
    them starts a round at once: the wait's reply comes when a round that
    began after the call has pushed every flow's statistics and
    revalidated the flows."""

    def __init__(self, appctl):
        self.appctl = appctl
        self.waiter = Unixctl()

    def __call__(self):
        profiled("revalidation round", self.round)

    def round(self):
        self.appctl.call("revalidator/pause")
        self.waiter.send("revalidator/wait")
        # The version request makes sure that the wait is taken in before
        # the resume: each pass of ovs-vswitchd's main loop serves every
        # control connection, so the wait, sent first, is taken in no
        # later than the pass that answers the version request.  Else the
        # round that the resume starts could end before the wait is taken
        # in, and the next round, up to max-revalidator later, answer it.
        self.appctl.call("version")
        self.appctl.call("revalidator/resume")
        self.waiter.reply("revalidator/wait")


def ofctl(*args, data=None):
    profiled("ofctl " + args[0], subprocess.run,
             ["ovs-ofctl"] + list(args), input=data, text=True,
             check=True, stdout=subprocess.DEVNULL)


def ofctl_out(*args):
    return profiled("ofctl " + args[0], subprocess.run,
                    ["ovs-ofctl"] + list(args), text=True, check=True,
                    stdout=subprocess.PIPE).stdout


def xdp_table(appctl):
    """(flows in XDP by the provider's books, by the kernel's table,
    datapath flows that the provider counts as offloaded), all 0 without
    offload."""
    books = kernel = known = 0
    for line in appctl("dpif/offload/show").splitlines():
        words = line.split()
        if line.startswith("    flows:"):
            books = int(words[1].rstrip(","))
        elif line.startswith("    kernel maps:"):
            kernel = int(words[2])
        elif line.startswith("    datapath flows counted as offloaded:"):
            known = int(words[-1])
    return books, kernel, known


# Coverage counters that explain a difference, shown with it: races
# between dpif-netdev's flow changes and the provider's requests.
COVERAGE = ["xdp_offload_ref_replaced", "xdp_offload_del_unmatched",
            "ukey_invalid_stat_reset", "upcall_ukey_replace",
            "revalidate_missed_dp_flow"]


def coverage(appctl):
    return {name: int(appctl("coverage/read-counter", name))
            for name in COVERAGE}


# The main thread's requests that the revalidators revalidate every flow,
# by reason.
REVALIDATION_REQUESTS = ["rev_reconfigure", "rev_stp", "rev_rstp",
                         "rev_bond", "rev_port_toggled", "rev_flow_table",
                         "rev_mac_learning", "rev_mcast_snooping"]


def revalidation_requests(appctl):
    return sum(int(appctl("coverage/read-counter", name))
               for name in REVALIDATION_REQUESTS)


def offload_requests(appctl):
    """Flow puts and deletions that the offload provider has not yet
    carried out (0 without offload)."""
    for line in appctl("dpif/offload/show").splitlines():
        if line.startswith("    requests not yet done:"):
            return int(line.split()[4].rstrip(","))
    return 0


def datapath_counts(appctl):
    """(packets the PMD threads received, packets run in XDP, their
    iterations)."""
    rx = iterations = 0
    for line in appctl("dpif-netdev/pmd-perf-show").splitlines():
        words = line.split()
        if line.startswith("  Rx packets:"):
            rx += int(words[2])
        elif line.startswith("  Iterations:"):
            iterations += int(words[1])
    xdp = 0
    for line in appctl("dpif/offload/show").splitlines():
        if line.strip().startswith("xdp_hits:"):
            xdp += int(line.split()[1])
    return rx, xdp, iterations


def wait_for(what, cond):
    return profiled("wait for " + what, wait_until, what, cond)


def wait_until(what, cond):
    deadline = time.monotonic() + TIMEOUT
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError("timed out waiting for " + what)
        time.sleep(0.001)


def wait_datapath(appctl, base, n):
    """Waits until the datapath has taken 'n' more packets than 'base'
    (received by a PMD thread or run in XDP), and the PMD threads have
    finished the iteration that took the last (which sent what it
    output).  Returns the new counts."""
    def taken():
        rx, xdp, it = datapath_counts(appctl)
        return (rx, xdp, it) if rx + xdp >= base[0] + base[1] + n else None
    rx, xdp, it = wait_for("the datapath to take the frames", taken)
    wait_for("the PMD threads' next iterations",
             lambda: datapath_counts(appctl)[2] >= it + 2)
    return rx, xdp


# The namespaces' side.

libc = ctypes.CDLL(None, use_errno=True)


def in_netns(name, fn):
    """fn(), called in network namespace 'name'."""
    here = os.open("/proc/self/ns/net", os.O_RDONLY)
    there = os.open("/run/netns/" + name, os.O_RDONLY)
    try:
        if libc.setns(there, 0x40000000):
            raise OSError(ctypes.get_errno(), "setns " + name)
        return fn()
    finally:
        libc.setns(here, 0x40000000)
        os.close(here)
        os.close(there)


def open_port(i):
    def make():
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                          socket.htons(0x0003))
        s.setsockopt(SOL_PACKET, PACKET_VNET_HDR, 1)
        s.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 24)
        s.bind(("p%d" % i, 0))
        s.setblocking(False)
        return s
    return in_netns("at_ns%d" % i, make)


def send(sock, frame, partial):
    if partial:
        hdr = struct.pack("=BBHHHH", VIRTIO_NET_HDR_F_NEEDS_CSUM, 0, 0, 0,
                          partial[0], partial[1])
    else:
        hdr = bytes(10)
    try:
        sock.send(hdr + frame)
        return 1
    except OSError:
        return 0            # The kernel refused it: nothing went out.


def receive(sock):
    """The frames that 'sock' received since last asked, as hex strings:
    VLAN tags that the kernel took out put back, checksums left to
    finish finished."""
    frames = []
    while True:
        try:
            data, anc, _, addr = sock.recvmsg(65536 + 10, 256)
        except BlockingIOError:
            return frames
        if addr[2] == socket.PACKET_OUTGOING:
            continue
        flags, _, _, _, start, offset = struct.unpack("=BBHHHH", data[:10])
        frame = data[10:]
        if flags & VIRTIO_NET_HDR_F_NEEDS_CSUM:
            at = start + offset
            frame = (frame[:at] + struct.pack("!H", csum(frame[start:]))
                     + frame[at + 2:])
        for level, kind, aux in anc:
            if level == SOL_PACKET and kind == PACKET_AUXDATA:
                status = struct.unpack("I", aux[:4])[0]
                tci, tpid = struct.unpack("HH", aux[16:20])
                if status & TP_STATUS_VLAN_VALID:
                    if not status & TP_STATUS_VLAN_TPID_VALID:
                        tpid = 0x8100
                    frame = frame[:12] + struct.pack("!HH", tpid,
                                                     tci) + frame[12:]
        frames.append(frame.hex())


# A case.

def stateful(case):
    """Whether what a frame does may depend on the frames before it."""
    return any("ct(" in x
               for x in case["rules"] + [m[1] for p in case["phases"]
                                         for m in p["mods"]])


def run_case(case, appctl, revalidate, socks, expected):
    for s in socks:
        receive(s)
    ofctl("del-flows", "br0")
    ofctl("add-flows", "br0", "-", data="\n".join(case["rules"]) + "\n")
    appctl("dpctl/flush-conntrack")
    appctl("revalidator/purge")
    # With no datapath flow left, no flow is left in XDP either, nor
    # counted as offloaded, once the provider has carried out the
    # deletions, which it may still be doing when the first frames come.
    # A flow that it still counted would lend its counts to the next
    # megaflow with its id.
    left = None
    try:
        wait_for("the XDP flow table to empty",
                 lambda: xdp_table(appctl) == (0, 0, 0))
    except TimeoutError:
        left = xdp_table(appctl)
    cov_start = coverage(appctl)
    counts = datapath_counts(appctl)[:2]
    xdp_start = counts[1]
    ports_start = port_counters()
    out = [[] for _ in socks]
    for phase_i, phase in enumerate(case["phases"]):
        if phase["mods"]:
            # Statistics go to the rules that the megaflows' actions came
            # from when they are pushed: all pushed before the rules change
            # (a revalidation round that began after the last packet), and
            # the megaflows revalidated after (one that began after the
            # change), or else what each rule counts depends on timing.
            revalidate()
            for mod in phase["mods"]:
                ofctl(mod[0], "br0", mod[1])
            # The main thread asks the revalidators to take new tables in
            # the first pass of its loop after a change, which may come
            # after the round below has begun.  One more change, to a
            # table that no rule leads to, is sure to ask them again; once
            # the main thread's counters show a request after the case's
            # changes, the round below begins after it.
            asked = revalidation_requests(appctl)
            ofctl("add-flow", "br0",
                  "table=250,priority=%d,actions=drop" % (phase_i + 1))
            wait_for("the revalidators to be asked",
                     lambda: revalidation_requests(appctl) > asked)
            revalidate()
            # And XDP has caught up: until it has, a deleted or modified
            # flow runs there as it was.
            wait_for("the offload provider's requests",
                     lambda: offload_requests(appctl) == 0)
        # Three times over, so that the later ones find the megaflows of
        # the first offloaded.  Conntrack and learn see the frames in the
        # order sent; other actions do not care.
        n = 0
        one_by_one = stateful(case)
        for port, frame, partial in phase["frames"] * 3:
            n += send(socks[port], bytes.fromhex(frame), partial)
            if n and one_by_one:
                counts = wait_datapath(appctl, counts, n)
                n = 0
        if n:
            counts = wait_datapath(appctl, counts, n)
        for i, s in enumerate(socks):
            out[i] += receive(s)
    if expected:
        # The kernel may still be delivering the last frames that XDP
        # forwarded: wait for as many as without offload, no longer.
        deadline = time.monotonic() + 3
        while (sum(map(len, out)) < sum(map(len, expected["out"]))
               and time.monotonic() < deadline):
            time.sleep(0.005)
            for i, s in enumerate(socks):
                out[i] += receive(s)
    # The statistics of every packet: a revalidation round that began after
    # the last one.
    revalidate()
    rules = {}
    for line in ofctl_out("dump-flows", "br0").splitlines():
        fields = dict(f.split("=", 1) for f in line.strip().split(", ")
                      if "=" in f and not f.startswith(" "))
        if "cookie" in fields:
            # Learned rules share a cookie: their counts are summed.
            key = "%s/%s" % (fields.get("table", "0"), fields["cookie"])
            n = rules.setdefault(key, [0, 0])
            n[0] += int(fields.get("n_packets", 0))
            n[1] += int(fields.get("n_bytes", 0))
    cov = coverage(appctl)
    return {"seed": case["seed"], "out": [sorted(o) for o in out],
            "rules": rules, "ports": port_counters(ports_start),
            "xdp": counts[1] - xdp_start, "left": left,
            "coverage": {k: cov[k] - cov_start[k] for k in cov
                         if cov[k] != cov_start[k]}}


def port_counters(since=None):
    """The OpenFlow ports' packet counters, less 'since'."""
    counters = {}
    port = None
    for line in ofctl_out("dump-ports", "br0").splitlines():
        words = line.replace(",", " ").replace("=", " ").split()
        if words[:1] == ["port"] and len(words) > 1:
            port = words[1].rstrip(":")
            words = words[2:]
        if not words or words[0] not in ("rx", "tx") or port == "LOCAL":
            continue
        for name, value in zip(words[1::2], words[2::2]):
            # Not bytes: the device's count of the bytes it sent differs
            # between its paths for the same frames (fuzz seeds 37 and
            # 116: a tx byte count off by 126 and 168, every frame
            # delivered the same), which is still to be explained.
            if name == "pkts" and value.isdigit():
                key = "%s %s %s" % (port, words[0], name)
                counters[key] = int(value) - (since or {}).get(key, 0)
    return counters


def key_lost(frame):
    """Whether Open vSwitch cannot read back the datapath flow key of
    'frame': a VLAN tag or an MPLS label cut short leaves a key ("vlan(...
    cfi=0),encap()", "mpls()") that odp-util refuses to parse, so that a
    revalidator cannot translate the flow again, and the statistics that
    it still held when it was deleted are lost.  Which of them are lost
    depends on when the revalidators ran, with offload or without (seed
    1314 counted one such frame in one run without offload, and not in
    the next)."""
    ofs = 12
    while len(frame) >= ofs + 2 and frame[ofs:ofs + 2] in (b"\x81\x00",
                                                           b"\x88\xa8"):
        if len(frame) < ofs + 6:
            return True
        ofs += 4
    return (frame[ofs:ofs + 2] in (b"\x88\x47", b"\x88\x48")
            and len(frame) < ofs + 6)


def lost_sizes(case):
    """The sizes of the frames of 'case' whose statistics Open vSwitch may
    lose (key_lost()), once per time that each was sent."""
    return [len(bytes.fromhex(f)) for phase in case["phases"]
            for _, f, _ in phase["frames"] * 3
            if key_lost(bytes.fromhex(f))]


def explained(got, want, sizes):
    """Whether a rule's counts 'got' and 'want' ([packets, bytes]) differ
    by some of the frames of 'sizes' only, in either direction."""
    if not got or not want:
        return False
    n, nbytes = got[0] - want[0], got[1] - want[1]
    if n < 0:
        n, nbytes = -n, -nbytes
    reach = {(0, 0)}
    for size in sizes:
        reach |= {(k + 1, b + size) for k, b in reach if k < n}
    return (n, nbytes) in reach


def differences(got, want, lost=()):
    """The differences between the results 'got' and 'want', and those of
    them that the frames of sizes 'lost' explain (lost_sizes())."""
    diffs = []
    tolerated = []
    if got["left"]:
        diffs.append("before the case, with every datapath flow deleted, "
                     "the XDP table still held %d flows (kernel: %d), and "
                     "the provider counted %d as offloaded"
                     % tuple(got["left"]))
    for i, (g, w) in enumerate(zip(got["out"], want["out"])):
        if g != w:
            gone = sorted(set(w) - set(g))
            extra = sorted(set(g) - set(w))
            diffs.append("port %d: %d frames out, %d without offload"
                         % (i + 1, len(g), len(w)))
            diffs += ["  only without offload: " + f for f in gone[:4]]
            diffs += ["  only with offload:    " + f for f in extra[:4]]
    for key in sorted(got["ports"]):
        if got["ports"][key] != want["ports"].get(key):
            diffs.append("port %s: %d, %s without offload"
                         % (key, got["ports"][key], want["ports"].get(key)))
    for key in sorted(set(got["rules"]) | set(want["rules"])):
        if key.startswith("2/"):
            # Learned rules: what each counts depends on when learn
            # modified it, relative to the revalidators, with offload or
            # not.  What they forward is compared.
            continue
        g, w = got["rules"].get(key), want["rules"].get(key)
        if g != w:
            diff = ("rule %s: counts %s, %s without offload"
                    % (key, g, w))
            if explained(g, w, lost):
                tolerated.append(diff)
            else:
                diffs.append(diff)
    return diffs, tolerated


def reproducer(case):
    lines = ["seed %d (each phase's frames are sent three times)"
             % case["seed"], "rules:"]
    lines += ["  " + r for r in case["rules"]]
    for n, phase in enumerate(case["phases"]):
        lines.append("phase %d:" % n)
        lines += ["  %s %s" % tuple(m) for m in phase["mods"]]
        lines += ["  in port %d%s: %s" % (p + 1, " (partial)" if c else "", f)
                  for p, f, c in phase["frames"]]
    return "\n".join(lines)


def main():
    if sys.argv[1] == "show":
        print(reproducer(gen_case(int(sys.argv[2]))))
        return 0
    if sys.argv[1] == "frames":
        r = random.Random(int(sys.argv[2]))
        for i in range(int(sys.argv[3])):
            frame = bytearray(gen_frame(r)[0])
            if i % 2:
                for _ in range(r.randint(1, 3)):
                    frame[r.randrange(12, min(len(frame), 80))] = \
                        r.getrandbits(8)
            print(frame.hex())
        return 0
    seed, n, out_name = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    expected = {}
    if len(sys.argv) > 5:
        with open(sys.argv[5]) as f:
            for line in f:
                record = json.loads(line)
                expected[record["seed"]] = record
    appctl = Unixctl()
    revalidate = Revalidation(appctl)
    socks = [open_port(i) for i in range(N_PORTS)]
    n_diff = n_xdp = n_frames = n_tolerated = 0
    start = time.monotonic()
    with open(out_name, "w") as out:
        for seed_i in range(seed, seed + n):
            case = gen_case(seed_i)
            result = run_case(case, appctl, revalidate, socks,
                              expected.get(seed_i))
            out.write(json.dumps(result) + "\n")
            n_xdp += result["xdp"]
            n_frames += sum(len(p["frames"]) for p in case["phases"])
            if seed_i in expected:
                diffs, tolerated = differences(result, expected[seed_i],
                                               lost_sizes(case))
                for diff in tolerated:
                    n_tolerated += 1
                    print("case %d: %s, by frames whose flow key Open "
                          "vSwitch cannot read back (not counted as a "
                          "difference)" % (seed_i, diff))
                if diffs:
                    n_diff += 1
                    print("case %d differs with offload:\n%s\n"
                          "coverage during the case, offload off: %s, on: %s"
                          "\n%s\n"
                          % (seed_i, "\n".join(diffs),
                             expected[seed_i].get("coverage"),
                             result["coverage"], reproducer(case)))
    print("%d cases from seed %d, %d frames sent, %d run in XDP, %d differ,"
          " %.0f s" % (n, seed, n_frames, n_xdp, n_diff,
                       time.monotonic() - start))
    if n_tolerated:
        print("%d rule counts differed by frames whose flow key Open vSwitch"
              " cannot read back" % n_tolerated)
    if PROFILE is not None:
        with open(PROFILE_FILE, "a") as f:
            f.write("offload %s, %d cases from seed %d, %.1f s:\n"
                    % ("on" if expected else "off", n, seed,
                       time.monotonic() - start))
            for name, (k, t) in sorted(PROFILE.items(),
                                       key=lambda x: -x[1][1]):
                f.write("%8.2f s in %6d calls: %s\n" % (t, k, name))
    if expected and (n_diff or not n_xdp):
        if not n_xdp:
            print("no packet ran in XDP: the comparison proves nothing")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
