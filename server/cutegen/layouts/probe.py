"""The probe build: the real compiler names the type of every CuTe object a file declares.

A shadow copy of the file (never the user's) gets, right after each declaration's `;` on the same line,
`static_assert(sizeof(::cutegen_layout_probe<LINE, COL, decltype(NAME)>) > 0, "");`. The probe template is
declared but never defined (a pre-included header), so each probe is an error that EDG reports with the
type spelled out, once per template instantiation ("detected during instantiation of ... [with N=4]").
Errors stop the compile after the front end, so a probe build costs less than the check tier's
`nvcc -ptx`, and the error limit is lifted so that no probe is lost.
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from cutegen.compile import Builder, CompileOutcome, Tier
from cutegen.diagnostics import parse_log
from cutegen.diagnostics.cute_types import cute_notation, template_bindings
from cutegen.layouts.render import render
from cutegen.layouts.scan import Declaration, find_declarations
from cutegen.settings import Settings
from cutegen.toolchain import Toolchain

PROBE = "cutegen_layout_probe"
PROBE_HEADER = f"// CuTeGen layout probe: declared, never defined.\ntemplate <int, int, class> struct {PROBE};\n"
_PROBE_ERROR = re.compile(
    rf'incomplete type "{PROBE}<(?P<line>\d+), (?P<col>\d+), (?P<type>.*?)>"(?: \(aka "{PROBE}<\d+, \d+, (?P<aka>.*)>"\))? is not allowed'
)


@dataclass
class LayoutFact:
    """One CuTe object's concrete type, in one template instantiation."""

    name: str
    line: int
    col: int
    kind: str  # "Layout", "ComposedLayout", "Tensor", "TiledCopy", "TiledMMA", "Tuple", ...
    layout: str  # in CuTe notation; for a Tensor "gmem float (_4,_8):(_1,_4)"
    instantiation: str | None = None  # "N=4" when the declaration is in a template; None otherwise
    type: str = ""  # the compiler's own spelling (canonical, typedefs stripped)
    template: str | None = None  # the instantiation as a user names it: "gemm_tn<half_t, half_t>"
    function: str | None = None  # the template declaring it, when the file instantiates it ("gemm_tn")
    instances: int = 0  # how many instantiations the file makes of that template (0: not in one)

    def line_text(self, several: bool) -> str:
        prefix = f"[{self.instantiation}] " if several and self.instantiation else ""
        return f"{prefix}{self.name}: {self.layout}"

    def shown_as(self, facts: list["LayoutFact"]) -> str:
        """'in gemm_tn<half_t, half_t> (1 of 2)': which of the instantiations among `facts` (this object's, in
        the order the compiler met them) this one is; '' outside templates."""
        mine = [f.instantiation for f in facts if f.name == self.name and f.line == self.line and f.instantiation]
        if self.instantiation and self.instantiation in mine:
            count = max(len(mine), self.instances)
            return f"in {self.template or self.instantiation} ({mine.index(self.instantiation) + 1} of {count})"
        if self.instances == 1 and self.template:  # no dependence on the arguments, one instantiation
            return f"in {self.template} (1 of 1)"
        if self.instances > 1:  # EDG names a type that depends on no template argument once
            return f"the same in all {self.instances} instantiations of {self.function}"
        return ""


@dataclass
class ProbeResult:
    file: str
    facts: list[LayoutFact] = field(default_factory=list)
    declarations: int = 0  # how many declarations were probed
    seconds: float = 0.0
    cached: bool = False
    cancelled: bool = False
    problem: str | None = None  # why facts may be missing (the file has errors, nvcc timed out, ...)

    def at(self, line: int, col: int | None = None) -> list[LayoutFact]:
        return [f for f in self.facts if f.line == line and (col is None or f.col <= col < f.col + len(f.name))]

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> "ProbeResult":
        d = dict(d)
        d["facts"] = [LayoutFact(**f) for f in d.get("facts", [])]
        return cls(**d)


def shadow_text(text: str, declarations: list[Declaration]) -> str:
    """`text` with a probe after each declaration, on the same line (line numbers unchanged)."""
    out, last = [], 0
    for d in sorted(declarations, key=lambda d: d.end):
        named = d.name if d.alias else f"decltype({d.name})"
        out.append(text[last : d.end])
        out.append(f' static_assert(sizeof(::{PROBE}<{d.line}, {d.col}, {named}>) > 0, "");')
        last = d.end
    out.append(text[last:])
    return "".join(out)


