#!/usr/bin/env bash
# A Debian machine inside this one, made from nothing by debootstrap, for trying and testing the
# product on another Debian, or on a fresh one, without touching this machine: a root, and a
# process that holds it with namespaces of its own (mounts, process ids, network), as a
# container would. Its processes cannot see this machine's, its network is its own (the
# cluster's hosts, the hub and the browser run inside it, beside a cluster of the same names
# and addresses on this machine), and the project is copied into it at this checkout's path,
# where the README's commands run unchanged. NAME says which:
#   fresh12    Debian 12 (bookworm) and
#   fresh13    Debian 13 (trixie, Slurm 24.11), for make test's fresh-machine lanes
#              (tests/fresh.sh) and its Debian 13 part (tests/debian13.sh): made anew each
#              run; their own network reaches the package registries through a user-mode
#              uplink (slirp4netns, as rootless podman's), so that `make demo` runs there as
#              written, cluster and all, and nothing of it touches this machine's network
#
#   debian_root.sh NAME up             make the root (once), start the holder, copy the checkout
#   debian_root.sh NAME new            remove the root, then up: a root from nothing
#   debian_root.sh NAME run CMD...     run CMD in it, in the checkout's copy, as root (its network)
#   debian_root.sh NAME online CMD...  the same with this machine's network (installs)
#   debian_root.sh NAME sync           copy the checkout in again (what changed)
#   debian_root.sh NAME uplink-off     end the uplink (tests after the installs reach nothing)
#   debian_root.sh NAME down           `make stop` in it, then end every process it holds
#   debian_root.sh NAME remove         down, then delete the root
# The fresh roots' downloads (apt's archives, pip's and npm's caches) are kept in
# /var/cache/gpuportal-roots/NAME between runs, as a site's package mirror would be: the
# registries' files only; nothing installed is carried over (PORTAL_ROOT_CACHE=0: none).
# Needs debootstrap, rsync and slirp4netns (Debian packages: installed when missing).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
NAME=${1:-}
shift || true
case "$NAME" in
    fresh12) SUITE=bookworm TOP=${PORTAL_FRESH12_DIR:-/var/lib/portal-fresh12} ;;
    fresh13) SUITE=trixie TOP=${PORTAL_FRESH13_DIR:-/var/lib/portal-fresh13} ;;
    *) sed -n '2,29p' "$0" >&2; exit 2 ;;
