#!/usr/bin/env bash
# make test's fresh-machine lanes: the README's first command on a Debian made from nothing.
# In a root that deploy/local/debian_root.sh makes anew by debootstrap (minbase, this machine's
# package registries, nothing of this machine's installed packages), with a network of its own:
#   1. what the README says a minimal Debian needs first (make), then `make demo` as written,
#      its time printed
#   2. the smoke a newcomer would do (tests/fresh/test_demo_smoke.py, in Chromium: single
#      sign-on with a TOTP code, a 1-GPU session to JupyterLab's file browser, a 2-node job to
#      its end, Stop); the browser is installed for it, after `make demo`
#   3. `make stop`, and nothing of the stack may still run
# The root is removed after a pass; after a failure it stays for reading (its logs:
# /var/lib/portal-freshNN/), and the next run removes it.
#   tests/fresh.sh 12|13 [--keep]   --keep: keep the root after a pass, its holder running and the
#                                   stack stopped (tests/debian13.sh installs and tests in it)
set -uo pipefail
cd "$(dirname "$0")/.."
release=${1:-}
case "$release" in 12 | 13) ;; *) sed -n '2,17p' "$0" >&2; exit 2 ;; esac
keep=${2:-}
name=fresh$release
root=(bash deploy/local/debian_root.sh "$name")
top=/var/lib/portal-$name
say() { printf '[%s] %s\n' "$name" "$*"; }
failed() {  # failed WHAT LOG: the log's last lines, and the lane fails
    say "FAILED: $1; the last lines of $2:"
    tail -40 "$2" | sed "s/^/[$name]   /"
    exit 1
}
timed() {  # timed NAME LOG CMD...: run CMD with its output in LOG; print its time
    local what=$1 log=$2 started rc
    shift 2
    started=$(date +%s)
    "$@" >"$log" 2>&1
    rc=$?
    say "$what: $(($(date +%s) - started)) s$([ "$rc" = 0 ] || echo ", exit $rc")"
    return "$rc"
}

mkdir -p "$top"
timed "a Debian $release root from nothing (debootstrap)" "$top/root.log" "${root[@]}" new ||
    failed "the root" "$top/root.log"
# A minimal Debian has no make: README.md says to install it first.
timed "apt-get install make (README)" "$top/make.log" "${root[@]}" run bash -c \
    'apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q make' ||
    failed "installing make" "$top/make.log"
timed "make demo (the README's first command, from nothing)" "$top/demo.log" \
    "${root[@]}" run make demo || failed "make demo" "$top/demo.log"
# The smoke's own tools, not the product's: a browser, and the demo CA in its store.
timed "the smoke's browser (chromium)" "$top/browser.log" "${root[@]}" run bash -c \
    'DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium libnss3-tools &&
     bash deploy/local/https.sh trust' || failed "installing the smoke's browser" "$top/browser.log"
timed "the smoke (sign-in, session, 2-node job, Stop)" "$top/smoke.log" "${root[@]}" run \
    env PORTAL_FRESH_SMOKE=1 /opt/gpuportal/venv/bin/python -m pytest -s -q -p no:cacheprovider \
    tests/fresh || failed "the smoke" "$top/smoke.log"
grep '^\[smoke\]' "$top/smoke.log" | sed "s/^/[$name]   /"
timed "make stop" "$top/stop.log" "${root[@]}" run make stop || failed "make stop" "$top/stop.log"
# Every process of the root is its holder's, or one of the stack's left behind.
left=$("${root[@]}" run ps -eo pid=,args= | grep -vE '^ *[0-9]+ (/bin/bash -c trap exit TERM|sleep 600|ps -eo)' || true)
[ -z "$left" ] || { printf '%s\n' "$left" >"$top/left.log"; failed "processes left after make stop" "$top/left.log"; }
if [ "$keep" = --keep ]; then
    say "passed; the root is kept (--keep): ${root[*]} remove removes it"
    exit 0
fi
"${root[@]}" remove >/dev/null 2>&1 || say "the root was not removed"
say "passed"
