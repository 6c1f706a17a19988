"""KernelBench Level 1's table from one or more `cutegen suite` runs: per problem the kernel's design in a line, the verdict,
the median time, the speedup over eager and torch.compile with its 95 % interval from the interleaved rounds ("≈"
within noise where the interval holds 1.0: no number is claimed then), the share of the problem's own roofline,
the errors the verdict was judged on (the kernel's and the fp32 eager reference's own against the fp64 truth, in
units of the tolerance: <= 1 is within it; harness/truth.py), and the CuTeGen paper's reported speedup where it has
one.

    python bench/kernelbench_table.py RUN_DIR [RUN_DIR ...] [--check RUN_DIR] [--problems DIR] [--out TABLE.md]

RUN_DIR is a `cutegen suite run ... --out RUN_DIR` folder. One run's interval is the noise within that process (the
card's drift between interleaved rounds), and a ratio moves more than that between processes: on 2026-12-02 a
fourth run fell inside the union of three runs' intervals for only 32-48 of its 64 ratios (eager ratios moved up
to 2.7 % between runs, torch.compile's up to 10 %: its autotuner picks kernels anew in each process). So with
three or more runs (separate processes, better separate device calls) a ratio is the median of the runs' ratios
and its interval is a 95 % prediction interval for one more run: exp(mean ± t(0.975, n-1) · sd · sqrt(1 + 1/n)) of
the runs' log ratios (normal noise between runs assumed; the sd never below the one pooled over the table's
problems for that baseline), widened to hold every run's own interval. With one or
two runs it is the union of their intervals (which says nothing about another process).
`--check RUN_DIR` (a further run, not among the table's) says which of its ratios fall outside the table's
intervals: whether the published figures reproduce. The roofline of a problem is its own, not the reference's
formulation: the compulsory bytes (every input read once, every output written once, shapes taken on the meta
device so nothing is allocated) over the measured copy ceiling, or the FLOPs the structure needs over the math
peak, whichever takes longer. FLOPs are PyTorch's count of the reference (FlopCounterMode), except where the
structure needs fewer (STRUCTURE below: a diagonal matrix is a row scale, a product of triangular matrices a sixth
of a dense one). The fp32 math peak is the faster of the SIMT rate and a third of the TF32 tensor rate, because an
error-compensated 3xTF32 product is fp32-accurate (what the fp32 GEMM kernels here run)."""

from __future__ import annotations

import argparse
import math
import re
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

from cutegen.hardware import by_name  # noqa: E402
from cutegen.suite.store import load  # noqa: E402

# The CuTeGen paper's reported speedups over PyTorch eager on an RTX 4090 (a different GPU: shown for reference,
# never compared as if measured here). Only the problems it names with a figure.
PAPER = {"1": 1.16, "2": 0.67, "3": 0.53, "10": 0.43, "12": 17.66, "14": 0.71, "25": 2.45, "30": 3.45}

# Problems whose structure needs fewer FLOPs than the reference's dense formulation: number -> FLOPs(shapes).
STRUCTURE = {
    "12": lambda s: s[1][0] * s[1][1],  # diag(A) @ B: one multiply per output
    "14": lambda s: s[0][0] ** 3 // 3,  # triangular x triangular: 2 * N^3 / 6
    "15": lambda s: s[0][0] ** 3 // 3,
}


def number(name: str) -> str:
    return name.split("_", 1)[0]


def design(kernel: Path | None, width: int = 110) -> str:
    """The header's `// In one line:` summary, else the first sentence of its Design paragraph (the header's first line if it has none), without
    the shared header's name, cut at a word near `width`."""
    if kernel is None or not kernel.exists():
        return "—"
    lines = [ln[2:].strip() for ln in kernel.read_text(errors="replace").splitlines() if ln.startswith("//")]
    short = next((ln.removeprefix("In one line:").strip().rstrip(".") for ln in lines if ln.startswith("In one line:")), None)
    if short:
        return short
    start = next((i for i, ln in enumerate(lines) if ln.startswith("Design")), None)
    if start is None:
        return lines[0].split(" -- ", 1)[-1] if lines else "—"
    paragraph = []
    for ln in lines[start:]:
        if not ln or ln.startswith("Requirements") or (paragraph and ln.startswith("*") and len(paragraph) > 1):
            break
        paragraph.append(ln.lstrip("* "))
    text = re.sub(r"^Design(\s*\([^)]*\))?:\s*", "", " ".join(paragraph))
    text = re.sub(r"^common/\S+\.cuh\s*--\s*", "", text).strip()
    text = re.split(r"(?<=[a-z0-9)])[.;] ", text)[0]
    return text if len(text) <= width else text[:width].rsplit(" ", 1)[0] + " …"


