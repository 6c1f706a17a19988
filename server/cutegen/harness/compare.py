"""Output comparison and a mismatch report a person can act on.

Works on any device and in bounded memory: the outputs are compared in chunks of CHUNK elements (in float64,
so a fp32 error is measured exactly), never as whole-tensor temporaries; a problem can hold 3.2 G elements per
tensor. Only a failing output builds its mask of wrong elements (one byte per element), which the patterns are
recognized from with reductions; the list of bad indices is never materialized.

The error of an output is measured in units of the tolerance: max over elements of
|out - truth| / (atol + rtol·|truth|). At most 1 means every element is within tolerance (harness/truth.py
says which truth and which rule).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import torch

from cutegen.harness.verdicts import Mismatch

CHUNK = 1 << 24  # elements compared at once: ~0.7 GB of float64 temporaries


@dataclass
class Measure:
    """One output against its truth: elements beyond tolerance and the worst error in tolerance units."""

    bad: int
    worst: float


def compare(out: torch.Tensor, ref: torch.Tensor, atol: float, rtol: float, *, chunk: int = CHUNK) -> Mismatch | None:
    """None when `out` matches `ref` within atol + rtol·|ref| everywhere (NaN never matches)."""
    wrong_kind = kind_mismatch(out, ref)
    if wrong_kind is not None:
        return wrong_kind
    if measure(out, ref, atol, rtol, chunk=chunk).bad == 0:
        return None
    return report(out, ref, atol, rtol, chunk=chunk)


def kind_mismatch(out, ref: torch.Tensor) -> Mismatch | None:
    """Type, shape, dtype or device wrong: no element-wise comparison makes sense."""
    if not isinstance(out, torch.Tensor):
        return Mismatch(f"output is a {type(out).__name__}, expected a tensor", "type")
    if out.shape != ref.shape:
        return Mismatch(f"shape {tuple(out.shape)} but the reference has {tuple(ref.shape)}", "shape")
    if out.dtype != ref.dtype:
        return Mismatch(f"dtype {out.dtype} but the reference has {ref.dtype}", "dtype")
    if out.device != ref.device:
        return Mismatch(f"output on {out.device}, the reference on {ref.device}", "device")
    return None


def measure(out: torch.Tensor, truth: torch.Tensor, atol: float, rtol: float, *, chunk: int = CHUNK) -> Measure:
    """The worst error, chunk by chunk, with one host sync; the count of elements beyond tolerance only when
    there are some (a second pass: the failing path)."""
    pieces = list(chunks(out, truth, chunk))
    if not pieces:
        return Measure(0, 0.0)
    worsts = torch.stack([_fast_ratio(o, r, atol, rtol).amax() for o, r in pieces]).tolist()
    for i, w in enumerate(worsts):
        if math.isnan(w):  # NaN, an inf on both sides, a zero tolerance: the careful element-wise rule
            worsts[i] = float(_judge(*pieces[i], atol, rtol)[1].max())
    worst = max(worsts)
    if worst <= 1.0:
        return Measure(0, worst)
    bad = int(torch.stack([(~_judge(o, r, atol, rtol)[0]).sum() for o, r in pieces]).sum())
    return Measure(bad, worst)


def worst_error(out: torch.Tensor, truth: torch.Tensor, atol: float, rtol: float, *, chunk: int = CHUNK) -> float:
    return measure(out, truth, atol, rtol, chunk=chunk).worst


def chunks(a: torch.Tensor, b: torch.Tensor, chunk: int) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """Pairs of flat, equally placed pieces of two same-shape tensors. A non-contiguous one (a transposed view
    returned by a reference) is made contiguous first: the one full-size copy a comparison can cost."""
    fa, fb = _flat(a), _flat(b)
    for start in range(0, fa.numel(), chunk):
        yield fa[start:start + chunk], fb[start:start + chunk]


def _flat(t: torch.Tensor) -> torch.Tensor:
    return (t if t.is_contiguous() else t.contiguous()).reshape(-1)


def _fast_ratio(o: torch.Tensor, r: torch.Tensor, atol: float, rtol: float) -> torch.Tensor:
    """|o - r| / (atol + rtol·|r|) in as few passes as eager allows, in float32 for float32 outputs (the error of
    the error is 2^-24 relative: immaterial next to a tolerance); NaN where the careful rule must decide."""
    if not o.is_floating_point():
        return torch.where(o == r, 0.0, math.inf).to(torch.float32)
    wide = torch.float64 if o.dtype is torch.float64 else torch.float32
    o, r = o.to(wide), r.to(wide)
    return torch.sub(o, r).abs_().div_(r.abs().mul_(rtol).add_(atol))


def _judge(o: torch.Tensor, r: torch.Tensor, atol: float, rtol: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Per element: within tolerance (bool), and the error in tolerance units (0 where equal, inf for NaN)."""
    if not (o.is_floating_point() or o.is_complex()):
        ok = o == r  # integers and bools: exact
        return ok, torch.where(ok, 0.0, math.inf).to(torch.float64)
    o, r = o.double(), r.double()
    diff = (o - r).abs()
    tol = atol + rtol * r.abs()
    exact = o == r  # inf matches inf of the same sign exactly; NaN never equals anything
    ok = exact | ((diff <= tol) & torch.isfinite(o))
    ratio = torch.where(exact, 0.0, diff / tol)
    return ok, torch.nan_to_num(ratio, nan=math.inf)


