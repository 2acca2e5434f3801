#!/bin/bash
# Run the series' tests in the assembled tree and print one summary line
# "N passed, N failed, N skipped".
#
#   check.sh OVS_TREE all     unit tests, check-afxdp, then sanitize
#   check.sh OVS_TREE unit    the OVS testsuite filtered to keyword "afxdp"
#   check.sh OVS_TREE afxdp   check-afxdp: tests/system-afxdp*.at and
#                             upstream's tests/system-traffic.at over afxdp
#   check.sh OVS_TREE afxdp-offload  the same with hw-offload=true
#   check.sh OVS_TREE kernel  the demo and the ports' fallback status under
#                             Debian bookworm's 6.1 kernel, in a QEMU guest
#                             (scripts/kernel-check.sh)
#   check.sh OVS_TREE nic     afxdp ports on NIC drivers with zero-copy
#                             (virtio_net) in a QEMU guest under Debian's
#                             newest kernel (scripts/nic-check.sh)
#   check.sh OVS_TREE nic-quick  a representative part of it
#   check.sh OVS_TREE ovn     OVN's system tests over afxdp ports, offload
#                             off and on, and over plain veth ports (the
#                             baseline, not counted); OVN built in
#                             build/ovn (scripts/build-ovn.sh)
#   check.sh OVS_TREE ovn-quick  a representative part of it
#   check.sh OVS_TREE deb     make deb and make check-deb
#   check.sh OVS_TREE sanitize  the series' own unit and system tests in
#                             build/asan, built with AddressSanitizer and
#                             UndefinedBehaviorSanitizer (and LeakSanitizer
#                             on): any report fails the test that caused it
#
# TESTSUITEFLAGS from the environment narrow a run (e.g. -k ping).  A
# system test that fails is run once more unless RECHECK=no; what failed,
# also on a first run only, is printed just before the summary line.
set -uo pipefail

OVS=$(cd "${1:?usage: check.sh OVS_TREE all|unit|afxdp}" && pwd)
what=${2:-all}
TOP=$(cd "$(dirname "$0")/.." && pwd)
LOGDIR=$TOP/build/check
mkdir -p "$LOGDIR"

passed=0 failed=0 skipped=0

# Autotest's per-test result lines ("  12: title   ok"), passed and failed.
PASS_RE='^ *[0-9]+: .* (ok|expected failure)$'
FAIL_RE='^ *[0-9]+: .* (FAILED \(|UNEXPECTED PASS)'

# Count them.
tally() {
    local log=$1 p f s
    p=$(grep -cE "$PASS_RE" "$log")
    f=$(grep -cE "$FAIL_RE" "$log")
    s=$(grep -cE '^ *[0-9]+: .* skipped \(' "$log")
    echo "$(basename "$log" .log): $p passed, $f failed, $s skipped"
    passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
}

# unit_tests TREE LOGNAME: OVS's testsuite in TREE, keyword afxdp.
unit_tests() {
    local tree=$1 log=$LOGDIR/$2.log
    (cd "$tree/tests" && ./testsuite -C . AUTOTEST_PATH="$tree/utilities:$tree/vswitchd:$tree/ovsdb:$tree/vtep:$tree/tests:$tree/ipsec:$tree" \
        -j2 -k afxdp ${TESTSUITEFLAGS:-}) 2>&1 | tee "$log"
    tally "$log"
    failure_digest "$tree/tests/testsuite.dir" "$log"
}

# system_tests TREE LOGNAME [FLAGS]: make check-afxdp in TREE.
system_tests() {
    local tree=$1 log=$LOGDIR/$2.log flags=${3:-}
    # bpffs is where libbpf and libxdp look for pinned objects.
    local mounted=no
    if ! mountpoint -q /sys/fs/bpf; then
        mount -t bpf bpf /sys/fs/bpf && mounted=yes
    fi
    make -s -C "$tree" check-afxdp TESTSUITEFLAGS="$flags ${TESTSUITEFLAGS:-}" \
        2>&1 | tee "$log"
    tally "$log"
    failure_digest "$tree/tests/system-afxdp-testsuite.dir" "$log"
    recheck "$tree" "$log"
    [ $mounted = yes ] && umount /sys/fs/bpf
}

