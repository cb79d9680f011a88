#!/usr/bin/env bash
# Prometheus for the local cluster, as a cluster team runs it: Debian's `prometheus` on the
# login host scraping the hub (/hub/metrics), the portal (/services/portal/metrics) and every
# GPU node's `prometheus-node-exporter`, which runs on the node (its own network namespace,
# deploy/local/hosts.sh). The hub and the portal are read with the token of the hub's
# `prometheus` service (deploy/jupyterhub_config.py), which may read metrics and nothing else.
# deploy/grafana/gpuportal-dashboard.json's queries run against it (tests/integration).
#
#   prometheus.sh start HUB_URL TOKEN_FILE [PORT]   (re)start, scraping that hub; PORT 9490
#                                                   (not 9090: Debian's own service may hold it)
#   prometheus.sh stop [PORT]
#   prometheus.sh status [PORT]
# PORTAL_SCRAPE_INTERVAL: how often it scrapes, e.g. 15s (the tests use 2s).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
STATE=${PORTAL_STATE:-/var/lib/portal-local}
INTERVAL=${PORTAL_SCRAPE_INTERVAL:-15s}
EXPORTER_PORT=9100
NODES=(gpu01 gpu02)

say() { printf '[prometheus] %s\n' "$*"; }
die() { printf '[prometheus] error: %s\n' "$*" >&2; exit 1; }

dir_of() { echo "$STATE/prometheus-$1"; }
alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

stop_pidfile() {
    local pidfile=$1
    if alive "$pidfile"; then
        kill "$(cat "$pidfile")"
        for _ in $(seq 50); do alive "$pidfile" || break; sleep 0.1; done
        alive "$pidfile" && kill -9 "$(cat "$pidfile")" 2>/dev/null || true
    fi
    rm -f "$pidfile"
}

# One exporter per node, shared by every Prometheus of this machine (the demo's, the tests').
start_exporters() {
    local node address pidfile
    install -d -m 0755 "$STATE/node-exporter"
    for node in "${NODES[@]}"; do
        pidfile=$STATE/node-exporter/$node.pid
        alive "$pidfile" && continue
        address=$(bash "$HERE/hosts.sh" addr "$node")
        # Only the figures a GPU node's panel needs: fewer files read every scrape.
        bash "$HERE/hosts.sh" on "$node" setpriv --reuid=prometheus --regid=prometheus --init-groups prometheus-node-exporter \
            --web.listen-address="$address:$EXPORTER_PORT" --collector.disable-defaults \
            --collector.cpu --collector.meminfo --collector.loadavg --collector.filesystem \
            --collector.netdev --collector.uname \
            >"$STATE/node-exporter/$node.log" 2>&1 </dev/null &
        echo $! >"$pidfile"
    done
}

stop_exporters() {
    local pidfile
    for pidfile in "$STATE"/node-exporter/*.pid; do
        [ -e "$pidfile" ] && stop_pidfile "$pidfile"
    done
    return 0
}

render() {
    local hub_url=$1 dir=$2 scheme host nodes="" node
    scheme=${hub_url%%://*}
    host=${hub_url#*://}
    host=${host%%/*}
    for node in "${NODES[@]}"; do
        nodes+="'$(bash "$HERE/hosts.sh" addr "$node"):$EXPORTER_PORT', "
    done
    # The hub's certificate is checked against its CA (the demo's, or PORTAL_PUBLIC_CA).
    local tls=""
    [ "$scheme" = https ] && tls="tls_config: {ca_file: ${PORTAL_PUBLIC_CA:-$STATE/demo-ca/ca.pem}}"
    cat >"$dir/prometheus.yml" <<EOF
# Written by deploy/local/prometheus.sh; a real cluster's is the same with its own addresses.
global:
  scrape_interval: $INTERVAL
  evaluation_interval: $INTERVAL
scrape_configs:
  - job_name: hub
    scheme: $scheme
    metrics_path: /hub/metrics
    authorization: {credentials_file: $dir/token}
    $tls
    static_configs: [{targets: ['$host']}]
  - job_name: portal
    scheme: $scheme
    metrics_path: /services/portal/metrics
    authorization: {credentials_file: $dir/token}
    $tls
    static_configs: [{targets: ['$host']}]
  - job_name: nodes
    static_configs: [{targets: [${nodes%, }]}]
EOF
}

start() {
    local hub_url=${1:?usage: prometheus.sh start HUB_URL TOKEN_FILE [PORT]}
    local token_file=${2:?usage: prometheus.sh start HUB_URL TOKEN_FILE [PORT]}
    local port=${3:-9490} dir
    command -v prometheus >/dev/null || die "prometheus is not installed (deploy/local/install.sh)"
    [ -r "$token_file" ] || die "no token at $token_file (the hub makes it at its first start)"
    dir=$(dir_of "$port")
    stop_pidfile "$dir/prometheus.pid"
    install -d -m 0750 -o prometheus -g prometheus "$dir" "$dir/data"
    install -m 0600 -o prometheus -g prometheus "$token_file" "$dir/token"
    render "$hub_url" "$dir"
    promtool check config "$dir/prometheus.yml" >/dev/null || die "bad config: $dir/prometheus.yml"
    start_exporters
    setpriv --reuid=prometheus --regid=prometheus --init-groups prometheus --config.file="$dir/prometheus.yml" \
        --storage.tsdb.path="$dir/data" --storage.tsdb.retention.time=2d \
        --web.listen-address="127.0.0.1:$port" \
        >"$dir/prometheus.log" 2>&1 </dev/null &
    echo $! >"$dir/prometheus.pid"
    for _ in $(seq 100); do
        if curl -fs -o /dev/null "http://127.0.0.1:$port/-/ready"; then
            say "up at http://127.0.0.1:$port, scraping $hub_url and ${NODES[*]} every $INTERVAL"
            return
        fi
        alive "$dir/prometheus.pid" || { tail -5 "$dir/prometheus.log" >&2; die "it did not start"; }
        sleep 0.2
    done
    die "not ready after 20 s; see $dir/prometheus.log"
}

stop() {
    local port=${1:-9490}
    stop_pidfile "$(dir_of "$port")/prometheus.pid"
    # The exporters go with the last Prometheus.
    compgen -G "$STATE/prometheus-*/prometheus.pid" >/dev/null || stop_exporters
    say "stopped (port $port)"
}

case "${1:-}" in
    start) shift; start "$@" ;;
    stop) shift; stop "$@" ;;
    status)
        if alive "$(dir_of "${2:-9490}")/prometheus.pid"; then
            echo "prometheus: running at http://127.0.0.1:${2:-9490}"
        else
            echo "prometheus: stopped"
        fi
        ;;
    *) echo "usage: $0 start HUB_URL TOKEN_FILE [PORT] | stop [PORT] | status [PORT]" >&2; exit 2 ;;
esac
