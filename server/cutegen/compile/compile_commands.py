"""A project's own build configuration, found and read as clangd does: the nearest `compile_commands.json` (what
CMake writes with CMAKE_EXPORT_COMPILE_COMMANDS and `bear` records for any build), searched upward from the file,
then in `build*/` folders of the workspace roots, or in the folder `cutegen.compileCommandsDir` names.

An entry's command is translated to what our nvcc tiers need: include folders (absolute, in their order), macros,
the language standard and the `--expt-*` switches. Its target (`-gencode`, `-arch`) is replaced by ours, its
outputs and dependency files are dropped, and so is every flag that would make nvcc start another program: a
repository's file must not run programs (workspace_trust.py's rule for a workspace's settings).
"""

from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from cutegen.files import resolved
from cutegen.workspace_trust import safe_flags

NAME = "compile_commands.json"
HEADER_SUFFIXES = (".cuh", ".hpp", ".h", ".hh", ".hxx", ".inl")
_SWITCHES = {"--expt-relaxed-constexpr", "-expt-relaxed-constexpr", "--expt-extended-lambda",
             "-expt-extended-lambda", "--extended-lambda", "-extended-lambda"}
_PATH_OPTIONS = {"-I": "-I", "--include-path": "-I", "-isystem": "-isystem", "--system-include": "-isystem"}
_MACRO_OPTIONS = {"-D": "-D", "--define-macro": "-D", "-U": "-U", "--undefine-macro": "-U"}


class CompileCommandsError(ValueError):
    """A compile_commands.json that cannot be used; the message names the file and what is wrong."""


@dataclass(frozen=True)
class Entry:
    file: Path  # the translation unit, absolute
    directory: Path  # where its command runs: relative paths are read from here
    arguments: tuple[str, ...]  # the command as argv (the compiler first)


@dataclass(frozen=True)
class Translated:
    """An entry's command as our tiers take it."""

    includes: tuple[tuple[str, str], ...]  # ("-I" or "-isystem", absolute folder), in the command's order
    macros: tuple[str, ...]  # "-DNAME=VALUE", "-UNAME", in order
    std: str | None  # "-std=c++17"
    switches: tuple[str, ...]  # --expt-relaxed-constexpr, --expt-extended-lambda
    dropped: tuple[str, ...] = field(default=())  # flags that start programs, each with why


def find(file: Path, roots: list[Path], setting: str | None = None) -> Path | None:
    """The compile_commands.json that configures `file`: the setting's folder, else the nearest one upward (in each
    folder itself or its `build/`), else one in a `build*/` folder of a workspace root (the first, by name)."""
    if setting:
        chosen = Path(setting).expanduser()
        chosen = chosen if chosen.name == NAME else chosen / NAME
        if not chosen.is_file():
            raise CompileCommandsError(f"{chosen}: no such file (setting cutegen.compileCommandsDir)")
        return resolved(chosen)
    for folder in resolved(file).parents:
        for candidate in (folder / NAME, folder / "build" / NAME):
            if candidate.is_file():
                return candidate
    for root in roots:
        for build in sorted(Path(root).glob("build*/" + NAME)):
            return resolved(build)
    return None


_loaded: dict[Path, tuple[float, int, tuple[Entry, ...]]] = {}


def entries(database: Path) -> tuple[Entry, ...]:
    """The entries of a compile_commands.json, read again only when it changes."""
    try:
        stat = database.stat()
    except OSError as e:
        raise CompileCommandsError(f"{database}: cannot be read ({e.strerror})") from None
    cached = _loaded.get(database)
    if cached and cached[:2] == (stat.st_mtime, stat.st_size):
        return cached[2]
    parsed = _parse(database)
    _loaded[database] = (stat.st_mtime, stat.st_size, parsed)
    return parsed


def _parse(database: Path) -> tuple[Entry, ...]:
    try:
        raw = json.loads(database.read_text(errors="replace"))
    except (OSError, ValueError) as e:
        raise CompileCommandsError(f"{database}: not valid JSON ({e})") from None
    if not isinstance(raw, list):
        raise CompileCommandsError(f"{database}: expected a list of entries, found {type(raw).__name__}")
    out = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict) or not isinstance(item.get("file"), str) or not isinstance(
                item.get("directory"), str):
            raise CompileCommandsError(f"{database}: entry {i} lacks a 'file' or 'directory' string")
        directory = Path(item["directory"])
        if isinstance(item.get("arguments"), list):
            argv = [str(a) for a in item["arguments"]]
        elif isinstance(item.get("command"), str):
            try:
                argv = shlex.split(item["command"])
            except ValueError as e:
                raise CompileCommandsError(f"{database}: entry {i}'s command cannot be split ({e})") from None
        else:
            raise CompileCommandsError(f"{database}: entry {i} has neither 'arguments' nor 'command'")
        out.append(Entry(Path(os.path.normpath(directory / item["file"])), directory, tuple(argv)))
    return tuple(out)


