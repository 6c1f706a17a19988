#!/usr/bin/env bash
# Creates .venv with CuTeGen, its test tools and a CPU build of torch (the harness's CPU-side logic is tested
# without a GPU). Idempotent: a second run only re-checks the install.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
# torch 2.13.0 is the CPU build this project tests with; the GPU machine brings its own CUDA build.
.venv/bin/python -m pip install -q "torch==2.13.0" -e ".[test]"
