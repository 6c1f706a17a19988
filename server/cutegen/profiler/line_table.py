"""The line table of a built kernel library with its inlining: for every SASS instruction of every kernel, the
chain of source places from the innermost inlined function out to the kernel's own line.

CuTe code is nearly all inlined header code, and Nsight Compute's `source_info(pc)` names only the innermost
place (a line of `cute/algorithm/copy.hpp`). `nvdisasm --print-line-info-inline` prints the whole chain
("line 119 of stride.hpp inlined at line 43 of softsign.cu"), from the `.debug_line` table `-lineinfo` writes;
`cuobjdump -xelf` takes the cubins out of the shared library. Both ship with the CUDA toolkit (and on PyPI as
nvidia-cuda-nvdisasm / nvidia-cuda-cuobjdump).
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

Place = tuple[str, int]  # (file, line)

_FUNCTION = re.compile(r"^\.text\.(?P<name>\S+):\s*$")
_FILE = re.compile(r'^\s*//## File "(?P<file>[^"]+)", line (?P<line>\d+)'
                   r'(?: inlined at "(?P<at_file>[^"]+)", line (?P<at_line>\d+))?')
_INSTRUCTION = re.compile(r"^\s*/\*(?P<offset>[0-9a-f]{4,})\*/\s+(?P<sass>[^;]*;)", re.I)


@dataclass
class FunctionLines:
    """One kernel's instructions: offset → SASS text, and offset → its inline chain, innermost first."""

    name: str  # mangled
    sass: dict[int, str] = field(default_factory=dict)
    chains: dict[int, tuple[Place, ...]] = field(default_factory=dict)


def parse_nvdisasm(text: str) -> dict[str, FunctionLines]:
    """`nvdisasm -gi -c` output → each function's instructions and their inline chains.

    A run of `//## File` comments annotates the instructions after it until the next run: its first comment is
    the innermost place, each one "inlined at" the next, the last the outermost (the kernel's own line)."""
    functions: dict[str, FunctionLines] = {}
    current: FunctionLines | None = None
    pending: list[re.Match] = []
    chain: tuple[Place, ...] = ()
    for line in text.splitlines():
        if m := _FUNCTION.match(line):
            current = functions.setdefault(m["name"], FunctionLines(m["name"]))
            pending, chain = [], ()
        elif m := _FILE.match(line):
            pending.append(m)
        elif current is not None and (m := _INSTRUCTION.match(line)):
            if pending:
                chain, pending = _chain(pending), []
            offset = int(m["offset"], 16)
            current.sass[offset] = " ".join(m["sass"].split())
            if chain:
                current.chains[offset] = chain
    return functions


def _chain(run: list[re.Match]) -> tuple[Place, ...]:
    places = [(m["file"], int(m["line"])) for m in run]
    last = run[-1]
    if last["at_file"]:  # a run that ends on an "inlined at": that caller is the outermost place
        places.append((last["at_file"], int(last["at_line"])))
    return tuple(dict.fromkeys(places))  # nvdisasm repeats a frame when a line continues one


def find_tool(name: str, toolkit_bin: list[Path]) -> str | None:
    """A CUDA tool from the toolkit, else PATH, else the PyPI wheel's `nvidia/cu13/bin`."""
    for d in toolkit_bin:
        if (d / name).is_file():
            return str(d / name)
    if found := shutil.which(name):
        return found
    spec = importlib.util.find_spec("nvidia")
    for root in (spec.submodule_search_locations or []) if spec else []:
        for candidate in sorted(Path(root).glob(f"cu*/bin/{name}")):
            return str(candidate)
    return None


class LineTableError(RuntimeError):
    pass


def read_line_table(library: Path, nvdisasm: str, cuobjdump: str | None,
                    timeout: float = 120) -> dict[str, FunctionLines]:
    """Every kernel in the shared library `library`, with its line table and inlining (raises LineTableError)."""
    with tempfile.TemporaryDirectory(prefix="cutegen-cubin-") as tmp:
        cubins = _embedded_cubins(Path(library).read_bytes(), Path(tmp))
        if not cubins:  # compressed fatbins: cuobjdump unpacks them
            if cuobjdump is None:
                raise LineTableError(f"{Path(library).name}: its cubins are compressed and cuobjdump was not found")
            _run([cuobjdump, "-xelf", "all", str(Path(library).resolve())], timeout, cwd=tmp)
            cubins = sorted(Path(tmp).glob("*.cubin"))
        if not cubins:
            raise LineTableError(f"{Path(library).name} holds no cubin")
        functions: dict[str, FunctionLines] = {}
        for cubin in cubins:
            functions.update(parse_nvdisasm(_run([nvdisasm, "-gi", "-c", str(cubin)], timeout)))
    return functions


EM_CUDA = 190


def _embedded_cubins(data: bytes, folder: Path) -> list[Path]:
    """The uncompressed CUDA ELF images inside a host binary's fatbins, each written to `folder`. (cuobjdump
    -xelf names them after the source file, so two images of one library overwrite each other.)"""
    out: list[Path] = []
    at = data.find(b"\x7fELF", 1)
    while at > 0:
        header = data[at:at + 64]
        if len(header) == 64 and header[4] == 2 and int.from_bytes(header[18:20], "little") == EM_CUDA:
            shoff, phoff = int.from_bytes(header[40:48], "little"), int.from_bytes(header[32:40], "little")
            phentsize, phnum, shentsize, shnum = (int.from_bytes(header[i:i + 2], "little") for i in (54, 56, 58, 60))
            size = max(shoff + shentsize * shnum, phoff + phentsize * phnum)
            if 64 < size <= len(data) - at:
                path = folder / f"image{len(out)}.cubin"
                path.write_bytes(data[at:at + size])
                out.append(path)
                at += size - 1
        at = data.find(b"\x7fELF", at + 1)
    return out


def _run(argv: list[str], timeout: float, cwd: str | None = None) -> str:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=cwd)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise LineTableError(f"{Path(argv[0]).name} failed: {e}") from e
    if proc.returncode != 0:
        raise LineTableError(f"{Path(argv[0]).name} failed (exit {proc.returncode}): {proc.stderr.strip()[-300:]}")
    return proc.stdout