# recheck TREE LOG [MAKE_ARGS]: runs the tests that failed in LOG once more, as
# upstream's RECHECK=yes does for its system suites (RECHECK=no turns it
# off).  One that passes then is counted as passed, but stays in $DIGEST,
# marked, with the output of its first run: a flaky test is reported, not
# hidden.
recheck() {
    local tree=$1 log=$2 again=${2%.log}-recheck.log name n
    shift 2
    [ "${RECHECK:-yes}" = yes ] && grep -qE "$FAIL_RE" "$log" || return 0
    name=$(basename "$log" .log)
    echo "== $name: the failed tests once more"
    make -s -C "$tree" "${@:-check-afxdp}" TESTSUITEFLAGS=--recheck 2>&1 \
        | tee "$again"
    grep -E "$PASS_RE" "$again" > "$again.passed"
    n=$(wc -l < "$again.passed")
    passed=$((passed + n)) failed=$((failed - n))
    sed "s/^/$name: passed when run again: /" "$again.passed" >> "$DIGEST"
}

# failure_digest DIR LOG: for each test LOG reports failed, its result line
# and the lines of its own log (kept in DIR/NN) that say what differed, into
# $DIGEST, which is printed last: CI shows only the end of the output.
DIGEST=$LOGDIR/failures.txt
rm -f "$LOGDIR/nic-excerpts"
: > "$DIGEST"
failure_digest() {
    local dir=$1 log=$2 n
    grep -E "$FAIL_RE" "$log" | while read -r line; do
        echo "$(basename "$log" .log): $line"
        n=$(ls "$dir" 2>/dev/null | grep -xE "0*${line%%:*}")
        grep -E '^[-+][^-+]|exit code was|^\./.*: ' "$dir/$n/"*testsuite.log \
            2>/dev/null | grep -vE '^\./[^ ]*: (testing|waiting)' | tail -n 8
    done >> "$DIGEST"
}

run_unit() {
    echo "== unit tests (testsuite -k afxdp)"
    unit_tests "$OVS" unit
    run_thread_safety
}

# clang's thread-safety analysis of the series' C files (and of
# netdev-linux.c, which the series edits): what the annotations say is
# locked must be.  OVS turns -Wthread-safety on in clang builds; the
# build here uses gcc, so the analysis runs on its own.
run_thread_safety() {
    local log=$LOGDIR/thread-safety.log f bad=""
    echo "== thread-safety analysis (clang -Wthread-safety)"
    : > "$log"
    for f in lib/netdev-afxdp.c lib/netdev-afxdp-options.c \
             lib/netdev-afxdp-status.c lib/netdev-afxdp-watch.c \
             lib/afxdp-umem.c lib/afxdp-xdp.c \
             lib/afxdp-flow.c lib/dpif-offload-xdp.c \
             lib/afxdp-pool.c lib/afxdp-csum.c lib/netdev-linux.c; do
        (cd "$OVS" && clang -DHAVE_CONFIG_H -I. -I include -I lib \
             -Wthread-safety -Werror=thread-safety -fsyntax-only "$f") \
            >> "$log" 2>&1 || bad="$bad $f"
    done
    if [ -z "$bad" ]; then
        echo "thread-safety: ok"
        passed=$((passed + 1))
    else
        echo "thread-safety: FAILED in$bad"
        cat "$log"
        failed=$((failed + 1))
    fi
}

