#!/bin/bash
# The longest PMD iterations during 200 reconfigurations under traffic,
# with flow offload off and on: the churn tests of check-afxdp
# (tests/system-afxdp-faults.at, AFXDP_CHURN), each run once with its
# directory kept, and the PMD thread's histogram of cycles per iteration
# that it leaves in pmd-perf.  A flow put that waited for a port's
# reconfiguration would show as iterations of milliseconds with offload on.
#
#   bench-offload-stall.sh OVS_TREE
set -euo pipefail
OVS=$(cd "$1" && pwd)
TOP=$(cd "$(dirname "$0")/.." && pwd)
OUT=$TOP/build/bench
mkdir -p "$OUT"
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf

make -s -C "$OVS" check-afxdp TESTSUITEFLAGS="-k churn -d" RECHECK=no \
    > "$OUT/offload-stall.log" 2>&1 || true
{
    echo "| run | iterations | over 1 ms | over the last bin (24M cycles) |"
    echo "|---|---|---|---|"
    for dir in "$OVS"/tests/system-afxdp-testsuite.dir/[0-9]*; do
        [ -f "$dir/pmd-perf" ] || continue
        title=$(sed -n 's/^[0-9]*\. .*: testing \(.*\) \.\.\.$/\1/p' \
                    "$dir/system-afxdp-testsuite.log" | head -1)
        # The histogram's first column: the bin's lower wall and count; a
        # TSC cycle is 1/(frequency) s, from "Estimated TSC frequency".
        khz=$(sed -n 's/.*Estimated TSC frequency: \([0-9]*\) KHz.*/\1/p' \
                  "$dir/ovs-vswitchd.log" | head -1)
        awk -v t="$title" -v khz="${khz:-1}" '
            /^Histograms/ { h = 1; next }
            h && /^ *cycles\/it/ { next }
            h && /^ *[0-9>]/ {
                if ($1 != ">" && $1 + 0 > khz) { over += $2 }
                if ($1 == ">") { over += $2; top = $2; h = 0 }
                n += $2
            }
            END { printf "| %s | %d | %d | %d |\n", t, n, over, top }
            ' "$dir/pmd-perf"
    done
} | tee "$OUT/offload-stall.md"
grep -E "^ *[0-9]+: " "$OUT/offload-stall.log"
