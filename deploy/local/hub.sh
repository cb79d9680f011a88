#!/usr/bin/env bash
# The hub of the local demo, in the background: hub.sh start | stop | status | preflight
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
VENV=${PORTAL_VENV:-/opt/gpuportal/venv}
export PORTAL_HUB_STATE=${PORTAL_HUB_STATE:-/var/lib/portal-local/hub}
export PORTAL_HUB_PORT=${PORTAL_HUB_PORT:-8000}
PIDFILE=$PORTAL_HUB_STATE/hub-process.pid
LOG=$PORTAL_HUB_STATE/hub.log
STATE=${PORTAL_STATE:-/var/lib/portal-local}
# HTTPS with the demo CA's certificate (deploy/local/https.sh make), plain HTTP redirected
# from port + 80; a site sets its own certificate here.
export PORTAL_PUBLIC_TLS_CERT=${PORTAL_PUBLIC_TLS_CERT-$STATE/hub-tls/hub.crt}
export PORTAL_PUBLIC_TLS_KEY=${PORTAL_PUBLIC_TLS_KEY-$STATE/hub-tls/hub.key}
export PORTAL_HTTP_REDIRECT_PORT=${PORTAL_HTTP_REDIRECT_PORT-$((PORTAL_HUB_PORT + 80))}
CA=${PORTAL_PUBLIC_CA:-$STATE/demo-ca/ca.pem}
URL="https://127.0.0.1:$PORTAL_HUB_PORT"
[ -n "$PORTAL_PUBLIC_TLS_CERT" ] || URL="http://127.0.0.1:$PORTAL_HUB_PORT"
SERVICE_USER=${PORTAL_SERVICE_USER:-gpuportal}
# The local cluster's MIG node (partition mig): its slices' cores and memory, and a notebook
# profile of one slice after the shipped three (a site sets its own kinds and profiles).
export PORTAL_GPU_KINDS=${PORTAL_GPU_KINDS-'{"1g.10gb": [2, 12], "3g.40gb": [4, 40]}'}
export PORTAL_SEED_PROFILES=${PORTAL_SEED_PROFILES-'[{"slug": "slice", "title": "1 MIG slice", "description": "A slice of an A100: notebooks, tutorials", "gpus": 1, "gpu_type": "1g.10gb", "cores_per_gpu": 2, "mem_per_gpu_gb": 12, "partition": "mig"}]'}

alive() { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

# The settings the hub runs with, every PORTAL_* of this environment, in a file of the site's
# (dotenv, as systemd's EnvironmentFile reads it): `gpuportal-admin` reads them from there, so a
# preflight run by root in a plain shell checks the hub as it runs (it warned "the hub serves
# plain HTTP" without them); a second `make demo` with other settings finds what changed.
SETTINGS_FILE=${PORTAL_SETTINGS_FILE:-/etc/gpuportal/hub.env}
wanted_settings() {
    local name
    for name in $(compgen -e | grep '^PORTAL_' | grep -v '^PORTAL_SETTINGS_FILE$' | sort); do
        printf "%s='%s'\n" "$name" "$(printf '%s' "${!name}" | sed "s/'/\\\\'/g")"
    done
}
write_settings() {
    install -d -m 0755 "$(dirname "$SETTINGS_FILE")"
    (umask 027; wanted_settings >"$SETTINGS_FILE.new")
    chgrp "$SERVICE_USER" "$SETTINGS_FILE.new"
    mv "$SETTINGS_FILE.new" "$SETTINGS_FILE"
}

start() {
    if alive; then
        # Running with other settings (PORTAL_LOGIN=ldap make demo after make demo): applied by
        # a restart, which keeps the sessions (their jobs run on; the hub finds them again).
        local changed
        changed=$({ diff <(cat "$SETTINGS_FILE" 2>/dev/null) <(wanted_settings) || true; } |
            sed -n 's/^[<>] \([A-Z_0-9]*\)=.*/\1/p' | sort -u | tr '\n' ' ')
        if [ -z "$changed" ]; then echo "[hub] already running at $URL"; return; fi
        echo "[hub] running with other settings (${changed% }): restarting it with these; sessions keep running"
        stop
    fi
    write_settings
    # The hub, its proxy and its services run as the service account (install.sh makes it, and
    # its sudo rule), never as root; its folder (database, keys, tokens, audit) is its alone.
    id "$SERVICE_USER" >/dev/null 2>&1 || { echo "[hub] no account $SERVICE_USER: run deploy/local/install.sh" >&2; exit 1; }
    install -d -m 0700 -o "$SERVICE_USER" -g "$SERVICE_USER" "$PORTAL_HUB_STATE"
    # A state left by an older demo that ran the hub as root.
    chown -R "$SERVICE_USER:$SERVICE_USER" "$PORTAL_HUB_STATE"
    cd "$PORTAL_HUB_STATE"
    umask 077
    HOME=$(getent passwd "$SERVICE_USER" | cut -d: -f6) PATH="$VENV/bin:$PATH" \
        setsid setpriv --reuid="$SERVICE_USER" --regid="$SERVICE_USER" --init-groups \
        "$VENV/bin/gpuportal-hub" -f "$REPO/deploy/jupyterhub_config.py" \
        >>"$LOG" 2>&1 </dev/null &
    echo $! >"$PIDFILE"
    for _ in $(seq 150); do
        if curl -fs --cacert "$CA" -o /dev/null "$URL/hub/api"; then echo "[hub] up at $URL (log: $LOG)"; return; fi
        alive || { tail -20 "$LOG"; echo "[hub] failed to start" >&2; exit 1; }
        sleep 0.2
    done
    echo "[hub] did not answer in 30 s; see $LOG" >&2; exit 1
}

stop() {
    if alive; then
        kill "$(cat "$PIDFILE")"
        # The hub stops its services (portal, spawn-resumer) before it exits: give it time.
        for _ in $(seq 300); do alive || break; sleep 0.1; done
        alive && kill -9 "$(cat "$PIDFILE")" || true
        echo "[hub] stopped"
    fi
    rm -f "$PIDFILE"
    # The proxy normally goes with the hub; make sure of it.
    if [ -f "$PORTAL_HUB_STATE/proxy.pid" ]; then
        kill "$(cat "$PORTAL_HUB_STATE/proxy.pid")" 2>/dev/null || true
        rm -f "$PORTAL_HUB_STATE/proxy.pid"
    fi
}

case "${1:-}" in
    start) start ;;
    # The admin's preflight, with the hub's own settings (those above).
    preflight) "$VENV/bin/gpuportal-admin" preflight ;;
    stop) stop ;;
    status) if alive; then echo "hub: running at $URL"; else echo "hub: stopped"; fi ;;
    *) echo "usage: $0 start|stop|status|preflight" >&2; exit 2 ;;
esac
