"""compute-sanitizer's text output → findings at user lines: its error blocks parsed (memcheck, racecheck's hazard
report, initcheck, synccheck), then condensed like compile errors, one finding per tool, message and user line,
and turned into diagnostics. A place inside CuTe headers is walked out of to the user line that called it: first
through the frames the sanitizer printed, then through the library's line table (the offset's inline chain).
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass, field

from cutegen.profiler.line_table import FunctionLines, Place
from cutegen.profiler.lines import Folder

EVIDENCE = 4  # threads and addresses kept per finding

_PREFIX = re.compile(r"^=+ ?")
_PLACE = re.compile(r"(?:\bat\s+|Device Frame:\s*)(?P<fn>.+?)\+(?P<offset>0x[0-9a-f]+)"
                    r"\s+in\s+(?P<file>\S+?):(?P<line>\d+)")
_THREAD = re.compile(r"by thread \((?P<t>[\d, ]+)\) in block \((?P<b>[\d, ]+)\)")
_HAZARD_THREAD = re.compile(r"^(?P<kind>Read|Write)\s+Thread \((?P<t>[\d, ]+)\)")
_BLOCK = re.compile(r"in block \((?P<b>[\d, ]+)\)")
# "Address 0x… is out of bounds" (CUDA 12) and "Access to 0x… is out of bounds" (CUDA 13's sanitizer, the H200)
_ADDRESS = re.compile(r"(?:Address|Access to|at __shared__|at __global__)\s+(?P<a>0x[0-9a-f]+)")
_COUNT = re.compile(r"\[(?P<n>[\d,]+) hazards?\]")
# ("ERROR SUMMARY: 825 errors were not printed" follows the total when it is over the print limit: not a total)
_SUMMARY = re.compile(r"(?:ERROR SUMMARY|RACECHECK SUMMARY):\s*(?P<n>[\d,]+)\s+(?:errors?\b(?!\s+were not printed)|"
                      r"hazards? displayed)"
                      r"(?:\s*\((?P<e>[\d,]+) errors?)?")
_NOISE = ("COMPUTE-SANITIZER", "Saved host backtrace", "Host Frame", "ERROR SUMMARY", "RACECHECK SUMMARY",
          "LEAK SUMMARY", "Target application returned")


# -- parsing ----------------------------------------------------------------------------------------


@dataclass
class Report:
    """One error block of the sanitizer's output."""

    tool: str
    message: str
    places: list[tuple[str, Place, int]] = field(default_factory=list)  # (access kind, place, offset), in order
    threads: list[str] = field(default_factory=list)
    addresses: list[str] = field(default_factory=list)
    details: list[str] = field(default_factory=list)
    count: int = 1
    block: str = ""  # a hazard report names the block once, in its headline


def parse(output: str, tool: str) -> tuple[list[Report], int]:
    """The error blocks of one tool's output and the errors its summary counts."""
    reports: list[Report] = []
    errors = 0
    current: Report | None = None
    for raw in output.splitlines():
        if not raw.startswith("="):
            continue
        text = _PREFIX.sub("", raw, count=1)
        if m := _SUMMARY.search(text):
            errors = int((m["e"] or m["n"]).replace(",", ""))
            current = None
            continue
        if not text.strip():
            current = None
            continue
        indented = text.startswith(" ")
        line = text.strip()
        if not indented:
            current = None
            if line.startswith(_NOISE) or line.startswith(("Program hit", "Checking", "=")):
                if line.startswith("Program hit"):
                    reports.append(Report(tool, line))
                continue
            current = Report(tool, _headline(line))
            reports.append(current)
            _evidence(current, line, headline=True)
        elif current is not None and not line.startswith(_NOISE):
            _evidence(current, line)
    return reports, errors


def _headline(line: str) -> str:
    """'Error: Race reported between Write access at k+0x80 in f.cu:15' → 'Race reported between Write access …'."""
    line = re.sub(r"^(Error|Warning|ERROR|WARNING):\s*", "", line)
    line = _PLACE.sub("", line)
    line = re.sub(r"\s+(?:detected\s+)?at __\w+__ 0x[0-9a-f]+",
                  lambda m: " detected" if "detected" in m.group(0) else "", line)
    line = re.sub(r"\s+in block \([\d, ]+\)\s*:?\s*$", "", line)
    line = re.sub(r"\s+(at|in)\s*$", "", line.strip())
    return " ".join(line.split()).rstrip(":")


def _evidence(r: Report, line: str, headline: bool = False) -> None:
    found = False
    for place in _PLACE.finditer(line):
        before = re.findall(r"\b(Read|Write)\b", line[:place.start()])
        r.places.append((before[-1] if before else "", (place["file"], int(place["line"])), int(place["offset"], 16)))
        found = True
    if m := _BLOCK.search(line):
        r.block = m["b"]
    if m := _THREAD.search(line):
        r.threads.append(f"thread ({m['t']}) in block ({m['b']})")
    elif m := _HAZARD_THREAD.search(line):
        r.threads.append(f"{m['kind'].lower()} by thread ({m['t']})" + (f" in block ({r.block})" if r.block else ""))
    if m := _ADDRESS.search(line):
        r.addresses.append(m["a"])
    if m := _COUNT.search(line):
        r.count = int(m["n"].replace(",", ""))
    if not (headline or found or _THREAD.search(line) or _HAZARD_THREAD.search(line)):
        r.details.append(line)


