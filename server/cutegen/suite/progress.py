"""The suite's progress as LSP work-done reports: one consumer of the runner's events. The terminal's rich display
is the CLI's (`cli/suite_progress.py`): the engine prints nothing."""

from __future__ import annotations

from cutegen.suite.runner import Event


def lsp_progress(report) -> callable:
    """Events → LSP work-done progress: `report(message, percentage)` is e.g. a pygls WorkDoneProgress report
    bound to a token (the language server owns the token, begin and end)."""

    def on_event(e: Event) -> None:
        if e.kind in ("problem-done", "problem-started", "started", "finished", "interrupted"):
            pct = int(100 * e.done / e.total) if e.total else 100
            what = f"{e.done}/{e.total} problems · {e.running} running · {e.failed} failed"
            if e.kind == "problem-done":
                what += f" · {e.name}: {(e.row or {}).get('verdict')}"
            report(what, pct)

    return on_event
