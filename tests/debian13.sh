#!/usr/bin/env bash
# make test's Debian 13 part, in a Debian 13 root made from nothing (deploy/local/debian_root.sh
# fresh13) beside this Debian 12 machine (its own processes and network: the Debian 12 cluster
# and tests go on meanwhile):
#   tests/debian13.sh prepare   the fresh-machine lane (tests/fresh.sh 13: `make demo` as the
#                               README says, the smoke, `make stop`), then install.sh --test in
#                               the same root (its log: /var/lib/portal-fresh13/install.log);
#                               make test runs it in the background while the Debian 12 lanes run
#   tests/debian13.sh test      in the root, its uplink ended: the cluster, HTTPS, PostgreSQL, then
#                               both lanes (tests/lanes.sh) on the Slurm-facing integration tests
#                               (tests/debian13-tests.txt) on Slurm 24.11; stops it all afterwards.
#                               make test runs it beside the Debian 12 lanes: the root's processes
#                               are apart, and the lanes look for a user's processes in their own
#                               pid namespace only (tests/own_processes.py)
set -uo pipefail
cd "$(dirname "$0")/.."
D13=(deploy/local/debian_root.sh fresh13)
LOG=${PORTAL_FRESH13_DIR:-/var/lib/portal-fresh13}/install.log

case "${1:-}" in
    prepare)
        bash tests/fresh.sh 13 --keep || exit 1
        {
            bash "${D13[@]}" up && bash "${D13[@]}" run bash deploy/local/install.sh --test
        } >"$LOG" 2>&1
        rc=$?
        [ "$rc" = 0 ] || { echo "[debian13] install.sh --test failed (exit $rc); its last lines:"; tail -30 "$LOG"; }
        exit "$rc"
        ;;
    test)
        bash "${D13[@]}" up >/dev/null || exit 1
        # The tests reach nothing outside the root: its installs are done.
        bash "${D13[@]}" uplink-off
        tests=$(grep -v '^#' tests/debian13-tests.txt)
        # shellcheck disable=SC2086  # one path a word
        bash "${D13[@]}" run bash -c 'bash tests/services.sh &&
            bash tests/lanes.sh /opt/gpuportal/venv/bin/python "$@"' lanes $tests
        rc=$?
        bash "${D13[@]}" down >/dev/null 2>&1
        exit "$rc"
        ;;
    *) sed -n '2,15p' "$0" >&2; exit 2 ;;
esac
