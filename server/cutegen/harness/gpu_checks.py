"""What runs inside the worker process, on the GPU: correctness trials, integrity checks, timing.

Every check that fails is a verdict with its own name, because LLM-written kernels cheat in known ways:
constant outputs, mutated inputs, work left running on another stream or started before its inputs were
written, results cached across calls, lazy or expanded outputs. The trials (trial.py) call the kernel as a
PyTorch program does (calls.py) and judge it against the truth (truth.py) in bounded memory (memory.py).
"""

from __future__ import annotations

import itertools

import torch

from cutegen.harness import energy, intervals, memory
from cutegen.harness.abi import InitValueError
from cutegen.harness.calls import caller_for
from cutegen.harness.compare import CHUNK
from cutegen.harness.problem import Problem
from cutegen.harness.timing import throughput, time_interleaved
from cutegen.harness.trial import Trials
from cutegen.harness.truth import ReferenceMode
from cutegen.harness.verdicts import Failed, Verdict  # noqa: F401 (Failed: re-exported for callers)

SUSPICIOUS_SPEEDUP = 10.0  # over eager: re-verified with extra trials before it is believed


def judge(problem: Problem, lib, *, trials: int, seed: int, timing: bool, baselines: list[str],
          reference: str = ReferenceMode.FP64.value, caller=None, chunk: int = CHUNK, device: str | None = None,
          init_seed: int | None = None) -> dict:
    """`lib` is anything called as lib(inputs, outputs, stream) -> error code: a candidate in its own process
    (remote.RemoteKernel: how the worker judges), a KernelLibrary or ModelNewAdapter loaded here (benches), or a
    Python stand-in on the CPU (the checks themselves are device-agnostic; timing needs CUDA). `caller` makes the
    calls (calls.py; the tests pass stand-ins that model streams on the CPU). `seed` draws the inputs (the
    worker's is fresh per run and never sent to the candidate); `init_seed` (default `seed`) builds the models'
    random weights, the same for Model and ModelNew, as KernelBench does."""
    init_seed = seed if init_seed is None else init_seed
    device = device or _device()
    caller = caller or (lib.caller() if hasattr(lib, "caller") else caller_for(device))
    run = None
    try:
        with caller.current(), torch.no_grad():
            model = problem.make_model(init_seed).to(caller.device).eval()
            note = _bind_init(problem, lib, init_seed)
            run = Trials(problem, lib, caller, model, reference, chunk=chunk)
            return _judge(run, problem, model, lib, trials=trials, seed=seed, timing=timing, baselines=baselines,
                          note=note)
    except torch.OutOfMemoryError as e:
        _free()
        plan = run.plan if run is not None and run.plan is not None else memory.plan(problem)  # sized on meta
        raise Failed(Verdict.OUT_OF_MEMORY, memory.message(plan, device, returned=hasattr(lib, "returned"),
                                                           cause=str(e).splitlines()[0][:200]), sizes=_sizes(plan)) from None


def _judge(run: Trials, problem, model, lib, *, trials, seed, timing, baselines, note) -> dict:
    for t in range(trials):
        run.run(seed + t)
    result = {"verdict": Verdict.PASS.value, "trials": trials, "accuracy": run.accuracy(),
              "message": f"correct on {trials} trials with fresh random inputs ({_accuracy_text(run)}){note}"}
    if note:
        result["init_inputs_unseen"] = True
    if timing:
        result.update(_times(problem, model, lib, run, baselines, seed))
        speedup = result.get("speedup_vs_eager", 0.0)
        if speedup > SUSPICIOUS_SPEEDUP:
            for t in range(trials, trials + 20):
                run.run(seed + 1000 + t)
            result["suspicious"] = f"{speedup:.1f}× faster than eager: re-verified on 20 more trials"
    return result


