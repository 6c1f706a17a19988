#!/usr/bin/env bash
# Sets up .venv and runs every test: the VS Code extension (unit tests, then an end-to-end run in a real
# VS Code: code-server + Chromium), then the Python suite (GPU-marked tests skip without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/test-vscode.sh
.venv/bin/python -m pytest -q "$@"
