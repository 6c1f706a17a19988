"""The suite's progress in a terminal (rich): problems done / running / failed with an ETA, and what each GPU is
doing. It is one consumer of the runner's events; the language server can be another (`suite/progress.py`'s
`lsp_progress`, which prints nothing and so stays in the engine)."""

from __future__ import annotations

import threading

from rich.console import Console, Group
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from cutegen.suite.runner import Event


class RichProgress:
    def __init__(self, console: Console | None = None):
        self.console = console or Console(stderr=True)
        self.bar = Progress(TextColumn("[bold]suite[/]"), BarColumn(), MofNCompleteColumn(),
                            TextColumn("{task.fields[counts]}"), TimeElapsedColumn(), TextColumn("ETA"),
                            TimeRemainingColumn(), console=self.console)
        self.task = self.bar.add_task("suite", total=None, counts="")
        self.gpus: dict[str, str] = {}
        self.stages: dict[str, str] = {}
        self._lock = threading.Lock()
        self.live = Live(self._view(), console=self.console, refresh_per_second=4, transient=False)

    def __enter__(self) -> "RichProgress":
        self.live.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.live.update(self._view())
        self.live.__exit__(*exc)

    def __call__(self, e: Event) -> None:
        with self._lock:
            if e.kind == "started":
                self.gpus = {g: "idle" for g in e.gpus}
            elif e.kind == "gpu-busy" and e.gpu is not None:
                self.gpus[e.gpu] = e.name or "busy"
            elif e.kind == "gpu-idle" and e.gpu is not None:
                self.gpus[e.gpu] = "idle"
            elif e.kind == "stage" and e.name is not None and e.stage is not None:
                self.stages[e.name] = e.stage
            elif e.kind == "problem-done":
                if e.name is not None:
                    self.stages.pop(e.name, None)
                row = e.row or {}
                self.console.print(f"{e.name}: {row.get('verdict')} {_speed(row)}", highlight=False)
            counts = f"{e.running} running · {e.failed} failed" + (f" · {e.skipped} done before" if e.skipped else "")
            # completed counts only this run's problems, so the ETA is not fooled by the skipped ones
            self.bar.update(self.task, total=e.total - e.skipped, completed=e.done - e.skipped, counts=counts)
            self.live.update(self._view())

    def _view(self):
        table = Table("GPU", "job", box=None, show_header=bool(self.gpus))
        for gpu, job in sorted(self.gpus.items()):
            stage = self.stages.get(job, "")
            table.add_row(gpu, f"{job} {('· ' + stage) if stage and job != 'idle' else ''}")
        if not self.gpus:
            table.add_row("–", "no GPU: kernels are built, not run")
        return Group(self.bar, table)


def _speed(row: dict) -> str:
    s = row.get("speedup_eager")
    c = row.get("speedup_compile")
    if s is None:
        return ""
    return f"· {s:.2f}× eager" + (f", {c:.2f}× torch.compile" if c is not None else "")
