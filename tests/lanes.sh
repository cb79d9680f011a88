#!/usr/bin/env bash
# make test's pytest: the two lanes of tests/integration/second_lane.py side by side, one
# pytest process each (same arguments, --lane=first|second). The first lane's output streams;
# the second's follows it, in brief (-q: a dot a test), so that a CI log cut to the part around
# the first failure shows both lanes' failures; then the failures of both, a line each. Fails if
# either lane fails.
#   tests/lanes.sh PYTHON [PYTEST ARGS...]
# Two settings let two runs share a machine lane by lane (tests/make_test.sh: Debian 13's lanes
# after Debian 12's, each user set's after its own): LANES_DONE_DIR=DIR touches DIR/first and
# DIR/second as each lane ends; LANES_AFTER_DIR=DIR starts each lane once DIR/<lane> exists.
set -uo pipefail
python=$1
shift
log=$(mktemp /tmp/gpuportal-second-lane.XXXXXX)
first_log=$(mktemp /tmp/gpuportal-first-lane.XXXXXX)
after() {  # after LANE: wait for LANES_AFTER_DIR/LANE, if set
    [ -n "${LANES_AFTER_DIR:-}" ] || return 0
    [ -e "$LANES_AFTER_DIR/$1" ] || echo "[lanes] the $1 lane waits for $LANES_AFTER_DIR/$1"
    until [ -e "$LANES_AFTER_DIR/$1" ]; do sleep 2; done
}
ended() {  # ended LANE: say so in LANES_DONE_DIR, if set
    [ -n "${LANES_DONE_DIR:-}" ] || return 0
    mkdir -p "$LANES_DONE_DIR" && touch "$LANES_DONE_DIR/$1"
}
# exec: $second is the pytest process itself once the lane has started.
(after second && exec "$python" -m pytest --lane=second -q "$@") >"$log" 2>&1 &
second=$!
if [ -n "${LANES_DONE_DIR:-}" ]; then
    (while kill -0 "$second" 2>/dev/null; do sleep 2; done; ended second) &
fi
# Interrupted (Ctrl-C, CI's timeout): the second lane ends too, and its fixtures clean up.
trap 'kill -INT "$second" 2>/dev/null; wait "$second"; cat "$log"; rm -f "$log" "$first_log"; exit 130' INT TERM
after first
"$python" -m pytest --lane=first "$@" 2>&1 | tee "$first_log"
first_rc=${PIPESTATUS[0]}
ended first
wait "$second"
second_rc=$?
trap - INT TERM
echo
echo "======================== the second lane (tests/integration/second_lane.py) ========================"
cat "$log"
echo
echo "======================== failures of both lanes ========================"
grep -h -E '^(FAILED|ERROR) ' "$first_log" "$log" || echo "none"
rm -f "$log" "$first_log"
# 5: no test of that lane was selected (PYTEST_ARGS named the other lane's tests only).
for rc in "$first_rc" "$second_rc"; do
    [ "$rc" = 0 ] || [ "$rc" = 5 ] || exit "$rc"
done
[ "$first_rc" = 0 ] || [ "$second_rc" = 0 ] || exit 5
