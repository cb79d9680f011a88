#!/usr/bin/env bash
# make test's pytest: the two lanes of tests/integration/second_lane.py side by side, one
# pytest process each (same arguments, --lane=first|second). The first lane's output streams;
# the second's follows it. Fails if either lane fails.
#   tests/lanes.sh PYTHON [PYTEST ARGS...]
set -uo pipefail
python=$1
shift
log=$(mktemp /tmp/gpuportal-second-lane.XXXXXX)
"$python" -m pytest --lane=second "$@" >"$log" 2>&1 &
second=$!
# Interrupted (Ctrl-C, CI's timeout): the second lane ends too, and its fixtures clean up.
trap 'kill -INT "$second" 2>/dev/null; wait "$second"; cat "$log"; rm -f "$log"; exit 130' INT TERM
"$python" -m pytest --lane=first "$@"
first_rc=$?
wait "$second"
second_rc=$?
trap - INT TERM
echo
echo "======================== the second lane (tests/integration/second_lane.py) ========================"
cat "$log"
rm -f "$log"
# 5: no test of that lane was selected (PYTEST_ARGS named the other lane's tests only).
for rc in "$first_rc" "$second_rc"; do
    [ "$rc" = 0 ] || [ "$rc" = 5 ] || exit "$rc"
done
[ "$first_rc" = 0 ] || [ "$second_rc" = 0 ] || exit 5
