#!/usr/bin/env bash
# The local cluster's hosts, as a cluster has them: each part on a host of its own, with its own
# address and host name, joined by one network. Each host is a Linux network namespace (its own
# interfaces, address and ports) with a UTS namespace (its own host name), on a bridge; the
# login host, where the hub, the proxy, the portal, the browser and the tests run, is this
# machine's own namespace, on the bridge's address. Every host sees the one filesystem, as a
# cluster's nodes see its shared /home and software areas (NFS). Names resolve through lines of
# /etc/hosts that this script marks as its own. The host names are docker-compose.yml's.
#
#   hosts.sh up              make what is missing (safe to run again)
#   hosts.sh down            end every process on the hosts; remove the namespaces, the links
#                            and the /etc/hosts lines this script made
#   hosts.sh drop HOST...    the same for these hosts only (nodes `cluster.sh grow` added)
#   hosts.sh on HOST CMD...  run CMD on HOST (its network and its host name)
#   hosts.sh cut HOST        take HOST off the network (its link down); `mend HOST` puts it back
#   hosts.sh cut HOST OTHER  drop, silently, what HOST sends to OTHER: the two no longer reach
#                            each other, every other path stays; `mend HOST OTHER` undoes it
#   hosts.sh addr HOST       HOST's address
#   hosts.sh status          one line per host
set -euo pipefail

# A /24 used only by the namespaces this script makes (PORTAL_CLUSTER_NET, its first 3 bytes).
NET=${PORTAL_CLUSTER_NET:-10.213.0}
BRIDGE=gpp-br0
# Persistent UTS namespaces (host names) live here, one file per host, as ip-netns keeps
# network namespaces in /run/netns.
UTS_DIR=/run/gpuportal-hosts
MARK="# gpuportal local cluster (deploy/local/hosts.sh)"
# host -> last byte of its address; `hub` is the login host (this machine's namespace).
declare -A BYTE=([hub]=1 [slurmctld]=2 [ldap]=3 [sso]=4 [gpu01]=11 [gpu02]=12 [mig01]=13)
# sso: the identity provider (deploy/local/sso.sh), a host of its own as at a site.
HOSTS=(slurmctld ldap sso gpu01 gpu02 mig01)  # the ones with a namespace of their own
# Full names besides the short ones: the provider's web address is a site's kind of name (its
# cookies' Domain must have a dot in it).
declare -A FULL_NAME=([sso]=sso.example.org)
# Nodes added by `cluster.sh grow` (the tests' own, a benchmark's): one line each,
# "NAME PARTITION GPUS BYTE PORT [KIND]", kept by cluster.sh.
EXTRA_NODES=${PORTAL_STATE:-/var/lib/portal-local}/extra-nodes.conf
if [ -f "$EXTRA_NODES" ]; then
    while read -r name _ _ byte _; do
        [ -n "$name" ] || continue
        BYTE[$name]=$byte
        HOSTS+=("$name")
    done <"$EXTRA_NODES"
fi

say() { printf '[hosts] %s\n' "$*"; }
die() { printf '[hosts] error: %s\n' "$*" >&2; exit 1; }

known() { [ -n "${BYTE[$1]:-}" ] || die "unknown host $1 (hosts: hub ${HOSTS[*]})"; }
addr() { known "$1"; echo "$NET.${BYTE[$1]}"; }
netns() { echo "gpp-$1"; }
link() { echo "gpp-$1"; }  # the bridge's end of the host's veth pair

has_netns() { [ -e "/run/netns/$(netns "$1")" ]; }

make_host() {
    local host=$1 ns
    ns=$(netns "$host")
    has_netns "$host" || ip netns add "$ns"
    if ! ip link show "$(link "$host")" >/dev/null 2>&1; then
        ip link add "$(link "$host")" type veth peer name eth0 netns "$ns"
        ip link set "$(link "$host")" master "$BRIDGE"
    fi
    ip link set "$(link "$host")" up
    ip -n "$ns" link set lo up
    ip -n "$ns" addr replace "$(addr "$host")/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" route replace default via "$(addr hub)" dev eth0
    # The machine's name servers are not the cluster's (it has none: names are in /etc/hosts):
    # a query from a host fails at once instead of leaving the cluster's network and timing out.
    local server
    for server in $(awk '$1 == "nameserver" { print $2 }' /etc/resolv.conf 2>/dev/null); do
        case $server in
        127.* | *:* | "$NET".*) ;;
        *) ip -n "$ns" route replace unreachable "$server/32" ;;
        esac
    done
    install -d -m 0755 "$UTS_DIR"
    if ! mountpoint -q "$UTS_DIR/$host"; then
        touch "$UTS_DIR/$host"
        unshare --uts="$UTS_DIR/$host" hostname "$host"
    fi
}

