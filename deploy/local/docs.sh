#!/usr/bin/env bash
# Build the docs site (docs/) into docs/_build/html, where the portal serves it at
# /services/portal/manual/ (portal/manual.py): warnings are errors, every cross reference must
# resolve (-n), and every internal link must land (docs/_ext/check_links.py). make docs, make
# demo and make test run it after install.sh, whose venv has the docs extra.
#   VENV=/opt/gpuportal/venv deploy/local/docs.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=${VENV:-/opt/gpuportal/venv}
out=docs/_build/html
# Into a fresh folder, then in place: the portal never serves half a build.
rm -rf "$out.new"
"$VENV/bin/sphinx-build" -W --keep-going -n -q -b html docs "$out.new"
"$VENV/bin/python" docs/_ext/check_links.py "$out.new"
rm -rf "$out" && mv "$out.new" "$out"
chmod -R a+rX docs/_build
echo "[docs] built: $out"
