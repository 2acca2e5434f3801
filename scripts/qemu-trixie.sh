#!/bin/sh
# qemu-trixie.sh ROOT ARG...: runs the qemu-system-x86_64 of a Debian root
# made by debootstrap (nic-check.sh's, for a newer QEMU than this
# machine's) with ARG..., on this machine: through that root's dynamic
# loader and libraries, and in a private mount namespace where that root's
# QEMU modules and firmware stand in for this machine's (QEMU looks for
# them at fixed paths).
set -e
root=$1
shift
exec unshare -m --propagation private sh -c '
    r=$0
    for d in /usr/lib/x86_64-linux-gnu/qemu /usr/share/qemu /usr/share/seabios
    do
        mkdir -p "$d"
        mount --bind "$r$d" "$d"
    done
    exec "$r/lib64/ld-linux-x86-64.so.2" \
        --library-path "$r/lib/x86_64-linux-gnu:$r/usr/lib/x86_64-linux-gnu" \
        "$r/usr/bin/qemu-system-x86_64" "$@"' "$root" "$@"
