#!/usr/bin/env bash
# `make test`, part by part, each part's time printed at the end:
#   1. install.sh --test, the docs site, the cluster, HTTPS, PostgreSQL (this machine: Debian
#      12, Slurm 22.05)
#   2. ruff and mypy
#   3. every test in two lanes (tests/lanes.sh), while in the background, at the lowest priority:
#      the fresh-machine lanes (tests/fresh.sh): a Debian 13 root made from nothing, where
#      `make demo` runs as the README says, a user's smoke, `make stop`, then install.sh --test
#      (tests/debian13.sh prepare); then, side by side, the same on a Debian 12 root from nothing
#   4. the Slurm-facing integration tests on Debian 13 / Slurm 24.11 (tests/debian13.sh test),
#      two lanes in the Debian 13 root, each started as soon as the Debian 12 lane of the same
#      users has ended (the two systems' processes are apart, but their users share uids, and
#      some tests look for a user's processes); its output follows the Debian 12 lanes'.
#   5. docker-compose.yml with podman (tests/compose)
# PORTAL_DEBIAN13=0 leaves out the Debian 13 part (and it is left out where this machine is
# Debian 13 itself); PORTAL_FRESH=0 the fresh Debian 12. Fails if any part failed; every part
# runs anyway.
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
# Beside the Debian 12 lanes, in the background (their output after the lanes'): the fresh
# machines (tests/fresh.sh: `make demo` as the README says, on a Debian 12 and a Debian 13 made
# from nothing, a user's smoke, `make stop`), and the Slurm-facing tests on Debian 13 in the
# fresh Debian 13 root (tests/debian13.sh). Each step's line in $BESIDE/steps: "NAME SECONDS EXIT".
FRESH=${PORTAL_FRESH:-1}
BESIDE=/var/lib/portal-make-test
GATES=/tmp/gpuportal-lanes-after  # in the root; the Debian 12 lanes mark their end there
rm -rf "$BESIDE"
mkdir -p "$BESIDE"
step() {
    local name=$1 started rc
    shift
    started=$(date +%s)
    "$@"
    rc=$?
    echo "$name $(($(date +%s) - started)) $rc" >>"$BESIDE/steps"
    return "$rc"
}
# At the lowest CPU and disk priority: they build code-server and unpack PyTorch beside the
# Debian 12 lanes, whose tests wait on clocks; at full priority the scale test's kernels
# started two minutes late.
low() { nice -n 19 ionice -c 3 "$@"; }
fresh12() { step fresh12 low bash tests/fresh.sh 12 >"$BESIDE/fresh12.log" 2>&1; }
beside=""
if [ "$DEBIAN13" = 1 ]; then
    (
        if step prepare low bash tests/debian13.sh prepare; then
            [ "$FRESH" = 1 ] && fresh12 &
            step test bash tests/debian13.sh test --after "$GATES"
            wait
        elif [ "$FRESH" = 1 ]; then
            fresh12
        fi
    ) >"$BESIDE/tests.log" 2>&1 &
    beside=$!
    export LANES_DONE_DIR=${PORTAL_FRESH13_DIR:-/var/lib/portal-fresh13}/root$GATES
elif [ "$FRESH" = 1 ] && [ "${VERSION_ID:-}" = 12 ]; then
    fresh12 &
    beside=$!
fi
part "Debian ${VERSION_ID:-?} / Slurm ${SLURM:-?}: every test, two lanes" bash tests/lanes.sh "$VENV/bin/python" "$@"
if [ -n "$beside" ]; then
    echo
    echo "=========== Debian 13 / Slurm 24.11 and the fresh machines (tests/debian13.sh, tests/fresh.sh) ==========="
    touch "$BESIDE/tests.log"
    tail -n +1 --pid="$beside" -f "$BESIDE/tests.log"
    wait "$beside"
    rc=$?
    [ -f "$BESIDE/fresh12.log" ] && cat "$BESIDE/fresh12.log"
    declare -A names=(
        [prepare]="Debian 13 from nothing: make demo (README), a user's smoke, make stop; install.sh --test (beside the Debian 12 tests)"
        [fresh12]="Debian 12 from nothing: make demo (README), a user's smoke, make stop (beside the Debian 12 tests)"
        [test]="Debian 13 / Slurm 24.11: the Slurm-facing tests, two lanes (each from the end of Debian 12's)")
    said=0
    while read -r name seconds step_rc; do
        record "${names[$name]}" "$seconds" "$step_rc"
        [ "$step_rc" = 0 ] || said=1
    done < <(cat "$BESIDE/steps" 2>/dev/null)
    # Each fresh `make demo`'s own time, as its lane printed it.
    while read -r line; do
        times+=("$(printf '%6s    %s' "" "$line")")
    done < <(cat "$BESIDE/tests.log" "$BESIDE/fresh12.log" 2>/dev/null | grep -E '^\[fresh1[23]\] make demo ')
    # Ended without saying why (killed): its exit status still fails make test.
    [ "$rc" = 0 ] || [ "$said" = 1 ] || record "Debian 13 and the fresh machines: ended early" 0 "$rc"
fi
# docker-compose.yml with podman (tests/compose), after every lane: the stack's jobs run as the
# lanes' users. Not in a Debian 13 machine or root (podman was set up and run on Debian 12).
if [ "${VERSION_ID:-}" = 12 ] && [ "${PORTAL_COMPOSE:-1}" = 1 ]; then
    part "Containers: docker-compose.yml with podman (image, up, a session, a 2-node job, down)" \
        env PORTAL_COMPOSE_TEST=1 "$VENV/bin/python" -m pytest -s -p no:cacheprovider tests/compose
fi
record "make test in all" $(($(date +%s) - began)) 0
summary