_by_file: dict[Path, tuple[tuple[Entry, ...], dict[str, Entry]]] = {}


def entry_for(database: Path, file: Path) -> Entry | None:
    """The entry compiling `file` (CUTLASS's own database has thousands: indexed once per version of it)."""
    listed = entries(database)
    indexed = _by_file.get(database)
    if indexed is None or indexed[0] is not listed:  # the first entry for a file wins, as in clangd
        indexed = _by_file[database] = (listed, {os.path.realpath(e.file): e for e in reversed(listed)})
    return indexed[1].get(os.path.realpath(file))


def translate(entry: Entry) -> Translated:
    """The entry's flags our tiers use; everything else (targets, outputs, optimisation, host-compiler options)
    is left out, and flags that would start a program are named in `dropped`."""
    argv = list(entry.arguments[1:])
    argv, bad = safe_flags(argv, entry.directory)
    argv = _expand_response_files(argv, entry.directory)
    includes, macros, switches, std = [], [], [], None
    i = 0
    while i < len(argv):
        arg, nxt = argv[i], argv[i + 1] if i + 1 < len(argv) else None
        path, macro = _option(arg, nxt, _PATH_OPTIONS), _option(arg, nxt, _MACRO_OPTIONS)
        if path and path[1]:
            includes.append((path[0], os.path.normpath(entry.directory / path[1])))
        elif macro and macro[1]:
            macros.append(macro[0] + macro[1])
        elif arg.partition("=")[0] in ("-std", "--std") and "=" in arg:
            std = "-std=" + arg.partition("=")[2]
        elif arg in _SWITCHES:
            switches.append("--expt-relaxed-constexpr" if "relaxed" in arg else "--expt-extended-lambda")
        i += (path or macro or (None, None, 1))[2]
    return Translated(tuple(includes), tuple(macros), std, tuple(dict.fromkeys(switches)),
                      tuple(f"{flag} ({why})" for flag, why in bad))


def _option(arg: str, nxt: str | None, table: dict[str, str]) -> tuple[str, str | None, int] | None:
    """(our spelling, its value, how many arguments it took) when `arg` is one of `table`'s options: `-I dir`,
    `-Idir`, `--include-path=dir`, `-DX=1`, `--define-macro X`; None otherwise."""
    name, eq, inline = arg.partition("=")
    if eq and name in table:
        return table[name], inline, 1
    if arg in table:
        return table[arg], nxt, 2
    for short in ("-isystem", "-I", "-D", "-U"):
        if short in table and arg.startswith(short) and len(arg) > len(short):
            return short, arg[len(short):], 1
    return None


def _expand_response_files(argv: list[str], directory: Path) -> list[str]:
    """CMake may put include folders in `--options-file includes_CUDA.rsp` (already screened by safe_flags)."""
    out, i = [], 0
    while i < len(argv):
        arg = argv[i]
        name = None
        if arg in ("--options-file", "-optf") and i + 1 < len(argv):
            name, i = argv[i + 1], i + 2
        elif arg.startswith("@"):
            name, i = arg[1:], i + 1
        else:
            out.append(arg)
            i += 1
            continue
        try:
            out += shlex.split((directory / name).read_text(errors="replace"), comments=True)
        except (OSError, ValueError):
            pass
    return out


def includers(database: Path, header: Path) -> Entry | None:
    """An entry whose translation unit includes `header`, directly or through the project's own headers (how
    clangd infers a header's command); the nearest such file by folder first."""
    from cutegen.compile.includes import user_headers

    header = Path(os.path.realpath(header))
    ranked = sorted(entries(database), key=lambda e: -_common_depth(e.file, header))
    for entry in ranked:
        dirs = [Path(d) for _, d in translate(entry).includes]
        try:
            text = entry.file.read_text(errors="replace")
        except OSError:
            continue
        if header in user_headers(text, entry.file.parent, dirs, angled=True):
            return entry
    return None


def _common_depth(a: Path, b: Path) -> int:
    return len(os.path.commonpath([str(a), str(b)]).split(os.sep))
