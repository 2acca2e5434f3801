#!/usr/bin/env python3
"""Turns the benchmark's raw results into a table (medians, with ratios to
upstream's afxdp) and a PNG plot.

Usage: bench-report.py RESULTS OUTDIR
RESULTS: lines "impl test flows size mpps cycles_per_packet [softirq
[cpu [xdp_ns]]]", softirq being the percentage of the PMD core's time
spent in softirq, cpu ovs-vswitchd's CPU time in percent of one core, and
xdp_ns the run time of the XDP program on port A's device per packet.
"""

import collections
import math
import statistics
import sys

ORDER = ["xdp-bare", "afxdp", "afxdp-base", "afxdp-sleep", "afxdp-offload",
         "afxdp-base-offload",
         "afxdp-offload-sleep", "afxdp-nohash", "afxdp-socket-tx", "afxdp-socket-tx2048",
         "afxdp-nocsum", "afxdp-ring1024", "afxdp-busypoll",
         "afxdp-busypoll-defer", "upstream", "system", "dpdk"]
NAMES = {
    "afxdp": "ovs-afxdp (this series)",
    "afxdp-base": "ovs-afxdp as built in BENCH_BASE",
    "afxdp-base-offload": "ovs-afxdp as built in BENCH_BASE, hw-offload=true",
    "xdp-bare": "bare XDP program (drop, redirect)",
    "afxdp-offload": "ovs-afxdp, hw-offload=true (flows in XDP)",
    "afxdp-offload-sleep": "ovs-afxdp, hw-offload=true, pmd-sleep-max",
    "afxdp-sleep": "ovs-afxdp, pmd-sleep-max",
    "afxdp-nohash": "ovs-afxdp, rx-hash=false",
    "afxdp-socket-tx": "ovs-afxdp, xdp-xmit=false",
    "afxdp-nocsum": "ovs-afxdp, rx-csum-partial=false",
    "afxdp-ring1024": "ovs-afxdp, ring-size=1024",
    "afxdp-socket-tx2048": "ovs-afxdp, xdp-xmit=false, tx-budget=2048",
    "afxdp-busypoll": "ovs-afxdp, busy-poll=true",
    "afxdp-busypoll-defer": "ovs-afxdp, busy-poll=true, NAPI deferred",
    "upstream": "upstream afxdp",
    "system": "type=system (AF_PACKET)",
    "dpdk": "OVS 3.1 + DPDK net_af_xdp",
}


def median(values):
    values = [v for v in values if not math.isnan(v)]
    return statistics.median(values) if values else math.nan


def fmt(v, digits, unit=""):
    return "n/a" if math.isnan(v) else f"{v:.{digits}f}{unit}"


def main():
    results, outdir = sys.argv[1], sys.argv[2]
    runs = collections.defaultdict(list)
    for line in open(results):
        impl, test, flows, size, mpps, cpp, *rest = line.split()
        rest = [float(x) for x in rest] + [math.nan] * (3 - len(rest))
        runs[(test, int(flows), int(size), impl)].append(
            (float(mpps), float(cpp)) + tuple(rest[:3]))

    cases = sorted({k[:3] for k in runs},
                   key=lambda c: (c[0] != "rxdrop", c[2], c[1]))
    impls = [i for i in ORDER if any(k[3] == i for k in runs)]
    table = {}
    for case in cases:
        for impl in impls:
            values = runs.get(case + (impl,), [])
            table[case + (impl,)] = (median([v[0] for v in values]),
                                     median([v[1] for v in values]),
                                     len(values),
                                     median([v[2] for v in values]),
                                     median([v[3] for v in values]),
                                     median([v[4] for v in values]))

    lines = ["| test | flows | bytes | implementation | Mpps | "
             "vs upstream | vs bare XDP | PMD cycles/pkt | vs upstream | "
             "PMD core softirq | ovs-vswitchd CPU | XDP ns/pkt | runs |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for case in cases:
        up_mpps, up_cpp = table.get(case + ("upstream",),
                                    (math.nan, math.nan))[:2]
        bare_mpps = table.get(case + ("xdp-bare",), (math.nan,))[0]
        for impl in impls:
            mpps, cpp, n, softirq, cpu, xdp_ns = table[case + (impl,)]
            lines.append(
                f"| {case[0]} | {case[1]} | {case[2]} | {NAMES[impl]} | "
                f"{fmt(mpps, 3)} | {fmt(mpps / up_mpps, 2, 'x')} | "
                f"{fmt(mpps / bare_mpps, 2, 'x')} | "
                f"{fmt(cpp, 0)} | {fmt(cpp / up_cpp, 2, 'x')} | "
                f"{fmt(softirq, 1, '%')} | {fmt(cpu, 1, '%')} | "
                f"{fmt(xdp_ns, 1)} | {n} |")
    text = "\n".join(lines) + "\n"
    with open(f"{outdir}/results.md", "w") as f:
        f.write(text)
    print(text)

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("bench: no matplotlib, no plot")
        return

    fig, axes = plt.subplots(1, 2, figsize=(13, 5))
    labels = [f"{t}\n{fl} flow{'s' if fl > 1 else ''}, {sz} B"
              for t, fl, sz in cases]
    width = 0.8 / max(len(impls), 1)
    for ax, idx, title in ((axes[0], 0, "Mpps (higher is better)"),
                           (axes[1], 1, "PMD cycles/packet (lower is better)")):
        for j, impl in enumerate(impls):
            ys = [table[c + (impl,)][idx] for c in cases]
            ys = [0 if math.isnan(y) else y for y in ys]
            xs = [i + (j - (len(impls) - 1) / 2) * width
                  for i in range(len(cases))]
            ax.bar(xs, ys, width, label=NAMES[impl])
        ax.set_xticks(range(len(cases)))
        ax.set_xticklabels(labels, fontsize=8)
        ax.set_title(title)
        ax.grid(axis="y", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle("OVS userspace datapath on veth, 2 cores, PMD on core 1 "
                 "(median of runs)")
    fig.tight_layout()
    fig.savefig(f"{outdir}/results.png", dpi=110)
    print(f"plot: {outdir}/results.png")


if __name__ == "__main__":
    main()
