#!/usr/bin/env bash
# `make test`, part by part, each part's time printed at the end:
#   1. install.sh --test, the docs site, the cluster, HTTPS, PostgreSQL (this machine: Debian
#      12, Slurm 22.05)
#   2. ruff, mypy and ansible-lint
#   3. every test in two lanes (tests/lanes.sh); beside them, in the background: the fresh-machine
#      lane on a Debian 13 root made from nothing (tests/fresh.sh: `make demo` as the README
#      says, a user's smoke, `make stop`), then install.sh --test there (tests/debian13.sh
#      prepare), at the lowest priority; then, side by side, the same fresh lane on a Debian 12
#      root followed by the Ansible role on three Debian 12 roots that stand in for a site's
#      hosts (tests/site), and the Slurm-facing integration tests on Debian 13 / Slurm 24.11 in
#      the Debian 13 root (tests/debian13.sh test, two lanes). The roots' processes are apart
#      from this machine's, and the lanes look for a user's processes in their own pid
#      namespace only (tests/own_processes.py). Their output follows the Debian 12 lanes'.
#   4. docker-compose.yml with podman (tests/compose)
# PORTAL_DEBIAN13=0 leaves out the Debian 13 part (and it is left out where this machine is
# Debian 13 itself); PORTAL_FRESH=0 the fresh Debian 12; PORTAL_SITE=0 the Ansible role's. Fails
# if any part failed; every part runs anyway.
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
        make --no-print-directory typecheck && make --no-print-directory ansible-lint
}

began=$(date +%s)
# The parts are named for the machine they run on (Debian 12 here, or 13 where make test runs
# in a Debian 13 machine or root).
part "Debian ${VERSION_ID:-?}: install, docs, cluster, HTTPS, PostgreSQL" setup || summary
SLURM=$(dpkg-query -W -f='${Version}' slurm-wlm 2>/dev/null | cut -d. -f1,2)
part "ruff, mypy and ansible-lint" lint
# Beside the Debian 12 lanes, in the background (their output after the lanes'): the fresh
# machines (tests/fresh.sh: `make demo` as the README says, on a Debian 12 and a Debian 13 made
# from nothing, a user's smoke, `make stop`) and the Slurm-facing tests on Debian 13 in the fresh
# Debian 13 root (tests/debian13.sh). They run beside the lanes, not after them: their processes
# belong to users of the lanes' uids, and the lanes' tests look for and end a user's processes
# in their own pid namespace only (tests/own_processes.py). Each step's line in $BESIDE/steps:
# "NAME SECONDS EXIT".
FRESH=${PORTAL_FRESH:-1}
BESIDE=/var/lib/portal-make-test
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
# The Ansible role on three roots from nothing that stand in for a site's hosts, against this
# machine's cluster (tests/site): its two runs and a user's smoke. PORTAL_SITE=0 leaves it out.
SITE=${PORTAL_SITE:-1}
site() {
    step site low env PORTAL_SITE_TEST=1 "$VENV/bin/python" -m pytest -s -q -p no:cacheprovider \
        tests/site >"$BESIDE/site.log" 2>&1
}
# One after the other: each builds roots and installs in them, at the lowest priority.
debian12_roots() {
    [ "${VERSION_ID:-}" = 12 ] || return 0
    if [ "$FRESH" = 1 ]; then fresh12; fi
    if [ "$SITE" = 1 ]; then site; fi
}
(
    if [ "$DEBIAN13" = 1 ] && step prepare low bash tests/debian13.sh prepare; then
        debian12_roots &
        step test bash tests/debian13.sh test
    else
        debian12_roots &
    fi
    wait
) >"$BESIDE/tests.log" 2>&1 &
beside=$!
part "Debian ${VERSION_ID:-?} / Slurm ${SLURM:-?}: every test, two lanes" bash tests/lanes.sh "$VENV/bin/python" "$@"
# docker-compose.yml with podman (tests/compose), after the lanes (its rootful podman's network
# and firewall rules stay away from the lanes' fault tests), while what runs beside them ends.
# Not in a Debian 13 machine or root (podman was set up and run on Debian 12).
if [ "${VERSION_ID:-}" = 12 ] && [ "${PORTAL_COMPOSE:-1}" = 1 ]; then
    part "Containers: docker-compose.yml with podman (image, up, a session, a 2-node job, down)" \
        env PORTAL_COMPOSE_TEST=1 "$VENV/bin/python" -m pytest -s -p no:cacheprovider tests/compose
fi
echo
echo "=========== beside the lanes: Debian 13 / Slurm 24.11, the fresh machines ==========="
touch "$BESIDE/tests.log"
tail -n +1 --pid="$beside" -f "$BESIDE/tests.log"
wait "$beside"
rc=$?
[ -f "$BESIDE/fresh12.log" ] && cat "$BESIDE/fresh12.log"
[ -f "$BESIDE/site.log" ] && cat "$BESIDE/site.log"
declare -A names=(
    [prepare]="Debian 13 from nothing: make demo (README), a user's smoke, make stop; install.sh --test (beside the lanes)"
    [fresh12]="Debian 12 from nothing: make demo (README), a user's smoke, make stop (beside the lanes)"
    [test]="Debian 13 / Slurm 24.11: the Slurm-facing tests, two lanes (beside the Debian 12 lanes)"
    [site]="The Ansible role on a site's hosts from nothing: its run, a second (changed=0), a user's smoke; an upgrade over an earlier release (beside the lanes)")
said=0
while read -r name seconds step_rc; do
    record "${names[$name]}" "$seconds" "$step_rc"
    [ "$step_rc" = 0 ] || said=1
done < <(cat "$BESIDE/steps" 2>/dev/null)
# Each fresh `make demo`'s own time, as its lane printed it.
while read -r line; do
    times+=("$(printf '%6s    %s' "" "$line")")
done < <(cat "$BESIDE/tests.log" "$BESIDE/fresh12.log" "$BESIDE/site.log" 2>/dev/null |
    grep -E '^\[fresh1[23]\] make demo |^\[site\] ')
# Ended without saying why (killed): its exit status still fails make test.
[ "$rc" = 0 ] || [ "$said" = 1 ] || record "beside the lanes: ended early" 0 "$rc"
record "make test in all" $(($(date +%s) - began)) 0
summary
