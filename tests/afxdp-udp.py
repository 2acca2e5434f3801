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

"""Moves a file over UDP, for the afxdp system tests.

  afxdp-udp.py recv ADDRESS PORT FILE
      Binds ADDRESS:PORT and writes the datagrams it receives to FILE, in
      order, until one says "end".
  afxdp-udp.py send ADDRESS PORT FILE
      Sends FILE to ADDRESS:PORT in datagrams of 1000 bytes, paced so that
      none is dropped for want of room, then "end".

ADDRESS is IPv4 or IPv6.  Uses only the standard library.
"""

import socket
import sys
import time


def main():
    mode, addr, port, path = sys.argv[1:5]
    family = socket.AF_INET6 if ":" in addr else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_DGRAM)
    if mode == "recv":
        sock.bind((addr, int(port)))
        with open(path, "wb") as f:
            while True:
                data = sock.recv(2000)
                if data == b"end":
                    break
                f.write(data)
                f.flush()
    elif mode == "send":
        with open(path, "rb") as f:
            data = f.read()
        for i in range(0, len(data), 1000):
            sock.sendto(data[i:i + 1000], (addr, int(port)))
            time.sleep(0.001)
        sock.sendto(b"end", (addr, int(port)))
    else:
        sys.exit("afxdp-udp.py: unknown mode %s" % mode)


if __name__ == "__main__":
    main()