def _accuracy_text(run: Trials) -> str:
    against = "the fp64 truth" if run.truth.kind == "fp64" else "the fp32 eager reference"
    text = f"worst error {run.kernel_error:.3g}× the tolerance against {against}"
    if run.reference_error is not None:
        text += f"; the fp32 eager reference's own: {run.reference_error:.3g}×"
    return text + (f"; {run.truth.note}" if run.truth.note else "")


def _bind_init(problem: Problem, lib, seed: int) -> str:
    """Hands a v2 kernel the problem's get_init_inputs(); for a v1 kernel of a problem that has some, the note
    that it cannot see them (so it is right for these values only)."""
    values = problem.init_values(seed)
    bind = getattr(lib, "bind_init", None)
    if bind is not None and getattr(lib, "abi_version", 2) >= 2:
        try:
            bind(values)
        except InitValueError as e:
            raise Failed(Verdict.PROBLEM_ERROR, str(e)) from None
        return ""
    if values and getattr(lib, "abi_version", None) == 1:
        return (f"; note: the kernel exports the v1 entry point, which cannot receive get_init_inputs() = "
                f"{values!r:.60}: it is right for these values only (export cutegen_forward_v2: see abi.h)")
    return ""


def _sizes(plan) -> dict:
    return {"input_bytes": plan.input_bytes, "output_bytes": plan.output_bytes}


def _device() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


def _free() -> None:
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def _tensors(values: list) -> list[torch.Tensor]:
    return [x for x in values if isinstance(x, torch.Tensor)]


def _arguments(lib, values: list) -> list:
    """What `lib` is called with: the ABI takes numbers as 0-d tensors (KernelLibrary.arguments); a ModelNew or a
    Python stand-in takes the values as the reference does."""
    prepare = getattr(lib, "arguments", None)
    return prepare(values) if prepare else values


def _times(problem, model, lib, run: Trials, baselines, seed: int) -> dict:
    assert run.buffers is not None and run.outs is not None  # the trials ran first
    """The kernel and its baselines, timed round-robin on the same rotated inputs (see time_interleaved), fresh
    values drawn into them before every round (a kernel that recognizes repeated inputs still does the work),
    then the last timed call's outputs checked (Trials.check_timed) and the time held against the card's floor."""
    stream = torch.cuda.current_stream()
    sets = _rotation(lib, run.buffers)
    originals: list = [None] * len(sets)

    def refresh(round_: int) -> None:  # private values drawn, then copied into what the kernel is handed
        for i, xs in enumerate(sets):
            originals[i] = None  # the last round's values freed first: one input set's size less at the peak
            torch.manual_seed(seed + 7919 * (round_ + 2) + i)
            with torch.device(run.caller.device):
                fresh = [x.to(run.caller.device) if isinstance(x, torch.Tensor) else x for x in problem.make_inputs()]
            for b, f in zip(_tensors(xs), _tensors(fresh)):
                b.copy_(f)
            originals[i] = fresh

    last: dict = {}

    def rotating(name, call):  # each timed function walks the input sets on its own
        turn = itertools.cycle(range(len(sets)))

        def timed():
            last[name] = next(turn)
            return call(sets[last[name]])
        return timed

    args = {id(xs): _arguments(lib, xs) for xs in sets}  # numbers made 0-d tensors once, not per call
    fns = {"kernel": rotating("kernel", lambda xs: lib.timed_call(args[id(xs)], run.outs, stream))}
    if "eager" in baselines:
        fns["eager"] = rotating("eager", lambda xs: model(*xs))
    if "compile" in baselines:
        compiled = _compiled(problem, model)
        compiled(*sets[0])  # compile outside the timed region
        fns["compile"] = rotating("compile", lambda xs: compiled(*xs))
    refresh(-1)
    handoff = getattr(lib, "handoff_ms", None)
    timings = time_interleaved(fns, before_round=refresh, handoff_ms={"kernel": handoff} if handoff else None)
    joules = _energy(fns["kernel"], timings["kernel"].median_ms + (handoff or 0.0))  # its last call is checked too
    kept = originals[last["kernel"]]
    originals.clear()  # check_timed holds the last reference, and drops it before the truth is computed
    run.check_timed(kept, sets[last["kernel"]])
    del kept
    kernel = timings["kernel"]
    nbytes = sum(x.numel() * x.element_size() for x in [*_tensors(sets[0]), *run.outs])
    dtype = str(run.outs[0].dtype).removeprefix("torch.")
    rates = throughput(kernel.median_ms / 1e3, nbytes, problem.flops(), dtype)
    result = {"timing": kernel.to_json(), "throughput": rates, **({"handoff_ms": handoff} if handoff else {}), **joules}
    _below_floor(rates, kernel.median_ms)
    for name, key in (("eager", "eager"), ("compile", "torch_compile")):
        if name in timings:
            result[key] = timings[name].to_json()
            paired = intervals.ratio(timings[name].block_ms, kernel.block_ms)  # as the record reads it back
            result[f"speedup_vs_{name}"] = paired[0] if paired else timings[name].median_ms / kernel.median_ms
    return result


