"""Output comparison and a mismatch report a person can act on.

Works on any device; it never materializes the list of bad indices (outputs can hold 1.6 G elements):
patterns are recognized with reductions over the mismatch mask.
"""

from __future__ import annotations

import torch

from cutegen.harness.verdicts import Mismatch


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
