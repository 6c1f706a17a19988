"""`cutegen layout FILE:LINE[:COL] [--svg OUT] [--json]`: the concrete layouts of the CuTe objects declared there.

One line per object and template instantiation, `NAME: LAYOUT` (prefixed by `[N=4]` when the declaration is
in a template instantiated more than once). The facts come from a probe build (cached by file text), the
same engine the language server's hovers and inlay hints use.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from cutegen.files import write_atomic


def add_parser(subparsers) -> argparse.ArgumentParser:
    from cutegen.cli.options import command, toolchain_options

    p = command(subparsers, "layout", "print the concrete CuTe layouts declared on a line (and draw one as SVG)")
    p.add_argument("place", help="FILE:LINE or FILE:LINE:COL (1-based, as compilers print them)")
    p.add_argument("--json", action="store_true", help="name, line, col, kind, instantiation, layout per object")
    p.add_argument("--svg", type=Path, metavar="OUT", help="write a picture of the (first) object as SVG")
    toolchain_options(p)
    p.set_defaults(run=run)
    return p


def parse_place(place: str) -> tuple[Path, int, int | None]:
    m = re.fullmatch(r"(.+?):(\d+)(?::(\d+))?", place)
    if not m:
        raise ValueError(f"'{place}' is not FILE:LINE or FILE:LINE:COL")
    return Path(m[1]), int(m[2]), int(m[3]) if m[3] else None


def _past_the_end(path: Path, line: int) -> str | None:
    """Why LINE is not a line of the file (0, or past its end), or None."""
    try:
        count = len(path.read_text(errors="replace").splitlines())
    except OSError as e:
        return f"{path}: {e.strerror}"
    if 1 <= line <= count:
        return None
    return f"{path} has {count} line{'s' if count != 1 else ''}: there is no line {line} (lines count from 1)"


def run(args) -> int:
    from cutegen.cli.options import file_problem, settings
    from cutegen.layouts.pictures import NotDrawable, picture
    from cutegen.session import nothing_at
    from cutegen.session import Session
    from cutegen.toolchain import ToolchainError

    try:
        path, line, col = parse_place(args.place)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    why = file_problem(path) or _past_the_end(path, line)
    if why:
        print(f"error: {why}", file=sys.stderr)
        return 2
    session = Session(settings(args), state_dir=args.state_dir)
    try:
        probe = session.layout_probe(path.resolve())
    except ToolchainError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    result = probe.run(path)
    facts = result.at(line, col)
    if result.problem:
        print(f"note: {result.problem}", file=sys.stderr)
    if args.json:
        print(json.dumps([{"name": f.name, "line": f.line, "col": f.col, "kind": f.kind,
                           "instantiation": f.instantiation, "template": f.template, "shown": f.shown_as(facts),
                           "layout": f.layout} for f in facts], indent=1))
    else:
        for f in facts:
            several = sum(g.name == f.name and g.col == f.col for g in facts) > 1
            print(f.line_text(several))
    if not facts:
        where = f"{path}:{line}" + (f":{col}" if col else "")
        print(f"{where}: {nothing_at(path.read_text(errors='replace'), line)}", file=sys.stderr)
        return 1
    if args.svg:
        try:
            svg = picture(facts[0], session.builder(path.resolve()).toolchain.nvcc,
                          session.file_flags(path.resolve()).cutlass_include,
                          session.state_dir(path.resolve()).layout_pictures,
                          declared=path.read_text(errors="replace").splitlines()[facts[0].line - 1])
        except NotDrawable as e:
            print(f"error: no picture of {facts[0].name}: {e}", file=sys.stderr)
            return 1
        write_atomic(args.svg, svg)
        print(f"wrote {args.svg}", file=sys.stderr)
    return 0
