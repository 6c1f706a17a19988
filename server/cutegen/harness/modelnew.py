"""The compatibility path for KernelBench/CuTeGen `ModelNew` files: CUDA sources in Python strings, built with
`torch.utils.cpp_extension.load_inline` (what existing kernel agents emit). Slow to build (torch headers), but
testable with the same checks; its compile errors are mapped back to lines of the Python file."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import torch

from cutegen.diagnostics import parse_log
from cutegen.harness.gpu_checks import Failed
from cutegen.harness.problem import Problem
from cutegen.harness.verdicts import Verdict
from cutegen.model import Diagnostic, Severity


def is_modelnew(path: str | Path) -> bool:
    p = Path(path)
    return p.suffix == ".py" and re.search(r"^class\s+ModelNew\b", p.read_text(errors="replace"), re.M) is not None


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
                if _shares_memory(r, x):
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
    sys.modules[name] = module
    return module


class BuildFailed(Exception):
    def __init__(self, log: str, diagnostics: list[Diagnostic]):
        super().__init__(diagnostics[0].message if diagnostics else "load_inline failed to build the extension")
        self.log, self.diagnostics = log, diagnostics


def map_build_errors(log: str, py_file: Path) -> list[Diagnostic]:
    """nvcc errors in load_inline's generated cuda.cu/main.cpp → the lines of the Python file holding that code.

    The generated file is the user's string plus a few include lines torch adds, so a line's text identifies
    its place in the Python file; where a text repeats, the neighbouring lines decide."""
    py_lines = py_file.read_text(errors="replace").splitlines()
    out: list[Diagnostic] = []
    for m in parse_log(log):
        if m.severity not in ("error", "fatal") or not m.file:
            continue
        generated = Path(m.file)
        line = _locate(generated, m.line or 0, py_lines) if generated.exists() else None
        text = line and py_lines[line - 1]
        col = (len(text) - len(text.lstrip()) + 1) if text else 1
        out.append(Diagnostic(file=str(py_file), line=line or 1, col=col, end_col=max(col + 1, len(text or "") + 1),
                              severity=Severity.ERROR, message=m.text, code=f"edg-{m.code}" if m.code else "load-inline",
                              root=m.text, data={"generated": f"{generated.name}:{m.line}"}))
    return out


def _locate(generated: Path, line: int, py_lines: list[str]) -> int | None:
    gen = generated.read_text(errors="replace").splitlines()
    if not 0 < line <= len(gen):
        return None
    target = gen[line - 1].strip()
    candidates = [i for i, t in enumerate(py_lines, 1) if t.strip() == target and target]
    if len(candidates) <= 1:
        return candidates[0] if candidates else None

    def context_score(i: int) -> int:
        return sum(1 for d in (-2, -1, 1, 2)
                   if 0 < i + d <= len(py_lines) and 0 < line + d <= len(gen)
                   and py_lines[i + d - 1].strip() == gen[line + d - 1].strip())
    return max(candidates, key=context_score)
