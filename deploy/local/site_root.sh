#!/usr/bin/env bash
# Hosts that stand in for a site's own, for trying the Ansible role (deploy/ansible) as a site
# runs it: Debian 12 roots made from nothing by debootstrap, each booting systemd as its first
# process (in namespaces of its own: processes, mounts, cgroups, host name) on the local
# cluster's network (a veth on its bridge), reached by ssh as a site's hosts are. Beside it, a
# user-mode uplink (slirp4netns) reaches the package registries, as a site's mirror would be.
# Their /home is one folder of this machine (STATE/site/home), as a site's hosts share theirs
# over NFS: the hub makes a user's log folder there, and the job on a node writes into it.
#   site-login   10.213.0.21   the site's login host: the role puts the hub there
#   site-gpu01   10.213.0.22   GPU nodes: the role puts the session environment there
#   site-gpu02   10.213.0.23
#
#   site_root.sh NAME up            make the root (once) and boot it; its sshd takes the key
#                                   STATE/site/ssh/id_ed25519.pub
#   site_root.sh NAME new           remove, then up: a root from nothing
#   site_root.sh NAME join [USER...]  make it a host of the local cluster, as a site's host is
#                                   one before the role runs: munge with the cluster's key, the
#                                   Slurm client (site-login) or a slurmd that joins as a
#                                   dynamic node with 4 fake GPUs, in the partition `site`
#                                   (the nodes), the cluster's users (users.tsv's and USERs)
#   site_root.sh NAME rejoin        after slurmctld restarted: the node registered and in `site`
#   site_root.sh NAME run CMD...    run CMD in it, as root
#   site_root.sh NAME down          power it off (systemd stops its units) and end the rest
#   site_root.sh NAME remove        down, then delete the root
#   site_root.sh NAME addr          its address
# The downloads (debootstrap's, apt's, pip's, npm's) are kept in /var/cache/gpuportal-roots/site.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
NAME=${1:-}
shift || true
case "$NAME" in
    site-login) BYTE=21 ;;
    site-gpu01) BYTE=22 ;;
    site-gpu02) BYTE=23 ;;
    *) sed -n '2,26p' "$0" >&2; exit 2 ;;
