"""Which files are compiled at all: one rule for the editor and the CLI (issue 53: the CLI compiled a Latin-1 file
the editor refused). Too large a file is generated code or data; a file that is not UTF-8 would reach nvcc with
replacement characters where its bytes were, so its diagnostics would quote text that is not in the file."""

from __future__ import annotations

from pathlib import Path

from cutegen.model import CheckResult, Diagnostic, Severity

MAX_BYTES = 2 * 1024 * 1024  # larger files are generated code or data, not kernels being edited
NOT_CHECKED = "cutegen-not-checked"


def unfit(path: Path, text: str | None) -> str | None:
    """Why this file must not be compiled (too large, not UTF-8, unreadable), or None. `text`: the editor's
    unsaved text; the file on disk is read for its encoding either way."""
    try:
        on_disk = path.stat().st_size
    except FileNotFoundError:
        on_disk = 0  # an unsaved buffer: only its text counts
    except OSError as e:
        return f"{path.name} cannot be read: {e.strerror}"
    size = max(on_disk, len(text.encode("utf-8", "surrogatepass")) if text is not None else 0)
    if size > MAX_BYTES:
        return (f"{path.name} is {size / 2**20:.1f} MB; CuTeGen does not compile files over "
                f"{MAX_BYTES // 2**20} MB.")
    if on_disk:
        try:
            data = path.read_bytes()
        except OSError as e:
            return f"{path.name} cannot be read: {e.strerror}"
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as e:
            line = data[: e.start].count(b"\n") + 1
            return (f"{path.name} is not UTF-8 (byte 0x{data[e.start]:02x} on line {line}); "
                    "CuTeGen checks UTF-8 sources only: save the file as UTF-8.")
    return None


def not_checked(path: Path, reason: str, tier: str) -> CheckResult:
    """The result of a file that was not compiled: one warning saying why."""
    d = Diagnostic(file=str(path), line=1, col=1, end_col=2, severity=Severity.WARNING, message=reason,
                   code=NOT_CHECKED, root=reason)
    return CheckResult(file=str(path), tier=tier, ok=False, diagnostics=[d], resources=[], raw_log="", command=[],
                       seconds=0.0)
