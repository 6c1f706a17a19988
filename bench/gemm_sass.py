"""GPU: the instructions one 4096^3 GEMM call executes, by SASS opcode with its modifiers, cuBLAS against the
flagship and candidates (Nsight Compute's SourceCounters: the executed count at each PC and the SASS there).

gemm_traffic.py found that cuBLAS's SMs ask L2 for 0.83x the bytes the flagship's ask for, while both deliver the
same 1610.6 MB of operands to the SMs: some of cuBLAS's reads reach more SMs per request than 2-CTA multicast
explains. Its counters do not say how. The instruction stream can: how many TMA loads each kernel issues and in
which form (`UTMALDG` with or without `.MULTICAST`; `UTMAPF`, an L2 prefetch; `UBLKCP`, a bulk copy, e.g. from one
CTA's shared memory to its peer's), how many barrier and fence instructions pace them, and what the epilogue
stores with. cuBLAS's nvjet kernels cannot be read offline (`cuobjdump -xelf all` on nvidia-cublas 13.10's
libcublasLt finds none of them among its cubins), but Nsight Compute reads whatever runs.

What it found (H200, tests/records/h200/gemm_sass.json): cuBLAS issues the flagship's TMA loads exactly (per CTA and
k-step one plain load of A's panel and four multicast pieces of B's): its 256x128 / 1x2 is named in its column-major
frame and is the flagship's 128x256 / 2x1 in torch's. It differs inside the CTA: warpgroups split along N (two
m64n128 MMAs where the flagship has one m64n256), eight named-barrier waits and eight shared-memory loads per CTA and
k-step, and 8x the TMA store pieces. Its listing (tests/records/h100/gemm_sass_cublas_listing.txt) shows how it
schedules tiles: each 2-CTA cluster takes its first two cluster tiles by launch index and the rest from a global
counter (one atomic per fetch, the index stored to both CTAs' shared memory), so clusters that finish together start
adjacent tiles together; the flagship's persistent scheduler is static.

    python bench/gemm_sass.py [--libraries .gemm-libs] [--candidates NAME ...] [--shape M N K] [--out FILE]
                              [--listing FILE]

Each kernel is profiled in its own ncu process (gemm_traffic.py's child: three warm calls, then one profiled).
Counts are warp instructions per call, summed over the call's kernels.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "server"), str(ROOT / "bench")]

import gemm_rungs  # noqa: E402
import gemm_traffic  # noqa: E402  (its child makes the one profiled call)
from cutegen.profiler.lines import pcs_of  # noqa: E402  (the profiler's reading of a report's PCs)

# The families worth a row of their own; everything else is summed into "other".
FAMILIES = ("UTMALDG", "UTMAPF", "UTMASTG", "UTMACCTL", "UBLKCP", "UBLKPF", "UBLKRED", "HGMMA", "WARPGROUP",
            "SYNCS", "BAR", "MEMBAR", "FENCE", "STSM", "STS", "LDS", "LDSM", "STG", "LDG", "ST", "LD", "RED",
            "ATOM", "ELECT", "UCGABAR", "CCTL", "SETMAXREG")
PREDICATE = re.compile(r"^@!?U?P\w+\s+")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--libraries", type=Path, help="load NAME.so from this folder instead of building")
    ap.add_argument("--candidates", nargs="*", default=[], choices=list(gemm_rungs.CANDIDATES))
    ap.add_argument("--shape", nargs=3, type=int, default=[4096, 4096, 4096], metavar=("M", "N", "K"))
    ap.add_argument("--out", type=Path)
    ap.add_argument("--listing", type=Path, help="also write each kernel's SASS, PC by PC with its count, here")
    args = ap.parse_args()
    kernels = {name: executed_by_opcode(name, args) for name in ["cuBLAS", "gemm_bf16", *args.candidates]}
    print(table(kernels))
    print(sample_table(kernels))
    if args.listing:
        args.listing.write_text("".join(listing(name, k) for name, k in kernels.items()))
    if args.out:
        args.out.write_text(json.dumps({"shape": args.shape, "per_call": kernels}, indent=1))


def executed_by_opcode(name: str, args) -> dict:
    """{"kernels": names, "opcodes": {opcode with modifiers: warp instructions per call}} for one call."""
    from cutegen.profiler.report_reader import read

    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "sass"
        gemm_traffic.under_ncu(name, args, ["--section", "SourceCounters", "--import-source", "no", "-o", str(report)])
        data = read(str(report.with_suffix(".ncu-rep")), shutil.which("ncu"))
    if "error" in data:
        raise SystemExit(f"{name}: {data['error']}")
    kernels = [pcs(k) for k in data["kernels"]]
    return {"kernels": [k["name"] for k in data["kernels"]], "opcodes": dict(opcodes(kernels)), "pcs": kernels,
            "samples": samples_by_opcode(data["kernels"])}


def samples_by_opcode(kernels: list[dict]) -> dict[str, dict[str, float]]:
    """{opcode: {stall reason: samples}} over the call's kernels: ncu's PC sampling, each sample a warp caught at
    that PC, and why it did not issue ("selected": it did). Where the time goes, not how much work there is: a
    warp waiting at a barrier or for a TMA store is sampled at that barrier or wait."""
    out: dict[str, Counter] = {}
    for kernel in kernels:
        for pc, measured in pcs_of(kernel).items():
            out.setdefault(opcode(kernel["sass"].get(str(pc), "?")), Counter()).update(measured.stalls)
    return {op: dict(reasons) for op, reasons in out.items() if reasons}


def sample_table(kernels: dict[str, dict], rows: int = 14) -> str:
    """The opcodes holding the most samples in any kernel, as a share of each kernel's samples, with the reason
    most of them were caught for."""
    totals = {n: sum(sum(r.values()) for r in k.get("samples", {}).values()) for n, k in kernels.items()}
    shares: dict[str, dict[str, float]] = {}
    for name, kernel in kernels.items():
        for op, reasons in kernel.get("samples", {}).items():
            shares.setdefault(op, {})[name] = sum(reasons.values()) / (totals[name] or 1)
    top = sorted(shares, key=lambda op: -max(shares[op].values()))[:rows]
    width = {n: max(17, len(n) + 2) for n in kernels}
    lines = [f"{'samples at':<40}" + "".join(f"{n:>{width[n]}}" for n in kernels)]
    for op in top:
        cells = []
        for name, kernel in kernels.items():
            reasons = kernel.get("samples", {}).get(op)
            main = max(reasons, key=reasons.get)[:8] if reasons else ""
            cells.append(f"{shares[op].get(name, 0.0):>{width[name] - 9}.1%} {main:<8}")
        lines.append(f"{op:<40}" + "".join(cells))
    lines.append(f"{'samples':<40}" + "".join(f"{totals[n]:>{width[n]},.0f}" for n in kernels))
    return "\n".join(lines)


def pcs(kernel: dict) -> list[tuple[int, int, str]]:
    """(offset in the function, warp instructions per call, SASS) for every PC the call executed."""
    executed = kernel["metrics"].get("inst_executed", {})
    base = kernel.get("base") or min((int(pc) for pc in executed), default=0)
    return [(int(pc) - base, int(count), kernel["sass"].get(pc, "?")) for pc, count in
            sorted(executed.items(), key=lambda item: int(item[0]))]


def listing(name: str, kernel: dict) -> str:
    out = []
    for kernel_name, rows in zip(kernel["kernels"], kernel["pcs"]):
        out.append(f"== {name}: {kernel_name}\n")
        out += [f"{offset:>8x} {count:>12,}  {sass}\n" for offset, count, sass in rows]
    return "".join(out)


def read_listing(text: str) -> dict[str, list[tuple[int, int, str]]]:
    """A --listing file back as {"NAME: kernel": [(offset, warp instructions per call, SASS)]}."""
    kernels: dict[str, list[tuple[int, int, str]]] = {}
    rows: list[tuple[int, int, str]] = []
    for line in text.splitlines():
        if line.startswith("== "):
            rows = kernels.setdefault(line[3:], [])
        elif line.strip():
            offset, count, sass = line.split(maxsplit=2)
            rows.append((int(offset, 16), int(count.replace(",", "")), sass))
    return kernels


def opcodes(kernels: list[list[tuple[int, int, str]]]) -> Counter:
    """Warp instructions executed (each kernel's `pcs`), keyed by the SASS opcode with its modifiers
    (`UTMALDG.2D.MULTICAST`)."""
    counts: Counter = Counter()
    for rows in kernels:
        for _, count, sass in rows:
            counts[opcode(sass)] += count
    return counts


def opcode(sass: str) -> str:
    return PREDICATE.sub("", sass.strip()).split(" ", 1)[0].rstrip(";") or "?"


def family(op: str) -> str:
    base = op.split(".", 1)[0]
    return base if base in FAMILIES else "other"


def table(kernels: dict[str, dict]) -> str:
    """One row per opcode of the families above that any kernel executes, then each family's and the total."""
    names = list(kernels)
    ops = sorted({op for k in kernels.values() for op in k["opcodes"] if family(op) != "other"})
    lines = [f"{'opcode':<40}" + "".join(f"{n:>16}" for n in names)]
    for op in ops:
        lines.append(f"{op:<40}" + "".join(f"{kernels[n]['opcodes'].get(op, 0):>16,}" for n in names))
    for fam in (*FAMILIES, "other"):
        sums = [sum(c for op, c in kernels[n]["opcodes"].items() if family(op) == fam) for n in names]
        if any(sums):
            lines.append(f"{'all ' + fam:<40}" + "".join(f"{s:>16,}" for s in sums))
    lines.append(f"{'all':<40}" + "".join(f"{sum(kernels[n]['opcodes'].values()):>16,}" for n in names))
    lines += [f"{n}: {', '.join(kernels[n]['kernels'])}" for n in names]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
