# Sourced by the fetch scripts (sh): add_deb_src adds a source-only
# (deb-src) entry for Debian's trixie and sid, which carry the sources the
# project builds (Open vSwitch 4.0.0, OVN 26.03), derived from the mirror
# that the machine's apt already uses, then runs apt-get update.  No binary
# lines of another suite are ever added, so the installed system is not
# affected.  PREFIX names the caller in messages.
add_deb_src() {
    list=/etc/apt/sources.list.d/ovs-afxdp-src.sources
    [ -f "$list" ] && return 0
    uri=$(grep -rhoE '^(URIs:|deb)[[:space:]]+[a-z]+://[^[:space:]]+/debian/?([[:space:]]|$)' \
              /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null \
          | awk '{print $2}' | grep -v security | head -n 1)
    if [ -z "$uri" ]; then
        echo "${PREFIX:-fetch}: no Debian mirror found in the apt configuration" >&2
        return 1
    fi
    keyring=/usr/share/keyrings/debian-archive-keyring.gpg
    {
        echo "Types: deb-src"
        echo "URIs: $uri"
        echo "Suites: trixie sid"
        echo "Components: main"
        [ -f "$keyring" ] && echo "Signed-By: $keyring"
    } > "$list"
    apt-get update -q >/dev/null 2>&1 || true
}
