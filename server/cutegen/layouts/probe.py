"""The probe build: the real compiler names the type of every CuTe object a file declares.

A shadow copy of the file (never the user's) gets, right after each declaration's `;` on the same line,
`static_assert(sizeof(::cutegen_layout_probe<LINE, COL, decltype(NAME)>) > 0, "");`. The probe template is
declared but never defined (a pre-included header), so each probe is an error that EDG reports with the
type spelled out, once per template instantiation ("detected during instantiation of ... [with N=4]").
Errors stop the compile after the front end, so a probe build costs less than the check tier's
`nvcc -ptx`, and the error limit is lifted so that no probe is lost.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from cutegen.build.cache import cache_key
from cutegen.build.includes import user_headers
from cutegen.diagnostics import parse_log
from cutegen.diagnostics.cute_types import cute_notation, template_bindings
from cutegen.files import write_atomic
from cutegen.layouts.render import render
from cutegen.layouts.scan import Declaration, find_declarations
from cutegen.settings import Settings
from cutegen.state import StateDir
from cutegen.toolchain import ABI_INCLUDE, TORCH_NVCC_FLAGS, Toolchain, includes_torch, torch_include_dirs

PROBE = "cutegen_layout_probe"
PROBE_HEADER = f"// CuTeGen layout probe: declared, never defined.\ntemplate <int, int, class> struct {PROBE};\n"
SCHEMA = 1
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

    def line_text(self, several: bool) -> str:
        prefix = f"[{self.instantiation}] " if several and self.instantiation else ""
        return f"{prefix}{self.name}: {self.layout}"


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
    facts, seen = [], set()
    for decl, type_text, m in hits:
        type_text = _expand_aliases(type_text, aliases)
        kind, text = render(type_text)
        if kind is None:
            continue  # not a CuTe object (an int, a lambda, a struct of the user's)
        instantiation = _instantiation(m.frames[0].what) if m.frames else None
        key = (decl.line, decl.col, instantiation)
        if key in seen:
            continue
        seen.add(key)
        facts.append(LayoutFact(decl.name, decl.line, decl.col, kind, text.replace("cutlass::", ""), instantiation,
                                type_text))
    facts.sort(key=lambda f: (f.line, f.col))
    return facts


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


class LayoutProbe:
    """Runs probe builds, cached by file text (and flags, user headers, toolchain) under `.cutegen/layouts/`."""

    def __init__(self, toolchain: Toolchain, settings: Settings, state_dir: Path):
        self.toolchain, self.settings = toolchain, settings
        self.root = StateDir(state_dir).layouts
        self._procs: dict[str, subprocess.Popen] = {}
        self._lock = threading.Lock()

    def flags(self, path: Path, text: str) -> list[str]:
        """The check tier's flags (torch's headers where the file includes them: Builder._flags), front end only."""
        tc, s = self.toolchain, self.settings
        flags = ["-std=c++17", *tc.gencode, f"-I{tc.cutlass_include}", f"-I{ABI_INCLUDE}", f"-I{path.parent}"]
        flags += [f"-I{d}" for d in s.include_dirs]
        if includes_torch(text):
            flags += [f for d in torch_include_dirs() for f in ("-isystem", d)] + list(TORCH_NVCC_FLAGS)
        # -w: only the probes' errors matter; the error limit (100 by default) would drop probes.
        return flags + ["-ptx", "-w", "-Xcicc", "--error_limit=1000000", *s.extra_flags]

    def key(self, path: Path, text: str) -> str:
        """The build cache's key, for a probe build: the toolchain, the path and flags, the text, its headers."""
        headers = user_headers(text, path.parent, [Path(d) for d in self.settings.include_dirs])
        return cache_key(tier=f"layout-probe-{SCHEMA}", fingerprint=self.toolchain.fingerprint,
                         command_flags=[str(path), *self.flags(path, text)], text=text, headers=headers)

    def cached(self, path: str | Path, text: str | None = None) -> ProbeResult | None:
        """The stored result for this version of the file, without compiling; None if there is none."""
        path = Path(path).resolve()
        text = path.read_text(errors="replace") if text is None else text
        return self._load(self.key(path, text))

    def run(self, path: str | Path, text: str | None = None) -> ProbeResult:
        path = Path(path).resolve()
        text = path.read_text(errors="replace") if text is None else text
        key = self.key(path, text)
        hit = self._load(key)
        if hit is not None:
            hit.cached = True
            return hit
        declarations = find_declarations(text)
        result = self._compile(path, text, declarations, key)
        if not result.cancelled and result.problem != "timeout":
            self._store(key, result)
        return result

    def cancel(self, path: str | Path) -> None:
        with self._lock:
            proc = self._procs.get(str(Path(path).resolve()))
        if proc is not None and proc.poll() is None:
            _kill(proc)

    def cancel_all(self) -> None:
        with self._lock:
            procs = list(self._procs.values())
        for proc in procs:
            if proc.poll() is None:
                _kill(proc)

    # -- internals ----------------------------------------------------------------------------------

    def _compile(self, path: Path, text: str, declarations: list[Declaration], key: str) -> ProbeResult:
        work = self.root / key[:2] / key
        work.mkdir(parents=True, exist_ok=True)
        header = work / "cutegen_layout_probe.h"
        write_atomic(header, PROBE_HEADER)
        shadow = work / path.name
        write_atomic(shadow, shadow_text(text, declarations))
        command = [self.toolchain.nvcc, *self.flags(path, text), "--pre-include", str(header), str(shadow),
                   "-o", os.devnull]
        started = time.perf_counter()
        log, status = self._run(str(path), command)
        seconds = time.perf_counter() - started
        result = ProbeResult(str(path), declarations=len(declarations), seconds=seconds)
        if status == "cancelled":
            result.cancelled = True
            return result
        if status == "timeout":
            result.problem = "timeout"
            return result
        log = log.replace(str(shadow), str(path))
        result.facts = parse_probe_log(log, str(path), declarations)
        others = [m for m in parse_log(log) if m.severity in ("error", "fatal") and PROBE not in m.text]
        if others:
            result.problem = _first_error(others[0], str(path))
        return result

    def _run(self, owner: str, command: list[str]) -> tuple[str, str]:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        with self._lock:
            older = self._procs.get(owner)
            self._procs[owner] = proc
        if older is not None and older.poll() is None:
            _kill(older)  # a newer version of the same file: the older probe is useless
        try:
            out, _ = proc.communicate(timeout=self.settings.check_timeout)
        except subprocess.TimeoutExpired:
            _kill(proc)
            proc.communicate()
            return "", "timeout"
        finally:
            with self._lock:
                if self._procs.get(owner) is proc:
                    del self._procs[owner]
        if proc.returncode < 0:
            return "", "cancelled"
        return out.decode(errors="replace"), "done"

    def _load(self, key: str) -> ProbeResult | None:
        try:
            return ProbeResult.from_json(json.loads((self.root / key[:2] / key / "result.json").read_text()))
        except (OSError, ValueError, TypeError):
            return None

    def _store(self, key: str, result: ProbeResult) -> None:
        entry = self.root / key[:2] / key
        entry.mkdir(parents=True, exist_ok=True)
        write_atomic(entry / "result.json", json.dumps(result.to_json()))


def _first_error(message, file: str) -> str:
    """The probe build's first real error at the user's line (the innermost frame in `file`, as the check
    places it), never at a header's line number read as if it were the file's."""
    text = cute_notation(message.text)[:200]
    line = message.line if message.file == file else next((f.line for f in message.frames if f.file == file), None)
    if line is not None:
        return f"the file has errors (first at line {line}: {text}); `cutegen check` shows them all"
    where = f"{Path(message.file).name}:{message.line}: " if message.file else ""
    return f"the file has errors (first: {where}{text}); `cutegen check` shows where"


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
