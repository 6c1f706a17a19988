"""`cutegen` on the command line: the same engine session and results as the language server.

`run.py` holds check, test, bench and lsp; `lens.py` profile (--lines) and sanitize; `agent.py` the agent's commands; `patch.py` replays an LLM
reply; `suite.py` runs a whole benchmark;
`layout.py` prints CuTe layouts; `options.py` what they share (flags, the session they build, clear
failures); `present.py` how records print.
"""

from __future__ import annotations

import argparse
import sys

from cutegen import __version__
from cutegen.files import WriteError


def parser() -> argparse.ArgumentParser:
    """Every command and flag of `cutegen` (also read by scripts/settings_reference.py: which settings have a flag)."""
    from cutegen.cli import agent, layout, lens, patch, run, suite, versions
    from cutegen.cli.options import HELP

    top = argparse.ArgumentParser(prog="cutegen", description="Compile, check, test and profile CuTe kernels.",
                                  formatter_class=HELP)
    top.add_argument("--version", action="version", version=f"cutegen {__version__}")
    sub = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run.add_parsers(sub)
    lens.add_parsers(sub)
    agent.add_parsers(sub)
    patch.add_parser(sub)
    suite.add_parser(sub)
    layout.add_parser(sub)
    versions.add_parser(sub)
    run.add_lsp_parser(sub)
    return top


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    program: list[str] = []
    if argv[:1] in (["profile"], ["sanitize"]) and "--" in argv:  # `cutegen profile --lines -- ./bench --size 4096`
        program, argv = argv[argv.index("--") + 1:], argv[:argv.index("--")]
    args = parser().parse_args(argv)
    args.program = program
    try:
        return args.run(args)
    except WriteError as e:  # a full disk wherever it struck: one line, no traceback; nothing was half-written
        print(f"cutegen {args.command}: error: {e}", file=sys.stderr)
        return 1
