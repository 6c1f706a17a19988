#!/usr/bin/env bash
# Sets up .venv and runs the main job on a bundled example: check a CuTe kernel, print its diagnostics
# and resource usage, then the same for a broken kernel (which exits non-zero, as a check should).
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || exit 1
.venv/bin/cutegen check --verbose examples/softsign/softsign.cu || exit 1
echo
echo "A broken kernel (copy with mismatched ranks):"
.venv/bin/cutegen check tests/corpus/errors/copy_rank_mismatch.cu
test $? -eq 1
