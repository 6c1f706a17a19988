"""How results print in a terminal: diagnostics on stdout (file:line:col), the record's one-line summary (the
same line CodeLens, hovers and the status bar show) and the details below it."""

from __future__ import annotations

from pathlib import Path

from cutegen.model import CheckResult, Severity
from cutegen.profiler.sanitizer import suggestion
from cutegen.profiler.signals import ProfileVerdict
from cutegen.records import BASELINE_LABELS, RunRecord


def shown_path(path: str | Path) -> str:
    """A path as the user would type it here: relative to the current folder when under it, else absolute (from
    `/`, relative paths would lose their leading slash)."""
    here = Path.cwd()
    if not path:
        return "(none)"
    try:
        return str(Path(path).resolve().relative_to(here)) if here != Path(here.anchor) else str(path)
    except ValueError:
        return str(path)


def check(result: CheckResult, record: Path | OSError, verbose: bool, err) -> None:
    shown = [d for d in result.diagnostics if d.severity is not Severity.INFO or verbose]
    here = Path.cwd()
    for d in shown:
        print(d.format(relative_to=here if here != Path(here.anchor) else None))
        if verbose and d.explanation:
            print("    " + d.explanation.replace("\n\n", "\n    "))
    for k in result.resources:
        err.print(f"[dim]resources: {k.summary()}[/]")
    if verbose and result.configuration:
        err.print(f"[dim]configuration: {_plain(result.configuration)}[/]")
    state = "cached" if result.cached else f"{result.seconds:.1f} s"
    verdict = "[green]ok[/]" if result.ok else f"[red]{len(result.errors)} error(s)[/]"
    if isinstance(record, OSError):  # one line: the diagnostics above are complete
        err.print(f"{verdict} · {result.tier} tier · {state} · the run record was not saved: " + _plain(str(record)))
    else:
        err.print(f"{verdict} · {result.tier} tier · {state} · raw log in {_plain(shown_path(record))}")


def verdict(r: RunRecord, err) -> None:
    """A finished test or bench: the summary line, the message, then the figures in full."""
    print(f"{shown_path(r.kernel)}: {r.summary()}")
    print(f"  {r.message}")
    if r.timing is not None:
        t, tp = r.timing, r.throughput
        line = f"  kernel {t.median_ms:.4f} ms (spread {t.spread:.1%}, {t.trials} trials)"
        if tp is not None:
            line += f" · {tp.gb_per_s:.0f} GB/s"
            if tp.bandwidth_share is not None:
                line += f" = {tp.bandwidth_share:.0%} of {tp.bandwidth_ceiling / 1e12:.2f} TB/s ({tp.gpu}, {tp.ceiling_source})"
            if tp.tflop_per_s is not None:
                line += f" · {tp.tflop_per_s:.1f} TFLOP/s"
                if tp.compute_share is not None:
                    line += f" = {tp.compute_share:.0%} of peak"
        print(line)
        if energy := r.energy_text():
            print(f"  {energy}")
        for key, label in BASELINE_LABELS.items():
            if key in r.baselines:
                print(f"  {label}: {r.baselines[key].median_ms:.4f} ms → {r.ratio_text(key, label)}")
    if r.suspicious:
        print(f"  note: {r.suspicious}")
    if hint := suggestion(r.verdict, r.message):
        print(f"  next: {hint}")
    color = {"ok": "green", "info": "yellow"}.get(r.level, "red")
    where = (f"run record {_plain(shown_path(r.path))}" if r.path else
             "the run record was not saved: " + _plain(str(r.save_error or "(no record)")))
    err.print(f"[{color}]{r.verdict}[/] · {where}")


def profile(r: RunRecord, err) -> None:
    from rich.console import Console
    from rich.table import Table

    print(f"{shown_path(r.kernel)}: {r.summary()}")
    if r.verdict != ProfileVerdict.PROFILED or r.profile is None:
        print(f"  {r.message}")
        return
    out = Console(soft_wrap=True)
    metrics = r.details.get("metrics", [])
    for i, m in enumerate(metrics, 1):  # names of instantiations are long: each on its own line, numbered
        out.print(f"[bold]#{i}[/] {m['kernel']}", highlight=False)
    table = Table("#", "time", "SM %", "mem %", "DRAM %", "occup. %", "regs", "waves", "tensor %")
    for i, m in enumerate(metrics, 1):
        table.add_row(str(i), _time(m["time_ns"]), _pct(m["sm_pct"]), _pct(m["memory_pct"]), _pct(m["dram_pct"]),
                      _pct(m["achieved_occupancy_pct"]), str(m["registers_per_thread"]), _pct(m["waves_per_sm"]),
                      _pct(m["tensor_pipe_pct"]))
    out.print(table)
    out.print(f"Speed of Light: {r.profile.classification.get('sol', '–')}")
    for s in r.profile.signal_evidence():
        out.print(f"  • [bold]{s['name']}[/]: {s['evidence']}")
    err.print(f"report (opens in Nsight Compute): {r.profile.report}")


def _plain(text: str) -> str:
    """Text printed through rich as it is (a path with [brackets] is not markup)."""
    return text.replace("[", r"\[")


def _time(ns) -> str:
    if not isinstance(ns, (int, float)):
        return "–"
    return f"{ns / 1e6:.3f} ms" if ns >= 1e6 else f"{ns / 1e3:.1f} µs"


def _pct(v) -> str:
    return f"{v:.1f}" if isinstance(v, (int, float)) else "–"
