#!/usr/bin/env bash
# One part of the stack in the foreground, for a service of docker-compose.yml:
#   run.sh ldap | slurmctld | slurmd NODE | postgres | hub
# Each starts its part with the local scripts (cluster.sh, postgres.sh, hub.sh), which `make
# demo` and `make test` run on one machine, then stays while the part's daemon lives, so that
# Docker restarts the container when it dies. A part waits for the parts it needs itself:
# podman-compose starts a service without waiting for its dependencies' health checks on podman
# before 4.6 (Debian 12 has 4.3), and a part of a real cluster copes with that too.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
LOCAL=$HERE/../local
STATE=${PORTAL_STATE:-/var/lib/portal-local}

while_alive() {  # PIDFILE: return (and so end the container) when its daemon has gone
    for _ in $(seq 100); do [ -s "$1" ] && break; sleep 0.2; done
    while [ -s "$1" ] && kill -0 "$(head -n1 "$1")" 2>/dev/null; do sleep 5; done
    echo "[docker] $(basename "$1" .pid) is gone" >&2
    exit 1
}

wait_for() {  # HOST PORT WHAT: until HOST:PORT takes a connection
    for _ in $(seq 300); do
        (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null && return
        sleep 1
    done
    echo "[docker] $3 ($1:$2) did not answer in 5 minutes" >&2
    exit 1
}

case "${1:-}" in
    ldap)
        bash "$LOCAL/cluster.sh" ldap
        while_alive "$STATE/run/slapd.pid"
        ;;
    slurmctld)  # with slurmdbd and its MariaDB, as the issue's stack has them
        bash "$LOCAL/cluster.sh" controller
        while_alive "$STATE/run/slurmctld.pid"
        ;;
    slurmd)
        wait_for slurmctld 6817 slurmctld
        bash "$LOCAL/cluster.sh" node "${2:?node name}"
        while_alive "$STATE/run/slurmd-$2.pid"
        ;;
    postgres)
        bash "$LOCAL/postgres.sh" start
        while_alive "$STATE/pg/postmaster.pid"
        ;;
    hub)  # the hub, with the portal as its managed service, over HTTPS with the demo's CA
        wait_for ldap 6360 LDAP
        wait_for postgres 5432 PostgreSQL
        wait_for slurmctld 6817 slurmctld
        bash "$LOCAL/cluster.sh" client
        bash "$LOCAL/https.sh" make
        bash "$LOCAL/hub.sh" start
        while_alive "${PORTAL_HUB_STATE:-$STATE/hub}/hub-process.pid"
        ;;
    *)
        echo "usage: run.sh ldap|slurmctld|slurmd NODE|postgres|hub" >&2
        exit 2
        ;;
esac
