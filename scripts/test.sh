#!/usr/bin/env bash
# Sets up .venv and runs the whole test suite (GPU-marked tests skip without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/python -m pytest -q "$@"
