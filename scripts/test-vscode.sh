#!/usr/bin/env bash
# The VS Code extension's tests: unit tests of its own logic, then the end-to-end test in a real VS Code
# (code-server from npm under Node 24 from npm, Debian's Chromium driven by playwright-core, the packaged
# .vsix installed). Installs what it needs; a second run reuses the tools it installed.
#
#   bash scripts/test-vscode.sh            # unit + e2e
#   bash scripts/test-vscode.sh --unit     # unit tests only (no Chromium, no code-server)
#
# Environment: CUTEGEN_TOOLS (tool cache; default ~/.cache/cutegen/vscode-tools),
# CUTEGEN_E2E_PYTHON (Python with CuTeGen installed; default .venv/bin/python, made by scripts/setup.sh),
# CUTEGEN_ARTIFACTS or OUT (screenshots and logs are copied there too, under vscode-e2e/),
# CUTEGEN_E2E_SLOW (multiplies the e2e's waits on a slow machine).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD

NODE_VERSION=24            # code-server 4.139 needs Node 24: the npm package `node@24` brings it
CODE_SERVER_VERSION=4.139.1
TOOLS=${CUTEGEN_TOOLS:-$HOME/.cache/cutegen/vscode-tools}
MODE=${1:-all}
START=$(date +%s)

say() { echo "[test-vscode $(($(date +%s) - START))s] $*"; }
die() { echo "test-vscode: $*" >&2; exit 1; }
command -v npm >/dev/null || die "npm is needed (Node.js 20 or newer with npm)"

apt_install() {  # apt_install PACKAGE... (only those missing)
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  say "installing Debian packages: ${missing[*]}"
  local sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

# -- Node 24 (local, from the npm registry) ------------------------------------------------------
NODE_DIR=$TOOLS/node$NODE_VERSION
if [ ! -f "$NODE_DIR/.complete" ]; then
  say "installing Node $NODE_VERSION from npm into $NODE_DIR"
  rm -rf "$NODE_DIR" && mkdir -p "$NODE_DIR"
  (cd "$NODE_DIR" && echo '{"private":true}' > package.json &&
    npm install --no-audit --no-fund --loglevel=error "node@$NODE_VERSION" >/dev/null)
  touch "$NODE_DIR/.complete"
fi
export PATH="$NODE_DIR/node_modules/.bin:$PATH"
[ "$(node -p 'process.versions.node.split(".")[0]')" = "$NODE_VERSION" ] || die "Node $NODE_VERSION did not install in $NODE_DIR"
# Headers for native modules (node-gyp would otherwise download them).
NODE_HEADERS=$(dirname "$(dirname "$(dirname "$(find "$NODE_DIR" -path '*/include/node/node.h' -print -quit)")")")
export npm_config_nodedir=$NODE_HEADERS
say "node $(node --version), npm $(npm --version)"

# -- the extension: dependencies, unit tests, .vsix -----------------------------------------------
cd "$REPO/vscode-client"
npm ci --no-audit --no-fund --loglevel=error >/dev/null
say "unit tests"
npm run -s test:unit
if [ "$MODE" = "--unit" ]; then
  say "done (unit tests only) in $(($(date +%s) - START)) s"
  exit 0
fi
npm run -s package >/dev/null
[ -f cutegen.vsix ] || die "vsce did not produce cutegen.vsix"
say "packaged $(du -h cutegen.vsix | cut -f1) cutegen.vsix"
cd "$REPO"

# -- code-server (built under Node 24; its native modules need libkrb5-dev) -----------------------
CS_DIR=$TOOLS/code-server-$CODE_SERVER_VERSION
if [ ! -f "$CS_DIR/.complete" ]; then
  apt_install libkrb5-dev build-essential python3
  say "installing code-server $CODE_SERVER_VERSION from npm into $CS_DIR (native build: a few minutes on 2 cores)"
  rm -rf "$CS_DIR" && mkdir -p "$CS_DIR"
  (cd "$CS_DIR" && echo '{"private":true}' > package.json &&
    npm install --no-audit --no-fund --loglevel=error "code-server@$CODE_SERVER_VERSION" > install.log 2>&1) ||
    { tail -40 "$CS_DIR/install.log" >&2; die "code-server did not install (log: $CS_DIR/install.log)"; }
  touch "$CS_DIR/.complete"
fi
export CODE_SERVER=$CS_DIR/node_modules/.bin/code-server
XDG_CONFIG_HOME=$(mktemp -d) "$CODE_SERVER" --version >/dev/null || die "code-server does not run"

# -- Chromium (Debian's; never a browser download) -------------------------------------------------
apt_install chromium
export CHROMIUM=${CHROMIUM:-/usr/bin/chromium}

# -- the language server's Python ------------------------------------------------------------------
export CUTEGEN_E2E_PYTHON=${CUTEGEN_E2E_PYTHON:-$REPO/.venv/bin/python}
if ! "$CUTEGEN_E2E_PYTHON" -c 'import cutegen.lsp.server' >/dev/null 2>&1; then
  [ "$CUTEGEN_E2E_PYTHON" = "$REPO/.venv/bin/python" ] || die "$CUTEGEN_E2E_PYTHON cannot import cutegen.lsp.server"
  say "setting up .venv (scripts/setup.sh)"
  bash scripts/setup.sh
fi

# -- the end-to-end test ---------------------------------------------------------------------------
say "end-to-end test in code-server $CODE_SERVER_VERSION + $("$CHROMIUM" --version 2>/dev/null | head -1)"
cd "$REPO/vscode-client"
# The test kills what it started; the process groups it records are killed here too, in case the test
# itself was killed (timeout) before it could.
export CUTEGEN_E2E_PIDFILE=$(mktemp)
cleanup() {
  while read -r pgid; do kill -TERM -- "-$pgid" 2>/dev/null || true; done < "$CUTEGEN_E2E_PIDFILE"
  sleep 1
  while read -r pgid; do kill -KILL -- "-$pgid" 2>/dev/null || true; done < "$CUTEGEN_E2E_PIDFILE"
  rm -f "$CUTEGEN_E2E_PIDFILE"
}
trap cleanup EXIT
status=0
timeout --kill-after=30 1800 npm run -s test:e2e || status=$?
say "screenshots and logs: vscode-client/test-artifacts/${CUTEGEN_ARTIFACTS:+ and $CUTEGEN_ARTIFACTS/vscode-e2e/}${OUT:+ and $OUT/vscode-e2e/}"
say "done in $(($(date +%s) - START)) s (exit $status)"
exit $status
