"""`cutegen suite report DIR [DIR2]`: the paper-style table, KernelBench's fast_p against eager and torch.compile,
geometric-mean speedups, correctness and compile-failure rates, and plots (matplotlib), as Markdown (plots as PNG
files next to it) and a self-contained HTML page (plots embedded). With two runs, side by side."""

from __future__ import annotations

import base64
import html
import io
import json
import math
from dataclasses import dataclass
from pathlib import Path

from cutegen.agent.tree import ratio_text
from cutegen.files import write_atomic
from cutegen.harness.verdicts import Verdict
from cutegen.suite.store import load

P_VALUES = (0.0, 1.0, 1.5, 2.0)
BASELINES = (("speedup_eager", "eager"), ("speedup_compile", "torch.compile"))


@dataclass
class Run:
    label: str
    folder: Path
    rows: list[dict]
    manifest: dict


def open_run(folder: Path) -> Run:
    folder = Path(folder)
    try:
        manifest = json.loads((folder / "suite.json").read_text())
    except (OSError, ValueError):
        manifest = {}
    rows = sorted(load(folder), key=lambda r: _natural(r["name"]))
    return Run(folder.resolve().name, folder, rows, manifest)


def fast_p(rows: list[dict], key: str, p: float) -> float:
    """KernelBench's fast_p: the share of ALL problems that are correct and more than p× faster (fast_0 is the
    correctness rate). A problem without a measured speedup counts as not fast for p > 0."""
    if not rows:
        return 0.0
    ok = [r for r in rows if r.get("correct") is True and (p == 0 or (r.get(key) is not None and r[key] > p))]
    return len(ok) / len(rows)


def geomean(rows: list[dict], key: str) -> float | None:
    vals = [r[key] for r in rows if r.get("correct") is True and r.get(key)]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None


def measured(run: Run) -> bool:
    """Whether any of the run's kernels ran on a GPU (else its fast_p and rates are "not run", not 0 %)."""
    return any(r.get("correct") is not None and r.get("compiled") is not False for r in run.rows)


def summary(run: Run) -> dict:
    rows, n = run.rows, len(run.rows)
    count = lambda pred: sum(1 for r in rows if pred(r))  # noqa: E731
    out = {"problems": n, "expected": run.manifest.get("total", n),
           "correct": count(lambda r: r.get("correct") is True),
           "incorrect": count(lambda r: r.get("correct") is False),
           "compile_failures": count(lambda r: r.get("compiled") is False),
           "not_run": count(lambda r: r.get("correct") is None)}
    out["correct_rate"] = out["correct"] / n if n else 0.0
    out["compile_failure_rate"] = out["compile_failures"] / n if n else 0.0
    for key, _ in BASELINES:
        out[f"fast_p_{key}"] = {p: fast_p(rows, key, p) for p in P_VALUES}
        out[f"geomean_{key}"] = geomean(rows, key)
    return out


def write(folders: list[Path], out: Path | None = None) -> tuple[Path, Path]:
    """Writes the Markdown and the HTML report; returns their paths."""
    runs = [open_run(f) for f in folders]
    out = Path(out) if out else Path(folders[0]) / ("report" if len(runs) == 1 else f"compare-{runs[1].label}")
    out.parent.mkdir(parents=True, exist_ok=True)
    plots = {"speedups": _speedup_plot(runs), "fast_p": _fast_p_plot(runs)}
    md_plots = {}
    for name, png in plots.items():
        if png:
            path = out.with_name(f"{out.name}-{name}.png")
            write_atomic(path, png)
            md_plots[name] = path.name
    md = out.with_suffix(".md")
    write_atomic(md, markdown(runs, md_plots))
    page = out.with_suffix(".html")
    write_atomic(page, html_page(runs, plots))
    return md, page


# -- Markdown -------------------------------------------------------------------------------------------------

def markdown(runs: list[Run], plots: dict[str, str]) -> str:
    lines = [f"# CuTeGen suite: {' vs '.join(r.label for r in runs)}", ""]
    for r in runs:
        lines.append(f"- **{r.label}**: {_describe(r)}")
    lines += ["", "## Summary", "", *_md_table(*_summary_table(runs)), "",
              "fast_p (KernelBench): the share of all problems that are correct and more than p× faster.", "",
              *_md_table(*_fast_p_table(runs)), "", "## Problems", "",
              *_md_table(*_problem_table(runs)), ""]
    for name, title in (("speedups", "Speedup per problem"), ("fast_p", "fast_p")):
        if name in plots:
            lines += [f"![{title}]({plots[name]})", ""]
    return "\n".join(lines)


def _md_table(head: list[str], body: list[list[str]]) -> list[str]:
    esc = lambda s: str(s).replace("|", "\\|").replace("\n", " ")  # noqa: E731
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + \
        ["| " + " | ".join(esc(c) for c in row) + " |" for row in body]