# -- condensing -----------------------------------------------------------------------------------


def condense(reports: list[Report], folder: Folder, tables: dict[str, FunctionLines]) -> tuple[list[dict], list[str]]:
    """Findings (records.SanitizerFinding as JSON), one per tool, message and user line; and the reports
    that have no user line (the host API errors, kernels that live in headers)."""
    findings: dict[tuple, dict] = {}
    unplaced: list[str] = []
    for r in reports:
        placed = _user_place(r, folder, tables)
        if placed is None:
            unplaced.append(f"{r.tool}: {r.message}")
            continue
        (file, line), frames = placed
        key = (r.tool, r.message, file, line)
        f = findings.get(key)
        if f is None:
            f = findings[key] = {"tool": r.tool, "message": r.message, "file": file, "line": line, "count": 0,
                                 "threads": [], "addresses": [], "details": [], "frames": frames}
        f["count"] += r.count
        for name, items in (("threads", r.threads), ("addresses", r.addresses), ("details", r.details)):
            f[name] += [x for x in items if x not in f[name]][: max(0, EVIDENCE - len(f[name]))]
    return sorted(findings.values(), key=lambda f: (f["file"], f["line"], f["tool"])), list(dict.fromkeys(unplaced))


def _user_place(r: Report, folder: Folder, tables: dict[str, FunctionLines]):
    """The user line of a report, and as related places the header frames walked out of and the other access of
    a race (records.Location JSON)."""
    ordered = sorted(r.places, key=lambda p: p[0] != "Read")  # a race is the read's bug: it misses the barrier
    placed = [(kind, _walk(place, offset, folder, tables)) for kind, place, offset in ordered]
    for i, (_kind, walked) in enumerate(placed):
        if walked[0] is None:
            continue
        others = [asdict(_Location(*w[0], 1, f"the {k.lower() or 'other'} access it races with"))
                  for j, (k, w) in enumerate(placed) if j != i and w[0] is not None and w[0] != walked[0]]
        return walked[0], walked[1] + others
    return None


def _walk(place: Place, offset: int, folder: Folder,
          tables: dict[str, FunctionLines]) -> tuple[Place | None, list[dict]]:
    """(the first user place of the instruction's inline chain, the header frames before it)."""
    frames: list[dict] = []
    for file, line in _chain_at(place, offset, tables) or (place,):
        user = folder.user_file(file)
        if user is not None:
            return (user, line), frames
        frames.append(asdict(_Location(file, line, 1, "in a header, called from the line below")))
    return None, frames


def _chain_at(place: Place, offset: int, tables: dict[str, FunctionLines]) -> tuple[Place, ...] | None:
    """The inline chain of the instruction at `offset` whose innermost place is `place` (any kernel)."""
    for table in tables.values():
        chain = table.chains.get(offset)
        if chain and chain[0][1] == place[1] and os.path.basename(chain[0][0]) == os.path.basename(place[0]):
            return chain
    return None


@dataclass
class _Location:  # records.Location's JSON shape (records imports the profiler, not the other way round)
    file: str
    line: int
    col: int = 1
    message: str = ""


def diagnostics(findings: list[dict]) -> list[dict]:
    """One model.Diagnostic (as JSON) per finding: the message at the line, the evidence as related places."""
    out = []
    for f in findings:
        many = f" ({f['count']:,} reports)" if f["count"] > 1 else ""
        related = [asdict(_Location(f["file"], f["line"], 1, t)) for t in f["threads"]]
        related += [asdict(_Location(f["file"], f["line"], 1, f"address {a}")) for a in f["addresses"]]
        related += [asdict(_Location(f["file"], f["line"], 1, d)) for d in f["details"][:3]]
        related += f["frames"]
        out.append({"file": f["file"], "line": f["line"], "col": 1, "end_col": 2, "severity": "error",
                    "message": f"{f['tool']}: {f['message']}{many}", "code": f"sanitizer-{f['tool']}",
                    "source": "compute-sanitizer", "root": f["message"], "explanation": _explain(f),
                    "related": related, "data": {"tool": f["tool"]}})
    return out


_HELP = {
    "memcheck": "an access outside any allocation (or misaligned): check the bounds and the index arithmetic",
    "racecheck": "two threads of a block touch the same shared memory without a barrier between: add "
                 "`__syncthreads()` (or `cute::cp_async_wait` + a barrier) between the write and the read",
    "initcheck": "a read of global memory that nothing wrote: write every element before reading it back",
    "synccheck": "a barrier not all threads of the block reach (a `__syncthreads()` under a condition that "
                 "differs between threads): move it out of the divergent branch",
}


def _explain(f: dict) -> str:
    evidence = "; ".join(f["threads"][:2] + [f"address {a}" for a in f["addresses"][:1]])
    return (f"**compute-sanitizer {f['tool']}**: {f['message']}\n\n{_HELP.get(f['tool'], '')}"
            + (f"\n\nFirst reports: {evidence}" if evidence else ""))
