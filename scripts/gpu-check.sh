#!/usr/bin/env bash
# Everything the GPU side needs, in one call on the device machine (no package index there):
# installs the carried wheels (.whl/: nvidia-cutlass for the CuTe headers), runs the GPU-marked tests,
# the benchmarks and the examples, and writes logs under $OUT.
#   device run, carry [".whl"]:  bash scripts/gpu-check.sh [pytest args...]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/cutegen-gpu-out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
# .whl/ holds nvidia-cutlass; .whl/agent/ the pure-Python packages the GPU image lacks (openai, unidiff, pygls,
# lsprotocol, pytest-lsp, ...): see the README's "GPU checks" for the download command.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
  .whl/*.whl $(ls .whl/agent/*.whl 2>/dev/null) || exit 1
export PYTHONPATH=/tmp/site:$PWD/server:$PWD
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"
python3 -m pytest -q -m gpu tests/gpu tests/knowledge tests/agent -p no:cacheprovider 2>&1 | tee "$OUT/gpu-tests.log"
python3 bench/examples_bench.py --out "$OUT/examples.json" 2>&1 | tee "$OUT/examples.log"
python3 bench/verify_latency.py --out "$OUT/verify_latency.json" 2>&1 | tee "$OUT/verify_latency.log"
python3 bench/ncu_agreement.py --out "$OUT/ncu.json" 2>&1 | tee "$OUT/ncu.log"
python3 bench/agent_optimize_step.py --out "$OUT/agent_optimize_step.json" 2>&1 | tee "$OUT/agent.log"
python3 bench/profile_bench.py --out "$OUT/profile.json" --save /tmp/profiles 2>&1 | tee "$OUT/profile.log"; tar czf "$OUT/profiles.tgz" -C /tmp profiles