esac
ROOT=$TOP/root
HOLDER=$TOP/holder.pid
SLIRP=$TOP/uplink.pid
NETNS=gpp-$NAME  # the holder's network namespace, on this machine's /run/netns
MIRROR=${PORTAL_DEBIAN_MIRROR:-http://deb.debian.org/debian}
CACHE=/var/cache/gpuportal-roots/$NAME
[ "${PORTAL_ROOT_CACHE:-1}" = 1 ] || CACHE=""

say() { printf '[%s] %s\n' "$NAME" "$*"; }
die() { printf '[%s] error: %s\n' "$NAME" "$*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root"

holder_pid() {  # the holder's pid, when it runs
    local pid
    pid=$(cat "$HOLDER" 2>/dev/null) || return 1
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && [ "$(readlink "/proc/$pid/root")" = "$ROOT" ]
}

make_root() {
    local missing=()
    for tool in debootstrap rsync slirp4netns; do command -v "$tool" >/dev/null || missing+=("$tool"); done
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
    say "Debian $SUITE root at $ROOT (debootstrap, about half a minute)"
    rm -rf --one-file-system "$ROOT.partial"
    mkdir -p "$TOP"
    debootstrap --variant=minbase "$SUITE" "$ROOT.partial" "$MIRROR" >"$TOP/debootstrap.log" 2>&1 ||
        die "debootstrap failed; its log: $TOP/debootstrap.log"
    cat >"$ROOT.partial/etc/apt/sources.list" <<EOF
deb $MIRROR $SUITE main
deb $MIRROR $SUITE-updates main
deb ${MIRROR%/debian}/debian-security $SUITE-security main
EOF
    # debootstrap leaves /etc/hosts empty; the cluster's script adds its hosts' names.
    printf '127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n' >"$ROOT.partial/etc/hosts"
    echo "$NAME" >"$ROOT.partial/etc/hostname"
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
    # adopts orphans: bash reaps them (a bare sleep would leave them as zombies). The root's
    # downloads are kept outside it and bound into it.
    local caches=""
    if [ -n "$CACHE" ]; then
        mkdir -p "$CACHE/apt" "$CACHE/pip" "$CACHE/npm"
        caches=$CACHE
    fi
    # nsenter, not ip-netns exec: that one mounts a /sys of its own, without this machine's
    # cgroup filesystems, and podman's runc (the demo's session image) needs them.
    nsenter --net="/run/netns/$NETNS" unshare --pid --fork --mount --propagation private --kill-child \
        /bin/sh -c '
            root=$1 caches=$2
            # A mount point of its own, for the chroot.
            mount --bind "$root" "$root"
            mount -t proc proc "$root/proc"
            # The network namespace'"'"'s own /sys (its interfaces), with the cgroup tree.
            mount -t sysfs sysfs "$root/sys"
            mount --rbind /sys/fs/cgroup "$root/sys/fs/cgroup"
            mount --rbind /dev "$root/dev"
            mount -t tmpfs -o mode=0755 tmpfs "$root/run"
            mkdir -p "$root/tmp" && chmod 1777 "$root/tmp"
            if [ -n "$caches" ]; then
                mkdir -p "$root/var/cache/apt/archives" "$root/root/.cache/pip" "$root/root/.npm"
                mount --bind "$caches/apt" "$root/var/cache/apt/archives"
                mount --bind "$caches/pip" "$root/root/.cache/pip"
                mount --bind "$caches/npm" "$root/root/.npm"
            fi
            # Names are asked of the uplink'"'"'s resolver, which asks this machine.
            echo "nameserver 10.0.2.3" >"$root/etc/resolv.conf"
            exec chroot "$root" /bin/bash -c "trap exit TERM; while :; do sleep 600 & wait; done"
        ' holder "$ROOT" "$caches" </dev/null >/dev/null 2>&1 &
    local unshare=$! pid
    for _ in $(seq 50); do
        pid=$(pgrep -P "$unshare" | head -1) || true
        if [ -n "$pid" ] && [ "$(readlink "/proc/$pid/root")" = "$ROOT" ]; then
            echo "$pid" >"$HOLDER"
            say "holder started (pid $pid, network namespace $NETNS)"
            start_uplink
            return
        fi
        sleep 0.1
    done
    die "the holder did not start"
}

uplink_pid() { local pid; pid=$(cat "$SLIRP" 2>/dev/null) && [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"; }

start_uplink() {
    # slirp4netns: a tap device in the root's network namespace, its traffic sent on by this
    # process as this machine's own connections (no bridge, route or firewall rule here). The
    # root gets 10.0.2.100 behind 10.0.2.2, names from 10.0.2.3; this machine's loopback stays
    # out of its reach.
    uplink_pid >/dev/null && return
    setsid slirp4netns --configure --mtu=65520 --disable-host-loopback \
        --netns-type=path "/run/netns/$NETNS" tap0 </dev/null >"$TOP/uplink.log" 2>&1 &
    echo $! >"$SLIRP"
    for _ in $(seq 50); do
        ip -n "$NETNS" -4 addr show tap0 2>/dev/null | grep -q 10.0.2.100 && { say "uplink up (slirp4netns)"; return; }
        sleep 0.1
    done
    die "the uplink did not start ($TOP/uplink.log)"
}

stop_uplink() {
    local pid
    pid=$(uplink_pid) || { rm -f "$SLIRP"; return 0; }
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    rm -f "$SLIRP"
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
    # With its .git, as a clone has it (the session image is built from the files git lists).
    rsync -a --delete --filter=':- .gitignore' "$REPO/" "$ROOT$REPO/"
}

enter() {  # enter NETWORK CMD...: NETWORK is own (the holder's) or online (this machine's)
    local network=$1
    shift
    holder_pid || die "not running: debian_root.sh $NAME up"
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
    stop_uplink
    kill "$(cat "$HOLDER")" 2>/dev/null || true
    for _ in $(seq 50); do holder_pid || break; sleep 0.1; done
    rm -f "$HOLDER"
    [ -e "/run/netns/$NETNS" ] && ip netns delete "$NETNS"
    say "stopped"
}

remove_root() {
    stop_holder
    rm -rf --one-file-system "$ROOT" "$ROOT.partial"
    say "removed $ROOT"
}

up() {
    make_root
    name_this_machine
    start_holder
    trust_local_cas
    sync_checkout
}

case "${1:-}" in
    up) up ;;
    new) remove_root && up ;;
    run) shift; enter own "$@" ;;
    online) shift; enter online "$@" ;;
    sync) sync_checkout ;;
    uplink-off) stop_uplink ;;
    down) stop_holder ;;
    remove) remove_root ;;
    *) sed -n '2,31p' "$0" >&2; exit 2 ;;
esac
