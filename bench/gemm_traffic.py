"""GPU: what one 4096^3 GEMM call moves and issues, cuBLAS against the flagship and candidates (Nsight Compute).

Sustained, every 4096^3 bf16 kernel runs at the H100's power cap (`gemm_timing_methods.py --clocks`: ~698 W, SM
clock ~1380 MHz, reason 0x4), and the flagship's TFLOP/s per MHz equals cuBLAS's: it loses its 1-2 % on the clock the
cap leaves it, that is on energy per FLOP. Energy goes to moving bytes (HBM, L2, the crossbar) and issuing
instructions, so this counts them per call for each kernel:

  dram read/write   HBM bytes (the operands are 3 x 32 MB; L2 is 50 MB, so a poor tile order re-reads them)
  L2 bytes          every byte through L2's slices (lts__t_bytes)
  L2 -> SM bytes    what the SMs' TMA loads pull across the crossbar (multicast delivers one read to several SMs)
  instructions      warp instructions issued (smsp__inst_executed)

and, where this ncu knows them on this chip, L2's sectors by the unit that sent them: the SMs' reads and writes,
and the requests that crossed the fabric between L2's two partitions (an SM's request for a line whose home is in
the other partition), with L2's hit rate. L2's bytes are the sum of those three (within 0.5 %).

What it found (H100, 4096^3, tests/records/h100/): cuBLAS launches what the flagship launches (2-CTA clusters, 384
threads, 168 registers, ~214 KB of shared memory; 132 CTAs to the flagship's 128), delivers the same 1610.6 MB of
operands to the SMs and writes D once (33.6 MB), yet its SMs ask L2 for 849 MB where the flagship's ask for 1022
(0.83x); the fabric between the partitions carries 152 MB to 177. With 2-CTA multicast the SMs would ask for 1074 MB
if every tile were fetched on its own: the flagship is 5 % under that, cuBLAS 21 %, and a 128x256 kernel with no
cluster asks for 1349 MB of its 1611. So some reads reach several SMs for one request beyond what multicast does
(where, these counters do not say), and cuBLAS gets more of that than CUTLASS's schedulers do. Not by its tile
order, it seems: no order tried here moved the flagship's requests by more than 4 % (swizzles 1 and 8, and the
grouped orders of examples/idioms/gemm_sm90_grouped_tiles.cuh, which says why).

Where, the LRC's counters say (H200, tests/records/h200/gemm_traffic_lrc*): L2's request coalescer receives the same
8.4 M read requests for the same 1073.7 MB from every kernel and multicast merges the same 536.9 MB, but it serves
reads that several SMs make at once only once, and those are 247.7 MB of cuBLAS's and 73.4 MB of the flagship's: all
of cuBLAS's lead in L2 reads. Neither cuBLAS's frame (TransposedFrame) nor TMA loads without a cache policy changed
that much (101.0 and 80.5 MB).

    python bench/gemm_traffic.py [--libraries .gemm-libs] [--candidates NAME ...] [--shape M N K] [--out FILE]

Each kernel is profiled in its own `ncu --profile-from-start off` process (three warm calls, then one profiled);
ncu fixes the clocks at base while it measures, which does not change what a call moves.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "server"), str(ROOT / "bench")]

import gemm_rungs  # noqa: E402
import gemm_timing_methods  # noqa: E402

SECTOR = 32  # bytes
# key -> (ncu's metric, how many of the metric's units make one of the key's)
METRICS = {
    "dram read MB": ("dram__bytes_read.sum", 1e6),
    "dram write MB": ("dram__bytes_write.sum", 1e6),
    "L2 MB": ("lts__t_bytes.sum", 1e6),
    "L2 -> SM MB": ("l1tex__m_xbar2l1tex_read_bytes.sum", 1e6),
    "instructions M": ("smsp__inst_executed.sum", 1e6),
}
# ncu refuses the whole list for one name it does not know, so these join only when `ncu --query-metrics` lists them
SOURCES = {
    "L2 <- SM read MB": ("lts__t_sectors_srcunit_tex_op_read.sum", 1e6 / SECTOR),
    "L2 <- SM write MB": ("lts__t_sectors_srcunit_tex_op_write.sum", 1e6 / SECTOR),
    "L2 <- fabric MB": ("lts__t_sectors_srcunit_ltcfabric.sum", 1e6 / SECTOR),
    "L2 <- fabric requests M": ("lts__t_requests_srcunit_ltcfabric.sum", 1e6),
    "L2 <- SM read requests M": ("lts__t_requests_srcunit_tex_op_read.sum", 1e6),
    "L2 <- SM read misses MB": ("lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum", 1e6 / SECTOR),
    "L2 hit %": ("lts__t_sector_hit_rate.pct", 1.0),
    # L2's request coalescer (LRC), between the crossbar and L2's slices: the SMs' read requests it receives, the
    # sectors it may merge, those merged because several SMs asked for them at once ("hardware") or because one
    # multicast asked for several ("programmatic"), the sectors L2 hands it and those it sends on to the SMs
    "LRC <- SM read requests M": ("lrc__xbar2lrc_requests_op_read.sum", 1e6),
    "LRC mergeable read MB": ("lrc__request_sectors_op_read_coalescable.sum", 1e6 / SECTOR),
    "LRC merged, several SMs MB": ("lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum", 1e6 / SECTOR),
    "LRC merged, multicast MB": ("lrc__request_sectors_op_read_coalescing_achieved_type_programmatic.sum",
                                 1e6 / SECTOR),
    "L2 -> LRC read MB": ("lrc__lts2lrc_sectors_op_read.sum", 1e6 / SECTOR),
    "LRC -> crossbar read MB": ("lrc__lrc2xbar_sectors_op_read.sum", 1e6 / SECTOR),
}

def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--libraries", type=Path, help="load NAME.so from this folder instead of building")
    ap.add_argument("--candidates", nargs="*", default=["coop_128x256_c2x1_sw1"], choices=list(gemm_rungs.CANDIDATES))
    ap.add_argument("--shape", nargs=3, type=int, default=[4096, 4096, 4096], metavar=("M", "N", "K"))
    ap.add_argument("--out", type=Path)
    ap.add_argument("--child", help=argparse.SUPPRESS)  # the process ncu profiles: run this function once
    args = ap.parse_args()
    if args.child:
        return child(args)
    metrics = {**METRICS, **known_to_ncu(SOURCES)}
    rows = {}
    for name in ["cuBLAS", "gemm_bf16", *args.candidates]:
        rows[name] = profile(name, args, metrics)
        print(f"{name:<30} " + "  ".join(f"{key} {value:,.1f}" for key, value in rows[name].items()), flush=True)
    if args.out:
        args.out.write_text(json.dumps({"shape": args.shape, "per_call": rows}, indent=1))


def known_to_ncu(metrics: dict[str, tuple[str, float]]) -> dict[str, tuple[str, float]]:
    """The metrics `ncu --query-metrics` lists for this GPU, by full name or by base name (before `.sum`/`.pct`)."""
    listed = subprocess.run(["ncu", "--query-metrics", "--query-metrics-mode", "all"],
                            capture_output=True, text=True, check=False).stdout
    names = {line.split()[0] for line in listed.splitlines() if line.strip()}
    known = {key: (metric, unit) for key, (metric, unit) in metrics.items()
             if {metric, metric.rsplit(".", 1)[0]} & names}
    if missing := sorted(set(metrics) - set(known)):
        print(f"ncu does not list {', '.join(metrics[key][0] for key in missing)} here: left out", flush=True)
    return known


def under_ncu(name: str, args, ncu_args: list[str]) -> subprocess.CompletedProcess:
    """`ncu --profile-from-start off NCU_ARGS` over this script's child making one call of `name` (see child); exits
    with ncu's output where ncu fails. gemm_sass.py profiles the same call with other sections."""
    command = ["ncu", "--profile-from-start", "off", *ncu_args, sys.executable, __file__, "--child", name,
               "--shape", *map(str, args.shape), "--candidates", *args.candidates]
    if args.libraries:
        command += ["--libraries", str(args.libraries)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(ncu_failed(name, done))
    return done


def ncu_failed(name: str, done: subprocess.CompletedProcess) -> str:
    return f"ncu on {name} failed (rc {done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"


def profile(name: str, args, metrics: dict[str, tuple[str, float]]) -> dict[str, float]:
    names = ",".join(metric for metric, _ in metrics.values())
    done = under_ncu(name, args, ["--csv", "--page", "raw", "--metrics", names])
    table = done.stdout[done.stdout.find('"ID"'):] if '"ID"' in done.stdout else ""
    if not table:
        raise SystemExit(ncu_failed(name, done))
    if args.out:  # ncu's own table beside the summary: what the CPU test of per_call reads
        args.out.with_name(f"{args.out.stem}_{name}.csv").write_text(table)
    return per_call(table, metrics)


def per_call(table: str, metrics: dict[str, tuple[str, float]]) -> dict[str, float]:
    """One call's figures from ncu's raw CSV page: each metric over the call's kernels (cuBLAS may launch more than
    one), summed, or averaged where it is a rate."""
    rows = list(csv.DictReader(io.StringIO(table)))[1:]  # the first row under the header holds the units
    if not rows:
        raise SystemExit("ncu's table holds no kernel: was the call inside cudaProfilerStart/Stop?")
    totals = {key: 0.0 for key in metrics}
    for row in rows:
        for key, (metric, unit) in metrics.items():
            value = float(row[metric].replace(",", "")) / unit
            totals[key] += value / len(rows) if metric.endswith(".pct") else value
    return totals


def child(args) -> None:
    import torch

    m, n, k = args.shape
    a = torch.randn(m, k, dtype=torch.bfloat16, device="cuda")
    b = torch.randn(k, n, dtype=torch.bfloat16, device="cuda")
    out = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
    if args.child == "cuBLAS":
        def fn():
            torch.matmul(a, b, out=out)
    else:
        path = gemm_rungs.RUNGS["gemm_bf16"] if args.child == "gemm_bf16" else None
        folder = Path("/tmp/cutegen-gemm-candidates")
        folder.mkdir(exist_ok=True)
        kernels = {args.child: path or gemm_rungs.write_candidates(folder)[args.child]}
        libraries = gemm_timing_methods.load_libraries(kernels, args.libraries) if args.libraries else None
        lib = (libraries or gemm_rungs.build_all(kernels)[0])[args.child]

        def fn():
            assert lib([a, b], [out], torch.cuda.current_stream()) == 0
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    fn()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()


if __name__ == "__main__":
    main()
