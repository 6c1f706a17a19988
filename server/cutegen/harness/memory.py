"""The judge's device memory, counted in full-size buffers, and an out-of-memory verdict that names the sizes.

What the judge holds at once (I = the inputs' bytes, O = the outputs'; compare.py works in bounded chunks):
- while inputs are staged: the kernel's input buffers, the trial's fresh values, the output buffers (and in the
  first trial the fp32 reference that sized them): 2 I + 2 O;
- while judging: the input buffers, the output buffers, the truth, one temporary of the reference: I + 3 O
  (a ModelNew's own returned outputs: + O);
- with the fp64 truth also: the inputs and outputs in float64 and one float64 temporary: + 2 I + 4 O.
So a problem whose inputs + outputs + reference (I + 2 O) fit in half the card is judged (I + 3 O < the card),
and the fp64 truth is used where it fits too (else the fp32 reference, and the record says why). The sizes come
from the first trial (its inputs and the reference's outputs, trial.py); when even those do not fit, a meta-device
run of the problem (`plan`) names them without allocating anything.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

FP64_HEADROOM = 0.9  # of the free memory: the fp64 truth is tried only below it (the allocator fragments)


@dataclass
class Plan:
    input_bytes: int
    output_bytes: int | None  # None: the problem does not run on the meta device, sizes unknown until it runs
    outputs: list[tuple[tuple[int, ...], torch.dtype]] | None = None

    def judge_bytes(self, *, fp64: bool = False, returned: bool = False) -> int | None:
        if self.output_bytes is None:
            return None
        i, o = self.input_bytes, self.output_bytes
        judging = i + 3 * o + (o if returned else 0)
        need = max(2 * i + 2 * o, judging)
        return need + (2 * i + 4 * o if fp64 else 0)

    def describe(self) -> str:
        outputs = "unknown (the problem does not run on the meta device)" if self.output_bytes is None else \
            gb(self.output_bytes)
        return f"inputs {gb(self.input_bytes)}, outputs {outputs}"


def gb(nbytes: int | float) -> str:
    """Bytes the way a person reads them: 12.88 GB, 640.0 MB, 25.6 KB."""
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if nbytes >= size:
            return f"{nbytes / size:.2f} {unit}" if unit == "GB" else f"{nbytes / size:.1f} {unit}"
    return f"{int(nbytes)} B"


def plan(problem) -> Plan:
    """The problem's sizes from a meta-device run of get_inputs() and the reference (no memory touched)."""
    try:
        with torch.device("meta"):
            inputs = problem.make_inputs()
            model = problem.make_model()
            with torch.no_grad():
                out = model(*inputs)
    except Exception:  # data-dependent shapes, .item(), an op without a meta kernel: sized when it runs
        return Plan(bytes_of(_inputs_or_empty(problem)), None)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    tensors = [o for o in outs if isinstance(o, torch.Tensor)]
    return Plan(bytes_of(inputs), bytes_of(tensors), [(tuple(o.shape), o.dtype) for o in tensors])


def _inputs_or_empty(problem) -> list:
    try:
        with torch.device("meta"):
            return problem.make_inputs()
    except Exception:
        return []


def bytes_of(values) -> int:
    return sum(x.numel() * x.element_size() for x in values if isinstance(x, torch.Tensor))


def available(device: str) -> int | None:
    """Bytes the judge can still allocate: the driver's free memory plus what torch's allocator keeps cached."""
    if device != "cuda":
        return None
    free, _ = torch.cuda.mem_get_info()
    return free + torch.cuda.memory_reserved() - torch.cuda.memory_allocated()


def total(device: str) -> int | None:
    return torch.cuda.mem_get_info()[1] if device == "cuda" else None


def message(p: Plan, device: str, *, returned: bool = False, cause: str = "") -> str:
    """The out-of-memory verdict's text: the problem's sizes, what the judge holds, what the card has."""
    need = p.judge_bytes(returned=returned)
    held = "" if need is None else (f"; judging it holds about {gb(need)} at once (the input buffers and a trial's "
                                    "fresh values, the outputs, the truth, one temporary of the reference"
                                    + (", the candidate's own outputs" if returned else "") + ")")
    free, size = available(device), total(device)  # both None off a GPU
    card = f"; the GPU has {gb(free)} free of {gb(size)}" if free is not None and size is not None else ""
    tail = f" ({cause})" if cause else ""
    return f"out of memory: the problem's {p.describe()}{held}{card}{tail}"


def check_fits(p: Plan, device: str, *, returned: bool = False, allocated: int = 0) -> str | None:
    """The out-of-memory message when the judge's buffers cannot fit on this device, else None. `allocated`: bytes
    of the plan already held (the first trial's inputs), not needed again."""
    need, free = p.judge_bytes(returned=returned), available(device)
    if need is None or free is None or need - allocated <= free:
        return None
    return message(p, device, returned=returned, cause="refused before allocating the judge's buffers")


def fp64_fits(p: Plan, device: str, *, returned: bool = False, allocated: int = 0) -> bool:
    need, free = p.judge_bytes(fp64=True, returned=returned), available(device)
    return need is None or free is None or need - allocated <= FP64_HEADROOM * free
