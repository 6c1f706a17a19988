"""What a candidate's outputs are judged against, and the rule (docs/reference/judge.md, "The truth", says the same).

Reference modes (the `cutegen.referenceMode` setting, `--reference-mode` on the command line):

- `fp64` (the default): for a problem whose outputs are float32, the truth T is the reference evaluated in
  float64 (a copy of the model, its float32 inputs cast to float64) and rounded to float32 (2^-24 relative:
  far below the 1e-4 tolerance; an fp32 overflow is then an inf in both). With e(X) = max over elements of
  |X - T| / (atol + rtol·|T|), the worst element in units of the tolerance, a candidate C passes an output if

      e(C) <= 1   or   e(C) <= e(R)   or   e_R(C) <= 1,

  R being the problem's own float32 eager reference on the same inputs: within tolerance of the exact result,
  or no farther from it than PyTorch itself is, or within tolerance of R (KernelBench's own check, e_R measured
  against R: the fp64 rule widens that check, it never fails a kernel KernelBench passes). So a trial after the
  first computes T only where it can change the verdict, when e_R(C) > 1 (trial.py); the first trial always
  computes it, so the record's e(C) and e(R) are against T. By the worst element (a norm), not element by
  element: two correct fp32 summation orders differ element-wise at random, so "no farther than R at every
  element" would fail every correct kernel somewhere. The verdict's message and the record show e(C) and e(R).
  The fp32 reference is the truth instead (rule e(C) <= 1, and the record's accuracy note says why) for
  half-precision or integer outputs, a reference that does not run in float64 (an op without a double kernel,
  a model that casts to float32 inside), and one whose float64 copy would not fit in memory (memory.py).
- `kernelbench`: KernelBench's own check, for reproducing published numbers: the fp32 eager reference and
  their tolerances (fp32 1e-4, fp16/bf16 1e-2: problem.DEFAULT_TOLERANCE), rule e(C) <= 1.

The truth is computed after the kernel's call, from the (checked unchanged) input buffers: it is never in memory
while the kernel runs, so it cannot be found and copied (the first trial's fp32 result, which sizes the outputs,
is: copying it would pass that trial only, trial.py).
"""

from __future__ import annotations

import copy
from enum import Enum

import torch

from cutegen.harness.compare import CHUNK, worst_error


class ReferenceMode(str, Enum):
    FP64 = "fp64"
    KERNELBENCH = "kernelbench"


def passes(kernel_error: float, reference_error: float | None) -> bool:
    """The fp64 half of the rule, on errors in tolerance units against the truth (reference_error: the fp32
    reference's, None when it is the truth); the other half, e_R(C) <= 1, is trial.py's."""
    return kernel_error <= 1.0 or (reference_error is not None and kernel_error <= reference_error)


class NotFloat64(RuntimeError):
    """The reference did not compute in float64 although its inputs were."""


class Truth:
    """The truth for one problem across its trials. `kind` is "fp64" or "fp32" (it can fall back mid-run)."""

    def __init__(self, model, mode: str, out_dtypes: list[torch.dtype], fp64_fits: bool):
        self.model, self.mode = model, ReferenceMode(mode)
        self.note = ""
        self._model64: torch.nn.Module | None = None
        self.kind = "fp32"
        if self.mode is ReferenceMode.KERNELBENCH:
            return
        if not out_dtypes or any(d is not torch.float32 for d in out_dtypes):
            self.note = "" if not out_dtypes else "outputs are not float32: judged against the problem's own reference"
        elif not fp64_fits:
            self.note = "fp64 truth skipped: its float64 copies would not fit in the GPU's free memory"
        else:
            self.kind = "fp64"

    def evaluate(self, inputs: list, *, fp32: list[torch.Tensor] | None = None) -> list[torch.Tensor]:
        """The truth for these inputs (falls back to the fp32 reference, for good, when fp64 cannot run). `fp32`:
        the fp32 reference on these inputs when it is at hand already."""
        if self.kind == "fp64":
            try:
                return self._fp64(inputs)
            except torch.OutOfMemoryError:
                self._fall_back("fp64 truth skipped: out of memory evaluating the reference in float64")
            except (RuntimeError, TypeError, NotImplementedError) as e:  # e.g. "not implemented for 'Double'"
                first = str(e).splitlines()[0] if str(e) else type(e).__name__
                self._fall_back(f"fp64 truth skipped: the reference does not run in float64 ({first[:160]})")
        return fp32 if fp32 is not None else self.reference(inputs)

    def reference(self, inputs: list) -> list[torch.Tensor]:
        """The problem's own (float32 eager) reference."""
        return listed(self.model(*inputs))

    def _fp64(self, inputs: list) -> list[torch.Tensor]:
        if self._model64 is None:
            self._model64 = copy.deepcopy(self.model).double()
        wide = [x.double() if isinstance(x, torch.Tensor) and x.dtype is torch.float32 else x for x in inputs]
        outs = listed(self._model64(*wide))
        del wide
        if any(o.dtype is not torch.float64 for o in outs):
            raise NotFloat64("the reference computes in float32 inside (its output is not float64)")
        return [o.to(torch.float32) for o in outs]

    def _fall_back(self, note: str) -> None:
        self.kind, self.note, self._model64 = "fp32", note, None
        if torch.cuda.is_available():
            torch.cuda.empty_cache()


def reference_error(truth: Truth, inputs: list, truths: list[torch.Tensor], tolerances: list[tuple[float, float]],
                    *, chunk: int = CHUNK, refs: list[torch.Tensor] | None = None) -> list[float] | None:
    """e(R) of the fp32 reference (`refs`, or computed now) against the fp64 truth, per output; None when the fp32
    reference is the truth."""
    if truth.kind != "fp64":
        return None
    refs = refs if refs is not None else truth.reference(inputs)
    errors = [worst_error(r, t, atol, rtol, chunk=chunk) for r, t, (atol, rtol) in zip(refs, truths, tolerances)]
    del refs
    return errors


def listed(out) -> list[torch.Tensor]:
    return list(out) if isinstance(out, (tuple, list)) else [out]