def roofline_ms(problem: Path, gpu) -> tuple[float, str] | None:
    """The problem's floor in ms and what bounds it ("memory" or the math)."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from cutegen.harness.problem import load_problem

    p = load_problem(problem)
    with torch.device("meta"):
        inputs = p.make_inputs()
        model = p.make_model()
        counter = FlopCounterMode(display=False)
        with counter:
            out = model(*inputs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    tensors = [x for x in [*inputs, *outs] if isinstance(x, torch.Tensor)]
    nbytes = sum(x.numel() * x.element_size() for x in tensors)
    shapes = [tuple(x.shape) for x in inputs if isinstance(x, torch.Tensor)]
    flops = STRUCTURE[number(p.name)](shapes) if number(p.name) in STRUCTURE else counter.get_total_flops()
    dtype = str(outs[0].dtype).removeprefix("torch.")
    peak = gpu.matmul_peak(dtype)
    if dtype == "float32":
        peak = max(peak, gpu.peaks.get("tf32", 0) / 3)
    memory, math = nbytes / gpu.copy_bandwidth, flops / peak
    return (1e3 * memory, "memory") if memory >= math else (1e3 * math, f"{dtype} math")


RATIOS = ("speedup_eager", "speedup_compile")
# Student's t, two-sided 95 %, by degrees of freedom (no scipy here); past 10 the normal's 1.96 is within 14 %.
T_975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228}


def between_runs(values: list[float], pooled: tuple[float, int] | None = None) -> tuple[float, float] | None:
    """The 95 % prediction interval for one more run's ratio from these runs' (None under three runs). `pooled`:
    (sd, degrees of freedom) of the log ratios between runs over every problem of the table for this baseline: the
    half-width is never narrower than the pooled one (three runs that happen to agree say little)."""
    n = len(values)
    if n < 3:
        return None
    logs = [math.log(v) for v in values]
    half = T_975.get(n - 1, 1.96) * statistics.stdev(logs)
    if pooled is not None:
        half = max(half, T_975.get(pooled[1], 1.96) * pooled[0])
    half *= math.sqrt(1 + 1 / n)
    centre = statistics.fmean(logs)
    return math.exp(centre - half), math.exp(centre + half)


def pooled_spread(groups: list[list[float]]) -> tuple[float, int] | None:
    """The pooled sd of log ratios between runs, and its degrees of freedom, over problems with 3+ runs."""
    usable = [[math.log(v) for v in g] for g in groups if len(g) >= 3]
    if not usable:
        return None
    df = sum(len(g) - 1 for g in usable)
    return math.sqrt(sum(statistics.variance(g) * (len(g) - 1) for g in usable) / df), df


def merged(runs: list[Path]) -> list[dict]:
    """One row per problem over the runs: the median of the medians and ratios, each interval spanning every run's,
    the worst errors, and the first failing run's verdict (a problem passes only if it passed in every run)."""
    by_name: dict[str, list[dict]] = {}
    for run in runs:
        for r in load(run):
            by_name.setdefault(r["name"], []).append(r)
    pooled = {key: pooled_spread([[r[key] for r in g if r.get(key) is not None] for g in by_name.values()])
              for key in RATIOS}
    rows = []
    for name, group in by_name.items():
        row = dict(next((r for r in group if r["verdict"] != "pass"), group[0]))
        row["runs"] = len(group)
        for key in ("median_ms", *RATIOS):
            values = [r[key] for r in group if r.get(key) is not None]
            row[key] = statistics.median(values) if values else None
            lows = [r[f"{key}_low"] for r in group if r.get(f"{key}_low") is not None]
            highs = [r[f"{key}_high"] for r in group if r.get(f"{key}_high") is not None]
            if key != "median_ms" and len(lows) == len(group) and len(highs) == len(group):
                low, high = min(lows), max(highs)
                predicted = between_runs(values, pooled[key]) if len(values) == len(group) else None
                if predicted is not None:
                    low, high = min(low, predicted[0]), max(high, predicted[1])
                row[f"{key}_low"], row[f"{key}_high"] = low, high
        for key in ("kernel_error", "reference_error"):
            values = [r[key] for r in group if r.get(key) is not None]
            row[key] = max(values) if values else None
        rows.append(row)
    return sorted(rows, key=lambda r: int(number(r["name"])) if number(r["name"]).isdigit() else 999)


def check(rows: list[dict], run: Path) -> tuple[int, int, list[str]]:
    """(ratios inside the table's intervals, ratios compared, one line per one outside) for a further run."""
    table = {r["name"]: r for r in rows}
    inside, compared, outside = 0, 0, []
    for r in load(run):
        published = table.get(r["name"])
        for key in RATIOS:
            low, high = (published or {}).get(f"{key}_low"), (published or {}).get(f"{key}_high")
            if r.get(key) is None or low is None or high is None:
                continue
            compared += 1
            if low <= r[key] <= high:
                inside += 1
            else:
                outside.append(f"{r['name']} {key.removeprefix('speedup_')}: {r[key]:.3f}× outside [{low:.3f}, "
                               f"{high:.3f}] ({(r[key] / published[key] - 1) * 100:+.1f} % from {published[key]:.3f}×)")
    return inside, compared, outside


def table(runs: list[Path], problems: Path) -> str:
    return render(merged(runs), problems)