run_afxdp() {
    echo "== check-afxdp (system-afxdp and system-traffic over afxdp ports)"
    system_tests "$OVS" afxdp
    skip_reasons "$LOGDIR/afxdp.log"
    # Tests that ran with their veths' checksum offload off, and why.
    sed -n 's/^\(.*\) | tx off: \(.*\)$/tx off: \1 -- \2/p' \
        "$TOP/tests/system-afxdp-skip.txt"
}

# Upstream's system-traffic.at over afxdp ports again, with
# other_config:hw-offload=true and the namespaces' veths taking XDP frames
# (AFXDP_HW_OFFLOAD, tests/system-afxdp-macros.at): the flows between afxdp
# ports run in XDP wherever they can.  (The series' own tests, keyword
# afxdp, count what passes through user space; those of flow offload are
# in check-afxdp.)  "make check" runs the part in AFXDP_OFFLOAD_CI_TESTS,
# "make check-afxdp-offload" all of it.
AFXDP_OFFLOAD_CI_TESTS="-k datapath,!afxdp"
run_afxdp_offload() {
    echo "== check-afxdp-offload (system-traffic with hw-offload=true${1:+, $1})"
    export AFXDP_HW_OFFLOAD=true
    system_tests "$OVS" afxdp-offload "${1:--k !afxdp}"
    unset AFXDP_HW_OFFLOAD
    skip_reasons "$LOGDIR/afxdp-offload.log"
}

# The differential tests of flow offload alone (keyword diff): the XDP
# parser against miniflow_extract, and random tables and frames with
# offload off and on.  AFXDP_DIFF_CASES and AFXDP_DIFF_SEED choose the
# cases (make fuzz-offload CASES=N SEED=S).
run_offload_diff() {
    echo "== offload-diff (${AFXDP_DIFF_CASES:-the default} cases from seed ${AFXDP_DIFF_SEED:-1})"
    RECHECK=no system_tests "$OVS" offload-diff "-k diff -d"
    grep -h "cases from seed" "$OVS"/tests/system-afxdp-testsuite.dir/*/stdout \
        2>/dev/null
}

# Under the sanitizers, only the series' own system tests: keyword afxdp,
# with a few of the differential test's cases.  LeakSanitizer too: OVS's
# atlocal turns it off unless asked.
run_sanitize() {
    export ASAN_OPTIONS=detect_leaks=1 AFXDP_DIFF_CASES=${AFXDP_DIFF_CASES:-20}
    echo "== sanitize: unit tests under ASan + UBSan (build/asan)"
    unit_tests "$TOP/build/asan" sanitize-unit
    echo "== sanitize: system-afxdp tests under ASan + UBSan (build/asan)"
    system_tests "$TOP/build/asan" sanitize-afxdp "-k afxdp"
    unset ASAN_OPTIONS AFXDP_DIFF_CASES
}

# The series under bookworm's kernel (6.1): its result lines are
# "ok: NAME" and "FAILED: NAME".
run_kernel() {
    echo "== kernel: the demo under Debian bookworm's 6.1 kernel (QEMU)"
    bash "$TOP/scripts/kernel-check.sh" "$OVS" 2>&1 | tee "$LOGDIR/kernel.log"
    tally_checks kernel "$TOP/build/kernel/run/checks"
}

# afxdp ports on real NIC drivers in a guest (QUICK: a representative
# part): result lines "ok: NAME", "FAILED: NAME", "skipped: NAME".
run_nic() {
    local quick=${1:-}
    echo "== nic: NIC drivers with zero-copy in a QEMU guest${quick:+ ($quick)}"
    bash "$TOP/scripts/nic-check.sh" "$OVS" $quick 2>&1 \
        | tee "$LOGDIR/nic.log"
    tally_checks nic "$TOP/build/nic/run/checks"
    grep '^FAILED: ' "$TOP/build/nic/run/checks" 2>/dev/null >> "$DIGEST"
    # The guest's excerpts of its failed checks, after the digest's list.
    if [ -s "$TOP/build/nic/run/excerpts" ]; then
        head -n 120 "$TOP/build/nic/run/excerpts" > "$LOGDIR/nic-excerpts"
    fi
}

# OVN's system tests on the userspace datapath (build/ovn, made by
# scripts/build-ovn.sh): ovn_tests NAME SUITE [FLAGS] runs OVN's suite
# SUITE (system-afxdp: every veth of a test an afxdp port, ovn/tests;
# system-userspace: OVN's own, over the same veths as plain ports).
ovn_tests() {
    local name=$1 suite=$2 flags=${3:-} log=$LOGDIR/$1.log
    local dir=$TOP/build/ovn
    local args=(check-system-userspace
                SYSTEM_USERSPACE_TESTSUITE=tests/$suite-testsuite)
    make -s -C "$dir" "${args[@]}" \
        TESTSUITEFLAGS="$flags ${TESTSUITEFLAGS:-}" 2>&1 | tee "$log"
    tally "$log"
    [ "${4:-}" = baseline ] && return
    failure_digest "$dir/tests/$suite-testsuite.dir" "$log"
    recheck "$dir" "$log" "${args[@]}"
}

# make check-ovn: OVN's system suite over afxdp ports with offload off and
# on, and over plain veth ports on the same build, the baseline that says
# which failures are OVN's or the machine's.  "make check" runs the part
# in OVN_CI_TESTS with offload off and on.
OVN_CI_TESTS=(
    "2 LRs connected via LS, gateway router, SNAT and DNAT"
    "load-balancing"
)

# The numbers of the series' own OVN tests (keyword ovn-afxdp) and of the
# tests titled in OVN_CI_TESTS (their first variant) in SUITE.
ovn_ci_numbers() {
    local suite=$TOP/build/ovn/tests/$1-testsuite t
    {
        "$suite" --list -k ovn-afxdp
        for t in "${OVN_CI_TESTS[@]}"; do
            "$suite" --list | grep -F -m1 " $t -- " || true
        done
    } | sed -nE 's/^ *([0-9]+): .*/\1/p' | sort -nu | tr '\n' ' '
}