def _energy(fn, call_ms: float) -> dict:
    """The kernel's J/call for the result ({"energy": ...}), or why there is none ({"energy_unmeasured": ...})."""
    try:
        return {"energy": energy.measure(fn, call_ms=call_ms).to_json()}
    except energy.Unmeasured as e:
        return {"energy_unmeasured": str(e)}


FLOOR_MARGIN = 0.7  # a median under 70 % of the floor: measurement error does not reach that far


def _below_floor(rates: dict, median_ms: float) -> None:
    """The physical floor: each input read once and each output written once at the card's measured copy
    bandwidth, and the problem's FLOPs at its peak; a time under it is no speedup but a measurement the kernel
    forged or an input it did not read."""
    floors = []
    if rates.get("bandwidth_ceiling"):
        floors.append((rates["bytes"] / rates["bandwidth_ceiling"] * 1e3, f"moving {rates['bytes'] / 1e6:.1f} MB at "
                       f"{rates['bandwidth_ceiling'] / 1e12:.2f} TB/s"))
    if rates.get("compute_ceiling") and rates.get("flops"):
        floors.append((rates["flops"] / rates["compute_ceiling"] * 1e3, f"{rates['flops'] / 1e9:.1f} GFLOP at "
                       f"{rates['compute_ceiling'] / 1e12:.0f} TFLOP/s"))
    if not floors:
        return
    floor_ms, what = max(floors)
    if median_ms < FLOOR_MARGIN * floor_ms:
        gpu = rates.get("gpu", "this GPU")
        raise Failed(Verdict.FASTER_THAN_HARDWARE, f"timed at {median_ms:.4g} ms, below what {gpu} can do: {what} "
                                                   f"takes at least {floor_ms:.4g} ms; the time is not a speedup (the "
                                                   "clock was shortened, or inputs were not read)")


ROTATE_BELOW = 1 << 30  # bytes of inputs under which timing rotates among 3 input sets


def _rotation(lib, inputs: list) -> list[list]:
    """Small inputs are rotated among three sets, so no call reads what the previous one left in a cache (the L2
    flush covers L2; rotation also covers TLBs and L1). Large inputs cannot stay cached anyway. Every set is made
    by the kernel's allocator (a candidate's sets are shared with its process, apart from the judge's memory)."""
    if sum(x.numel() * x.element_size() for x in _tensors(inputs)) >= ROTATE_BELOW:
        return [inputs]
    empty = getattr(lib, "empty_like", torch.empty_like)
    return [inputs] + [[empty(x) if isinstance(x, torch.Tensor) else x for x in inputs] for _ in range(2)]


_COMPILED: dict = {}


def _compiled(problem, model):
    key = str(problem.path)
    if key not in _COMPILED:
        _COMPILED[key] = torch.compile(model)
    return _COMPILED[key]