def render(rows: list[dict], problems: Path) -> str:
    gpu = by_name(next((r.get("gpu_name") for r in rows if r.get("gpu_name")), None) or "H200")
    head = ["#", "problem", "kernel design", "verdict", "median", "× eager [95 %]", "× torch.compile [95 %]",
            "roofline", "error vs fp64: kernel / fp32 eager (× tol)", "paper (RTX 4090 vs eager)"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        problem = Path(r.get("problem") or problems / f"{r['name']}.py")
        kernel = Path(r["kernel"]) if r.get("kernel") else None
        floor = roofline_ms(problem, gpu) if problem.exists() else None
        share = f"{floor[0] / r['median_ms']:.0%} ({floor[1]})" if floor and r.get("median_ms") else "—"
        verdict = r["verdict"] + ("" if r["verdict"] == "pass" else f": {r.get('message', '')[:80]}")
        cells = [number(r["name"]), r["name"].split("_", 1)[-1], design(kernel), verdict, _ms(r.get("median_ms")),
                 ratio(r, "speedup_eager"), ratio(r, "speedup_compile"), share, errors(r),
                 _x(PAPER.get(number(r["name"])))]
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(out) + "\n"


def ratio(row: dict, key: str) -> str:
    """'3.35× [3.30–3.41]'; '≈ 1 (0.97–1.02)' when the interval holds 1.0; the bare ratio for a run without rounds."""
    value, low, high = row.get(key), row.get(f"{key}_low"), row.get(f"{key}_high")
    if value is None:
        return "—"
    if low is None or high is None:
        return _x(value)
    if low <= 1.0 <= high:
        return f"≈ 1 ({low:.2f}–{high:.2f})"
    return f"{value:.2f}× [{low:.2f}–{high:.2f}]"


def errors(row: dict) -> str:
    """'0.25 / 0.81': the kernel's worst error and the fp32 reference's, against the fp64 truth, in tolerances."""
    kernel, reference = row.get("kernel_error"), row.get("reference_error")
    if kernel is None:
        return "—"
    if row.get("truth") != "fp64":
        return f"{kernel:.2g} (vs fp32 eager)"
    return f"{kernel:.2g} / {reference:.2g}" if reference is not None else f"{kernel:.2g} / —"


def _ms(v) -> str:
    return "—" if v is None else (f"{v:.3f} ms" if v >= 0.01 else f"{v * 1e3:.1f} µs")


def _x(v) -> str:
    return "—" if v is None else f"{v:.2f}×"


MEASURED = re.compile(r"^// Measured \(H200, .*$", re.M)
ASCII = str.maketrans({"×": "x", "–": "-", "≈": "~", "µ": "u"})


def write_headers(rows: list[dict], kernels: Path, date: str) -> list[str]:
    """Each kernel's `// Measured (H200, ...)` line rewritten from the table's rows; the names of those rewritten."""
    changed = []
    for r in rows:
        kernel = kernels / (Path(r["kernel"]).name if r.get("kernel") else f"{r['name']}.cu")
        if not kernel.is_file() or r["verdict"] != "pass":
            continue
        runs = r.get("runs", 1)
        floor = roofline_ms(kernels / f"{r['name']}.py", by_name(r.get("gpu_name") or "H200"))
        share = f", {floor[0] / r['median_ms']:.0%} ({floor[1]}) of its roofline" if floor and r.get("median_ms") else ""
        line = (f"// Measured (H200, {date}, {runs} `cutegen suite` run{'s' if runs > 1 else ''} in separate processes, "
                f"5 trials each; 95 % intervals for another run): pass, median {_ms(r.get('median_ms'))}, "
                f"{ratio(r, 'speedup_eager')} eager, {ratio(r, 'speedup_compile')} torch.compile{share}")
        line = line.translate(ASCII)  # the kernels' comments stay ASCII
        text = kernel.read_text()
        new, count = MEASURED.subn(lambda _: line, text, count=1)
        if count and new != text:
            kernel.write_text(new)
            changed.append(kernel.name)
    return changed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", type=Path, nargs="+", help="`cutegen suite run --out` folders (separate device calls)")
    ap.add_argument("--check", type=Path, help="a further run: which of its ratios fall outside the table's intervals")
    ap.add_argument("--problems", type=Path, default=ROOT / "examples" / "kernelbench" / "level1")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--headers", metavar="DATE", help="rewrite each kernel's `// Measured (H200, ...)` line, dated")
    args = ap.parse_args()
    rows = merged(args.runs)
    text = render(rows, args.problems)
    print(text)
    if args.out:
        args.out.write_text(text)
    if args.headers:
        changed = write_headers(rows, args.problems, args.headers)
        print(f"rewrote the Measured line of {len(changed)} kernel(s)")
    if args.check:
        inside, compared, outside = check(rows, args.check)
        print(f"{args.check}: {inside}/{compared} ratios inside the table's intervals")
        for line in outside:
            print(f"  {line}")


if __name__ == "__main__":
    main()