def report(out: torch.Tensor, ref: torch.Tensor, atol: float, rtol: float, *, chunk: int = CHUNK) -> Mismatch:
    """The full report of a failing output: where the wrong elements are, how wrong, and their pattern."""
    mask = torch.empty(out.shape, dtype=torch.bool, device=out.device)
    flat_mask = mask.reshape(-1)
    max_abs = max_rel = 0.0
    nan_bad, first = 0, None
    for i, (o, r) in enumerate(chunks(out, ref, chunk)):
        ok, _ = _judge(o, r, atol, rtol)
        bad = ~ok
        flat_mask[i * chunk:i * chunk + bad.numel()] = bad
        if not bool(bad.any()):
            continue
        if first is None:
            first = i * chunk + int(torch.argmax(bad.to(torch.uint8)))
        o64, r64 = o.double(), r.double()
        diff = torch.where(bad & torch.isfinite(o64 - r64), (o64 - r64).abs(), torch.zeros_like(o64))
        max_abs = max(max_abs, float(diff.max()))
        max_rel = max(max_rel, float((diff / r64.abs().clamp_min(1e-12)).max()))
        nan_bad += int((bad & torch.isnan(o64)).sum())
    bad_count = int(mask.sum())
    if bad_count == 0 or first is None:  # measure() said otherwise: nothing to report (should not happen)
        return Mismatch("no element is wrong on a second look", "scattered")
    return _message(out, ref, mask, bad_count, first, max_abs, max_rel, nan_bad)


def _message(out, ref, mask, bad, first, max_abs, max_rel, nan_bad) -> Mismatch:
    n = mask.numel()
    idx = [int(i) for i in torch.unravel_index(torch.tensor(first), mask.shape)] if mask.dim() else []
    pattern, where = classify(mask, bad, first, nan_bad)
    exp_v, got_v = float(ref[tuple(idx)]), float(out[tuple(idx)])  # indexing: no copy of a strided reference
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
        if (k < rows.shape[1] and bool(cols_bad[-k:].all()) and bool(rows[:, -k:].all())
                and int(rows.sum()) == k * rows.shape[0]):
            return "row-tail", f"the last {k} columns of every row (the row tail is not handled)"
    for stride in (2, 4, 8, 16, 32, 64, 128, 256, 512, 1024):
        if n % stride:
            continue
        cols = flat.reshape(-1, stride)
        per_col = cols.sum(dim=0)
        full = per_col == cols.shape[0]
        if (bool((full | (per_col == 0)).all()) and 0 < int(full.sum()) < stride // 2 + 1
                and int(full.sum()) * cols.shape[0] == bad):
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
