"""The per-line profile: Nsight Compute's per-PC samples (stall reasons, executed instructions, memory sectors,
rule markers, SASS) folded onto the lines of the user's own source.

A PC inside inlined CuTe header code is charged to the user line that called it: the line table's inline chain
(line_table.py) is walked from the innermost place outwards to the first place in a user file. Without the
table (no nvdisasm), Nsight's own innermost place is used, and header samples stay unplaced; the profile says so
(`attribution`), and `user_share` measures how much landed on user lines either way.

The result is a `records.LineProfile` as JSON: what the run record holds, the CLI prints, the editor marks and
the agent's prompt quotes.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict, deque
from dataclasses import dataclass, field
from pathlib import Path

from cutegen import state
from cutegen.profiler.line_table import FunctionLines, Place
from cutegen.profiler.stalls import STALL_METRIC
from cutegen.records import text_digest

SASS_PER_LINE = 12  # instructions kept per line (the hottest first): a hover, not a disassembly
MIN_MATCH = 0.9  # share of sampled PCs whose opcode must agree with the line table for its offsets to be trusted

_SECTORS = re.compile(r"^memory_l2_theoretical_sectors_global(_ideal)?$")
_WAVEFRONTS = re.compile(r"^memory_l1_wavefronts_shared(_ideal)?$")
_EXCESS = {"derived__memory_l2_theoretical_sectors_global_excessive": "excess_sectors",
           "derived__memory_l1_wavefronts_shared_excessive": "excess_wavefronts"}
_EXECUTED = "inst_executed"
# CUTLASS's, CCCL's and CUDA's headers wherever they are installed (a report may come from another machine,
# whose CUTLASS wheel sits elsewhere): never the user's.
_LIBRARY = re.compile(r"/include/(cute|cutlass|cub|thrust|cuda|nv|cooperative_groups)(/|\.h)|"
                      r"/cuda[-.\d]*/(include|targets)/|"
                      r"/include/(crt|cccl)/|/site-packages/(torch|cutlass_library|nvidia)/")


@dataclass
class Pc:
    """What Nsight measured at one PC of one kernel."""

    stalls: Counter = field(default_factory=Counter)
    executed: float = 0.0
    sectors: float = 0.0
    ideal_sectors: float = 0.0
    wavefronts: float = 0.0
    ideal_wavefronts: float = 0.0
    excess_sectors: float | None = None  # Nsight's own excess (derived__…_excessive), when the report has it
    excess_wavefronts: float | None = None
    markers: list[str] = field(default_factory=list)


def read_report(report: Path, ncu: str | None, wrap=None, timeout: float = 300) -> dict:
    """The report's per-PC data (report_reader.py, in its own process; `wrap` puts it in a jail)."""
    argv = [sys.executable, "-m", "cutegen.profiler.report_reader", str(report)] + (["--ncu", ncu] if ncu else [])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2]),
                                                        os.environ.get("PYTHONPATH", "")])}
    try:
        proc = subprocess.run(wrap(argv) if wrap else argv, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"reading the report's per-PC data took over {timeout:.0f} s"}
    try:
        return json.loads(proc.stdout)
    except ValueError:
        return {"error": f"the report reader failed (exit {proc.returncode}): {proc.stderr.strip()[-400:]}"}


def pcs_of(kernel: dict) -> dict[int, Pc]:
    out: dict[int, Pc] = defaultdict(Pc)
    for name, values in kernel.get("metrics", {}).items():
        for pc_text, value in values.items():
            pc = out[int(pc_text)]
            if name.startswith(STALL_METRIC) and not name.endswith("_not_issued"):
                pc.stalls[name.removeprefix(STALL_METRIC)] += int(value)
            elif name == _EXECUTED:
                pc.executed = value
            elif name in _EXCESS:
                setattr(pc, _EXCESS[name], value)
            elif m := _SECTORS.search(name):
                setattr(pc, "ideal_sectors" if m.group(1) else "sectors", value)
            elif m := _WAVEFRONTS.search(name):
                setattr(pc, "ideal_wavefronts" if m.group(1) else "wavefronts", value)
    for marker in kernel.get("markers", []):
        if marker.get("pc") is not None:
            out[int(marker["pc"])].markers.append(marker["message"])
    return dict(out)


