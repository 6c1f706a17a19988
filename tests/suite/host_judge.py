"""A GPU-job handler that runs on the CPU, for the suite's tests: the harness's own checks (gpu_checks.verify:
trials, poisoned outputs, input-mutation and caching checks, compare) on CPU tensors, calling the real nvcc-built
kernel library through the real ctypes ABI. The libraries under host_kernels/ compute on the host, so a wrong
result, a crash (the process dies) or a hang (the worker is killed at the timeout) happen for real.

Timing is GPU-only (CUDA events), so a timing request is answered without figures, honestly."""

from __future__ import annotations

import ctypes
import os


def handle(request: dict) -> dict:
    from cutegen.harness.abi import KernelLibrary
    from cutegen.harness.gpu_checks import Verdict, verify
    from cutegen.harness.problem import ProblemError, load_problem

    if "profile" in request:
        return {"profile_record": {"verdict": "not-run", "message": "no profiler on the CPU"}}
    try:
        problem = load_problem(request["problem"])
        lib = HostLibrary(request["library"])
        reply = verify(problem, lib, trials=request.get("trials", 5), seed=request.get("seed", 0), timing=False,
                       baselines=[])
    except Verdict as v:
        reply = {"verdict": v.name, "message": v.message, **v.details}
    except (ProblemError, LookupError, OSError) as e:
        reply = {"verdict": "problem-error", "message": str(e)}
    reply["pid"] = os.getpid()
    reply["visible_devices"] = os.environ.get("CUDA_VISIBLE_DEVICES")
    return reply


class HostLibrary:
    """KernelLibrary's call with host tensors and no stream."""

    def __init__(self, path: str):
        from cutegen.harness.abi import KernelLibrary

        self.lib = KernelLibrary(path)

    def __call__(self, inputs, outputs, stream) -> int:
        from cutegen.harness.abi import DLTensor, _dl

        keep: list = []
        ins = (DLTensor * max(1, len(inputs)))(*[_dl(t, keep) for t in inputs])
        outs = (DLTensor * max(1, len(outputs)))(*[_dl(t, keep) for t in outputs])
        return self.lib._fn(ins, len(inputs), outs, len(outputs), ctypes.c_void_p(0))
