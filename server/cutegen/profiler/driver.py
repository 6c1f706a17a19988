"""The process Nsight Compute runs: warm-up calls, then ONE call inside the NVTX range `cutegen_profile`,
so only the kernels of that call are profiled (not input generation, not the reference, not warm-up).

    python -m cutegen.profiler.driver --problem P.py (--library K.so | --reference)
"""

from __future__ import annotations

import argparse

import torch

from cutegen.harness.problem import load_problem
from cutegen.profiler.signals import NVTX_RANGE as RANGE


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--problem", required=True)
    ap.add_argument("--library")
    ap.add_argument("--reference", action="store_true", help="profile the PyTorch reference instead (a baseline)")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--calls", type=int, default=1, help="calls inside the profiled range")
    ap.add_argument("--no-reference", action="store_true",
                    help="do not run the reference on the GPU (output shapes from the meta device): under the "
                         "sanitizer only the kernel's own launches are checked")
    args = ap.parse_args()
    problem = load_problem(args.problem)
    torch.manual_seed(0)
    with torch.device("cuda"):
        inputs = problem.make_inputs()
    model = problem.make_model().cuda().eval()
    with torch.no_grad():
        ref = _meta_outputs(problem) if args.no_reference and not args.reference else None
        if ref is None:
            ref = model(*inputs)
        if args.reference:
            call = lambda: model(*inputs)  # noqa: E731
        else:
            from cutegen.harness.abi import KernelLibrary, kernel_arguments

            lib = KernelLibrary(args.library)
            outs = [torch.empty_like(r, device="cuda") for r in (ref if isinstance(ref, (tuple, list)) else [ref])]
            stream = torch.cuda.current_stream()
            kernel_inputs = kernel_arguments(inputs)
            call = lambda: lib(kernel_inputs, outs, stream)  # noqa: E731
        del ref
        for _ in range(args.warmup):
            call()
        torch.cuda.synchronize()
        # Kernel replay saves and restores device memory between passes: hand back what the profiled call
        # does not use (the reference's output, the allocator's free blocks), so there is less to save.
        torch.cuda.empty_cache()
        torch.cuda.nvtx.range_push(RANGE)
        for _ in range(args.calls):
            call()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()


def _meta_outputs(problem):
    """The reference's outputs as meta tensors (shapes and dtypes, no GPU work), or None when the model cannot
    run on the meta device."""
    torch.manual_seed(0)
    try:
        with torch.device("meta"):
            return problem.make_model()(*problem.make_inputs())
    except Exception:
        return None


if __name__ == "__main__":
    main()
