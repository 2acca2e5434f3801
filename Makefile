# ovs-afxdp: top-level driver.
#
#   make demo     build, then pass traffic through afxdp ports and show stats
#   make check    build, then run the series' unit tests and check-afxdp,
#                 then check-sanitize
#   make check-sanitize  the series' tests in an ASan + UBSan build
#   make series   write the series as git format-patch files to build/series
#   make series-verify   also apply them with git am to 4.0.0 and build
#   make bench    afxdp against upstream's afxdp, AF_PACKET and DPDK af_xdp
#   make bench-tcp       TCP (iperf3) through afxdp ports, upstream's, a bridge
#   make bench-rxhash    afxdp with and without the device's RX hash
#   make bench-pool      the frame pool's benchmark against locked stacks
#   make sanitize-pool   the pool's checks under TSan and ASan + UBSan
#
# Everything is built under build/ (ignored by git).

SHELL := /bin/bash
TOP := $(CURDIR)
BUILD := $(TOP)/build
OVS := $(BUILD)/ovs
JOBS ?= 2
# Extra arguments for the autotest suites, e.g. TESTSUITEFLAGS='-k ping'.
TESTSUITEFLAGS ?=

.PHONY: all deps assemble build build-sanitize demo check check-unit \
        check-afxdp check-afxdp-offload check-offload-diff fuzz-offload \
        check-sanitize check-kernel check-nic check-ovn deb \
        check-deb series \
        series-verify bench bench-tcp bench-rxhash bench-shared-txq \
        bench-offload-miss bench-offload-stall bench-pool bench-pmd-sleep \
        sanitize-pool clean \
        distclean

all: build

deps:
	@sh scripts/deps.sh

assemble: deps
	@sh scripts/assemble.sh

build: assemble
	@sh scripts/build-ovs.sh $(OVS) $(JOBS)

demo: build
	@bash scripts/demo.sh $(OVS)

build-sanitize: assemble
	@sh scripts/build-sanitize.sh $(OVS) $(BUILD)/asan $(JOBS)

check: build build-sanitize
	@bash scripts/check.sh $(OVS) all

check-unit: build
	@bash scripts/check.sh $(OVS) unit

check-afxdp: build
	@bash scripts/check.sh $(OVS) afxdp

# check-afxdp with other_config:hw-offload=true: flows run in XDP.
check-afxdp-offload: build
	@bash scripts/check.sh $(OVS) afxdp-offload

check-sanitize: build-sanitize
	@bash scripts/check.sh $(OVS) sanitize

# The differential tests of flow offload alone, and at length: CASES
# random cases from SEED (tests/afxdp-offload-diff.py).
CASES ?= 1000
SEED ?= 1
check-offload-diff: build
	@bash scripts/check.sh $(OVS) offload-diff

# The longest PMD iterations during 200 reconfigurations, offload off and
# on.
bench-offload-stall: build
	@bash scripts/bench-offload-stall.sh $(OVS)

fuzz-offload: build
	@AFXDP_DIFF_CASES=$(CASES) AFXDP_DIFF_SEED=$(SEED) \
	    bash scripts/check.sh $(OVS) offload-diff

# OVN's system tests (Debian's OVN 26.03.1, built in build/ovn against the
# series' tree) over afxdp ports with offload off and on, and over plain
# veth ports for comparison; make check runs a part of it.
check-ovn: build
	@bash scripts/check.sh $(OVS) ovn

# The demo under Debian bookworm's kernel (6.1) in a QEMU guest.
check-kernel: build
	@bash scripts/check.sh $(OVS) kernel

# afxdp ports on NIC drivers with AF_XDP zero-copy (virtio_net) in a QEMU
# guest under Debian's newest kernel; make check runs a part of it.
check-nic: build
	@bash scripts/check.sh $(OVS) nic

# Debian packages of Open vSwitch with the series, in build/deb/.
deb: assemble
	@bash scripts/deb.sh

# Installs those packages, runs them through ovs-ctl, removes them.
check-deb: deb
	@bash scripts/check-deb.sh

series: assemble
	@rm -rf $(BUILD)/series
	@git -C $(OVS) format-patch -q --cover-letter -o $(BUILD)/series base..HEAD
	@ls $(BUILD)/series

series-verify: series
	@bash scripts/series-verify.sh $(BUILD)

bench: build
	@bash scripts/bench.sh
	@bash scripts/bench-tcp.sh
	@bash scripts/bench-pmd-sleep.sh

# What OVS's PMD sleeping (other_config:pmd-sleep-max) saves while no
# packet reaches the PMD, and what it adds to the round trip of those that
# do.
bench-pmd-sleep: build
	@bash scripts/bench-pmd-sleep.sh

# TCP through two afxdp ports, upstream's and a Linux bridge: at MTU 1500
# with the senders' checksum offload on and off, and at MTU 9000.
bench-tcp: build
	@bash scripts/bench-tcp.sh

# The RX hash from XDP metadata against OVS's software hash, on traffic
# for which veth has a hash.
bench-rxhash: build
	@BENCH_IMPLS="afxdp afxdp-nohash" BENCH_SKB_RATE=400000 \
	 BENCH_CASES="rxdrop:1000:64:skb l2fwd:1000:64:skb rxdrop:1:64:skb" \
	 bash scripts/bench.sh

# Two PMD threads sending through one port's single tx queue, with XDP
# transmit and with the socket.
bench-shared-txq: build
	@bash scripts/bench-shared-txq.sh

# What a miss costs with and without flow offload to XDP.
bench-offload-miss: build
	@bash scripts/bench-offload-miss.sh

bench-pool: build
	$(OVS)/tests/ovstest test-afxdp-pool benchmark 1000000 2

sanitize-pool: build
	@bash scripts/sanitize-pool.sh $(OVS)

clean:
	-$(MAKE) -C $(OVS) clean >/dev/null 2>&1

distclean:
	rm -rf $(BUILD)
