#!/usr/bin/env bash
# `make test`, part by part, each part's time printed at the end:
#   1. install.sh --test, the cluster, HTTPS, PostgreSQL (this machine: Debian 12, Slurm 22.05)
#   2. ruff and mypy
#   3. every test in two lanes (tests/lanes.sh), while the Debian 13 root is made and installed
#      in the background (tests/debian13.sh prepare)
#   4. the Slurm-facing integration tests on Debian 13 / Slurm 24.11 (tests/debian13.sh test)
# PORTAL_DEBIAN13=0 leaves out the Debian 13 part (and it is left out where this machine is
# Debian 13 itself). Fails if any part failed; every part runs anyway.
#   VENV=... CODE="..." tests/make_test.sh [PYTEST ARGS...]
set -uo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-/opt/gpuportal/venv}
CODE=${CODE:-gpuportal_core spawner portal gpuportal_session gpuportal_cli tests bench deploy}
. /etc/os-release
DEBIAN13=${PORTAL_DEBIAN13:-1}
[ "${VERSION_ID:-}" = 13 ] && DEBIAN13=0

times=()
failed=()
part() {  # part NAME CMD...: run, time, remember
    local name=$1 started rc
    shift
    started=$(date +%s)
    "$@"
    rc=$?
    times+=("$(printf '%6d s  %s%s' $(($(date +%s) - started)) "$name" "$([ "$rc" = 0 ] || echo "  (FAILED, exit $rc)")")")
    [ "$rc" = 0 ] || failed+=("$name")
    return "$rc"
}
summary() {
    echo
    echo "======================== make test: the time of each part ========================"
    printf '%s\n' "${times[@]}"
    if [ "${#failed[@]}" -gt 0 ]; then
        echo "failed: ${failed[*]}"
        exit 1
    fi
}

setup() {
    bash deploy/local/install.sh --test && bash deploy/local/cluster.sh start &&
        bash deploy/local/https.sh make && bash deploy/local/https.sh trust &&
        bash deploy/local/postgres.sh start
}
# shellcheck disable=SC2086  # CODE is a list of folders
lint() {
    "$VENV/bin/ruff" check $CODE && "$VENV/bin/ruff" format --check $CODE &&
        make --no-print-directory typecheck
}

part "Debian 12: install, cluster, HTTPS, PostgreSQL" setup || summary
part "ruff and mypy" lint
if [ "$DEBIAN13" = 1 ]; then
    bash tests/debian13.sh prepare &
    prepare=$!
fi
part "Debian 12 / Slurm 22.05: every test, two lanes" bash tests/lanes.sh "$VENV/bin/python" "$@"
if [ "$DEBIAN13" = 1 ]; then
    wait "$prepare"
    rc=$?
    took=$(cat "${PORTAL_DEBIAN13_DIR:-/var/lib/portal-debian13}/install.log.seconds" 2>/dev/null || echo 0)
    times+=("$(printf '%6d s  %s%s' "$took" \
        "Debian 13: the root and install.sh --test (beside the Debian 12 tests)" \
        "$([ "$rc" = 0 ] || echo "  (FAILED, exit $rc)")")")
    if [ "$rc" = 0 ]; then
        part "Debian 13 / Slurm 24.11: the Slurm-facing tests, two lanes" bash tests/debian13.sh test
    else
        failed+=("Debian 13 install")
    fi
fi
summary
