#!/usr/bin/env bash
# A Debian 13 (trixie, Slurm 24.11, Python 3.13) machine inside this one, for trying and testing
# the product there without upgrading this machine: a root made with debootstrap, and a process
# that holds it with namespaces of its own (mounts, process ids, network), as a container would.
# Its processes cannot see this machine's, its network is its own (the cluster's hosts, the hub
# and the browser run inside it, beside a Debian 12 cluster of the same names and addresses on
# this machine), and the project is copied into it at this checkout's path, where the README's
# commands run unchanged.
#   debian13.sh up             make the root (once), start the holder, copy the checkout in
#   debian13.sh run CMD...     run CMD in it, in the checkout's copy, as root (its own network)
#   debian13.sh online CMD...  the same with this machine's network (installs: apt, PyPI, npm)
#   debian13.sh sync           copy the checkout in again (what changed)
#   debian13.sh down           `make stop` in it, then end every process it holds
#   debian13.sh remove         down, then delete the root
# Needs debootstrap and rsync (Debian packages: this script installs them when missing).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TOP=${PORTAL_DEBIAN13_DIR:-/var/lib/portal-debian13}
ROOT=$TOP/root
HOLDER=$TOP/holder.pid
NETNS=gpp-debian13  # the holder's network namespace, on this machine's /run/netns
MIRROR=${PORTAL_DEBIAN_MIRROR:-http://deb.debian.org/debian}

say() { printf '[debian13] %s\n' "$*"; }
die() { printf '[debian13] error: %s\n' "$*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root"

holder_pid() {  # the holder's pid, when it runs
    local pid
    pid=$(cat "$HOLDER" 2>/dev/null) || return 1
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && [ "$(readlink "/proc/$pid/root")" = "$ROOT" ]
}

make_root() {
    local missing=()
    for tool in debootstrap rsync; do command -v "$tool" >/dev/null || missing+=("$tool"); done
    if [ "${#missing[@]}" -gt 0 ]; then
        say "apt packages: ${missing[*]}"
        # With the package lists fetched first where this machine has none yet.
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null ||
            { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
                --no-install-recommends "${missing[@]}" >/dev/null; }
    fi
    [ -x "$ROOT/usr/bin/apt-get" ] && return
    # A folder without a system (files written into it before a root was made): no mounts can
    # be under it, since the holder runs only on a made root.
    [ -d "$ROOT" ] && ! holder_pid && rm -rf --one-file-system "$ROOT"
    say "Debian 13 root at $ROOT (debootstrap, about half a minute)"
    rm -rf --one-file-system "$ROOT.partial"
    mkdir -p "$TOP"
    debootstrap --variant=minbase trixie "$ROOT.partial" "$MIRROR" >"$TOP/debootstrap.log" 2>&1 ||
        die "debootstrap failed; its log: $TOP/debootstrap.log"
    cat >"$ROOT.partial/etc/apt/sources.list" <<EOF
deb $MIRROR trixie main
deb $MIRROR trixie-updates main
deb ${MIRROR%/debian}/debian-security trixie-security main
EOF
    # debootstrap leaves /etc/hosts empty; the cluster's script adds its hosts' names.
    printf '127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n' >"$ROOT.partial/etc/hosts"
    echo debian13 >"$ROOT.partial/etc/hostname"
    mv "$ROOT.partial" "$ROOT"
}

name_this_machine() {
    # The root shares this machine's host name (its UTS namespace): sudo and munged look it up.
    local name
    name=$(hostname)
    grep -qE "[[:space:]]$name([[:space:]]|\$)" "$ROOT/etc/hosts" || echo "127.0.1.1 $name" >>"$ROOT/etc/hosts"
}

start_holder() {
    holder_pid && return
    [ -e "/run/netns/$NETNS" ] || ip netns add "$NETNS"
    ip -n "$NETNS" link set lo up
    # The holder: pid 1 of a process-id namespace (every process of the root ends with it), in
    # a mount namespace of its own (the root's mounts stay out of this machine's table, and
    # go with it), chrooted into the root. `run` enters all of them with nsenter. As pid 1 it
    # adopts orphans: bash reaps them (a bare sleep would leave them as zombies).
    ip netns exec "$NETNS" unshare --pid --fork --mount --propagation private --kill-child \
        /bin/sh -c '
            root=$1
            # A mount point of its own: ip-netns makes "/" a slave mount, which needs one.
            mount --bind "$root" "$root"
            mount -t proc proc "$root/proc"
            mount --rbind /sys "$root/sys"
            mount --rbind /dev "$root/dev"
            mount -t tmpfs -o mode=0755 tmpfs "$root/run"
            mkdir -p "$root/tmp" && chmod 1777 "$root/tmp"
            cp /etc/resolv.conf "$root/etc/resolv.conf"
            exec chroot "$root" /bin/bash -c "trap exit TERM; while :; do sleep 600 & wait; done"
        ' holder "$ROOT" </dev/null >/dev/null 2>&1 &
    local unshare=$! pid
    for _ in $(seq 50); do
        pid=$(pgrep -P "$unshare" | head -1) || true
        if [ -n "$pid" ] && [ "$(readlink "/proc/$pid/root")" = "$ROOT" ]; then
            echo "$pid" >"$HOLDER"
            say "holder started (pid $pid, network namespace $NETNS)"
            return
        fi
        sleep 0.1
    done
    die "the holder did not start"
}

trust_local_cas() {
    # This machine's own certificate authorities (a site's TLS-inspecting proxy, its internal
    # registries) are the root's too: without them pip, npm and curl fail their TLS checks there.
    local cas=/usr/local/share/ca-certificates
    [ -d "$cas" ] || return 0
    mkdir -p "$ROOT$cas"
    rsync -a --delete "$cas/" "$ROOT$cas/"
    if [ -x "$ROOT/usr/sbin/update-ca-certificates" ]; then
        chroot "$ROOT" update-ca-certificates >/dev/null 2>&1 || say "update-ca-certificates failed"
    fi
}

sync_checkout() {  # the checkout's files, without what git ignores (builds stay the root's own)
    mkdir -p "$ROOT$REPO"
    rsync -a --delete --filter=':- .gitignore' --exclude=.git "$REPO/" "$ROOT$REPO/"
}

enter() {  # enter NETWORK CMD...: NETWORK is own (the holder's) or online (this machine's)
    local network=$1
    shift
    holder_pid || die "not running: debian13.sh up"
    local flags=(--target "$(cat "$HOLDER")" --pid --mount --root --wd)
    [ "$network" = own ] && flags+=(--net)
    # A clean environment, as a login would give; CI and the PORTAL_ settings pass through.
    local keep=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
        LANG=C.UTF-8 TERM="${TERM:-dumb}")
    [ -n "${CI:-}" ] && keep+=(CI="$CI")
    # And where this machine says its CA files and proxies are (the root trusts the same CAs).
    local passed='PORTAL_[A-Z0-9_]+|[a-z]+_proxy|[A-Z]+_PROXY|PIP_CERT|PIP_DEFAULT_TIMEOUT|SSL_CERT_(FILE|DIR)|REQUESTS_CA_BUNDLE|CURL_CA_BUNDLE|NODE_EXTRA_CA_CERTS'
    while IFS= read -r var; do keep+=("$var"); done < <(env | grep -E "^($passed)=" || true)
    nsenter "${flags[@]}" -- /usr/bin/env -i "${keep[@]}" /bin/bash -c 'cd "$1" && shift && exec "$@"' \
        enter "$REPO" "$@"
}

stop_holder() {
    holder_pid || { rm -f "$HOLDER"; return 0; }
    enter own make --no-print-directory stop || say "make stop failed; ending its processes"
    kill "$(cat "$HOLDER")" 2>/dev/null || true
    for _ in $(seq 50); do holder_pid || break; sleep 0.1; done
    rm -f "$HOLDER"
    [ -e "/run/netns/$NETNS" ] && ip netns delete "$NETNS"
    say "stopped"
}

case "${1:-}" in
    up)
        make_root
        name_this_machine
        start_holder
        trust_local_cas
        sync_checkout
        ;;
    run) shift; enter own "$@" ;;
    online) shift; enter online "$@" ;;
    sync) sync_checkout ;;
    down) stop_holder ;;
    remove)
        stop_holder
        rm -rf --one-file-system "$ROOT" "$ROOT.partial"
        say "removed $ROOT"
        ;;
    *) sed -n '2,16p' "$0" >&2; exit 2 ;;
esac
