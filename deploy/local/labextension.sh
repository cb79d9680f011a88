#!/usr/bin/env bash
# Builds the session's JupyterLab extension (gpuportal_session/labextension: time left in the
# status bar, the warning before the end) against the venv's own JupyterLab, so that its shared
# modules match the JupyterLab that loads it. Rebuilt only when its sources change.
# usage: labextension.sh VENV
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
VENV=$1
SRC="$REPO/gpuportal_session/labextension"
OUT="$REPO/gpuportal_session/jupyter_data"
STAMP="$OUT/.built"

lab_dir=$("$VENV/bin/python" -c 'import jupyterlab, os; print(os.path.dirname(jupyterlab.__file__))')
want="$(cd "$SRC" && cat package.json package-lock.json tsconfig.json src/*.ts style/*.css schema/*.json | sha256sum | cut -c1-16) $("$VENV/bin/python" -c 'import jupyterlab; print(jupyterlab.__version__)')"
if [ -f "$OUT/labextensions/@gpuportal/session/package.json" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$want" ]; then
    exit 0
fi
echo "[install] JupyterLab extension @gpuportal/session"
cd "$SRC"
npm ci --silent --no-fund --no-audit
rm -rf lib "$OUT/labextensions/@gpuportal/session"
node_modules/.bin/tsc
log=$(mktemp)
if ! node_modules/.bin/build-labextension --core-path "$lab_dir/staging" . >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    exit 1
fi
rm -f "$log"
chmod -R a+rX "$OUT"
echo "$want" >"$STAMP"