esac
STATE=${PORTAL_STATE:-/var/lib/portal-local}
NET=${PORTAL_CLUSTER_NET:-10.213.0}
ADDR=$NET.$BYTE
TOP=/var/lib/portal-$NAME
ROOT=$TOP/root
BOOT=$TOP/systemd.pid  # systemd's pid, as this machine sees it
SLIRP=$TOP/uplink.pid
NETNS=gpp-$NAME
LINK=gpp-$NAME
BRIDGE=gpp-br0
KEY=$STATE/site/ssh/id_ed25519
HOMES=$STATE/site/home
CACHE=/var/cache/gpuportal-roots/site
CGROUP=gpuportal-$NAME  # its cgroups, under each of this machine's hierarchies
MIRROR=${PORTAL_DEBIAN_MIRROR:-http://deb.debian.org/debian}
PACKAGES=systemd,systemd-sysv,dbus,openssh-server,python3,iproute2,ca-certificates,sudo,procps

say() { printf '[%s] %s\n' "$NAME" "$*"; }
die() { printf '[%s] error: %s\n' "$NAME" "$*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root"

booted() {
    local pid
    pid=$(cat "$BOOT" 2>/dev/null) && [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null &&
        [ "$(readlink "/proc/$pid/root")" = "$ROOT" ]
}

make_root() {
    [ -x "$ROOT/lib/systemd/systemd" ] && return
    for tool in debootstrap slirp4netns ssh-keygen; do
        command -v "$tool" >/dev/null || die "needs $tool (deploy/local/install.sh --test installs it)"
    done
    say "Debian bookworm root with systemd at $ROOT (debootstrap)"
    rm -rf --one-file-system "$ROOT" "$ROOT.partial"
    mkdir -p "$TOP" "$CACHE/debootstrap"
    debootstrap --variant=minbase --include="$PACKAGES" --cache-dir="$CACHE/debootstrap" \
        bookworm "$ROOT.partial" "$MIRROR" >"$TOP/debootstrap.log" 2>&1 ||
        die "debootstrap failed; its log: $TOP/debootstrap.log"
    cat >"$ROOT.partial/etc/apt/sources.list" <<EOF
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb ${MIRROR%/debian}/debian-security bookworm-security main
EOF
    echo "$NAME" >"$ROOT.partial/etc/hostname"
    # A new root has new host keys: the controller forgets the old ones.
    [ -f "$(dirname "$KEY")/known_hosts" ] && ssh-keygen -q -R "$ADDR" -f "$(dirname "$KEY")/known_hosts" >/dev/null 2>&1

    # What a site's host has and a container does not need: no console to log in on.
    ln -sf /dev/null "$ROOT.partial/etc/systemd/system/getty@.service"
    ln -sf /dev/null "$ROOT.partial/etc/systemd/system/console-getty.service"
    mv "$ROOT.partial" "$ROOT"
}

write_files() {  # the names of the cluster's hosts, names from the uplink, the controller's key
    { printf '127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n'
      grep -F "# gpuportal local cluster" /etc/hosts | grep -v ipv4-mapped | sed 's/ *#.*//'
      printf '%s.21 site-login\n%s.22 site-gpu01\n%s.23 site-gpu02\n' "$NET" "$NET" "$NET"
    } >"$ROOT/etc/hosts"
    echo "nameserver 10.0.2.3" >"$ROOT/etc/resolv.conf"
    # This machine's certificate authorities (a TLS-inspecting proxy's, the demo's) are the
    # site's: its hosts trust them, and pip and npm are told to use the system's store, as a
    # site behind such a proxy configures its hosts.
    if [ -d /usr/local/share/ca-certificates ]; then
        install -d "$ROOT/usr/local/share/ca-certificates"
        cp -a /usr/local/share/ca-certificates/. "$ROOT/usr/local/share/ca-certificates/"
        chroot "$ROOT" update-ca-certificates >/dev/null 2>&1 || say "update-ca-certificates failed"
    fi
    printf '[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n' >"$ROOT/etc/pip.conf"
    printf 'cafile=/etc/ssl/certs/ca-certificates.crt\n' >"$ROOT/etc/npmrc"
    if [ ! -s "$KEY" ]; then
        install -d -m 0700 "$(dirname "$KEY")"
        ssh-keygen -q -t ed25519 -N "" -C "gpuportal site roots" -f "$KEY"
    fi
    install -d -m 0700 "$ROOT/root/.ssh"
    install -m 0600 "$KEY.pub" "$ROOT/root/.ssh/authorized_keys"
}

make_network() {
    ip link show "$BRIDGE" >/dev/null 2>&1 ||
        die "the local cluster's network is not up (deploy/local/cluster.sh start makes it)"
    [ -e "/run/netns/$NETNS" ] || ip netns add "$NETNS"
    if ! ip link show "$LINK" >/dev/null 2>&1; then
        ip link add "$LINK" type veth peer name eth0 netns "$NETNS"
        ip link set "$LINK" master "$BRIDGE"
    fi
    ip link set "$LINK" up
    ip -n "$NETNS" link set lo up
    ip -n "$NETNS" addr replace "$ADDR/24" dev eth0
    ip -n "$NETNS" link set eth0 up
    # A root booted again has a new link: what this machine kept of the old one's address goes.
    ip neigh flush to "$ADDR" 2>/dev/null || true
}

uplink_pid() {  # the uplink's pid, if it is still this root's (a pid file outlives its process)
    local pid
    pid=$(cat "$SLIRP" 2>/dev/null) || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "/run/netns/$NETNS " && echo "$pid"
}

start_uplink() {  # the registries through slirp4netns: its default route, the cluster's /24 on eth0
    uplink_pid >/dev/null && return
    setsid slirp4netns --configure --mtu=65520 --disable-host-loopback \
        --netns-type=path "/run/netns/$NETNS" tap0 </dev/null >"$TOP/uplink.log" 2>&1 &
    echo $! >"$SLIRP"
    for _ in $(seq 300); do
        ip -n "$NETNS" -4 addr show tap0 2>/dev/null | grep -q 10.0.2.100 && return
        sleep 0.1
    done
    die "the uplink did not start ($TOP/uplink.log)"
}

# The root's /dev/console: a terminal (systemd takes nothing else for one) whose other end a
# process of this machine copies into boot.log, as systemd-nspawn gives its containers. What
# systemd says there, a fatal error at its start above all, is in the log, not on this
# machine's console (where it went before). The reader holds both ends: the terminal never
# hangs up between systemd closing it and opening it again, and it outlives the root's
# processes (a reader among them would die with them, its unread lines with it).
CONSOLE=$TOP/console  # the terminal's path, and the reader's pid in $CONSOLE.pid
console_reader() {
    local pid
    pid=$(cat "$CONSOLE.pid" 2>/dev/null) && kill -0 "$pid" 2>/dev/null && return
    rm -f "$CONSOLE"
    setsid python3 -c '
import os, sys
master, follower = os.openpty()
with open(sys.argv[1] + ".tmp", "w") as path:
    path.write(os.ttyname(follower))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
log = os.open(sys.argv[2], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
while True:
    os.write(log, os.read(master, 4096).replace(b"\r\n", b"\n"))
' "$CONSOLE" "$TOP/boot.log" </dev/null >/dev/null 2>&1 &
    echo $! >"$CONSOLE.pid"
    for _ in $(seq 50); do [ -s "$CONSOLE" ] && return; sleep 0.1; done
    die "the console reader did not start"
}

# systemd and its journald, logind and dbus take inotify instances, counted with those of every
# other process of root here (the other roots, the tests' Chromiums and podman) against one
# limit, 128 by the kernel's default. When none is left, systemd ends at its start ("Failed to
# create control group inotify object: Too many open files", exit 255): seen in make test with
# three roots beside the lanes, and made again here with the limit at 0. Raised as container
# engines ask their hosts to (containerd's, LXD's and kind's docs).
INOTIFY_INSTANCES=1024
raise_inotify_limit() {
    local now
    now=$(cat /proc/sys/fs/inotify/max_user_instances)
    [ "$now" -ge "$INOTIFY_INSTANCES" ] && return
    sysctl -q -w fs.inotify.max_user_instances="$INOTIFY_INSTANCES"
    say "fs.inotify.max_user_instances raised from $now to $INOTIFY_INSTANCES (systemd in each root takes some)"
}
inotify_holders() {  # root's inotify instances by program, the most first: "12 systemd, 2 chromium"
    local fd
    for fd in /proc/[0-9]*/fd/*; do
        [ "$(readlink "$fd" 2>/dev/null)" = "anon_inode:inotify" ] || continue
        fd=${fd%/fd/*}
        [ "$(stat -c %u "$fd" 2>/dev/null)" = 0 ] && cat "$fd/comm" 2>/dev/null
    done | sort | uniq -c | sort -rn | awk '{printf "%s%s %s", (NR > 1 ? ", " : ""), $1, $2}'
}

start_systemd() {  # systemd as pid 1 of the root's namespaces; its pid in BOOT
    local caches=""
    console_reader
    # apt's archives a root's own (apt locks them); pip's and npm's caches shared.
    mkdir -p "$CACHE/apt-$NAME" "$CACHE/pip" "$CACHE/npm" && caches=$CACHE
    install -d -m 0755 "$HOMES"
    # systemd runs in cgroups of its own: a folder under each of this machine's hierarchies, made
    # the root of its cgroup namespace (cgroup v1 here, with a name=systemd hierarchy).
    local hierarchies
    hierarchies=$(awk '$3 == "cgroup" {print $2}' /proc/mounts)
    for dir in $hierarchies; do
        mkdir -p "$dir/$CGROUP"
        # A new cpuset takes no process before it has CPUs and memory nodes (ENOSPC): its parent's.
        if [ -f "$dir/cpuset.cpus" ]; then
            cat "$dir/cpuset.cpus" >"$dir/$CGROUP/cpuset.cpus"
            cat "$dir/cpuset.mems" >"$dir/$CGROUP/cpuset.mems"
        fi
    done
    setsid bash -c '
        for dir in $1; do echo $$ >"$dir/$2/cgroup.procs"; done
        exec nsenter --net="/run/netns/$3" unshare --pid --fork --mount --cgroup --uts \
            --propagation private --kill-child /bin/sh -c "$4" boot "$5" "$6" "$7" "$8" "$9"
    ' boot "$hierarchies" "$CGROUP" "$NETNS" '
        root=$1 name=$2 caches=$3 homes=$4 console=$5
        # This script is one argument in single quotes: a quote mark in it (in a comment too)
        # ends it early, and the rest runs on this machine, hostname included.
        hostname "$name"
        mount --bind "$root" "$root"
        mount -t proc proc "$root/proc"
        mount -t sysfs sysfs "$root/sys"
        mount -t tmpfs -o mode=0755 tmpfs "$root/sys/fs/cgroup"
        for line in $(awk "\$3 == \"cgroup\" {print \$2 \":\" \$4}" /proc/mounts); do
            sub=$(basename "${line%%:*}")
            opts=$(echo "${line#*:}" | tr , "\n" | grep -vE "^(rw|relatime)$" | paste -sd,)
            case $opts in name=*) opts=none,$opts ;; esac
            mkdir -p "$root/sys/fs/cgroup/$sub"
            mount -t cgroup -o "$opts" cgroup "$root/sys/fs/cgroup/$sub"
        done
        mount --rbind /dev "$root/dev"
        mount -t tmpfs -o mode=0755 tmpfs "$root/run"
        mkdir -p "$root/var/cache/apt/archives" "$root/root/.cache/pip" "$root/root/.npm"
        mount --bind "$caches/apt-$name" "$root/var/cache/apt/archives"
        mount --bind "$caches/pip" "$root/root/.cache/pip"
        mount --bind "$caches/npm" "$root/root/.npm"
        mount --bind "$homes" "$root/home"
        mount --bind "$console" "$root/dev/console"
        exec chroot "$root" /usr/bin/env -i container=other /lib/systemd/systemd --log-target=console
    ' "$ROOT" "$NAME" "$caches" "$HOMES" "$(cat "$CONSOLE")" </dev/null >>"$TOP/boot.log" 2>&1 &
    local starter=$! pid=""
    # Generous waits: beside make test's lanes, at the lowest CPU and disk priority, a boot has
    # taken over 10 s to reach systemd.
    for _ in $(seq 600); do
        pid=$(pgrep -f '^/lib/systemd/systemd --log-target=console$' | while read -r p; do
            [ "$(readlink "/proc/$p/root")" = "$ROOT" ] && echo "$p"; done | head -1) || true
        [ -n "$pid" ] && break
        kill -0 "$starter" 2>/dev/null || break
        sleep 0.1
    done
    if [ -z "$pid" ]; then
        local rc=running
        kill -0 "$starter" 2>/dev/null || { wait "$starter"; rc="exit $?"; } || true
        kill "$starter" 2>/dev/null || true
        echo "[$(date +%T)] systemd did not start ($rc)" >>"$TOP/boot.log"
        return 1
    fi
    echo "$pid" >"$BOOT"
}

boot() {
    booted && return
    : >"$TOP/boot.log"
    raise_inotify_limit
    start_systemd ||
        die "systemd did not start; $TOP/boot.log ends: $(tail -5 "$TOP/boot.log" | tr -d '\r' | tr '\n' ' ')" \
            "(inotify instances of root: $(inotify_holders); limit $(cat /proc/sys/fs/inotify/max_user_instances))"
    local pid state=""
    pid=$(cat "$BOOT")
    for _ in $(seq 900); do
        state=$(enter systemctl is-system-running 2>/dev/null) || true
        case "$state" in running | degraded) break ;; esac
        sleep 0.2
    done
    say "booted (systemd pid $pid, $state) at $ADDR; ssh root@$ADDR -i $KEY"
}

join() {
    # The nodes run slurmd, and the client commands too (jobs run srun there).
    local slurm=slurm-client
    [ "$NAME" = site-login ] || slurm="slurmd slurm-client"
    enter bash -c "DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends munge $slurm" \
        >"$TOP/join.log" 2>&1 || die "installing munge and $slurm failed ($TOP/join.log)"
    install -m 0400 /etc/munge/munge.key "$ROOT/etc/munge/munge.key"
    enter chown munge:munge /etc/munge/munge.key
    enter systemctl restart munge
    # The cluster's configuration (not slurmdbd's, whose file holds its database password), and
    # the folders it names.
    install -d "$ROOT/etc/slurm"
    for file in slurm.conf cgroup.conf plugstack.conf; do
        [ -f "/etc/slurm/$file" ] && install -m 0644 "/etc/slurm/$file" "$ROOT/etc/slurm/$file"
    done
    install -d "$ROOT$STATE/slurm/spool" "$ROOT$STATE/log" "$ROOT$STATE/run"
    # The cluster's users and groups, with this machine's numbers (a site's sssd gives them).
    local login uid gid group
    for login in $(grep -v '^#' "$HERE/users.tsv" | cut -f1) "$@"; do
        IFS=: read -r _ _ uid gid _ <<<"$(getent passwd "$login")" || die "no user $login here"
        group=$(getent group "$gid" | cut -d: -f1)
        enter bash -c "getent group $group >/dev/null || groupadd -g $gid $group
            id $login >/dev/null 2>&1 || useradd -m -u $uid -g $gid -s /bin/bash $login
            chmod 0700 /home/$login"
    done
    if [ "$NAME" != site-login ]; then
        # Four fake GPUs (character devices, as gres needs), and slurmd joining as a dynamic node
        # (slurm.conf's MaxNodeCount has room), sized as gpu01 for 8 cores and 48 GB per GPU.
        install -d "$ROOT/var/lib/fake-gpus"
        for i in 0 1 2 3; do [ -e "$ROOT/var/lib/fake-gpus/nvidia$i" ] || mknod "$ROOT/var/lib/fake-gpus/nvidia$i" c 1 3; done
        printf 'AutoDetect=off\nName=gpu File=/var/lib/fake-gpus/nvidia[0-3]\n' >"$ROOT/etc/slurm/gres.conf"
        install -d "$ROOT/etc/systemd/system/slurmd.service.d"
        cat >"$ROOT/etc/systemd/system/slurmd.service.d/dynamic.conf" <<EOF2
[Service]
ExecStart=
ExecStart=/usr/sbin/slurmd -D -Z -N $NAME --conf "CPUs=32 RealMemory=200000 Gres=gpu:4 Feature=site"
EOF2
        enter systemctl daemon-reload
        # Registered anew: a dynamic node keeps the size it first registered with.
        enter systemctl stop slurmd
        leave_partition
        scontrol delete nodename="$NAME" >/dev/null 2>&1 || true
        enter systemctl start slurmd
        registered_within 600 ||
            die "slurmd did not register with the controller in 2 minutes (its log: $ROOT$STATE/log/slurmd-$NAME.log)"
        join_partition
        say "joined the cluster: $(sinfo -h -n "$NAME" -o '%P %n %T %G' 2>/dev/null)"
    else
        say "joined the cluster: $(enter sinfo -h -o '%P %D %T' | paste -sd, -)"
    fi
}

# The partition `site` holds the site's nodes while they run: made with the first, removed with
# the last (scontrol, no restart of slurmctld), so that the local cluster has none otherwise.
site_nodes() { { sinfo -h -p site -N -o %N 2>/dev/null || true; } | sort -u | { grep -vx "$NAME" || true; } | paste -sd, -; }
join_partition() {
    local others
    others=$(site_nodes)
    if scontrol show partition site >/dev/null 2>&1; then
        scontrol update partitionname=site nodes="${others:+$others,}$NAME"
    else
        scontrol create partitionname=site nodes="$NAME" MaxTime=24:00:00 DefMemPerCPU=2048 State=UP
    fi
}
leave_partition() {
    scontrol show partition site >/dev/null 2>&1 || return 0
    local others
    others=$(site_nodes)
    if [ -n "$others" ]; then
        scontrol update partitionname=site nodes="$others" || true
    else
        scontrol delete partitionname=site || true
    fi
}

# A restart of slurmctld (the test lanes' `cluster.sh grow` and `shrink`, a test that takes the
# controller down) forgets what scontrol made and slurm.conf does not hold: the partition
# `site`, and may forget a dynamic node. rejoin puts a joined node back: registered again (its
# slurmd restarted) where the controller lost it, and in the partition.
registered_within() {  # registered_within TRIES: the node up at the controller (tries 0.2 s apart)
    local try
    for try in $(seq "$1"); do
        scontrol show node "$NAME" 2>/dev/null | grep -qE 'State=(IDLE|MIXED|ALLOCATED)' && return 0
        [ "$try" = "$1" ] || sleep 0.2
    done
    return 1
}

rejoin() {
    [ "$NAME" = site-login ] && return
    booted || die "not booted: site_root.sh $NAME up, then join"
    if ! registered_within 1; then
        enter systemctl restart slurmd
        registered_within 600 || die "slurmd did not register again in 2 minutes"
        say "registered again with the controller"
    fi
    if ! sinfo -h -p site -N -o %N 2>/dev/null | grep -qx "$NAME"; then
        join_partition
        say "back in the partition site"
    fi
}

enter() {
    booted || die "not booted: site_root.sh $NAME up"
    nsenter --target "$(cat "$BOOT")" --pid --mount --uts --net --cgroup --root --wd -- \
        /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        HOME=/root LANG=C.UTF-8 "$@"
}

down() {
    if booted; then
        local pid
        pid=$(cat "$BOOT")
        # SIGRTMIN+4: systemd's "power off" (its units stopped in order); then what is left.
        kill -s RTMIN+4 "$pid" 2>/dev/null || true
        for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
        kill -9 "$pid" 2>/dev/null || true
        say "powered off"
    fi
    rm -f "$BOOT"
    local reader
    reader=$(cat "$CONSOLE.pid" 2>/dev/null) && kill "$reader" 2>/dev/null
    rm -f "$CONSOLE.pid"
    # A dynamic node leaves the controller's list when it has gone.
    if [ "$NAME" != site-login ]; then
        leave_partition >/dev/null 2>&1
        scontrol delete nodename="$NAME" >/dev/null 2>&1 || true
    fi
    local slirp
    slirp=$(uplink_pid) && kill "$slirp" 2>/dev/null
    rm -f "$SLIRP"
    [ -e "/run/netns/$NETNS" ] && ip netns delete "$NETNS"
    ip link del "$LINK" 2>/dev/null || true
    for dir in $(awk '$3 == "cgroup" {print $2}' /proc/mounts); do
        [ -d "$dir/$CGROUP" ] && find "$dir/$CGROUP" -depth -type d -exec rmdir {} + 2>/dev/null
    done
    return 0
}

case "${1:-}" in
    up) make_root; write_files; make_network; start_uplink; boot ;;
    new) down; rm -rf --one-file-system "$ROOT"; make_root; write_files; make_network; start_uplink; boot ;;
    run) shift; enter "$@" ;;
    join) shift; join "$@" ;;
    rejoin) rejoin ;;
    down) down ;;
    remove) down; rm -rf --one-file-system "$ROOT"; say "removed $ROOT" ;;
    addr) echo "$ADDR" ;;
    *) sed -n '2,26p' "$0" >&2; exit 2 ;;
esac
