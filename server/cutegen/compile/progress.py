"""How far a compile got when its timeout cut it: nvcc's own per-phase timing file (`nvcc -time FILE` appends a
row as each phase finishes), read after the kill. A check that runs out of time on a loaded machine then says
which phase was still running (for a torch-including source, cicc parsing PyTorch's headers) instead of only
that it took too long."""

from __future__ import annotations

import csv
from pathlib import Path

# The phases nvcc runs, in order, per tier (nvcc 13.0: `-ptx` and `-shared`), and what each does.
ORDER = {
    "check": ("gcc (preprocessing 1)", "cicc"),
    "build": ("gcc (preprocessing 4)", "cudafe++", "gcc (preprocessing 1)", "cicc", "ptxas", "fatbinary",
              "gcc (compiling)", "nvlink", "gcc (linking)"),
}
WHAT = {
    "gcc (preprocessing 1)": "preprocessing the device side",
    "gcc (preprocessing 4)": "preprocessing the host side",
    "cudafe++": "cudafe++, the host-side front end",
    "cicc": "cicc (parsing, template instantiation, then PTX)",
    "ptxas": "ptxas, assembling",
    "fatbinary": "fatbinary",
    "gcc (compiling)": "the host compiler",
    "nvlink": "nvlink, device linking",
    "gcc (linking)": "linking the library",
}


def finished_phases(timing: Path) -> list[tuple[str, float]]:
    """(phase, seconds) of every phase that finished, in order; [] when the file is missing or empty."""
    try:
        rows = list(csv.reader(timing.read_text(errors="replace").splitlines()))
    except OSError:
        return []
    out = []
    for row in rows[1:]:
        if len(row) > 6 and row[1].strip():
            try:
                out.append((row[1].strip(), float(row[6]) / 1000))
            except ValueError:
                continue
    return out


def how_far(tier: str, done: list[tuple[str, float]], after_nvcc: str = "") -> str:
    """'it was still in cicc (...), after preprocessing the device side (2.1 s)': where the cut fell."""
    if after_nvcc:  # nvcc finished; the step after it (the check's ptxas -v) was cut
        return f"nvcc had finished; {after_nvcc} was still running"
    names = [name for name, _ in done]
    pending = [p for p in ORDER.get(tier, ()) if p not in names]
    running = f"it was still in {WHAT.get(pending[0], pending[0])}" if pending else "it was past its last timed phase"
    if not done:
        return running + ", its first phase"
    finished = ", ".join(f"{WHAT.get(name, name)} ({seconds:.1f} s)" for name, seconds in done)
    return f"{running}, after {finished}"