run_ovn() {
    local quick=${1:-} flags=""
    echo "== ovn: OVN's system tests over afxdp ports${quick:+ ($quick)}"
    bash "$TOP/scripts/build-ovn.sh" "$OVS"
    case $? in
    0) ;;
    77) echo "skipped: ovn -- Debian's OVN 26.03.1-1 source package is" \
             "neither on the mirror nor in ../shared/cache"
        skipped=$((skipped + 1))
        return ;;
    *) echo "FAILED: ovn -- OVN did not build (scripts/build-ovn.sh)"
       echo "ovn: OVN did not build (scripts/build-ovn.sh)" >> "$DIGEST"
       failed=$((failed + 1))
       return ;;
    esac
    [ -n "$quick" ] && flags=$(ovn_ci_numbers system-afxdp)
    ovn_tests ovn-afxdp system-afxdp "$flags"
    export AFXDP_HW_OFFLOAD=true
    ovn_tests ovn-afxdp-offload system-afxdp "$flags"
    unset AFXDP_HW_OFFLOAD
    if [ -z "$quick" ]; then
        # The baseline: printed, not counted.
        local p=$passed f=$failed k=$skipped
        ovn_tests ovn-veth system-userspace "" baseline
        passed=$p failed=$f skipped=$k
        echo "(ovn-veth, OVN's suite over plain veth ports: the baseline," \
             "not counted in the summary)"
    fi
    skip_reasons "$LOGDIR/ovn-afxdp.log" "$TOP/ovn/tests/system-afxdp-skip.txt" \
        "$TOP/build/ovn/tests"
}

