"""KernelBench Level 1's table from one `cutegen suite` run: per problem the kernel's design in a line, the verdict,
the median time, the speedup over eager and torch.compile with its 95 % interval from the interleaved rounds ("≈"
within noise where the interval holds 1.0: no number is claimed then), the share of the problem's own roofline,
the errors the verdict was judged on (the kernel's and the fp32 eager reference's own against the fp64 truth, in
units of the tolerance: <= 1 is within it; harness/truth.py), and the CuTeGen paper's reported speedup where it has
one.

    python bench/kernelbench_table.py RUN_DIR [--problems examples/kernelbench/level1] [--out TABLE.md]

RUN_DIR is a `cutegen suite run ... --out RUN_DIR` folder. The roofline of a problem is its own, not the reference's
formulation: the compulsory bytes (every input read once, every output written once, shapes taken on the meta
device so nothing is allocated) over the measured copy ceiling, or the FLOPs the structure needs over the math
peak, whichever takes longer. FLOPs are PyTorch's count of the reference (FlopCounterMode), except where the
structure needs fewer (STRUCTURE below: a diagonal matrix is a row scale, a product of triangular matrices a sixth
of a dense one). The fp32 math peak is the faster of the SIMT rate and a third of the TF32 tensor rate, because an
error-compensated 3xTF32 product is fp32-accurate (what the fp32 GEMM kernels here run)."""

from __future__ import annotations

import argparse
import re
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


def table(run: Path, problems: Path) -> str:
    rows = sorted(load(run), key=lambda r: int(number(r["name"])) if number(r["name"]).isdigit() else 999)
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("run", type=Path, help="a `cutegen suite run --out` folder")
    ap.add_argument("--problems", type=Path, default=ROOT / "examples" / "kernelbench" / "level1")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    text = table(args.run, args.problems)
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
