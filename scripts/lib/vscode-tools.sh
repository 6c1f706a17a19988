# Sourced by scripts/test-vscode.sh and scripts/demo.sh --editor: installs, once, what running the VS Code
# extension in a real VS Code needs, and packages the extension. Every tool goes under $TOOLS and is reused.
#
#   source scripts/lib/vscode-tools.sh   (from the repository root; defines the functions below)
#   install_node           Node 24 from the npm registry (code-server 4.139 needs it); puts it on PATH
#   package_vsix [--unit|--no-unit]  vscode-client: npm ci, the unit tests, then vscode-client/cutegen.vsix
#                          (--unit: stop after the tests; --no-unit: package without running them)
#   vsix_current           whether vscode-client/cutegen.vsix is newer than every file it is built from
#   install_code_server    code-server from npm (native build: minutes on 2 cores); sets $CODE_SERVER
#   apt_install PKG...     Debian packages, only those missing
#
# Environment: CUTEGEN_TOOLS (default ~/.cache/cutegen/vscode-tools).

NODE_VERSION=24
CODE_SERVER_VERSION=4.139.1
TOOLS=${CUTEGEN_TOOLS:-$HOME/.cache/cutegen/vscode-tools}
REPO=${REPO:-$PWD}
TOOLS_START=${TOOLS_START:-$(date +%s)}
TOOLS_NAME=${TOOLS_NAME:-$(basename "$0" .sh)}

say() { echo "[$TOOLS_NAME $(($(date +%s) - TOOLS_START))s] $*"; }
die() { echo "$TOOLS_NAME: $*" >&2; exit 1; }

apt_install() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  say "installing Debian packages: ${missing[*]}"
  local sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

install_node() {
  command -v npm >/dev/null || die "npm is needed (Node.js 20 or newer with npm)"
  local dir=$TOOLS/node$NODE_VERSION
  if [ ! -f "$dir/.complete" ]; then
    say "installing Node $NODE_VERSION from npm into $dir"
    rm -rf "$dir" && mkdir -p "$dir"
    (cd "$dir" && echo '{"private":true}' > package.json &&
      npm install --no-audit --no-fund --loglevel=error "node@$NODE_VERSION" >/dev/null)
    touch "$dir/.complete"
  fi
  export PATH="$dir/node_modules/.bin:$PATH"
  [ "$(node -p 'process.versions.node.split(".")[0]')" = "$NODE_VERSION" ] || die "Node $NODE_VERSION did not install in $dir"
  # Headers for native modules (node-gyp would otherwise download them).
  local header
  header=$(find "$dir" -path '*/include/node/node.h' -print -quit)
  export npm_config_nodedir
  npm_config_nodedir=$(dirname "$(dirname "$(dirname "$header")")")
  say "node $(node --version), npm $(npm --version)"
}

package_vsix() {  # package_vsix [--unit|--no-unit]: --unit stops after the unit tests, --no-unit skips them
  (
    cd "$REPO/vscode-client"
    npm ci --no-audit --no-fund --loglevel=error >/dev/null
    if [ "${1:-}" != "--no-unit" ]; then
      say "unit tests"
      npm run -s test:unit
    fi
    [ "${1:-}" = "--unit" ] && exit 0
    npm run -s package >/dev/null
    [ -f cutegen.vsix ] || die "vsce did not produce cutegen.vsix"
    say "packaged $(du -h cutegen.vsix | cut -f1) cutegen.vsix"
  )
}

vsix_current() {  # the packaged extension exists and nothing it is built from changed since
  local vsix=$REPO/vscode-client/cutegen.vsix client=$REPO/vscode-client
  [ -f "$vsix" ] && [ -z "$(find "$client/src" "$client/package.json" "$client/package-lock.json" \
    "$client/esbuild.mjs" "$client/tsconfig.json" -newer "$vsix" -print -quit 2>/dev/null)" ]
}

install_code_server() {
  local dir=$TOOLS/code-server-$CODE_SERVER_VERSION
  if [ ! -f "$dir/.complete" ]; then
    apt_install libkrb5-dev build-essential python3
    say "installing code-server $CODE_SERVER_VERSION from npm into $dir (native build: a few minutes on 2 cores)"
    rm -rf "$dir" && mkdir -p "$dir"
    (cd "$dir" && echo '{"private":true}' > package.json &&
      npm install --no-audit --no-fund --loglevel=error "code-server@$CODE_SERVER_VERSION" > install.log 2>&1) ||
      { tail -40 "$dir/install.log" >&2; die "code-server did not install (log: $dir/install.log)"; }
    touch "$dir/.complete"
  fi
  export CODE_SERVER=$dir/node_modules/.bin/code-server
  XDG_CONFIG_HOME=$(mktemp -d) "$CODE_SERVER" --version >/dev/null || die "code-server does not run"
}
