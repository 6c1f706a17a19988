"""Speed-of-Light rule, roofline and signals; on recorded Nsight Compute exports from the H200 when present."""

from __future__ import annotations

from pathlib import Path

import pytest

from cutegen.hardware import H200
from cutegen.profiler.classify import speed_of_light, summarize
from cutegen.profiler.ncu_csv import parse_raw_csv
from cutegen.profiler.profile import ncu_sol_rule

RECORDED = sorted(p for p in (Path(__file__).parent / "recorded").iterdir() if (p / "raw.csv").exists())
AGREES = {"latency": {"latency"}, "memory": {"memory", "high-throughput"}, "compute": {"compute", "high-throughput"},
          "balanced": {"balanced"}}


@pytest.mark.parametrize(("sm", "mem", "bound"), [(30, 40, "latency"), (20, 92, "memory"), (85, 30, "compute"),
                                                  (70, 55, "compute"), (50, 65, "memory"), (65, 70, "balanced")])
def test_speed_of_light_rule(sm, mem, bound):
    assert speed_of_light(sm, mem)[0] == bound


CSV = '''"ID","Kernel Name","gpu__time_duration.sum","sm__throughput.avg.pct_of_peak_sustained_elapsed","gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed","dram__bytes_read.sum","dram__bytes_write.sum","launch__waves_per_multiprocessor","launch__registers_per_thread"
"","","msecond","%","%","Gbyte","Gbyte","",""
"0","softsign_kernel","3.1","12.5","93.1","6.44","6.44","0.5","34"
'''


def test_csv_units_thousands_and_memory_bound_roofline():
    (k,) = parse_raw_csv("==PROF== noise\n" + CSV.replace('"3.1"', '"3.1"'))
    assert k["gpu__time_duration.sum"] == 3.1 and k["_units"]["dram__bytes_read.sum"] == "Gbyte"
    r = summarize([k], gpu=H200, flops=None, dtype="float32")
    assert r["bound"] == "memory" and r["roofline_bound"] == "memory"
    assert r["summary"].startswith("memory-bound at 97% of achievable DRAM bandwidth")
    assert "under-one-wave" in [s["name"] for s in r["signals"]]


@pytest.mark.parametrize("folder", RECORDED, ids=lambda p: p.name)
def test_recorded_classification_agrees_with_ncu_rule(folder):
    kernels = parse_raw_csv((folder / "raw.csv").read_text())
    assert kernels, "no kernel rows in the recorded export"
    flops = 2 * 4096 ** 3 if folder.name.startswith("gemm") else None
    dtype = "bfloat16" if folder.name.startswith("gemm") else "float32"
    ours = summarize(kernels, gpu=H200, flops=flops, dtype=dtype)["bound"]
    theirs = ncu_sol_rule((folder / "details.txt").read_text())
    assert theirs in AGREES[ours], (ours, theirs)


def _recorded(name: str, matmul: bool) -> dict:
    kernels = parse_raw_csv((Path(__file__).parent / "recorded" / name / "raw.csv").read_text())
    return summarize(kernels, gpu=H200, flops=2 * 4096 ** 3 if matmul else None, dtype="bfloat16" if matmul else "float32")


def test_signals_on_recorded_h200_profiles():
    """Our sm80-style GEMM on Hopper: the finding is mma.sync instead of wgmma, not its (by design) low
    occupancy; cuBLAS at the roofline gets no finding but compute-bound; softsign waits on memory."""
    ours = {s["name"] for s in _recorded("gemm_bf16", True)["signals"]}
    assert ours == {"mma-sync-not-wgmma", "compute-bound"}
    assert {s["name"] for s in _recorded("gemm_bf16-reference", True)["signals"]} == {"compute-bound"}
    softsign = _recorded("softsign", False)
    assert softsign["summary"].startswith("memory-bound at 97% of achievable DRAM bandwidth")
    # 512 threads at 34 registers: 3 blocks/SM by registers, but at 97 % of the bandwidth that is no finding
    assert {s["name"] for s in softsign["signals"]} == {"long-scoreboard-stalls"}


def test_small_grid_is_latency_bound_with_its_evidence():
    """softsign_tail: 3.1 M elements, fewer CTAs than one wave; ncu's rule says the grid is too small."""
    tail = _recorded("softsign_tail", False)
    assert tail["bound"] == "latency" and tail["summary"].startswith("latency-bound")
    names = [s["name"] for s in tail["signals"]]
    assert "under-one-wave" in names and "latency-bound" in names
    details = (Path(__file__).parent / "recorded" / "softsign_tail" / "details.txt").read_text()
    assert ncu_sol_rule(details) == "latency"


def test_roofline_uses_the_gpu_that_ran_it():
    """The same H200 softsign export read against the B200's datasheet ceiling: the share and the text change."""
    from cutegen.hardware import by_name

    b200 = by_name("NVIDIA B200")
    kernels = parse_raw_csv((Path(__file__).parent / "recorded" / "softsign" / "raw.csv").read_text())
    h, b = summarize(kernels, gpu=H200, flops=None, dtype="float32"), summarize(kernels, gpu=b200, flops=None, dtype="float32")
    assert h["share_of_peak"] / b["share_of_peak"] == pytest.approx(8.0 / 4.30)
    assert "of 8.00 TB/s (B200, datasheet)" in b["summary"] and "of 4.30 TB/s (H200, measured)" in h["summary"]


def test_profile_metrics_are_in_base_units():
    """ncu prints each metric in its own unit (here ms and Gbyte); the record's `time_ns`/`*_bytes` are base units."""
    from cutegen.profiler.profile import curated

    (row,) = curated(parse_raw_csv((Path(__file__).parent / "recorded" / "softsign" / "raw.csv").read_text()))
    assert 2.5e6 < row["time_ns"] < 4e6  # softsign on 3.2 G floats: about 3.1 ms
    assert 6e9 < row["dram_read_bytes"] < 7e9 and 6e9 < row["dram_write_bytes"] < 7e9
