#!/usr/bin/env bash
# make test's pytest: the two lanes of tests/integration/second_lane.py side by side, one
# pytest process each (same arguments, --lane=first|second). The first lane's output streams;
# the second's follows it, in brief (-q: a dot a test), so that a CI log cut to the part around
# the first failure shows both lanes' failures; then the failures of both, a line each. Fails if
# either lane fails.
#   tests/lanes.sh PYTHON [PYTEST ARGS...]
set -uo pipefail
python=$1
shift
log=$(mktemp /tmp/gpuportal-second-lane.XXXXXX)
first_log=$(mktemp /tmp/gpuportal-first-lane.XXXXXX)
"$python" -m pytest --lane=second -q "$@" >"$log" 2>&1 &
second=$!
# Interrupted (Ctrl-C, CI's timeout): the second lane ends too, and its fixtures clean up.
trap 'kill -INT "$second" 2>/dev/null; wait "$second"; cat "$log"; rm -f "$log" "$first_log"; exit 130' INT TERM
"$python" -m pytest --lane=first "$@" 2>&1 | tee "$first_log"
first_rc=${PIPESTATUS[0]}
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
