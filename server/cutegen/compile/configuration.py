"""The flags one file is compiled with, and where they came from, for every tier (type, check, build, the layout
probe, the agent's candidates): explicit settings first, then the project's compile_commands.json, then defaults.

Include folders are searched in this order: the CUTLASS of `cutegen.cutlassPath` when set; the project's own CUTLASS
where its command has one (an -I folder holding cute/tensor.hpp), else CUTLASS_PATH's or the nvidia-cutlass wheel's;
our ABI header; the file's folder; `cutegen.includeDirs`; the project's folders in its command's order; last, the
chosen CUTLASS's `tools/util/include` (CUTLASS's examples include `cutlass/util/*.hpp` from there).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from cutegen.compile import compile_commands as cc
from cutegen.settings import Settings
from cutegen.toolchain import ABI_INCLUDE, Toolchain, cutlass_version, util_include

DEFAULT_STD = "-std=c++17"


@dataclass(frozen=True)
class FileFlags:
    includes: tuple[tuple[str, str], ...]  # ("-I" | "-isystem", folder) in search order
    macros: tuple[str, ...]  # -D / -U, in the project's order
    std: str
    switches: tuple[str, ...]  # nvcc only: --expt-relaxed-constexpr, --expt-extended-lambda
    cutlass_include: str
    cutlass_origin: str  # said to the user: "the project's compile_commands.json", "the nvidia-cutlass wheel", …
    source: str  # where the flags came from, said to the user
    notes: tuple[str, ...] = ()  # flags dropped because they start programs (said with -v and in the log)
    problems: tuple[str, ...] = ()  # a compile_commands.json that cannot be used (a warning on the file)
    database: str | None = None  # the compile_commands.json read, if any
    translation_unit: str | None = None  # for a header: the .cu compiled in its place

    def common(self) -> list[str]:
        """The flags nvcc and clang both take: the standard, include folders, macros (the type tier's share)."""
        return [self.std, *(f for kind, d in self.includes for f in ((f"-I{d}",) if kind == "-I" else (kind, d))),
                *self.macros]

    def nvcc(self) -> list[str]:
        return [*self.common(), *self.switches]

    def library_dirs(self) -> list[str]:
        """Folders whose headers are not the user's: the chosen CUTLASS, its util headers and every -isystem."""
        util = util_include(Path(self.cutlass_include))
        return [self.cutlass_include, *([str(util)] if util else []),
                *(d for kind, d in self.includes if kind == "-isystem")]

    def describe(self) -> str:
        """One line for `cutegen check -v` and the editor's log."""
        version = cutlass_version(Path(self.cutlass_include))
        text = f"CUTLASS {version} from {self.cutlass_origin} ({self.cutlass_include}); flags from {self.source}"
        return text + "".join(f"; {note}" for note in (*self.problems, *self.notes))


def configure(file: Path, toolchain: Toolchain, settings: Settings, roots: list[Path],
              includer: Path | None = None) -> FileFlags:
    """`file`'s flags. `includer`: for a header, the last .cu seen including it (used when the project's
    compile_commands.json has no entry that includes it)."""
    problems: list[str] = []
    database, entry, unit = None, None, None
    try:
        database = cc.find(file, roots, settings.compile_commands_dir)
        if database is not None:
            entry = cc.entry_for(database, file)
            if entry is None and file.suffix in cc.HEADER_SUFFIXES:
                entry = cc.includers(database, file) or (cc.entry_for(database, includer) if includer else None)
                unit = entry.file if entry else includer
    except cc.CompileCommandsError as e:  # said on the file; the defaults still check it
        problems.append(str(e))
        database, entry, unit = None, None, None
    if unit is None and entry is None and includer is not None and file.suffix in cc.HEADER_SUFFIXES:
        unit = includer
    translated = cc.translate(entry) if entry else cc.Translated((), (), None, ())
    notes = [f"dropped {flag}, which would start a program" for flag in translated.dropped]
    project = [d for _, d in translated.includes if (Path(d) / "cute" / "tensor.hpp").is_file()]
    if toolchain.cutlass_origin != "setting" and project:
        cutlass, origin, first = os.path.realpath(project[0]), "the project's compile_commands.json", []
    else:
        cutlass, origin = toolchain.cutlass_include, _ORIGINS[toolchain.cutlass_origin]
        first = [("-I", cutlass)]
    folder = Path(unit).parent if unit else file.parent
    includes = [*first, ("-I", str(ABI_INCLUDE)), ("-I", str(folder)), *(("-I", d) for d in settings.include_dirs),
                *translated.includes]
    util = util_include(Path(cutlass))
    if util is not None:
        includes.append(("-I", str(util)))
    return FileFlags(includes=_unique(includes), macros=translated.macros, std=translated.std or DEFAULT_STD,
                     switches=translated.switches, cutlass_include=cutlass, cutlass_origin=origin,
                     source="defaults" if problems else _source(file, database, entry, unit), notes=tuple(notes),
                     problems=tuple(problems),
                     database=str(database) if database else None, translation_unit=str(unit) if unit else None)


_ORIGINS = {"setting": "setting cutegen.cutlassPath", "CUTLASS_PATH": "CUTLASS_PATH",
            "wheel": "the nvidia-cutlass wheel"}


def _source(file: Path, database: Path | None, entry: cc.Entry | None, unit: Path | None) -> str:
    through = f", checked through {Path(unit).name}, which includes it" if unit else ""
    if entry is not None:
        return f"{database} (the entry for {entry.file.name}{through})"
    if database is not None:
        return f"defaults: {database} has no entry for {file.name}{through}"
    return f"defaults: no compile_commands.json above {file.parent} or in a build*/ folder{through}"


def _unique(includes: list[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """Each folder once, where it first appears (a later -I of the same folder does nothing in nvcc either)."""
    seen, out = set(), []
    for kind, d in includes:
        key = os.path.realpath(d)
        if key not in seen:
            seen.add(key)
            out.append((kind, d))
    return tuple(out)
