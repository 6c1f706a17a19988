#!/usr/bin/env bash
# Sets up .venv, lints server/ (scripts/lint.sh: a finding not in its baseline fails the run) and runs every
# test: the VS Code extension (unit tests, then an end-to-end run in a real VS Code: code-server + Chromium),
# then the Python suite (GPU-marked tests skip without a GPU).
# pytest prints a line per test folder as it finishes (`-v` for every test name) and the slowest tests;
# extra arguments go to pytest. Compiles are reused between runs (tests/conftest.py; CUTEGEN_TEST_CACHE=off
# for a cold run).
set -euo pipefail
cd "$(dirname "$0")/.."
START=$(date +%s)
say() { echo "[test.sh $(($(date +%s) - START))s] $*"; }
say "setting up .venv (scripts/setup.sh; the first time downloads torch and the other wheels)"
bash scripts/setup.sh
say "lint (scripts/lint.sh: ruff and mypy on server/, against scripts/lint-baseline/)"
bash scripts/lint.sh
say "the VS Code extension (scripts/test-vscode.sh; the first time installs Node 24, code-server, Chromium)"
bash scripts/test-vscode.sh
# A worker per core, up to 4 (CUTEGEN_TEST_WORKERS overrides; 0 runs in this process): most of a test's time is
# one nvcc, a parse or a server round trip on one core, so on 2 cores two workers halve the run (12 min -> 5.5).
# --dist loadfile keeps a file's tests on one worker: a module's engine fixture and its warm GPU worker stay one.
workers=${CUTEGEN_TEST_WORKERS:-$(( $(nproc) < 4 ? $(nproc) : 4 ))}
say "pytest ($workers workers)"
.venv/bin/python -m pytest -q --durations=25 -n "$workers" --dist loadfile "$@"
say "done"
