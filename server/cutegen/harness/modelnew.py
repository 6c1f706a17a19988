"""The compatibility path for KernelBench/CuTeGen `ModelNew` files: CUDA sources in Python strings, built with
`torch.utils.cpp_extension.load_inline` (what existing kernel agents emit). Slow to build (torch headers), but
testable with the same checks; its compile errors are mapped back to lines of the Python file."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import torch

from cutegen.build.inline_sources import is_modelnew  # noqa: F401 (re-exported)
from cutegen.build.load_inline_failure import map_build_errors
from cutegen.harness.gpu_checks import Failed
from cutegen.harness.problem import Problem
from cutegen.harness.verdicts import Verdict
from cutegen.model import Diagnostic


class ModelNewAdapter:
    """Calls ModelNew like a kernel library: (inputs, outputs, stream) → 0, refusing outputs that alias inputs."""

    def __init__(self, path: str | Path, problem: Problem, seed: int):
        module = _import(Path(path))
        model = problem.construct(module.ModelNew, seed)  # the reference's seed: equal random weights
        self.model = model.to("cuda" if torch.cuda.is_available() else "cpu").eval()

    def timed_call(self, inputs: list[torch.Tensor], outputs: list[torch.Tensor], stream) -> None:
        """What is timed: the user's forward alone. Copying its result into the harness's output buffers (done
        by `__call__` for the checks) costs as much as a fast kernel for a large output."""
        self.model(*inputs)

    def __call__(self, inputs: list[torch.Tensor], outputs: list[torch.Tensor], stream) -> int:
        result = self.model(*inputs)
        results = list(result) if isinstance(result, (tuple, list)) else [result]
        if len(results) != len(outputs):
            raise Failed(Verdict.MISMATCH, f"ModelNew returned {len(results)} outputs, the reference {len(outputs)}")
        for r, o in zip(results, outputs):
            if not isinstance(r, torch.Tensor):
                raise Failed(Verdict.MISMATCH, f"ModelNew returned a {type(r).__name__}, not a tensor")
            for x in inputs:
                if isinstance(x, torch.Tensor) and _shares_memory(r, x):
                    raise Failed(Verdict.OUTPUT_ALIASES_INPUT, "ModelNew returned (a view of) its input as the output: "
                                                          "the result must be written to new memory")
            o.copy_(r)
        return 0


def _shares_memory(a: torch.Tensor, b: torch.Tensor) -> bool:
    sa, sb = a.untyped_storage(), b.untyped_storage()
    a0, b0 = sa.data_ptr(), sb.data_ptr()
    return a0 < b0 + sb.nbytes() and b0 < a0 + sa.nbytes()


def _import(path: Path):
    name = f"cutegen_modelnew_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(name, path)
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
