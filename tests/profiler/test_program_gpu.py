"""On the GPU: a user's own program (a CUDA executable built by the user's own nvcc command, with options of its
own) profiled and sanitized through `cutegen profile --lines -- CMD`, its hot line and its bug at their lines."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = r"""#include <cstdio>
#include <cstdlib>
#include <cstring>
__global__ void hot_loop(float* x, int n, int reps) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  for (int r = 0; r < reps; ++r) v = v * 1.0001f + 0.5f;  // HOT
  x[i] = v;
}
__global__ void past_the_end(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  x[i + n] = 1.0f;  // BUG
}
int main(int argc, char** argv) {
  int n = 1024;
  bool bug = false;
  for (int a = 1; a < argc; ++a) {
    if (!strcmp(argv[a], "--size") && a + 1 < argc) n = atoi(argv[++a]);
    if (!strcmp(argv[a], "--bug")) bug = true;
  }
  float* x;
  cudaMalloc(&x, n * sizeof(float));
  cudaMemset(x, 0, n * sizeof(float));
  for (int k = 0; k < 3; ++k) hot_loop<<<(n + 255) / 256, 256>>>(x, n, 20000);
  if (bug) past_the_end<<<(n + 255) / 256, 256>>>(x, n);
  cudaDeviceSynchronize();
  printf("done %d\n", n);
  return 0;
}
"""


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("program")
    (folder / "bench.cu").write_text(PROGRAM)
    subprocess.run(["nvcc", "-O3", "-lineinfo", "-o", "bench", "bench.cu"], cwd=folder, check=True, timeout=300)
    return folder


def line_of(marker: str) -> int:
    return next(i for i, line in enumerate(PROGRAM.splitlines(), 1) if marker in line)


def cutegen(folder: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "server"),
                                                                     os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", "cutegen", *args], cwd=folder, capture_output=True, text=True,
                          env=env, timeout=600)


def test_a_programs_hot_line_is_shown_at_its_source_line(program):
    done = cutegen(program, "profile", "--lines", "--kernel", "hot_loop", "--launches", "1", "--state-dir",
                   str(program / "state"), "--", "./bench", "--size", "4096")
    print(done.stdout[-3000:], done.stderr[-3000:])
    assert done.returncode == 0
    first = next(line for line in done.stdout.splitlines() if "bench.cu:" in line)
    assert f"bench.cu:{line_of('// HOT')}" in first


def test_a_programs_out_of_bounds_store_is_found_at_its_line(program):
    done = cutegen(program, "sanitize", "--state-dir", str(program / "state"), "--", "./bench", "--bug")
    print(done.stdout[-3000:], done.stderr[-3000:])
    assert done.returncode == 1
    assert f"bench.cu:{line_of('// BUG')}:1: error: memcheck" in done.stdout
