#!/bin/bash
# Build the frame pool's test program twice, with ThreadSanitizer and with
# AddressSanitizer + UndefinedBehaviorSanitizer, and run its checks (the
# multi-threaded stress included).  Any sanitizer report fails the run.
#
# The pool and its test are instrumented; the rest of libopenvswitch is
# linked as built.  The stress test marks its frames' payload with plain
# writes and its ownership records with relaxed atomics, so the only
# happens-before edges between two holders of a frame are the pool's own:
# ThreadSanitizer reports a race if the pool's acquire/release pairs are
# missing.
set -euo pipefail

OVS=$(cd "${1:?usage: sanitize-pool.sh OVS_TREE}" && pwd)
out=$(cd "$(dirname "$0")/.." && pwd)/build/sanitize
mkdir -p "$out"

libs=$(sed -n 's/^\(LIBS\|SSL_LIBS\|CAPNG_LDADD\) = //p' "$OVS/Makefile" | tr '\n' ' ')
cflags="-I$OVS -I$OVS/include -I$OVS/lib -I$OVS/tests -g -O1
        -fno-omit-frame-pointer"
srcs="$OVS/tests/ovstest.c $OVS/tests/test-afxdp-pool.c $OVS/lib/afxdp-pool.c"

rc=0
for san in thread address,undefined; do
    bin=$out/ovstest-${san%%,*}
    gcc $cflags -fsanitize=$san -fno-sanitize-recover=all -o "$bin" $srcs \
        "$OVS/lib/.libs/libopenvswitch.a" $libs -lpthread
    echo "== test-afxdp-pool check, -fsanitize=$san"
    if TSAN_OPTIONS="halt_on_error=1 exitcode=66" \
       ASAN_OPTIONS="detect_leaks=1 exitcode=66" \
       UBSAN_OPTIONS="print_stacktrace=1" \
       "$bin" test-afxdp-pool check 4 100000 2> "$out/${san%%,*}.log"; then
        echo "clean: no sanitizer reports"
    else
        echo "FAILED (exit $?): see $out/${san%%,*}.log"
        head -n 30 "$out/${san%%,*}.log"
        rc=1
    fi
done
exit $rc