def parse_probe_log(log: str, file: str, declarations: list[Declaration]) -> list[LayoutFact]:
    by_place = {(d.line, d.col): d for d in declarations}
    hits = []
    for m in parse_log(log):
        hit = _PROBE_ERROR.search(m.text)
        if not hit or os.path.basename(m.file or "") != os.path.basename(file):
            continue
        decl = by_place.get((int(hit["line"]), int(hit["col"])))
        if decl is not None:
            hits.append((decl, hit["aka"] or hit["type"], m))
    aliases = _alias_types(hits)
    made = _instantiations(hits)
    facts, seen = [], set()
    for decl, type_text, m in hits:
        type_text = _expand_aliases(type_text, aliases)
        kind, text = render(type_text)
        if kind is None:
            continue  # not a CuTe object (an int, a lambda, a struct of the user's)
        frame = _own_frame(decl, m.frames)
        instantiation = _instantiation(frame.what) if frame else None
        key = (decl.line, decl.col, instantiation)
        if key in seen:
            continue
        seen.add(key)
        known = made.get(decl.function or "", [])
        template = _template(frame.what) if frame else (known[0] if len(known) == 1 else None)
        facts.append(LayoutFact(decl.name, decl.line, decl.col, kind, text.replace("cutlass::", ""), instantiation,
                                type_text, template, decl.function if known else None, len(known)))
    facts.sort(key=lambda f: (f.line, f.col))
    return facts


def _own_frame(decl: Declaration, frames):
    """The instantiation of the template that declares `decl`: the frame naming its function. A type that
    depends on none of that template's arguments is reported once, under whatever instantiation made EDG look
    (sgemm_sm80.cu's `gemm_tn` body under `gemm<...>`): no frame of its own then."""
    if decl.function is None:
        return frames[0] if frames else None
    return next((f for f in frames if _function_name(f.what.split(" [with ", 1)[0]) == decl.function), None)


def _instantiations(hits) -> dict[str, list[str]]:
    """{function: the instantiations the file makes of it, as the user names them, in the compiler's order},
    from every probe's frames (an `int`'s or a function pointer's as much as a layout's)."""
    made: dict[str, dict[str, str]] = {}  # by the full bindings: two labels may be cut alike
    for _, _, m in hits:
        for f in m.frames:
            name, label = _function_name(f.what.split(" [with ", 1)[0]), _template(f.what)
            if name and label:
                made.setdefault(name, {})[_instantiation(f.what) or label] = label
    return {name: list(labels.values()) for name, labels in made.items()}


def nothing_at(text: str, line: int) -> str:
    """Why a probed file has no layout on `line`: nothing declared there, or a declaration that no
    instantiation the file makes reaches (a template never called) or that is no CuTe object."""
    declared = [d.name for d in find_declarations(text) if d.line == line]
    if not declared:
        return "no CuTe object declared here"
    return (f"{', '.join(declared)} is declared here, but the compiler gave it no CuTe type: it is in a template "
            "no call in this file instantiates, or it is not a CuTe object")


def _alias_types(hits) -> dict[str, str]:
    """The user's own `using X = T;` as the compiler resolved them: EDG's `aka` keeps such typedefs when they
    sit inside a pointer type (`gmem_ptr<const Element *>`), so they are expanded from the alias probes."""
    return {decl.name: type_text for decl, type_text, m in hits if decl.alias and not m.frames}


def _expand_aliases(type_text: str, aliases: dict[str, str]) -> str:
    if not aliases:
        return type_text
    pattern = re.compile(r"(?<![\w])(?:[A-Za-z_]\w*::)*(" + "|".join(map(re.escape, aliases)) + r")(?![\w<])")
    library = ("cute::", "std::", "cutlass::")
    return pattern.sub(lambda m: m.group() if m.group().startswith(library) else aliases[m.group(1)], type_text)


def _instantiation(what: str) -> str | None:
    bindings = template_bindings(what)
    if not bindings:
        return None
    return ", ".join(f"{k}={cute_notation(v)}" for k, v in bindings.items())


TEMPLATE_MAX = 60  # a kernel's instantiation binds a dozen long types: its name is cut, the bindings stay whole


