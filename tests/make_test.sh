#!/usr/bin/env bash
# `make test`, part by part, each part's time printed at the end:
#   1. install.sh --test, the docs site, the cluster, HTTPS, PostgreSQL (this machine: Debian
#      12, Slurm 22.05)
#   2. ruff and mypy
#   3. every test in two lanes (tests/lanes.sh), while the Debian 13 root is made and installed
#      in the background (tests/debian13.sh prepare)
#   4. the Slurm-facing integration tests on Debian 13 / Slurm 24.11 (tests/debian13.sh test),
#      two lanes in the root, each started as soon as the Debian 12 lane of the same users has
#      ended (the two systems' processes are apart, but their users share uids, and some tests
#      look for a user's processes); its output follows the Debian 12 lanes'.
# PORTAL_DEBIAN13=0 leaves out the Debian 13 part (and it is left out where this machine is
# Debian 13 itself). Fails if any part failed; every part runs anyway.
#   VENV=... CODE="..." tests/make_test.sh [PYTEST ARGS...]
set -uo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-/opt/gpuportal/venv}
CODE=${CODE:-gpuportal_core spawner portal gpuportal_session gpuportal_cli tests bench deploy docs}
. /etc/os-release
DEBIAN13=${PORTAL_DEBIAN13:-1}
[ "${VERSION_ID:-}" = 13 ] && DEBIAN13=0

times=()
failed=()
record() {  # record NAME SECONDS RC: a line of the summary; RC other than 0 fails make test
    local rc=$3
    times+=("$(printf '%6d s  %s%s' "$2" "$1" "$([ "$rc" = 0 ] || echo "  (FAILED, exit $rc)")")")
    [ "$rc" = 0 ] || failed+=("$1")
}
part() {  # part NAME CMD...: run, time, record
    local name=$1 started rc
    shift
    started=$(date +%s)
    "$@"
    rc=$?
    record "$name" $(($(date +%s) - started)) "$rc"
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

setup() { bash deploy/local/install.sh --test && VENV=$VENV bash deploy/local/docs.sh && bash tests/services.sh; }
# shellcheck disable=SC2086  # CODE is a list of folders
lint() {
    "$VENV/bin/ruff" check $CODE && "$VENV/bin/ruff" format --check $CODE &&
        make --no-print-directory typecheck
}

began=$(date +%s)
# The parts are named for the machine they run on (Debian 12 here, or 13 where make test runs
# in a Debian 13 machine or root).
part "Debian ${VERSION_ID:-?}: install, docs, cluster, HTTPS, PostgreSQL" setup || summary
SLURM=$(dpkg-query -W -f='${Version}' slurm-wlm 2>/dev/null | cut -d. -f1,2)
part "ruff and mypy" lint
D13_DIR=${PORTAL_DEBIAN13_DIR:-/var/lib/portal-debian13}
GATES=/tmp/gpuportal-lanes-after  # in the root; the Debian 12 lanes mark their end there
if [ "$DEBIAN13" = 1 ]; then
    rm -rf "$D13_DIR/root$GATES" "$D13_DIR/tests.log" "$D13_DIR/steps"
    mkdir -p "$D13_DIR"
    (
        # Each step's line for the summary in $D13_DIR/steps: "prepare SECONDS EXIT".
        step() {
            local name=$1 started rc
            shift
            started=$(date +%s)
            "$@"
            rc=$?
            echo "$name $(($(date +%s) - started)) $rc" >>"$D13_DIR/steps"
            return "$rc"
        }
        # At the lowest CPU and disk priority: it builds code-server and unpacks PyTorch beside
        # the Debian 12 lanes, whose tests wait on clocks; at full priority the scale test's
        # kernels started two minutes late.
        step prepare nice -n 19 ionice -c 3 bash tests/debian13.sh prepare &&
            step test bash tests/debian13.sh test --after "$GATES"
    ) >"$D13_DIR/tests.log" 2>&1 &
    debian13=$!
    export LANES_DONE_DIR=$D13_DIR/root$GATES
fi
part "Debian ${VERSION_ID:-?} / Slurm ${SLURM:-?}: every test, two lanes" bash tests/lanes.sh "$VENV/bin/python" "$@"
if [ "$DEBIAN13" = 1 ]; then
    echo
    echo "======================== Debian 13 / Slurm 24.11 (tests/debian13.sh) ========================"
    tail -n +1 --pid="$debian13" -f "$D13_DIR/tests.log"
    wait "$debian13"
    rc=$?
    declare -A names=([prepare]="Debian 13: the root and install.sh --test (beside the Debian 12 tests)"
        [test]="Debian 13 / Slurm 24.11: the Slurm-facing tests, two lanes (each from the end of Debian 12's)")
    said=0
    while read -r name seconds step_rc; do
        record "${names[$name]}" "$seconds" "$step_rc"
        [ "$step_rc" = 0 ] || said=1
    done < <(cat "$D13_DIR/steps" 2>/dev/null)
    # Ended without saying why (killed): its exit status still fails make test.
    [ "$rc" = 0 ] || [ "$said" = 1 ] || record "Debian 13: ended early" 0 "$rc"
fi
# docker-compose.yml with podman (tests/compose), after every lane: the stack's jobs run as the
# lanes' users. Not in a Debian 13 machine or root (podman was set up and run on Debian 12).
if [ "${VERSION_ID:-}" = 12 ] && [ "${PORTAL_COMPOSE:-1}" = 1 ]; then
    part "Containers: docker-compose.yml with podman (image, up, a session, a 2-node job, down)" \
        env PORTAL_COMPOSE_TEST=1 "$VENV/bin/python" -m pytest -s -p no:cacheprovider tests/compose
fi
record "make test in all" $(($(date +%s) - began)) 0
summary