def function_base(kernel: dict, table: FunctionLines | None) -> tuple[int | None, float]:
    """The kernel's load address (a PC minus it is a line-table offset) and the share of sampled PCs whose
    opcode agrees there. Nsight records it (`launch__function_pcs`); without it the candidates are the
    smallest PC (offset 0 is every kernel's first, always executed, instruction) and 0 (PCs that are offsets)."""
    if table is None:
        return None, 0.0
    sass = {int(pc): text for pc, text in kernel.get("sass", {}).items() if _opcode(text) not in ("", "N/A")}
    if not sass:
        return None, 0.0
    candidates = [kernel["base"]] if kernel.get("base") else [min(sass), 0]
    best = max(candidates, key=lambda base: _agreement(sass, table, base))
    return best, _agreement(sass, table, best)


def _matching_table(kernel: dict, tables: dict[str, FunctionLines]) -> FunctionLines | None:
    """The function whose SASS agrees with the report's, when the names do not meet (an ncu_report that gives
    no mangled name): the best agreement, if it is good enough to trust."""
    scored = [(function_base(kernel, t)[1], name) for name, t in tables.items()]
    best = max(scored, default=(0.0, ""))
    return tables[best[1]] if best[0] >= MIN_MATCH else None


def _agreement(sass: dict[int, str], table: FunctionLines, base: int) -> float:
    hits = sum(1 for pc, text in sass.items() if _opcode(table.sass.get(pc - base, "")) == _opcode(text))
    return hits / len(sass)


def _opcode(text: str) -> str:
    """'@!P0 LDG.E.128 R4, desc[UR4][R2.64] ;' → 'LDG.E.128'."""
    words = text.replace(";", " ").split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0] if words else ""


@dataclass
class Folder:
    """Charges PCs to user lines. `aliases` maps a compiled copy's path (the build cache's) to the user's file;
    `system` holds the folders whose files are never the user's (CUTLASS, CUDA, /usr)."""

    aliases: dict[str, str]
    system: tuple[str, ...]
    # Where a relative or bare name is looked for: a user's program's working folder and its binary's. (nvcc records
    # a source as its command line named it, `bench.cu` for `nvcc bench.cu`, and compute-sanitizer prints bare names.)
    roots: tuple[str, ...] = ()
    _found: dict[str, str | None] = field(default_factory=dict, repr=False)

    def user_file(self, file: str) -> str | None:
        if not os.path.isabs(file):
            aliased = next((user for copy, user in self.aliases.items() if os.path.basename(copy) == file), None)
            if aliased is not None or not self.roots:  # an ABI kernel: only the kernel's own is the user's
                return aliased
            if file not in self._found:
                self._found[file] = _find_under(self.roots, file)
            found = self._found[file]
            return None if found is None else self.user_file(found)
        file = self.aliases.get(file, file)
        real = os.path.realpath(file)
        return None if real.startswith(self.system) or _LIBRARY.search(real) else file

    def user_place(self, chain: tuple[Place, ...]) -> Place | None:
        for file, line in chain:  # innermost first: the first user place is the line that called the header
            if line > 0 and (user := self.user_file(file)) is not None:
                return user, line
        return None


SEARCHED_FOLDERS = 2000  # a bare name's search stops here (a big repository's build tree is not walked whole)
_SKIPPED = {".git", state.NAME, "node_modules", "__pycache__", ".venv"}


def _find_under(roots: tuple[str, ...], name: str) -> str | None:
    """`name` (relative, or a bare file name) as one file under `roots`: the root-relative path when it exists,
    else the only file of that name below them (breadth-first, bounded); None when there is none or several."""
    for root in roots:
        if os.path.isfile(path := os.path.join(root, name)):
            return os.path.realpath(path)
    if os.sep in name:
        return None
    found: set[str] = set()
    queue, seen = deque(roots), 0
    while queue and seen < SEARCHED_FOLDERS:
        folder = queue.popleft()
        seen += 1
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False) and entry.name not in _SKIPPED:
                queue.append(entry.path)
            elif entry.name == name and entry.is_file():
                found.add(os.path.realpath(entry.path))
    return found.pop() if len(found) == 1 else None