def _describe(r: Run) -> str:
    m = r.manifest
    what = "agent" + (f" ({m['model']})" if m.get("model") else "") if m.get("mode") == "agent" else "kernels"
    gpus = sorted({row.get("gpu_name") for row in r.rows if row.get("gpu_name")})
    incomplete = f", {len(r.rows)} of {m['total']} problems done" if m.get("total", len(r.rows)) > len(r.rows) else ""
    return f"{len(r.rows)} problems, {what}, {', '.join(gpus) or 'no GPU'}{incomplete} ({r.folder})"


def _summary_table(runs: list[Run]) -> tuple[list[str], list[list[str]]]:
    sums = [summary(r) for r in runs]
    head = ["metric", *[r.label for r in runs]]
    body = [["correct", *[f"{s['correct']}/{s['problems']} ({s['correct_rate']:.0%})" if measured(r) else
                          f"not run ({s['not_run']} of {s['problems']} problems: no GPU)" for r, s in zip(runs, sums)]],
            ["compile failures", *[f"{s['compile_failures']}/{s['problems']} ({s['compile_failure_rate']:.0%})"
                                   for s in sums]],
            ["not run (no GPU) / no kernel", *[str(s["not_run"]) for s in sums]]]
    if any(r.get("llm_calls") is not None for run in runs for r in run.rows):  # an --agent run
        body.append(["LLM calls · tokens (prompt + completion) · cost", *[_llm_use(run) for run in runs]])
    return head, body


def _llm_use(run: Run) -> str:
    calls = sum(r.get("llm_calls") or 0 for r in run.rows)
    tokens = sum((r.get("prompt_tokens") or 0) + (r.get("completion_tokens") or 0) for r in run.rows)
    costs = [r["llm_cost_usd"] for r in run.rows if r.get("llm_cost_usd") is not None]
    return f"{calls} · {tokens:,} · " + (f"${sum(costs):.2f}" if costs else "not reported")


def _fast_p_table(runs: list[Run]) -> tuple[list[str], list[list[str]]]:
    head = ["baseline", *[f"fast_{p:g}" for p in P_VALUES], "geomean speedup (correct ones)"]
    body = []
    for key, base in BASELINES:
        for run in runs:
            s = summary(run)
            label = base + (f" ({run.label})" if len(runs) > 1 else "")
            shares = [f"{s[f'fast_p_{key}'][p]:.0%}" if measured(run) else "not run" for p in P_VALUES]
            body.append([label, *shares, _x(s[f"geomean_{key}"])])
    return head, body


def _problem_table(runs: list[Run]) -> tuple[list[str], list[list[str]]]:
    names = sorted({r["name"] for run in runs for r in run.rows}, key=_natural)
    by = [{r["name"]: r for r in run.rows} for run in runs]
    cols = ["correct", "vs eager", "vs torch.compile", "% of roofline", "bottleneck", "rounds to correct", "verdict"]
    if len(runs) == 1:
        head = ["problem", *cols]
    else:
        head = ["problem", *[f"{c} ({run.label})" for c in ("correct", "vs eager", "vs torch.compile")
                             for run in runs], *[f"verdict ({run.label})" for run in runs]]
    searched = [any(r.get("search_tree_size") is not None for r in run.rows) for run in runs]
    head += [f"search: best version ({run.label})" if len(runs) > 1 else "search: best version"
             for run, s in zip(runs, searched) if s]
    body = []
    for name in names:
        cells = [[_cells(b.get(name))[i] for b in by] for i in range(len(cols))]
        if len(runs) == 1:
            body.append([name, *[c[0] for c in cells]])
        else:
            body.append([name, *cells[0], *cells[1], *cells[2], *cells[6]])
        body[-1] += [_search_cell(b.get(name)) for b, s in zip(by, searched) if s]
    return head, body


def _search_cell(r: dict | None) -> str:
    """A search's best verified version: id, ratio against the generated kernel by the search's objective (named
    when not time) ± the judge's noise, the changes that made it; and the tree's size."""
    if r is None or r.get("search_tree_size") is None:
        return "–"
    size = f"{r['search_tree_size']} versions in the tree"
    if r.get("search_best") is None:
        return f"none verified better · {size}"
    figure = ratio_text(r.get("search_ratio"), r.get("search_noise"), r.get("search_objective") or "time")
    return f"{r['search_best'][:10]} {figure} ({r.get('search_change') or ''}) · {size}"


