"""Each GPU's ceilings in one table: the build's arch choice, the timing report's "% of peak" and the profiler's
roofline all read the row of the GPU actually present.

The H200 row was measured on this project's H200 (copy kernel, cuBLAS GEMMs, an FFMA chain: DESIGN.md); the
others are datasheet figures (dense, no sparsity), marked as such: a measured copy reaches about 90 % of a
datasheet's HBM bandwidth, so shares of a datasheet ceiling read lower than shares of a measured one.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from functools import lru_cache


@dataclass(frozen=True)
class Gpu:
    name: str  # how people call it: "H200"
    match: tuple[str, ...]  # substrings of the driver's device name that select this row (lower case)
    compute_capability: str  # "90"
    sms: int
    copy_bandwidth: float  # bytes/s read + written
    peaks: dict[str, float] = field(hash=False)  # FLOP/s by math: "bfloat16", "float16", "tf32", "float32", "ffma"
    source: str = "datasheet"  # or "measured"
    note: str = ""

    @property
    def arch(self) -> str:
        return arch_of(self.compute_capability)

    def matmul_peak(self, dtype: str) -> float:
        """The tensor-core (or, for float32, SIMT) matrix-product peak for an output dtype."""
        return self.peaks.get(dtype, self.peaks["float32"])

    def ceiling_text(self) -> str:
        """'4.30 TB/s (H200, measured)' — how a report names the bandwidth it divided by."""
        return f"{self.copy_bandwidth / 1e12:.2f} TB/s ({self.name}, {self.source})"


T = 1e12
GPUS = (
    Gpu("H200", ("h200",), "90", 132, 4.30 * T,
        {"bfloat16": 776 * T, "float16": 745 * T, "tf32": 401 * T, "float32": 50.9 * T, "ffma": 56.8 * T},
        source="measured", note="bf16 dense measured 776–801 TFLOP/s, fp16 745–774; the lower end is the ceiling"),
    Gpu("H100 SXM", ("h100 80gb hbm3", "h100 sxm"), "90", 132, 3.35 * T,
        {"bfloat16": 989 * T, "float16": 989 * T, "tf32": 494 * T, "float32": 67 * T, "ffma": 67 * T}),
    Gpu("H100 PCIe", ("h100 pcie",), "90", 114, 2.0 * T,
        {"bfloat16": 756 * T, "float16": 756 * T, "tf32": 378 * T, "float32": 51 * T, "ffma": 51 * T}),
    Gpu("A100", ("a100",), "80", 108, 2.039 * T,
        {"bfloat16": 312 * T, "float16": 312 * T, "tf32": 156 * T, "float32": 19.5 * T, "ffma": 19.5 * T},
        note="the 80 GB SXM card; the 40 GB card has 1.56 TB/s"),
    Gpu("L40S", ("l40s",), "89", 142, 0.864 * T,
        {"bfloat16": 362 * T, "float16": 362 * T, "tf32": 183 * T, "float32": 91.6 * T, "ffma": 91.6 * T}),
    Gpu("RTX 4090", ("4090",), "89", 128, 1.008 * T,
        {"bfloat16": 165 * T, "float16": 165 * T, "tf32": 82.6 * T, "float32": 82.6 * T, "ffma": 82.6 * T},
        note="tensor figures with fp32 accumulation"),
    Gpu("B200", ("b200",), "100", 148, 8.0 * T,
        {"bfloat16": 2250 * T, "float16": 2250 * T, "tf32": 1100 * T, "float32": 75 * T, "ffma": 75 * T}),
)
H200 = GPUS[0]


def arch_of(compute_capability: str) -> str:
    """nvcc's target for a compute capability: Hopper and Blackwell datacenter parts get the 'a' variant
    (wgmma, tcgen05 need it)."""
    return f"sm_{compute_capability}a" if compute_capability in ("90", "100", "103") else f"sm_{compute_capability}"


def by_name(device_name: str | None) -> Gpu | None:
    """The row for a driver's device name ('NVIDIA H200', 'NVIDIA H100 80GB HBM3', ...), None if not in the table."""
    lowered = (device_name or "").lower()
    return next((g for g in GPUS if any(m in lowered for m in g.match)), None)


@dataclass(frozen=True)
class LocalGpu:
    name: str  # the driver's name
    compute_capability: str

    @property
    def arch(self) -> str:
        return arch_of(self.compute_capability)

    @property
    def row(self) -> Gpu | None:
        return by_name(self.name)


@lru_cache(maxsize=1)
def local() -> LocalGpu | None:
    """The first GPU via nvidia-smi (no CUDA context), or None without one. Cached: the card does not change."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return None
    try:
        out = subprocess.run([smi, "--query-gpu=name,compute_cap", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.match(r"\s*(.+?),\s*(\d+)\.(\d+)", out)
    return LocalGpu(m.group(1), m.group(2) + m.group(3)) if m else None


def present() -> Gpu | None:
    """The table's row for the GPU in this machine (None without a GPU, or for a card not in the table)."""
    gpu = local()
    return gpu.row if gpu else None
