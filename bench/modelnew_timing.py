"""GPU: the same softsign kernel judged through the kernel ABI and through a KernelBench `ModelNew` file (built by
load_inline), in one process: the two kernel medians must agree within the harness's own noise, which they can
only do if the ModelNew path times the user's forward alone (not the copy of its result into the harness's
output buffer).

    python bench/modelnew_timing.py --out modelnew_timing.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))
sys.path.insert(0, str(ROOT / "bench"))

from gpu_session import engine  # noqa: E402

from cutegen.harness.run import verify_kernel  # noqa: E402
from cutegen.toolchain import ABI_INCLUDE  # noqa: E402

KERNEL = ROOT / "examples" / "softsign" / "softsign.cu"
PROBLEM = ROOT / "examples" / "softsign" / "softsign.py"

# The ABI kernel file itself, behind a torch binding: what a ModelNew submission of the same kernel compiles.
MODELNEW = '''# cutegen: problem={problem}
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

WRAPPER = r"""
#include <ATen/cuda/CUDAContext.h>
torch::Tensor run(torch::Tensor x) {{
  auto y = torch::empty_like(x);
  int64_t shape[8], xs[8], ys[8];
  for (int i = 0; i < x.dim(); ++i) {{ shape[i] = x.size(i); xs[i] = x.stride(i); ys[i] = y.stride(i); }}
  DLTensor in{{x.data_ptr(), {{kDLCUDA, 0}}, (int32_t)x.dim(), {{kDLFloat, 32, 1}}, shape, xs, 0}};
  DLTensor out{{y.data_ptr(), {{kDLCUDA, 0}}, (int32_t)y.dim(), {{kDLFloat, 32, 1}}, shape, ys, 0}};
  cutegen_forward(&in, 1, &out, 1, at::cuda::getCurrentCUDAStream());
  return y;
}}
"""
ext = load_inline(name="softsign_abi_as_modelnew", cpp_sources="torch::Tensor run(torch::Tensor x);",
                  cuda_sources="#include <torch/extension.h>\\n" + {kernel_text!r} + WRAPPER, functions=["run"],
                  extra_include_paths={includes!r}, extra_cuda_cflags=["-std=c++17", *{gencode!r}, "-O3"],
                  build_directory={build!r})


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.run(x)
'''


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    builder, worker, state = engine(test_timeout=300)
    builder.settings.build_timeout = 400
    tc = builder.toolchain
    folder = Path(tempfile.mkdtemp())
    modelnew = folder / "softsign_modelnew.py"
    modelnew.write_text(MODELNEW.format(problem=PROBLEM, kernel_text=KERNEL.read_text(), gencode=list(tc.gencode),
                                        includes=[tc.cutlass_include, str(ABI_INCLUDE)], build=str(folder)))
    results = {}
    try:
        for label, kernel in (("abi", KERNEL), ("modelnew", modelnew)):
            rec = verify_kernel(kernel, builder, worker, timing=True, baselines=("eager",), state_dir=state)
            assert rec.verdict == "pass", f"{label}: {rec.verdict}: {rec.message}"
            results[label] = {"median_ms": rec.timing.median_ms, "spread": rec.timing.spread,
                              "speedup_vs_eager": rec.speedup("eager")}
    finally:
        worker.stop()
    abi, mn = results["abi"], results["modelnew"]
    ratio = mn["median_ms"] / abi["median_ms"]
    noise = max(abi["spread"], mn["spread"])
    results.update(ratio_modelnew_over_abi=ratio, noise=noise, agree=abs(ratio - 1) <= noise)
    for label, r in (("ABI", abi), ("ModelNew", mn)):
        print(f"{label:9s} {r['median_ms']:.4f} ms (p10-p90 spread {r['spread']:.1%}) · {r['speedup_vs_eager']:.2f}x eager")
    print(f"ModelNew / ABI = {ratio:.4f} (harness noise {noise:.1%}): {'agree' if results['agree'] else 'DISAGREE'}")
    if args.out:
        args.out.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