def _cells(r: dict | None) -> list[str]:
    if r is None:
        return ["", "", "", "", "", "", "(not in this run)"]
    correct = {True: "✓", False: "✗", None: "–"}[r.get("correct")]
    roof = f"{r['roofline']:.0%} {r.get('roofline_of') or ''}".strip() if r.get("roofline") is not None else "–"
    rounds = r.get("rounds_to_correct")
    verdict = r.get("verdict", "")
    if verdict != Verdict.PASS and r.get("message"):
        message = r["message"].removeprefix(f"{verdict}:").strip()  # agent labels start with the verdict already
        verdict += f": {message[:90]}"
    return [correct, _x(r.get("speedup_eager")), _x(r.get("speedup_compile")), roof, r.get("bottleneck") or "–",
            "–" if rounds is None else str(rounds), verdict]


def _x(v) -> str:
    return f"{v:.2f}×" if isinstance(v, (int, float)) else "–"


# -- HTML -----------------------------------------------------------------------------------------------------

_CSS = """body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1200px;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;
vertical-align:top}th{background:#f3f3f3}tr:nth-child(even) td{background:#fafafa}img{max-width:100%}
code{background:#f3f3f3;padding:0 3px}"""


def html_page(runs: list[Run], plots: dict[str, bytes | None]) -> str:
    title = "CuTeGen suite: " + " vs ".join(r.label for r in runs)
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
             f"<style>{_CSS}</style></head><body><h1>{html.escape(title)}</h1><ul>"]
    parts += [f"<li><b>{html.escape(r.label)}</b>: {html.escape(_describe(r))}</li>" for r in runs]
    parts += ["</ul><h2>Summary</h2>", _html_table(*_summary_table(runs)),
              "<p>fast_p (KernelBench): the share of all problems that are correct and more than p× faster.</p>",
              _html_table(*_fast_p_table(runs))]
    for name, title_ in (("speedups", "Speedup per problem"), ("fast_p", "fast_p")):
        if plots.get(name):
            data = base64.b64encode(plots[name]).decode()
            parts.append(f"<h2>{title_}</h2><img alt='{title_}' src='data:image/png;base64,{data}'>")
    parts += ["<h2>Problems</h2>", _html_table(*_problem_table(runs)), "</body></html>"]
    return "\n".join(parts)


def _html_table(head: list[str], body: list[list[str]]) -> str:
    h = "".join(f"<th>{html.escape(c)}</th>" for c in head)
    b = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in body)
    return f"<table><tr>{h}</tr>{b}</table>"


# -- plots ----------------------------------------------------------------------------------------------------

def _plt():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None  # the report still has every table; plots need `pip install matplotlib`
    return plt


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return buf.getvalue()


def _speedup_plot(runs: list[Run]) -> bytes | None:
    plt = _plt()
    names = sorted({r["name"] for run in runs for r in run.rows if r.get("correct") and
                    any(r.get(k) for k, _ in BASELINES)}, key=_natural)
    if plt is None or not names:
        return None
    series = [(run, key, base) for run in runs for key, base in BASELINES]
    width = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(max(6.0, 0.55 * len(names) * len(series) / 2 + 2), 4.2))
    for i, (run, key, base) in enumerate(series):
        by = {r["name"]: r for r in run.rows}
        vals = [by.get(n, {}).get(key) or 0 for n in names]
        xs = [j + (i - (len(series) - 1) / 2) * width for j in range(len(names))]
        # bars grow from 1× (up: faster, down: slower)
        ax.bar(xs, [v - 1 if v > 0 else float("nan") for v in vals], width, bottom=1.0,
               label=f"vs {base}" + (f" ({run.label})" if len(runs) > 1 else ""))
    ax.set_yscale("log")
    from matplotlib.ticker import FuncFormatter

    for axis in (ax.yaxis.set_major_formatter, ax.yaxis.set_minor_formatter):
        axis(FuncFormatter(lambda y, _: f"{y:g}×"))
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(names)), names, rotation=45, ha="right")
    ax.set_ylabel("speedup (log scale)")
    ax.legend()
    return _png(fig)


def _fast_p_plot(runs: list[Run]) -> bytes | None:
    plt = _plt()
    runs = [run for run in runs if measured(run)]  # a run that ran nothing has no curve (not a flat 0)
    if plt is None or not runs:
        return None
    top = max([3.0] + [r.get(k) or 0 for run in runs for r in run.rows for k, _ in BASELINES])
    ps = [i * min(top, 10) / 200 for i in range(201)]
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for run in runs:
        for (key, base), style in zip(BASELINES, ("-", "--")):
            ax.step(ps, [fast_p(run.rows, key, p) for p in ps], style, where="post",
                    label=f"vs {base}" + (f" ({run.label})" if len(runs) > 1 else ""))
    for p in P_VALUES[1:]:
        ax.axvline(p, color="grey", linewidth=0.5)
    ax.set_xlabel("p (speedup threshold)")
    ax.set_ylabel("fast_p (share of all problems)")
    ax.set_ylim(0, 1.02)
    ax.legend()
    return _png(fig)


def _natural(name: str) -> tuple:
    from cutegen.suite.problems import _natural as natural

    return natural(name)
