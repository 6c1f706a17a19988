"""A GPU-job handler that runs on the CPU, for the suite's tests: the harness's own checks (gpu_checks.judge:
trials, poisoned outputs, input-mutation and caching checks, compare) on CPU tensors, calling the real nvcc-built
kernel library through the real ctypes ABI. The libraries under host_kernels/ compute on the host, so a wrong
result, a crash (the process dies) or a hang (the worker is killed at the timeout) happen for real.

Timing: the harness times with CUDA events; here the host kernel and the eager reference are timed on the CPU with
perf_counter (medians of the same number of calls), so the agent's optimize step and the report's speedups have
real, if CPU, figures. torch.compile is not timed on the CPU (no baseline rather than a slow, flaky one)."""

from __future__ import annotations

import ctypes
import os


def handle(request: dict) -> dict:
    from cutegen.harness.gpu_checks import Failed, judge
    from cutegen.harness.problem import ProblemError, load_problem

    if "profile" in request:
        from cutegen.profiler.signals import ProfileVerdict
        from cutegen.records import RunKind, RunRecord

        record = RunRecord(RunKind.PROFILE.value, request["profile"]["kernel"], ProfileVerdict.NOT_RUN, "no profiler on the CPU")
        return {"profile_record": record.to_message()}  # as gpus.handle replies: the record, unsaved here
    try:
        problem = load_problem(request["problem"])
        lib = HostLibrary(request["library"])
        reply = judge(problem, lib, trials=request.get("trials", 5), seed=request.get("seed", 0), timing=False,
                       baselines=[])
        if request.get("timing"):
            reply.update(_cpu_times(problem, lib, "eager" in request.get("baselines", [])))
    except Failed as f:
        reply = f.to_json()
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


def _cpu_times(problem, lib, eager: bool, calls: int = 15) -> dict:
    import statistics
    import time

    import torch

    torch.manual_seed(0)
    inputs = [x.contiguous() for x in problem.make_inputs()]
    model = problem.make_model(0).eval()
    with torch.no_grad():
        outs = [torch.empty_like(model(*inputs))]

        def median_ms(fn) -> tuple[float, list[float]]:
            times: list[float] = []
            budget = time.perf_counter() + 1.0
            while len(times) < 3 or (len(times) < calls and time.perf_counter() < budget):
                start = time.perf_counter()
                fn()
                times.append((time.perf_counter() - start) * 1e3)
            return statistics.median(times), sorted(times)

        def summary(fn) -> dict:
            med, times = median_ms(fn)
            p10, p90 = times[len(times) // 10], times[(9 * len(times)) // 10]
            return {"median_ms": med, "p10_ms": p10, "p90_ms": p90, "spread": (p90 - p10) / med, "trials": len(times)}

        result = {"timing": summary(lambda: lib(inputs, outs, None)), "timed_on": "cpu"}
        if eager:
            result["eager"] = summary(lambda: model(*inputs))
            result["speedup_vs_eager"] = result["eager"]["median_ms"] / result["timing"]["median_ms"]
    return result
