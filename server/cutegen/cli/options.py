"""What the CLI's commands share: flags (each with help text and its default), the engine session they build,
and failures said plainly before any work starts."""

from __future__ import annotations

import argparse
from pathlib import Path

from cutegen.files import resolved
from cutegen.settings import CHOICES, Settings


class HELP(argparse.ArgumentDefaultsHelpFormatter):
    """Shows '(default: X)' after each help text, except where the text already says it or nothing is set."""

    def _get_help_string(self, action):
        if action.default in (None, False, [], argparse.SUPPRESS) or "default" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


def command(sub, name: str, help_text: str) -> argparse.ArgumentParser:
    """A subcommand whose --help shows every default."""
    return sub.add_parser(name, help=help_text, description=help_text, formatter_class=HELP)


def toolchain_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--nvcc", help="path of nvcc (default: CUDA_HOME, then PATH)")
    p.add_argument("--arch", help="target, e.g. sm_90a (default: the local GPU's, else sm_90a)")
    p.add_argument("--cutlass-path", help="CUTLASS include dir (default: CUTLASS_PATH, then the nvidia-cutlass wheel)")
    p.add_argument("-I", dest="include_dirs", action="append", default=[], help="extra include directory (repeatable)")
    p.add_argument("--state-dir", type=Path,
                   help="where caches and run records go (default: .cutegen/ at the workspace root: the nearest "
                        "folder above the file with .git, pyproject.toml or .cutegen/, as in the editor)")


def reference_mode_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--reference-mode", choices=CHOICES["reference_mode"], default=Settings().reference_mode,
                   help="what fp32 outputs are judged against: fp64 (the reference in float64; pass within tolerance "
                        "of it or no farther from it than the fp32 reference) or kernelbench (KernelBench's check: the "
                        "fp32 eager reference at its tolerance, to reproduce published numbers)")


def retry_count(value: str) -> int:
    """--llm-retries: refused here, before any build starts (LLMClient refuses a negative count from anywhere)."""
    n = int(value)
    if n < 0:
        raise argparse.ArgumentTypeError(f"must be at least 0 (0: one try, no retries), not {n}")
    return n


def settings(args, **extra) -> Settings:
    s = Settings(nvcc=args.nvcc, arch=args.arch, cutlass_path=args.cutlass_path, include_dirs=args.include_dirs,
                 **extra)
    s.interface = "cli"  # messages name --flags, not cutegen.* settings
    return s


def file_problem(path: Path) -> str | None:
    """Why `path` cannot be read as a source file, or None."""
    if path.is_dir():
        return f"{path}: is a directory (give a .cu or .py file)"
    if not path.exists():
        return f"{path}: no such file"
    if not path.is_file():
        return f"{path}: not a regular file"
    return None


def session(args, err, settings_: Settings, file: Path):
    """The engine session for these options with its toolchain found, or None after printing why not."""
    from cutegen.session import Session
    from cutegen.toolchain import ToolchainError

    why = file_problem(file)
    if why:
        err.print(f"[red]error:[/] {why}")
        return None
    s = Session(settings_, state_dir=args.state_dir)
    try:
        s.builder(resolved(file))
    except ToolchainError as e:
        err.print(f"[red]error:[/] {e}")
        return None
    return s


def console():
    from rich.console import Console

    return Console(stderr=True, soft_wrap=True)