def fold(data: dict, tables: dict[str, FunctionLines], folder: Folder, table_problem: str = "") -> dict:
    """The report's kernels → a records.LineProfile as JSON."""
    lines: dict[Place, dict] = {}
    totals: Counter[str] = Counter()
    attribution, kernels, notes = "inlined-at", [], []
    for kernel in data.get("kernels", []):
        pcs = pcs_of(kernel)
        if not pcs:
            continue
        kernels.append(kernel.get("name", "?"))
        table = tables.get(kernel.get("mangled", "")) or _matching_table(kernel, tables)
        base, agreement = function_base(kernel, table)
        if table is None or base is None or agreement < MIN_MATCH:
            attribution = "innermost"
            why = (table_problem or "no line table for this kernel" if table is None
                   else f"the line table matched {agreement:.0%} of the sampled SASS")
            notes.append(f"{kernel.get('name', '?')}: {why}")
            base, table = None, None
        for pc, measured in pcs.items():
            place = _place(pc, kernel, table, base, folder)
            samples = sum(measured.stalls.values())
            totals["samples"] += samples
            own = kernel.get("places", {}).get(str(pc))
            if own and folder.user_file(own[0]) is not None:
                totals["innermost"] += samples  # what Nsight's own (innermost) place would have put on user lines
            if place is None:
                continue
            totals["user"] += samples
            _add(lines.setdefault(place, _empty(place)), measured, samples, kernel["sass"].get(str(pc), ""), pc)
    for marker in (m for k in data.get("kernels", []) for m in k.get("markers", []) if m.get("pc") is None):
        place = folder.user_place(((marker.get("file") or "", marker.get("line") or 0),))
        if place is not None:
            lines.setdefault(place, _empty(place))["markers"].append(marker["message"])
    return _profile(lines, totals, attribution, kernels, notes)


def _place(pc: int, kernel: dict, table: FunctionLines | None, base: int | None, folder: Folder) -> Place | None:
    if table is not None and base is not None and (chain := table.chains.get(pc - base)):
        return folder.user_place(chain)
    own = kernel.get("places", {}).get(str(pc))
    return folder.user_place(((own[0], int(own[1])),)) if own else None


def _empty(place: Place) -> dict:
    return {"file": place[0], "line": place[1], "samples": 0, "stalls": Counter(), "executed": 0, "sectors": 0,
            "ideal_sectors": 0, "wavefronts": 0, "ideal_wavefronts": 0, "_excess_sectors": None,
            "_excess_wavefronts": None, "markers": [], "_sass": []}


def _add(row: dict, pc: Pc, samples: int, sass: str, address: int) -> None:
    row["samples"] += samples
    row["stalls"].update(pc.stalls)
    row["executed"] += int(pc.executed)
    for key in ("sectors", "ideal_sectors", "wavefronts", "ideal_wavefronts"):
        row[key] += int(getattr(pc, key))
    for key in ("excess_sectors", "excess_wavefronts"):
        if getattr(pc, key) is not None:
            row[f"_{key}"] = (row[f"_{key}"] or 0) + getattr(pc, key)
    row["markers"] += [m for m in pc.markers if m not in row["markers"]]
    if sass:
        row["_sass"].append((samples, address, sass))


