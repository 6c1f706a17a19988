"""What runs inside the worker process, on the GPU: correctness trials, integrity checks, timing.

Every check that fails is a verdict with its own name, because LLM-written kernels cheat in known ways:
constant outputs, mutated inputs, work left running on another stream, results cached across calls.
"""

from __future__ import annotations

import itertools

import torch

from cutegen.harness.abi import SCALARS, KernelLibrary
from cutegen.harness.compare import compare
from cutegen.harness.problem import Problem
from cutegen.harness.verdicts import Verdict
from cutegen.harness.timing import throughput, time_interleaved

SUSPICIOUS_SPEEDUP = 10.0  # over eager: re-verified with extra trials before it is believed


class Failed(Exception):
    """A failed check: `verdict` names it, `message` says what was seen."""

    def __init__(self, verdict: Verdict, message: str, **details):
        super().__init__(message)
        self.verdict, self.message, self.details = Verdict(verdict), message, details

    def to_json(self) -> dict:
        return {"verdict": self.verdict.value, "message": self.message, **self.details}


def judge(problem: Problem, lib: KernelLibrary, *, trials: int, seed: int, timing: bool, baselines: list[str]) -> dict:
    """`lib` is anything called as lib(inputs, outputs, stream) -> error code: a KernelLibrary on the GPU, or
    a Python stand-in on the CPU (the checks themselves are device-agnostic; timing needs CUDA)."""
    model = problem.make_model(seed).to(_device()).eval()
    with torch.no_grad():
        buffers, outs = _trial(problem, model, lib, seed, None, None)
        for t in range(1, trials):
            buffers, outs = _trial(problem, model, lib, seed + t, buffers, outs)
        result = {"verdict": Verdict.PASS.value, "trials": trials, "message": f"correct on {trials} trials with fresh random inputs"}
        if timing:
            result.update(_times(problem, model, lib, buffers, outs, baselines))
            speedup = result.get("speedup_vs_eager", 0.0)
            if speedup > SUSPICIOUS_SPEEDUP:
                for t in range(trials, trials + 20):
                    buffers, outs = _trial(problem, model, lib, seed + 1000 + t, buffers, outs)
                result["suspicious"] = f"{speedup:.1f}× faster than eager: re-verified on 20 more trials"
    return result


def _device() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


def _sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def _fresh_inputs(problem: Problem) -> list:
    """get_inputs()'s tensors on the device, and its Python numbers as they are (the reference takes them so;
    the kernel gets them as 0-d tensors: abi.kernel_arguments)."""
    with torch.device(_device()):
        inputs = problem.make_inputs()
    bad = [type(x).__name__ for x in inputs if not isinstance(x, (torch.Tensor, *SCALARS))]
    if bad:
        raise Failed(Verdict.PROBLEM_ERROR, f"get_inputs() returned values the kernel ABI cannot pass ({', '.join(bad)}): "
                                       "tensors and Python numbers only")
    return [x.to(_device()).contiguous() if isinstance(x, torch.Tensor) else x for x in inputs]


def _arguments(lib, values: list) -> list:
    """What `lib` is called with: the ABI takes numbers as 0-d tensors (KernelLibrary.arguments); a ModelNew or a
    Python stand-in takes the values as the reference does."""
    prepare = getattr(lib, "arguments", None)
    return prepare(values) if prepare else values


def _tensors(values: list) -> list[torch.Tensor]:
    return [x for x in values if isinstance(x, torch.Tensor)]


def _trial(problem, model, lib, seed, buffers, prev_outs):
    """One trial. From the second on, fresh values are written into the SAME input buffers, so a kernel
    that caches results by pointer is caught instead of being handed a new address."""
    torch.manual_seed(seed)
    fresh = _fresh_inputs(problem)
    if buffers is None:
        buffers = fresh
    else:  # tensors refilled in place; numbers replaced
        buffers = [b.copy_(f) if isinstance(b, torch.Tensor) else f for b, f in zip(buffers, fresh)]
        del fresh
    ref = model(*buffers)
    refs = list(ref) if isinstance(ref, (tuple, list)) else [ref]
    before = [b.clone() for b in _tensors(buffers)]
    outs = [_poisoned_like(r) for r in refs]
    _sync()
    stream = torch.cuda.current_stream() if torch.cuda.is_available() else None
    code = lib(_arguments(lib, buffers), outs, stream)
    if code != 0:
        raise Failed(Verdict.LAUNCH_ERROR, f"cutegen_forward returned {code} (a cudaError_t: {_cuda_error_name(code)})")
    if stream is not None:
        stream.synchronize()  # what the caller's stream promises now...
    on_return = [o.clone() for o in outs]
    _sync()  # ...and what the whole device finished later
    if any(not _same_bits(a, b) for a, b in zip(on_return, outs)):
        raise Failed(Verdict.OTHER_STREAM, "outputs changed after the call's stream was done: work runs on another "
                                      "stream and is not finished when cutegen_forward returns")
    for b, x in zip(before, _tensors(buffers)):
        if not _same_bits(b, x):
            raise Failed(Verdict.INPUTS_MUTATED, "the kernel wrote into its inputs (they must stay unchanged)")
    for i, (o, r) in enumerate(zip(outs, refs)):
        _check_output(problem, i, o, r, prev_outs[i] if prev_outs else None, seed)
    return buffers, outs


