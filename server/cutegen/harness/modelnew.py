"""The compatibility path for KernelBench/CuTeGen `ModelNew` files: CUDA sources in Python strings, built with
`torch.utils.cpp_extension.load_inline` (what existing kernel agents emit). Slow to build (torch headers), but
testable with the same checks; its compile errors are mapped back to lines of the Python file."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import torch

from cutegen.compile.inline_sources import is_modelnew  # noqa: F401 (re-exported)
from cutegen.compile.load_inline_failure import map_build_errors
from cutegen.harness.compare import kind_mismatch
from cutegen.harness.verdicts import Failed, Verdict
from cutegen.model import Diagnostic


class ModelNewAdapter:
    """Calls ModelNew like a kernel library: (inputs, outputs, stream) → 0. It lives in the candidate process
    (harness/candidate.py), which never loads the problem: the judge sends get_init_inputs()'s values and the seed
    the reference was built from. What forward returns must be plain tensors whose memory holds the values
    (`refusal`); they are copied into the judge's outputs on the caller's stream right away (the consumer a
    program would be: `deliver`), and kept in `returned` until the trial ends, so the judge can see whether they
    still changed after that copy (calls.py)."""

    def __init__(self, path: str | Path, init_values: list, seed: int, device: str | None = None):
        module = _import(Path(path))
        torch.manual_seed(seed)  # as Problem.construct builds Model: equal random weights (KernelBench's order)
        model = module.ModelNew(*init_values)
        self.model = model.to(device or ("cuda" if torch.cuda.is_available() else "cpu")).eval()
        self.returned: list[torch.Tensor] | None = None

    def forward(self, inputs: list) -> list:
        with torch.no_grad():
            result = self.model(*inputs)
        return list(result) if isinstance(result, (tuple, list)) else [result]

    def deliver(self, results: list, inputs: list, outputs: list[torch.Tensor]) -> None:
        """What forward returned, checked (`refusal`, kind, aliasing) and copied into the judge's outputs on the
        current stream: the read a program makes right after the call."""
        if len(results) != len(outputs):
            raise Failed(Verdict.MISMATCH, f"ModelNew returned {len(results)} outputs, the reference {len(outputs)}")
        for i, (r, o) in enumerate(zip(results, outputs)):
            refused = refusal(r, o, i)
            if refused is not None:
                raise refused
            for x in inputs:
                if isinstance(x, torch.Tensor) and _shares_memory(r, x):
                    raise Failed(Verdict.OUTPUT_ALIASES_INPUT, "ModelNew returned (a view of) its input as the output: "
                                                          "the result must be written to new memory")
            wrong = kind_mismatch(r, o)
            if wrong is not None:
                raise Failed(Verdict.MISMATCH, f"output {i}: {wrong.message}", mismatch=wrong.to_json())
            o.copy_(r)
        self.returned = results

    def __call__(self, inputs: list, outputs: list[torch.Tensor], stream) -> int:
        self.deliver(self.forward(inputs), inputs, outputs)
        return 0

    def release(self) -> None:
        self.returned = None


def refusal(r, expected: torch.Tensor, i: int) -> Failed | None:
    """The rule for what a candidate returns: a plain dense torch.Tensor (exactly that type), with real storage
    that holds its values, no two elements at one address. Anything else is refused, not materialized and timed:
    what a subclass does when read is unbounded (it may compute only then, in the judge's untimed copy), and an
    expanded view writes one element for many. A tensor of the wrong shape, dtype or device is a mismatch."""
    if not isinstance(r, torch.Tensor):
        return Failed(Verdict.MISMATCH, f"ModelNew returned a {type(r).__name__} as output {i}, not a tensor")
    if type(r) is not torch.Tensor:
        name = f"{type(r).__module__}.{type(r).__qualname__}"
        return Failed(Verdict.LAZY_OUTPUT, f"output {i} is a {name}, a torch.Tensor subclass: what a candidate returns "
                                            "must be a plain torch.Tensor whose memory holds the values when the "
                                            "call's stream work is done (a subclass can compute them only when read)")
    if r.layout is not torch.strided or r.device.type == "meta" or not _has_storage(r):
        return Failed(Verdict.LAZY_OUTPUT, f"output {i} has no real storage (layout {r.layout}, device {r.device}): "
                                            "its values are not in memory")
    if r.numel() > 1 and _overlaps(r):
        return Failed(Verdict.EXPANDED_OUTPUT, f"output {i} is an expanded or overlapping view (shape "
                                                f"{tuple(r.shape)}, strides {tuple(r.stride())}): several elements "
                                                "share one address; every element must be written to memory of its own")
    return None


def _has_storage(t: torch.Tensor) -> bool:
    try:
        storage = t.untyped_storage()
        needed = (t.storage_offset() + 1 + sum((n - 1) * s for n, s in zip(t.shape, t.stride()))) * t.element_size()
        return t.numel() == 0 or (storage.data_ptr() != 0 and storage.nbytes() >= needed)
    except (RuntimeError, NotImplementedError):  # a wrapper subclass or a functional tensor: no storage to read
        return False


def _overlaps(t: torch.Tensor) -> bool:
    """True when two indices map to one address: a stride 0 on a dimension of size > 1 (expand), or strides too
    small for the sizes below them (as_strided tricks). Dimensions of size 1 never overlap."""
    dims = sorted((s, n) for n, s in zip(t.shape, t.stride()) if n > 1)
    span = 1
    for stride, size in dims:
        if stride < span:
            return True
        span = stride * size
    return False


def _shares_memory(a: torch.Tensor, b: torch.Tensor) -> bool:
    sa, sb = a.untyped_storage(), b.untyped_storage()
    a0, b0 = sa.data_ptr(), sb.data_ptr()
    return a0 < b0 + sb.nbytes() and b0 < a0 + sa.nbytes()


def _import(path: Path):
    name = f"cutegen_modelnew_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:  # not a Python file (by its name)
        raise ImportError(f"{path.name} cannot be imported: a ModelNew is a Python file (.py)")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except RuntimeError as e:  # load_inline's build failure carries nvcc's log
        raise BuildFailed(str(e), map_build_errors(str(e), path)) from e
    except ImportError as e:  # it built, but the library does not load: a declared function nobody defines
        if "undefined symbol" not in str(e):
            raise
        raise BuildFailed(str(e), map_build_errors(str(e), path)) from e
    sys.modules[name] = module
    return module


class BuildFailed(Exception):
    """load_inline could not build (or load) the extension. The diagnostics are the worker's own reading of the
    failure text; the harness's caller replaces them with the check tier's where the check reproduces it
    (harness/run.py), so `cutegen test` and `cutegen check` report a broken ModelNew alike."""

    def __init__(self, log: str, diagnostics: list[Diagnostic]):
        super().__init__(diagnostics[0].message if diagnostics else "load_inline failed to build the extension")
        self.log, self.diagnostics = log, diagnostics
