"""GPU: latency of one verify of the softsign example (build + 5 trials + timing) ÷ building and running the
same kernel through torch.utils.cpp_extension.load_inline, in the same call. Both builds start uncached.

    python bench/verify_latency.py --out verify_latency.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

from cutegen.compile import Builder  # noqa: E402
from cutegen.harness.run import verify_kernel  # noqa: E402
from cutegen.harness.worker import Worker  # noqa: E402
from cutegen.settings import Settings  # noqa: E402
from cutegen.toolchain import ABI_INCLUDE, discover  # noqa: E402

KERNEL = ROOT / "examples" / "softsign" / "softsign.cu"

# The same kernel behind a torch binding: what a load_inline-based harness (KernelBench, CuTeGen) compiles.
WRAPPER = r"""
#include <torch/extension.h>
extern "C" int cutegen_forward(const DLTensor*, int, DLTensor*, int, cudaStream_t);
torch::Tensor run(torch::Tensor x) {
  auto y = torch::empty_like(x);
  int64_t shape[8], xs[8], ys[8];
  for (int i = 0; i < x.dim(); ++i) { shape[i] = x.size(i); xs[i] = x.stride(i); ys[i] = y.stride(i); }
  DLTensor in{x.data_ptr(), {kDLCUDA, 0}, (int32_t)x.dim(), {kDLFloat, 32, 1}, shape, xs, 0};
  DLTensor out{y.data_ptr(), {kDLCUDA, 0}, (int32_t)y.dim(), {kDLFloat, 32, 1}, shape, ys, 0};
  cutegen_forward(&in, 1, &out, 1, at::cuda::getCurrentCUDAStream());
  return y;
}
"""


def cutegen_verify(tc, settings) -> float:
    state = Path(tempfile.mkdtemp())
    worker = Worker()
    t = time.perf_counter()
    rec = verify_kernel(KERNEL, Builder(tc, settings, state), worker, timing=True, state_dir=state)
    elapsed = time.perf_counter() - t
    worker.stop()
    assert rec.verdict == "pass", rec.message
    return elapsed


def load_inline_verify(tc) -> float:
    import torch
    from torch.utils.cpp_extension import load_inline

    t = time.perf_counter()
    src = KERNEL.read_text() + "\n#include <ATen/cuda/CUDAContext.h>\n" + WRAPPER.replace("#include <torch/extension.h>", "")
    mod = load_inline(name=f"softsign_inline_{int(time.time())}", cpp_sources="torch::Tensor run(torch::Tensor x);",
                      cuda_sources="#include <torch/extension.h>\n" + src, functions=["run"],
                      extra_include_paths=[tc.cutlass_include, str(ABI_INCLUDE)],
                      extra_cuda_cflags=["-std=c++17", *tc.gencode, "-O3"],
                      build_directory=tempfile.mkdtemp(), verbose=False)
    sys.path.insert(0, str(ROOT / "examples" / "softsign"))
    import softsign  # the problem

    model = softsign.Model().cuda()
    for seed in range(5):
        torch.manual_seed(seed)
        with torch.device("cuda"):
            x = softsign.get_inputs()[0]
        torch.testing.assert_close(mod.run(x), model(x), atol=1e-4, rtol=1e-4)
    from cutegen.harness.timing import time_cuda
    time_cuda(lambda: mod.run(x))
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    settings = Settings(test_timeout=300)
    tc = discover(settings)
    ours = cutegen_verify(tc, settings)
    theirs = load_inline_verify(tc)
    print(f"verify softsign: cutegen {ours:.1f} s, load_inline path {theirs:.1f} s → ratio {ours / theirs:.3f} (target ≤ 0.3)")
    if args.out:
        args.out.write_text(json.dumps({"cutegen_s": ours, "load_inline_s": theirs, "ratio": ours / theirs}, indent=1))


if __name__ == "__main__":
    main()