write_hosts_file() {  # our lines replaced, everyone else's kept; written in place (it may be a mount)
    local kept
    # Also drops the `127.0.0.1 gpu01` lines of the one-host layout this replaced.
    kept=$(grep -vF "$MARK" /etc/hosts | grep -vE '^127\.0\.0\.1 gpu0[0-9]+$' || true)
    {
        printf '%s\n' "$kept"
        if [ "${1:-}" = with-ours ]; then
            for host in hub "${HOSTS[@]}"; do
                printf '%s %s%s %s\n' "$(addr "$host")" "$host" "${FULL_NAME[$host]:+ ${FULL_NAME[$host]}}" "$MARK"
            done
            # The same addresses as a dual-stack socket sees its IPv4 peers (::ffff:a.b.c.d), so
            # that a reverse lookup of one is answered here: PyTorch's rendezvous store asks for
            # each peer's name, and glibc's files backend does not map these to IPv4 (it asked
            # the DNS, which the hosts cannot reach: 10 s per peer, and a c10d warning). Under a
            # name of their own: with the host's name on them, a lookup of `hub` gave both
            # addresses, and the hub, binding to each, failed on the mapped one.
            for host in hub "${HOSTS[@]}"; do
                printf '::ffff:%s %s.ipv4-mapped %s\n' "$(addr "$host")" "$host" "$MARK"
            done
        fi
    } >/etc/hosts.gpuportal.tmp
    cat /etc/hosts.gpuportal.tmp >/etc/hosts
    rm -f /etc/hosts.gpuportal.tmp
}

up() {
    if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
        ip link add "$BRIDGE" type bridge
    fi
    ip addr replace "$(addr hub)/24" dev "$BRIDGE"
    ip link set "$BRIDGE" up
    for host in "${HOSTS[@]}"; do make_host "$host"; done
    write_hosts_file with-ours
    say "hosts: hub $(addr hub) (this machine), $(for h in "${HOSTS[@]}"; do printf '%s %s, ' "$h" "$(addr "$h")"; done | sed 's/, $//')"
}

end_processes() {  # everything still running on the host: daemons, jobs, users' processes
    local ns pids
    ns=$(netns "$1")
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [ -n "$pids" ] || return 0
    kill $pids 2>/dev/null || true
    for _ in $(seq 50); do
        [ -z "$(ip netns pids "$ns" 2>/dev/null)" ] && return 0
        sleep 0.1
    done
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [ -z "$pids" ] || kill -9 $pids 2>/dev/null || true
}

remove_host() {
    local host=$1
    if has_netns "$host"; then
        end_processes "$host"
        ip netns del "$(netns "$host")"
    fi
    ip link del "$(link "$host")" 2>/dev/null || true
    if mountpoint -q "$UTS_DIR/$host" 2>/dev/null; then umount "$UTS_DIR/$host"; fi
    rm -f "$UTS_DIR/$host"
}

drop() {
    local host kept=()
    for host in "$@"; do known "$host"; remove_host "$host"; done
    for host in "${HOSTS[@]}"; do
        [[ " $* " == *" $host "* ]] || kept+=("$host")
    done
    HOSTS=("${kept[@]}")
    write_hosts_file with-ours
    say "removed $*"
}

down() {
    for host in "${HOSTS[@]}"; do remove_host "$host"; done
    rmdir "$UTS_DIR" 2>/dev/null || true
    ip link del "$BRIDGE" 2>/dev/null || true
    write_hosts_file
    say "removed the hosts, their links and their /etc/hosts lines"
}

on() {
    local host=$1
    shift
    [ "$host" = hub ] && exec "$@"
    known "$host"
    has_netns "$host" || die "host $host is not up (hosts.sh up)"
    exec nsenter --net="/run/netns/$(netns "$host")" --uts="$UTS_DIR/$host" -- "$@"
}

# A blackhole route on HOST towards OTHER: HOST's packets to OTHER vanish (replies too), so a
# connection either way hangs as over a broken network, rather than being refused.
cut() {
    local host=$1 other=$2
    known "$host"
    [ "$host" != hub ] || die "cut the other host (hub is this machine's own namespace)"
    if [ -z "$other" ]; then
        ip link set "$(link "$host")" down
        say "$host is off the network"
    else
        ip -n "$(netns "$host")" route replace blackhole "$(addr "$other")/32"
        say "$host and $other no longer reach each other"
    fi
}

mend() {
    local host=$1 other=$2
    known "$host"
    if [ -z "$other" ]; then
        ip link set "$(link "$host")" up
        say "$host is back on the network"
    else
        ip -n "$(netns "$host")" route del blackhole "$(addr "$other")/32" 2>/dev/null || true
        say "$host and $other reach each other again"
    fi
}

status() {
    for host in hub "${HOSTS[@]}"; do
        if [ "$host" = hub ]; then
            state=$(ip -br link show "$BRIDGE" 2>/dev/null | awk '{print $2}')
        elif has_netns "$host"; then
            state=$(ip -br link show "$(link "$host")" 2>/dev/null | awk '{print $2}')
        else
            state=""
        fi
        echo "host $host $(addr "$host"): ${state:-absent}"
    done
}

[ "$(id -u)" = 0 ] || die "run as root (it makes network namespaces)"
case "${1:-}" in
    up) up ;;
    down) down ;;
    drop) [ $# -ge 2 ] || die "usage: hosts.sh drop HOST..."; shift; drop "$@" ;;
    on) [ $# -ge 3 ] || die "usage: hosts.sh on HOST CMD..."; shift; on "$@" ;;
    cut) cut "${2:?host}" "${3:-}" ;;
    mend) mend "${2:?host}" "${3:-}" ;;
    addr) addr "${2:?host}" ;;
    status) status ;;
    *) die "usage: hosts.sh up|down|drop HOST...|on HOST CMD...|cut HOST [OTHER]|mend HOST [OTHER]|addr HOST|status" ;;
esac
