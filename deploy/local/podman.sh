#!/usr/bin/env bash
# Podman on this machine, for docker-compose.yml and for sessions in container images, with
# no image registry: every image is made here from Debian's packages.
#   podman.sh install      podman (runc, netavark, rootless helpers) from Debian's packages and
#                          the settings this machine needs (safe to run again)
#   podman.sh base         localhost/debian:12, a Debian 12 root made by debootstrap (once)
#   podman.sh image        gpuportal:local, docker-compose.yml's image (deploy/docker/Dockerfile)
#                          from that base; built again only when the repository changed
#   podman.sh session-image   the demo's session image (deploy/docker/session.Containerfile)
#                          as an OCI archive that every user's podman can load:
#                          SESSION_ARCHIVE (/srv/gpuportal-images/gpuportal-session.tar)
#   podman.sh up           docker-compose.yml with podman-compose (project gpuportal), then
#                          each service's health check until all pass (podman runs them on
#                          a systemd timer, and this machine has no systemd); the hub on
#                          https://127.0.0.1:PORTAL_COMPOSE_PORT (8000)
#   podman.sh down         its containers, network and volumes removed (the images stay)
# What was run and seen: docs/how-to/compose.md.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
MIRROR=${PORTAL_DEBIAN_MIRROR:-http://deb.debian.org/debian}
BASE=localhost/debian:12
IMAGE=${PORTAL_COMPOSE_IMAGE:-gpuportal:local}
PROJECT=${PORTAL_COMPOSE_PROJECT:-gpuportal}
VENV=${PORTAL_VENV:-/opt/gpuportal/venv}
SESSION_IMAGE=localhost/gpuportal-session:1
SESSION_ARCHIVE=${PORTAL_SESSION_ARCHIVE:-/srv/gpuportal-images/gpuportal-session.tar}
WHEELS=${PORTAL_WHEELS:-/opt/wheels}
TORCH_VERSION=2.13.0  # the torch environment's (environments.sh)
CONF=/etc/containers/containers.conf.d/50-gpuportal.conf
STORAGE_CONF=/etc/containers/storage.conf
MARK="Written by deploy/local/podman.sh"

say() { printf '[podman] %s\n' "$*"; }
die() { printf '[podman] error: %s\n' "$*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root"

install_podman() {
    local packages=(podman runc uidmap netavark aardvark-dns iptables slirp4netns fuse-overlayfs catatonit debootstrap)
    local missing=() p
    for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    if [ "${#missing[@]}" -gt 0 ]; then
        say "apt packages: ${missing[*]}"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null ||
            { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
                --no-install-recommends "${missing[@]}" >/dev/null; }
    fi
    [ -f "$CONF" ] && ! grep -q "$MARK" "$CONF" && die "$CONF is not this script's; not overwritten"
    install -d /etc/containers/containers.conf.d
    # For every podman here, root's and the users' (rootless) alike:
    # - runc: crun refuses this machine's hybrid cgroups ("cgroups in hybrid mode not supported");
    # - limits below the host's hard ones (20000 open files here): the runtime may lower a limit
    #   but not set one to the host's own value ("setrlimit RLIMIT_NOFILE: Operation not
    #   permitted"), and podman's default asks for the host's;
    # - cgroupfs and events in a file: there is no systemd to ask;
    # - netavark with aardvark-dns, so that a compose service finds another by its name;
    # - a container's /etc/hosts from its image, not from this machine's, which names the local
    #   cluster's namespace hosts (10.213.0.x) as `slurmctld`, `ldap`, ...: the compose
    #   stack's services have the same names, and its containers reached the namespaces.
    cat >"$CONF" <<EOF
# $MARK (the reasons are there).
[containers]
default_ulimits = ["nofile=16384:16384", "nproc=16384:16384"]
base_hosts_file = "image"

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"

[network]
network_backend = "netavark"
EOF
    [ -f "$STORAGE_CONF" ] && ! grep -q "$MARK" "$STORAGE_CONF" && die "$STORAGE_CONF is not this script's; not overwritten"
    # The users' own podman (a session in a podman image, gpuportal_session.container) keeps
    # its images and containers on the node's disk, not in the home: a site's homes are on
    # NFS or Lustre, where overlay mounts fail. Root's stays where Debian puts it.
    cat >"$STORAGE_CONF" <<EOF
# $MARK: the users' images on the node's own disk.
[storage]
driver = "overlay"
runroot = "/run/containers/storage"
graphroot = "/var/lib/containers/storage"
rootless_storage_path = "/var/tmp/containers-\$USER/storage"
EOF
    subordinate_ids
}

subordinate_ids() {
    # Rootless podman maps a user's container ids onto subordinate ones (/etc/subuid,
    # /etc/subgid). useradd gives new users a range once those files exist; the cluster's
    # users made before podman was installed get one here, apart for each uid.
    local name uid
    touch /etc/subuid /etc/subgid
    while read -r name _; do
        uid=$(id -u "$name" 2>/dev/null) || continue
        grep -q "^$name:" /etc/subuid && grep -q "^$name:" /etc/subgid && continue
        usermod --add-subuids "$((uid * 65536))-$((uid * 65536 + 65535))" \
            --add-subgids "$((uid * 65536))-$((uid * 65536 + 65535))" "$name"
    done < <(grep -v '^#' "$HERE/users.tsv")
}

make_base() {
    podman image exists "$BASE" && return
    local dir
    dir=$(mktemp -d /var/tmp/gpuportal-base.XXXXXX)
    say "$BASE from debootstrap (about half a minute)"
    debootstrap --variant=minbase bookworm "$dir/root" "$MIRROR" >"$dir/log" 2>&1 ||
        { tail -5 "$dir/log" >&2; die "debootstrap failed"; }
    cat >"$dir/root/etc/apt/sources.list" <<EOF
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb ${MIRROR%/debian}/debian-security bookworm-security main
EOF
    printf '127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n' >"$dir/root/etc/hosts"
    rm -rf "$dir/root/var/cache/apt/archives/"*.deb "$dir/root/var/lib/apt/lists/"*
    tar -C "$dir/root" -c . | podman import -q - "$BASE" >/dev/null
    rm -rf --one-file-system "$dir"
}

source_stamp() {  # what the image was built from: the repository's files, less what it ignores
    (cd "$REPO" && git ls-files -co --exclude-standard -z | grep -zv '^\.git' |
        xargs -0 sha256sum 2>/dev/null) | sha256sum | cut -c1-16
}

build_image() {
    make_base
    local stamp
    stamp=$(source_stamp)
    if [ "$(podman image inspect --format '{{index .Labels "org.gpuportal.source"}}' "$IMAGE" 2>/dev/null)" = "$stamp" ]; then
        say "$IMAGE is up to date"
        return
    fi
    say "$IMAGE (deploy/docker/Dockerfile, from $BASE)"
    local flags=(--network host --build-arg "BASE_IMAGE=$BASE" --label "org.gpuportal.source=$stamp")
    # This machine's CAs (a TLS-inspecting proxy before PyPI and npm), read-only, for the build
    # only: the image keeps its own.
    flags+=(--volume /etc/ssl/certs/ca-certificates.crt:/run/host-ca.pem:ro --build-arg HOST_CA=/run/host-ca.pem)
    local started=$SECONDS log=/var/tmp/gpuportal-image-build.log
    podman build "${flags[@]}" -f "$REPO/deploy/docker/Dockerfile" -t "$IMAGE" "$REPO" >"$log" 2>&1 ||
        { tail -20 "$log" >&2; die "the build failed; its log: $log"; }
    say "built $IMAGE in $((SECONDS - started)) s"
    # The layers the last build replaced.
    podman image prune -f >/dev/null
}

build_session_image() {
    make_base
    local stamp
    stamp=$(source_stamp)
    if [ -f "$SESSION_ARCHIVE" ] &&
        [ "$(podman image inspect --format '{{index .Labels "org.gpuportal.source"}}' "$SESSION_IMAGE" 2>/dev/null)" = "$stamp" ]; then
        say "$SESSION_ARCHIVE is up to date"
        return
    fi
    bash "$HERE/labextension.sh" "$VENV"
    say "$SESSION_IMAGE (deploy/docker/session.Containerfile, from $BASE)"
    local started=$SECONDS log=/var/tmp/gpuportal-session-image-build.log
    # PyTorch for the demo's multi-node jobs in the image (torchrun): the CPU build, where this
    # machine has its wheel (PyPI's is CUDA's, gigabytes); without it the image has none.
    local torch=()
    if compgen -G "$WHEELS/torch-$TORCH_VERSION+cpu-*.whl" >/dev/null; then
        torch=(--volume "$WHEELS:/run/wheels:ro" --build-arg WHEELS=/run/wheels --build-arg "EXTRA_PIP=torch==$TORCH_VERSION")
    else
        say "no CPU build of PyTorch in $WHEELS: the session image has no PyTorch"
    fi
    # Slurm's commands of the base's release, the cluster's (Debian 12: 22.05), for srun and
    # sbatch in a session's terminal.
    podman build --network host --build-arg "BASE_IMAGE=$BASE" --label "org.gpuportal.source=$stamp" \
        --build-arg SLURM_CLIENT=slurm-client \
        --volume /etc/ssl/certs/ca-certificates.crt:/run/host-ca.pem:ro --build-arg HOST_CA=/run/host-ca.pem \
        "${torch[@]}" \
        --ignorefile "$REPO/deploy/docker/session.containerignore" \
        -f "$REPO/deploy/docker/session.Containerfile" -t "$SESSION_IMAGE" "$REPO" >"$log" 2>&1 ||
        { tail -20 "$log" >&2; die "the build failed; its log: $log"; }
    podman image prune -f >/dev/null
    # Published where every user's podman can read it, as a site publishes its images (or
    # pushes them to its registry): read-only for everyone but root.
    install -d -m 0755 "$(dirname "$SESSION_ARCHIVE")"
    rm -f "$SESSION_ARCHIVE.new"
    podman save -q --format oci-archive -o "$SESSION_ARCHIVE.new" "$SESSION_IMAGE"
    chmod 0644 "$SESSION_ARCHIVE.new"
    mv "$SESSION_ARCHIVE.new" "$SESSION_ARCHIVE"
    say "built $SESSION_IMAGE in $((SECONDS - started)) s: $SESSION_ARCHIVE ($(du -h "$SESSION_ARCHIVE" | cut -f1))"
}

project_containers() {
    podman ps -a --filter "label=io.podman.compose.project=$PROJECT" --format '{{.Names}}'
}

wait_healthy() {
    local name started=$SECONDS
    for name in $(project_containers); do
        until podman healthcheck run "$name" >/dev/null 2>&1; do
            if [ "$(podman container inspect --format '{{.State.Running}}' "$name")" != true ]; then
                podman logs --tail 20 "$name" >&2 || true
                die "$name stopped"
            fi
            [ $((SECONDS - started)) -lt 600 ] ||
                die "$name not healthy after 10 minutes; its log: podman logs $name"
            sleep 2
        done
    done
    say "healthy: $(project_containers | tr '\n' ' ')($((SECONDS - started)) s)"
}

compose() {
    local tool=$VENV/bin/podman-compose
    [ -x "$tool" ] || die "no $tool: deploy/local/install.sh --test installs podman-compose"
    (cd "$REPO" && "$tool" -p "$PROJECT" -f docker-compose.yml "$@")
}

case "${1:-}" in
    install) install_podman ;;
    base) install_podman; make_base ;;
    image) install_podman; build_image ;;
    session-image) install_podman; build_session_image ;;
    up)
        install_podman
        build_image
        compose up -d >/var/tmp/gpuportal-compose-up.log 2>&1 ||
            { tail -20 /var/tmp/gpuportal-compose-up.log >&2; die "podman-compose up failed"; }
        wait_healthy
        say "the hub: https://127.0.0.1:${PORTAL_COMPOSE_PORT:-8000} (its CA: podman exec ${PROJECT}_hub_1 cat /var/lib/portal-local/demo-ca/ca.pem)"
        ;;
    down)
        compose down -v >/var/tmp/gpuportal-compose-down.log 2>&1 ||
            { tail -20 /var/tmp/gpuportal-compose-down.log >&2; die "podman-compose down failed"; }
        say "down: $PROJECT's containers, network and volumes removed"
        ;;
    *) sed -n '2,11p' "$0" >&2; exit 2 ;;
esac
