#!/usr/bin/env bash
# The VS Code extension's tests: unit tests of its own logic, then the end-to-end test in a real VS Code
# (code-server from npm under Node 24 from npm, Debian's Chromium driven by playwright-core, the packaged
# .vsix installed). Installs what it needs; a second run reuses the tools it installed.
#
#   bash scripts/test-vscode.sh            # unit + e2e
#   bash scripts/test-vscode.sh --unit     # unit tests only (no Chromium, no code-server)
#   bash scripts/test-vscode.sh --e2e [NAME]  # the end-to-end tests only, or one (search: test/e2e/search.test.mjs)
#
# Environment: CUTEGEN_TOOLS (tool cache; default ~/.cache/cutegen/vscode-tools),
# CUTEGEN_E2E_PYTHON (Python with CuTeGen installed; default .venv/bin/python, made by scripts/setup.sh),
# CUTEGEN_ARTIFACTS or OUT (screenshots and logs are copied there too, under vscode-e2e/),
# CUTEGEN_E2E_SLOW (multiplies the e2e's waits on a slow machine).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
MODE=${1:-all}
E2E_ONLY=${2:-}  # with --e2e: one end-to-end test file's name (e2e, search)
source scripts/lib/vscode-tools.sh  # say, die, apt_install, install_node, package_vsix, install_code_server

install_node
if [ "$MODE" = "--unit" ]; then
  package_vsix --unit
  say "done (unit tests only) in $(($(date +%s) - TOOLS_START)) s"
  exit 0
fi
if [ "$MODE" = "--e2e" ]; then package_vsix --no-unit; else package_vsix; fi
install_code_server

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
if [ -n "$E2E_ONLY" ]; then
  [ -f "test/e2e/$E2E_ONLY.test.mjs" ] || die "no end-to-end test test/e2e/$E2E_ONLY.test.mjs"
  timeout --kill-after=30 2400 node --test --test-timeout=2400000 "test/e2e/$E2E_ONLY.test.mjs" || status=$?
else
  timeout --kill-after=30 3600 npm run -s test:e2e || status=$?
fi
say "screenshots and logs: vscode-client/test-artifacts/${CUTEGEN_ARTIFACTS:+ and $CUTEGEN_ARTIFACTS/vscode-e2e/}${OUT:+ and $OUT/vscode-e2e/}"
say "done in $(($(date +%s) - TOOLS_START)) s (exit $status)"
exit $status
