#!/usr/bin/env bash
# Downloads, here, the wheels the GPU machine needs but cannot fetch (it has no package index): the CuTe headers
# (nvidia-cutlass) into .whl/ and the pure-Python packages of the agent and language server into .whl/agent/.
# Also Debian's bubblewrap .deb (the candidate sandbox) into .whl/, unpacked on the device by gpu-check.sh.
# Both folders are git-ignored; carry ".whl" in the device call and run scripts/gpu-check.sh there.
set -euo pipefail
cd "$(dirname "$0")/.."
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >> .git/info/exclude
platform=(--only-binary=:all: --python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64
          --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64)
python3 -m pip download -q --no-deps "${platform[@]}" -d .whl nvidia-cutlass==4.2.0.0
# pyseccomp: the jail's seccomp filter (pure Python over the system's libseccomp.so.2, which Ubuntu 24.04 has).
# nvidia-ml-py: NVML's Python binding (pynvml, over the driver's libnvidia-ml.so), the judge's energy counter.
python3 -m pip download -q "${platform[@]}" -d .whl/agent openai==3.57.0 unidiff==1.0.1 pygls==2.1.1 \
  lsprotocol==2025.0.0 pytest-lsp==1.0.1 pytest-asyncio==1.5.0 pyseccomp==0.1.2 cpp_demangle==0.1.3 \
  nvidia-ml-py==13.615.71
# bm25s (the knowledge base's ranking: hover and the agent's retrieval) without its numpy: the GPU image has one.
python3 -m pip download -q --no-deps "${platform[@]}" -d .whl/agent bm25s==0.3.16
(cd .whl && rm -f bubblewrap_*.deb && apt-get download bubblewrap >/dev/null)
