"""check, test, bench and lsp: the engine session's actions, printed for a terminal (profile and sanitize: lens.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from cutegen.cli import present
from cutegen.cli.options import command, console, reference_mode_option, session, settings, toolchain_options
from cutegen.files import resolved
from cutegen.records import RunRecord
from cutegen.settings import Settings

DEFAULTS = Settings()


def add_parsers(sub) -> None:
    check = command(sub, "check", "compile a .cu file and print condensed CuTe diagnostics")
    check.add_argument("file", type=Path, help="the .cu file")
    check.add_argument("--json", action="store_true", help="print the check result as JSON")
    check.add_argument("--tier", choices=["type", "check", "build"], default="check",
                       help="type: clang's front end only, errors while typing (fastest, no PTX); check: nvcc to PTX "
                            "and ptxas (the truth); build: the loadable library the harness runs")
    check.add_argument("--timeout", type=float, default=DEFAULTS.check_timeout,
                       help="seconds before the compiler is stopped")
    check.add_argument("--verbose", "-v", action="store_true", help="also print resource usage and the explanation")
    toolchain_options(check)
    check.set_defaults(run=_check)

    for name, help_text in (("test", "verify a kernel against its PyTorch reference on the GPU"),
                            ("bench", "verify, then time the kernel against eager PyTorch and torch.compile")):
        p = command(sub, name, help_text)
        p.add_argument("file", type=Path, help="the kernel (.cu, or a KernelBench ModelNew .py)")
        p.add_argument("--problem", help="the reference problem (default: the `// cutegen: problem=` comment, then "
                                         "a sibling .py)")
        p.add_argument("--trials", type=int, default=5, help="correctness trials, each with fresh random inputs")
        p.add_argument("--seed", type=int, default=None,
                       help="seed of the inputs and of the models' weights (default: drawn fresh for every run and "
                            "recorded in the run record's `seeds`, so a candidate cannot know its inputs)")
        p.add_argument("--device", choices=["cuda", "cpu"], default=None,
                       help="cpu: judge a pure-PyTorch ModelNew on CPU tensors, without a GPU (correctness only)")
        reference_mode_option(p)
        p.add_argument("--timeout", type=float, default=DEFAULTS.test_timeout,
                       help="seconds before a run counts as hung")
        p.add_argument("--json", action="store_true", help="print the run record as JSON")
        toolchain_options(p)
        p.set_defaults(run=_verify, timing=name == "bench")


def add_lsp_parser(sub) -> None:
    lsp = command(sub, "lsp", "start the language server (stdio by default)")
    lsp.add_argument("--tcp", action="store_true", help="listen on TCP instead of stdio (for debugging)")
    lsp.add_argument("--stdio", action="store_true", help="use stdio (the default; accepted for LSP clients)")
    lsp.add_argument("--host", default="127.0.0.1", help="TCP address to listen on")
    lsp.add_argument("--port", type=int, default=2087, help="TCP port to listen on")
    lsp.set_defaults(run=_lsp)


def _check(args) -> int:

    err = console()
    s = session(args, err, settings(args, check_timeout=args.timeout), args.file)
    if s is None:
        return 2
    path = resolved(args.file)
    builder = s.builder(path)
    if args.tier == "type":
        doing = f"parsing {args.file.name} (clang front end, {builder.toolchain.arch})"
    else:
        doing = f"compiling {args.file.name} ({builder.toolchain.arch}, nvcc {builder.toolchain.nvcc_version})"
    with err.status(doing) as status:
        checked = s.check(path, tier=args.tier, on_stage=lambda st: status.update(f"{st}: {args.file.name}"))
    # a full disk under .cutegen/: the diagnostics are still nvcc's, print them and say the record is missing
    result, record = checked.result, checked.unsaved or checked.record
    if args.json:
        print(json.dumps({**result.to_json(), "record": None if isinstance(record, OSError) else str(record),
                          **({"record_error": str(record)} if isinstance(record, OSError) else {})}, indent=1))
    else:
        present.check(result, record, args.verbose, err)
    return 0 if result.ok else 1


def _verify(args) -> int:
    err = console()
    s = session(args, err, settings(args, problem=args.problem, test_timeout=args.timeout,
                                    reference_mode=args.reference_mode), args.file)
    if s is None:
        return 2
    record = run_action(args, s, err, "starting", lambda path, stage: s.test(
        path, timing=args.timing, trials=args.trials, seed=args.seed, on_stage=stage, device=args.device))
    if not args.json:
        present.verdict(record, err)
    return 0 if record.passed else 1


def run_action(args, s, err, first: str, action):
    """One session action on the file with a live status line; the session is closed after (its GPU worker too).
    With --json the record is printed here; otherwise the caller presents it."""
    try:
        with err.status(f"{args.file.name}: {first}") as status:
            record = action(resolved(args.file), lambda st: status.update(f"{args.file.name}: {st}"))
    finally:
        s.close()
    if args.json:
        print(json.dumps(_json(record), indent=1, default=str))
    return record


def _json(record: RunRecord) -> dict:
    """--json: the record as `.cutegen/runs/` stores it, with where (`record`), its `summary` and `level`."""
    saved = {"record": record.path} if record.save_error is None else \
        {"record": None, "record_error": record.save_error}
    return {**record.to_json(), **saved, "summary": record.summary(), "level": record.level}


def _lsp(args) -> int:
    try:
        from cutegen.lsp.server import serve
    except ImportError as e:
        print(f"error: the language server needs pygls and lsprotocol: pip install pygls lsprotocol ({e})",
              file=sys.stderr)
        return 2
    return serve(tcp=args.tcp, host=args.host, port=args.port)