# The Debian packages: built (make deb), then installed, run through the
# packaged ovs-ctl and removed (make check-deb).  A package build that
# fails is one failure.
run_deb() {
    local log=$LOGDIR/deb.log
    echo "== deb: Debian packages through ovs-ctl (make deb, make check-deb)"
    : > "$log"
    bash "$TOP/scripts/deb.sh" 2>&1 | tee "$log" \
        && bash "$TOP/scripts/check-deb.sh" 2>&1 | tee -a "$log"
    tally_checks deb "$log"
}

# tally_checks NAME FILE: counts FILE's result lines "ok: CHECK",
# "FAILED: CHECK" and "skipped: CHECK -- WHY" (those listed); a FILE
# without a passed or failed one (a run that stopped before its checks) is
# one failure.
tally_checks() {
    local p f k
    p=$(grep -c '^ok: ' "$2" 2>/dev/null)
    f=$(grep -c '^FAILED: ' "$2" 2>/dev/null)
    k=$(grep -c '^skipped: ' "$2" 2>/dev/null)
    p=${p:-0} f=${f:-0} k=${k:-0}
    [ $((p + f)) -gt 0 ] || f=1
    echo "$1: $p passed, $f failed, $k skipped"
    grep '^skipped: ' "$2" 2>/dev/null
    passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + k))
}

# skip_reasons LOG [LIST DIR]: one line per test that LOG reports skipped:
# its title and why.  For a test listed in LIST (by default
# tests/system-afxdp-skip.txt; OVN's titles without the variant that
# OVN_FOR_EACH_NORTHD appends), the reason given there; for the others,
# the check that skipped it, as written at the line autotest reports, in
# the .at files of DIR (by default the Open vSwitch tree's tests).
skip_reasons() {
    local log=$1 list=${2:-$TOP/tests/system-afxdp-skip.txt}
    local dir=${3:-$OVS/tests} title file line reason

    grep -E '^ *[0-9]+: .* skipped \(' "$log" \
        | sed -E 's/^ *[0-9]+: (.*[^ ]) +skipped \(([^:]+):([0-9]+)\)$/\1|\2|\3/' \
        | while IFS='|' read -r title file line; do
        reason=$(awk -v t="${title%% -- parallelization=*}" '
            { i = index($0, " | ") }
            i && substr($0, 1, i - 1) == t { print substr($0, i + 3); exit }
            ' "$list")
        if [ -z "$reason" ]; then
            # The line autotest names, or, where it names the macro around
            # the test (OVN_FOR_EACH_NORTHD), the test's skip checks.
            reason=$(awk -v n="$line" '
                NR == n && !/FOR_EACH/ { print; exit }
                NR >= n && /AT_SKIP_IF/ { s = s (s ? "; " : "") $0 }
                NR > n && /AT_CLEANUP/ { print s; exit }
                ' "$dir/$file" | sed -E 's/^[[:space:]]+//; s/;[[:space:]]+/; /g')
            reason="$file:$line: $reason"
        fi
        echo "skipped: $title -- $reason"
    done
}

case $what in
all) run_unit; run_afxdp; run_afxdp_offload "$AFXDP_OFFLOAD_CI_TESTS"
     run_sanitize; run_kernel; run_nic quick; run_ovn quick ;;
unit) run_unit ;;
afxdp) run_afxdp ;;
afxdp-offload) run_afxdp_offload ;;
offload-diff) run_offload_diff ;;
sanitize) run_sanitize ;;
kernel) run_kernel ;;
nic) run_nic ;;
nic-quick) run_nic quick ;;
ovn) run_ovn ;;
ovn-quick) run_ovn quick ;;
deb) run_deb ;;
*) echo "check.sh: unknown suite $what" >&2; exit 2 ;;
esac

if [ -s "$LOGDIR/nic-excerpts" ]; then
    echo "== the nic checks that failed, in excerpts"
    cat "$LOGDIR/nic-excerpts"
fi
if [ -s "$DIGEST" ]; then
    echo "== what failed (full logs in $LOGDIR)"
    head -n 30 "$DIGEST"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ $((passed + failed)) -gt 0 ]
