"""The result model every adapter presents: diagnostics, resource usage, check results.

Lines and columns are 1-based, as compilers print them; adapters convert (LSP is 0-based).
Everything here is plain data that round-trips through JSON (run records, diagnostic `data`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from enum import Enum
from pathlib import Path


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class Location:
    file: str
    line: int
    col: int = 1
    message: str = ""  # what this place is, e.g. "instantiated from here"


@dataclass
class Diagnostic:
    file: str
    line: int
    col: int
    end_col: int
    severity: Severity
    message: str  # short: the root cause in a few words
    code: str  # stable class id, e.g. "cute-static-assert", "edg-20011", "ptxas-spill"
    source: str = "cutegen"
    root: str = ""  # the text the message is based on (static_assert text, asserted expression, ...)
    explanation: str = ""  # longer Markdown text for hovers (header comment, other errors on the line)
    related: list[Location] = field(default_factory=list)
    data: dict = field(default_factory=dict)  # what a fix needs later, carried to code actions

    def to_json(self) -> dict:
        d = asdict(self)
        d["severity"] = self.severity.value
        return d

    @classmethod
    def from_json(cls, d: dict) -> "Diagnostic":
        d = dict(d)
        d["severity"] = Severity(d["severity"])
        d["related"] = [Location(**r) for r in d.get("related", [])]
        return cls(**d)

    def format(self, relative_to: Path | None = None) -> str:
        """The `file:line:col: severity: message` form terminals and editors understand."""
        path = self.file
        if relative_to is not None:
            try:
                path = str(Path(self.file).resolve().relative_to(relative_to.resolve()))
            except ValueError:
                pass
        return f"{path}:{self.line}:{self.col}: {self.severity.value}: {self.message}"


@dataclass
class KernelResources:
    """What ptxas reported for one kernel (from -Xptxas -v)."""

    name: str  # the kernel's bare name ('elementwise_kernel'): what CodeLens matches a __global__ by
    mangled: str
    arch: str
    registers: int = 0
    barriers: int = 0
    shared_bytes: int = 0
    stack_bytes: int = 0
    spill_stores: int = 0
    spill_loads: int = 0
    line: int | None = None  # the __global__ declaration in the user's file, when found
    instantiation: str = ""  # 'elementwise_kernel<float, 512>': which template instance these figures are for

    def summary(self) -> str:
        s = f"{self.instantiation or self.name}: {self.registers} registers, {self.shared_bytes} B static smem"
        if self.stack_bytes or self.spill_stores or self.spill_loads:
            s += (
                f", {self.stack_bytes} B stack, {self.spill_stores} B spill stores,"
                f" {self.spill_loads} B spill loads"
            )
        return s


@dataclass
class CheckResult:
    """The outcome of one build of one file at one tier."""

    file: str
    tier: str
    ok: bool  # no error diagnostics and the compiler succeeded
    diagnostics: list[Diagnostic]
    resources: list[KernelResources]
    raw_log: str  # everything the tools printed, unabridged
    command: list[str]
    seconds: float  # wall time of the compiler (0 for a cache hit)
    cached: bool = False
    artifact: str | None = None  # path of the .ptx / .so this tier produced
    cancelled: bool = False
    configuration: str = ""  # which CUTLASS, and where the flags came from (compile/configuration.py)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity is Severity.ERROR]

    def to_json(self) -> dict:
        d = asdict(self)
        d["diagnostics"] = [x.to_json() for x in self.diagnostics]
        return d

    @classmethod
    def from_json(cls, d: dict) -> "CheckResult":
        known = {f.name for f in fields(cls)}  # a newer writer's fields are left out, not an error
        d = {k: v for k, v in d.items() if k in known}
        d["diagnostics"] = [Diagnostic.from_json(x) for x in d["diagnostics"]]
        d["resources"] = [KernelResources(**r) for r in d["resources"]]
        return cls(**d)
