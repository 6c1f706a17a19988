"""Problems in KernelBench's format. Which problem a kernel file is tested against is `pairing.find_problem`."""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType


# Default tolerances by output dtype (KernelBench's): fp32 1e-4, half types 1e-2.
DEFAULT_TOLERANCE = {"float32": 1e-4, "float64": 1e-6, "float16": 1e-2, "bfloat16": 1e-2}


class ProblemError(ValueError):
    """The problem file is missing or not in KernelBench's format; the message says what to fix."""


@dataclass
class Problem:
    path: Path
    module: ModuleType

    @property
    def name(self) -> str:
        return self.path.stem

    def tolerance(self, dtype_name: str) -> tuple[float, float]:
        default = DEFAULT_TOLERANCE.get(dtype_name, 0.0)
        atol = getattr(self.module, "CUTEGEN_ATOL", default)
        rtol = getattr(self.module, "CUTEGEN_RTOL", default)
        return float(atol), float(rtol)

    def flops(self) -> int | None:
        fn = getattr(self.module, "get_flops", None)
        return int(fn()) if callable(fn) else None

    def make_model(self, seed: int = 0):
        return self.construct(self.module.Model, seed)

    def construct(self, cls, seed: int):
        """`cls(*get_init_inputs())` from a fixed random state. KernelBench seeds the same way before building
        `Model` and before building `ModelNew`, so layers with random weights (conv, linear) start equal in
        both; any other order judges a correct candidate wrong."""
        import torch

        init_inputs = self.init_values(seed)
        torch.manual_seed(seed)
        return cls(*init_inputs)

    def init_values(self, seed: int = 0) -> list:
        """get_init_inputs() as the model is built with them (drawn from the same seeded state)."""
        import torch

        torch.manual_seed(seed)  # seeds the CPU and every CUDA generator
        return list(self.module.get_init_inputs())

    def make_inputs(self) -> list:
        return list(self.module.get_inputs())


def load_problem(path: str | Path) -> Problem:
    path = Path(path).resolve()
    if not path.is_file():
        raise ProblemError(f"problem file not found: {path}")
    name = f"cutegen_problem_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:  # not a Python file (by its name)
        raise ProblemError(f"{path.name} cannot be imported: a problem is a Python file (.py)")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # the user's file: report, don't crash
        raise ProblemError(f"{path.name} failed to import: {type(e).__name__}: {e}") from e
    sys.modules[name] = module
    missing = [n for n in ("Model", "get_inputs", "get_init_inputs") if not hasattr(module, n)]
    if missing:
        raise ProblemError(f"{path.name} is not a KernelBench problem: it lacks {', '.join(missing)}")
    return Problem(path, module)
