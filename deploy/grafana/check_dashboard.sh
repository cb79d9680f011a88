#!/usr/bin/env bash
# Checks the Grafana dashboard against Grafana's own schema: the types of @grafana/schema (the
# package Grafana publishes from its dashboard schema), with the TypeScript compiler. The JSON is
# pasted into a typed object literal, so that every field is checked, unknown ones included
# (a JSON import would widen "timeseries" to any string and let them through).
# usage: check_dashboard.sh [DASHBOARD.json]    exit 0: valid; otherwise tsc's errors
#        check_dashboard.sh --install             only fetch the types (npm ci), if not yet
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
CHECK=$HERE/schema-check
cd "$CHECK"
want=$(sha256sum package-lock.json | cut -c1-16)
if [ "$(cat node_modules/.installed 2>/dev/null)" != "$want" ]; then
    npm ci --loglevel=error --no-fund --no-audit ||
        { echo "check_dashboard.sh: npm ci failed: Grafana's types could not be fetched" >&2; exit 1; }
    echo "$want" >node_modules/.installed
fi
[ "${1:-}" = "--install" ] && exit 0
DASHBOARD=${1:-$HERE/gpuportal-dashboard.json}
mkdir -p build
{
    echo "import type { Dashboard } from '@grafana/schema';"
    printf 'export const dashboard: Dashboard = '
    cat "$DASHBOARD"
    echo ';'
} >build/check.ts
node_modules/.bin/tsc -p .
