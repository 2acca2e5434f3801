#!/bin/sh
# need-pkgs.sh WHO PACKAGE...: installs, from Debian's packages, those of
# PACKAGE... that the machine lacks; WHO names the caller in the message.
set -eu
who=$1
shift
missing=""
for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null \
        | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "$who: installing$missing"
apt-get update -q >/dev/null
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    $missing >/dev/null