def _profile(lines: dict[Place, dict], totals: Counter, attribution: str, kernels: list[str], notes: list[str]) -> dict:
    total = totals["samples"]
    texts: dict[str, list[str]] = {}
    rows = []
    for row in sorted(lines.values(), key=lambda r: (-r["samples"], r["file"], r["line"])):
        hottest = sorted(row.pop("_sass"), key=lambda s: (-s[0], s[1]))[:SASS_PER_LINE]
        row["sass"] = [f"{text}" + (f"  // {n} samples" if n else "")
                       for n, _, text in sorted(hottest, key=lambda s: s[1])]
        row["stalls"] = dict(row["stalls"].most_common())
        row["share"] = row["samples"] / total if total else 0.0
        for excess, (have, ideal) in (("excess_sectors", ("sectors", "ideal_sectors")),
                                      ("excess_wavefronts", ("wavefronts", "ideal_wavefronts"))):
            derived = row.pop(f"_{excess}")
            row[excess] = int(derived) if derived is not None else max(0, row[have] - row[ideal])
            row.pop(have), row.pop(ideal)
        row["text"] = _source_line(texts, row["file"], row["line"])
        rows.append(row)
    files = sorted({r["file"] for r in rows})
    return {"lines": rows, "total_samples": total, "user_samples": totals["user"],
            "innermost_samples": totals["innermost"], "attribution": attribution,
            "digests": {f: digest_file(f) for f in files}, "kernels": kernels, "note": "; ".join(notes)}


def _source_line(cache: dict[str, list[str]], file: str, line: int) -> str:
    if file not in cache:
        try:
            cache[file] = Path(file).read_text(errors="replace").splitlines()
        except OSError:
            cache[file] = []
    lines = cache[file]
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def digest(text: str) -> str:
    """What a stale check compares: the file's text when it was profiled against the text now. The record's
    own digest, so `LineProfile.stale` (records sit below the profiler and cannot import it) agrees."""
    return text_digest(text)


def digest_file(file: str) -> str:
    try:
        return digest(Path(file).read_bytes().decode("utf-8", "surrogateescape"))
    except OSError:
        return ""


def system_folders(toolchain) -> tuple[str, ...]:
    """Folders whose files are never the user's: CUTLASS/CuTe, the ABI header, CUDA, the system's, torch's."""
    from cutegen.toolchain import ABI_INCLUDE, torch_include_dirs

    roots = (toolchain.cutlass_include, str(ABI_INCLUDE), toolchain.cuda_root, "/usr/include", "/usr/lib",
             "/usr/local/include", *torch_include_dirs())
    return tuple(os.path.realpath(r) + os.sep for r in roots if r)


def profile_lines(report: Path, ncu: str | None, library: str, kernel: Path, toolchain,
                  wrap=None) -> tuple[dict | None, str]:
    """(the LineProfile JSON, "") or (None, why there is none). `library` is the built .so the report profiled;
    its compiled copy of `kernel` (the build cache's) is where the line table points. The report and the line
    table are read at the same time (two processes each)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:
        table = pool.submit(_line_tables, Path(library), toolchain)
        data = read_report(report, ncu, wrap)
        tables, problem = table.result()
    if "error" in data:
        return None, data["error"]
    if not any(k.get("metrics") for k in data.get("kernels", [])):
        return None, ("the report has no per-PC samples (Nsight Compute's SourceCounters section did not run: "
                      "an ncu too old, or the kernel too short to sample)")
    copy = str(Path(library).parent / (kernel.name if kernel.suffix != ".py" else kernel.stem + ".cu"))
    folder = Folder(aliases={copy: str(kernel), os.path.realpath(copy): str(kernel)}, system=system_folders(toolchain))
    return fold(data, tables, folder, problem), ""


def _line_tables(library: Path, toolchain) -> tuple[dict, str]:
    """The library's line tables, or ({}, why not): then Nsight's innermost places are used."""
    from cutegen.profiler.line_table import LineTableError, find_tool, read_line_table

    bins = [Path(toolchain.cuda_root) / "bin", Path(toolchain.nvcc).parent]
    nvdisasm = find_tool("nvdisasm", bins)
    if nvdisasm is None:
        return {}, ("nvdisasm was not found (CUDA toolkit, or pip install nvidia-cuda-nvdisasm): "
                    "header lines stay unplaced")
    try:
        return read_line_table(library, nvdisasm, find_tool("cuobjdump", bins)), ""
    except LineTableError as e:
        return {}, str(e)