def _template(what: str) -> str | None:
    """'void gemm_tn(int, ...) [with Alpha=cutlass::half_t, Beta=float]' → 'gemm_tn<half_t, float>'."""
    name, bindings = _function_name(what.split(" [with ", 1)[0]), template_bindings(what)
    if not name or not bindings:
        return None
    args = ", ".join(cute_notation(v).replace("cutlass::", "") for v in bindings.values())
    text = f"{name}<{args}>"
    return text if len(text) <= TEMPLATE_MAX else text[: TEMPLATE_MAX - 2] + "…>"


def _function_name(head: str) -> str | None:
    """The name before the parameter list: the identifier before the first `(` outside `<...>`, its own
    template arguments dropped (`Tensor<A> make<T>(T)` → 'make')."""
    depth = 0
    for j, c in enumerate(head):
        depth += {"<": 1, ">": -1}.get(c, 0)
        if c == "(" and depth == 0:
            before = head[:j].rstrip()
            while before.endswith(">"):  # `make<T>`: its arguments, balanced
                k, d = len(before) - 1, 0
                while k >= 0:
                    d += {">": 1, "<": -1}.get(before[k], 0)
                    if d == 0:
                        break
                    k -= 1
                before = before[:k].rstrip()
            m = re.search(r"(~?[A-Za-z_]\w*)$", before)
            return m[1] if m else None
    return None


class LayoutProbe:
    """Runs probe builds: the Builder's `probe` tier (its flags, cancellation and cache, keyed by the shadow
    text); the facts are read from the cached log again on every hit (milliseconds, no process)."""

    def __init__(self, toolchain: Toolchain, settings: Settings, state_dir: Path, builder: Builder | None = None):
        self.builder = builder or Builder(toolchain, settings, state_dir)

    def cached(self, path: str | Path, text: str | None = None) -> ProbeResult | None:
        """The stored result for this version of the file, without compiling; None if there is none."""
        path = Path(path).resolve()
        text = path.read_text(errors="replace") if text is None else text
        declarations = find_declarations(text)
        outcome = self.builder.stored(Tier.PROBE, path, shadow_text(text, declarations), pre_include=PROBE_HEADER)
        return _result(path, declarations, outcome, cached=True) if outcome is not None else None

    def run(self, path: str | Path, text: str | None = None) -> ProbeResult:
        path = Path(path).resolve()
        text = path.read_text(errors="replace") if text is None else text
        declarations = find_declarations(text)
        # A newer version of the same file (the same job) kills the older probe: it is useless.
        outcome, cached = self.builder.compile(Tier.PROBE, path, shadow_text(text, declarations),
                                               pre_include=PROBE_HEADER)
        return _result(path, declarations, outcome, cached)

    def cancel(self, path: str | Path) -> None:
        self.builder.cancel(self.builder.job_key(Tier.PROBE, Path(path).resolve()))

    def cancel_all(self) -> None:
        self.builder.cancel_all(Tier.PROBE)


def _result(path: Path, declarations: list[Declaration], outcome: CompileOutcome, cached: bool) -> ProbeResult:
    result = ProbeResult(str(path), declarations=len(declarations), seconds=outcome.seconds, cached=cached)
    if outcome.timed_out:
        result.problem = "timeout"
    elif outcome.cancelled or outcome.returncode < 0:  # killed: by a newer version, a shutdown, a signal
        result.cancelled = True
    else:
        result.facts = parse_probe_log(outcome.log, str(path), declarations)
        others = [m for m in parse_log(outcome.log) if m.severity in ("error", "fatal") and PROBE not in m.text]
        if others:
            result.problem = _first_error(others[0], str(path))
    return result


def _first_error(message, file: str) -> str:
    """The probe build's first real error at the user's line (the innermost frame in `file`, as the check
    places it), never at a header's line number read as if it were the file's."""
    text = cute_notation(message.text)[:200]
    line = message.line if message.file == file else next((f.line for f in message.frames if f.file == file), None)
    if line is not None:
        return f"the file has errors (first at line {line}: {text}); `cutegen check` shows them all"
    where = f"{Path(message.file).name}:{message.line}: " if message.file else ""
    return f"the file has errors (first: {where}{text}); `cutegen check` shows where"