def _check_output(problem, i, out, ref, prev, seed):
    if out.numel() > 1 and ref.numel() > 1:
        first = out.reshape(-1)[0]
        if bool((out == first).all()) and not bool((ref == ref.reshape(-1)[0]).all()):
            kind = "zero" if float(first) == 0.0 else f"constant ({float(first):.6g})"
            raise Failed(Verdict.CONSTANT_OUTPUT, f"output {i} is {kind} everywhere; the reference is not")
    atol, rtol = problem.tolerance(str(ref.dtype).removeprefix("torch."))
    mismatch = compare(out, ref, atol, rtol)
    if mismatch is None:
        return
    if prev is not None and _same_bits(out, prev):
        raise Failed(Verdict.CACHED_RESULTS, "new input values gave bit-identical outputs to the previous call: results "
                                        "are cached across calls instead of computed", mismatch=mismatch.to_json())
    raise Failed(Verdict.MISMATCH, f"output {i}: {mismatch.message} (atol={atol:g}, rtol={rtol:g}, seed {seed})",
                  mismatch=mismatch.to_json())


def _same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Bitwise equality: NaN poison equals itself here (torch.equal says NaN != NaN)."""
    return a.shape == b.shape and torch.equal(a.reshape(-1).view(torch.uint8), b.reshape(-1).view(torch.uint8))


def _poisoned_like(ref: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(ref, memory_format=torch.contiguous_format)
    if out.is_floating_point():
        out.fill_(float("nan"))
    else:
        out.fill_(-123456789 if out.dtype not in (torch.uint8, torch.bool, torch.int8) else 77)
    return out


def _times(problem, model, lib, inputs, outs, baselines) -> dict:
    """The kernel and its baselines, timed round-robin on the same rotated inputs (see time_interleaved)."""
    stream = torch.cuda.current_stream()
    sets = _rotation(inputs)

    def rotating(call):  # each timed function walks the input sets on its own
        turn = itertools.cycle(sets)
        return lambda: call(next(turn))

    args = {id(xs): _arguments(lib, xs) for xs in sets}  # numbers made 0-d tensors once, not per call
    fns = {"kernel": rotating(lambda xs: lib.timed_call(args[id(xs)], outs, stream))}
    if "eager" in baselines:
        fns["eager"] = rotating(lambda xs: model(*xs))
    if "compile" in baselines:
        compiled = _compiled(problem, model)
        compiled(*inputs)  # compile outside the timed region
        fns["compile"] = rotating(lambda xs: compiled(*xs))
    timings = time_interleaved(fns)
    kernel = timings["kernel"]
    nbytes = sum(x.numel() * x.element_size() for x in [*_tensors(inputs), *outs])
    dtype = str(outs[0].dtype).removeprefix("torch.")
    result = {"timing": kernel.to_json(), "throughput": throughput(kernel.median_ms / 1e3, nbytes, problem.flops(), dtype)}
    for name, key in (("eager", "eager"), ("compile", "torch_compile")):
        if name in timings:
            result[key] = timings[name].to_json()
            result[f"speedup_vs_{name}"] = timings[name].median_ms / kernel.median_ms
    return result


ROTATE_BELOW = 1 << 30  # bytes of inputs under which timing rotates among 3 input sets


def _rotation(inputs: list[torch.Tensor]) -> list[list[torch.Tensor]]:
    """Small inputs are rotated among copies, so no trial reads what the previous one left in a cache (the L2
    flush covers L2; rotation also covers TLBs and L1). Large inputs cannot stay cached anyway."""
    if sum(x.numel() * x.element_size() for x in _tensors(inputs)) >= ROTATE_BELOW:
        return [inputs]
    return [inputs] + [[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs] for _ in range(2)]


_COMPILED: dict = {}


def _compiled(problem, model):
    key = str(problem.path)
    if key not in _COMPILED:
        _COMPILED[key] = torch.compile(model)
    return _COMPILED[key]


def _cuda_error_name(code: int) -> str:
    try:
        from cuda.bindings import runtime  # present with recent CUDA Python; optional
        return runtime.cudaGetErrorName(code)[1].decode()
    except Exception:
        return {1: "cudaErrorInvalidValue", 2: "cudaErrorMemoryAllocation", 9: "cudaErrorInvalidConfiguration",
                98: "cudaErrorInvalidDeviceFunction", 209: "cudaErrorNoKernelImageForDevice",
                700: "cudaErrorIllegalAddress", 719: "cudaErrorLaunchFailure"}.get(code, "see cudaGetErrorName")
