"""The judge as it was before issue 24 (commit 7619416: server/cutegen/harness/gpu_checks.py's judge and its
helpers, harness/compare.py's compare), frozen here as the baseline of bench/judge_overhead.py: "a verify with the
new checks ÷ today's", both run in one process. Correctness only (no timing); not used by the engine.

It synchronizes the device before each call, compares against the fp32 eager reference, keeps whole-tensor
temporaries: exactly what the new judge replaced, so the ratio measures the cost of the new checks.
"""

from __future__ import annotations

import torch

from cutegen.harness.abi import SCALARS
from cutegen.harness.trial import cuda_error_name as _cuda_error_name
from cutegen.harness.verdicts import Failed, Mismatch, Verdict


def judge(problem, lib, *, trials: int, seed: int, timing: bool, baselines: list[str]) -> dict:
    """`lib` is anything called as lib(inputs, outputs, stream) -> error code: a KernelLibrary on the GPU, or
    a Python stand-in on the CPU (the checks themselves are device-agnostic; timing needs CUDA)."""
    model = problem.make_model(seed).to(_device()).eval()
    with torch.no_grad():
        buffers, outs = _trial(problem, model, lib, seed, None, None)
        for t in range(1, trials):
            buffers, outs = _trial(problem, model, lib, seed + t, buffers, outs)
        result = {"verdict": Verdict.PASS.value, "trials": trials, "message": f"correct on {trials} trials with fresh random inputs"}
        assert not timing, "the frozen judge is for correctness runs only"
    return result


def _device() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


def _sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def _fresh_inputs(problem) -> list:
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




# -- harness/compare.py before issue 24 ----------------------------------------------------------------------


def compare(out: torch.Tensor, ref: torch.Tensor, atol: float, rtol: float) -> Mismatch | None:
    """None when `out` matches `ref` within atol + rtol·|ref| everywhere (NaN never matches)."""
    if not isinstance(out, torch.Tensor):
        return Mismatch(f"output is a {type(out).__name__}, expected a tensor", "type")
    if out.shape != ref.shape:
        return Mismatch(f"shape {tuple(out.shape)} but the reference has {tuple(ref.shape)}", "shape")
    if out.dtype != ref.dtype:
        return Mismatch(f"dtype {out.dtype} but the reference has {ref.dtype}", "dtype")
    if out.device != ref.device:
        return Mismatch(f"output on {out.device}, the reference on {ref.device}", "device")
    o, r = out.double() if out.numel() < (1 << 26) else out.float(), ref.to(out.double().dtype if out.numel() < (1 << 26) else torch.float32)
    diff = (o - r).abs()
    ok = diff <= atol + rtol * r.abs()
    ok &= torch.isfinite(o) | (o == r)  # inf must match inf exactly; NaN never matches
    bad_mask = ~ok
    bad = int(bad_mask.sum())
    if bad == 0:
        return None
    return _report(o, r, diff, bad_mask, bad)


def _report(o, r, diff, bad_mask, bad) -> Mismatch:
    n = bad_mask.numel()
    flat = bad_mask.reshape(-1)
    first = int(torch.argmax(flat.to(torch.uint8)))
    idx = list(torch.unravel_index(torch.tensor(first), bad_mask.shape)) if bad_mask.dim() else []
    idx = [int(i) for i in idx]
    finite = torch.where(bad_mask & torch.isfinite(diff), diff, torch.zeros_like(diff))
    max_abs = float(finite.max())
    max_rel = float((finite / r.abs().clamp_min(1e-12)).max())
    nan_bad = int((bad_mask & torch.isnan(o)).sum())
    pattern, where = classify(bad_mask, bad, first, nan_bad)
    exp_v, got_v = float(r.reshape(-1)[first]), float(o.reshape(-1)[first])
    message = (f"{bad:,} of {n:,} elements wrong ({bad / n:.2%}), {where}; max abs error {max_abs:.3g}, "
               f"max rel error {max_rel:.3g}; first at {tuple(idx)}: expected {exp_v:.6g}, got {got_v:.6g}")
    if nan_bad:
        message += f"; {nan_bad:,} NaN (never written, or computed NaN)"
    return Mismatch(message, pattern, bad, n, max_abs, max_rel, idx, exp_v, got_v)


def classify(bad_mask: torch.Tensor, bad: int, first: int, nan_bad: int) -> tuple[str, str]:
    """Name the shape of the error: it usually points straight at the bug (tail guard, vector width, tile)."""
    n = bad_mask.numel()
    flat = bad_mask.reshape(-1)
    if bad >= 0.9 * n:
        return "everything", "nearly every element"
    if bad == n - first:
        return "tail", f"exactly the last {bad:,} elements (a missing or wrong bound on the tail)"
    if bad_mask.dim() >= 2:
        rows = bad_mask.reshape(-1, bad_mask.shape[-1])
        cols_bad = rows.any(dim=0)
        k = int(cols_bad.sum())
        if k < rows.shape[1] and bool(cols_bad[-k:].all()) and bool(rows[:, -k:].all()) and int(rows.sum()) == k * rows.shape[0]:
            return "row-tail", f"the last {k} columns of every row (the row tail is not handled)"
    for stride in (2, 4, 8, 16, 32, 64, 128, 256, 512, 1024):
        if n % stride:
            continue
        cols = flat.reshape(-1, stride)
        per_col = cols.sum(dim=0)
        full = per_col == cols.shape[0]
        if bool((full | (per_col == 0)).all()) and 0 < int(full.sum()) < stride // 2 + 1 and int(full.sum()) * cols.shape[0] == bad:
            offsets = [int(i) for i in torch.nonzero(full).reshape(-1)[:4]]
            return "periodic", f"one element in every {stride} (offsets {offsets}): an indexing or vector-lane bug"
    for block in (65536, 32768, 16384, 8192, 4096, 2048, 1024, 512, 256, 128, 64, 32):
        if n % block or bad % block:
            continue
        blocks = flat.reshape(-1, block).sum(dim=1)
        if bool(((blocks == 0) | (blocks == block)).all()):
            nb = int((blocks == block).sum())
            return "tile-blocks", f"{nb:,} whole aligned blocks of {block} elements (whole tiles/CTAs wrong or skipped)"
    if nan_bad == bad:
        return "nan", "NaN only, scattered (elements never written, or NaN computed)"
    return "scattered", "scattered"
