# Sourced by the fetch scripts (sh): add_deb_src adds a source-only
# (deb-src) entry for Debian's trixie and sid, which carry the sources the
# project builds (Open vSwitch 4.0.0, OVN 26.03), derived from the mirror
# that the machine's apt already uses, then runs apt-get update.  No binary
# lines of another suite are ever added, so the installed system is not
# affected.  PREFIX names the caller in messages.  Then from_apt and
# from_cache, below, fetch a source package's tarballs.
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

# What both fetch scripts do, once they have set dest (the directory),
# top (the repository), ORIG and DEBTAR (the tarballs) and SHA256 and
# DEB_SHA256 (their checksums).

# verify FILE: FILE's checksum is right.
verify() {
    case $1 in
    *.debian.tar.xz) sum=$DEB_SHA256 ;;
    *) sum=$SHA256 ;;
    esac
    echo "$sum  $1" | sha256sum -c --status -
}

# have FILE: $dest holds a good FILE.
have() {
    [ -f "$dest/$1" ] && verify "$dest/$1"
}

# from_apt PACKAGE VERSION: downloads the source package with apt-get
# source and keeps its tarballs once both verify (ORIG only if $dest
# lacks a good one).
from_apt() {
    command -v apt-get >/dev/null 2>&1 || return 1
    add_deb_src || return 1
    work=$(mktemp -d)
    if (cd "$work" && apt-get source -q --download-only "$1=$2") \
            >"$work/log" 2>&1 \
       && verify "$work/$ORIG" && verify "$work/$DEBTAR"; then
        have "$ORIG" || mv "$work/$ORIG" "$dest/$ORIG"
        mv "$work/$DEBTAR" "$dest/$DEBTAR"
        rm -rf "$work"
        echo "$PREFIX: fetched $1 $2 with apt-get source"
        return 0
    fi
    sed "s/^/$PREFIX: apt: /" "$work/log" | tail -n 3 >&2
    rm -rf "$work"
    return 1
}

# from_cache VERSION: the tarballs from ../shared/cache beside the
# repository, the last resort.
from_cache() {
    for f in $ORIG $DEBTAR; do
        have "$f" && continue
        cache=$top/../shared/cache/$f
        [ -f "$cache" ] && verify "$cache" || return 1
        cp "$cache" "$dest/$f"
    done
    echo "$PREFIX: the mirror lacks $1; used ../shared/cache"
}
