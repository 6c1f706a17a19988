"""On the GPU: every idiom kernel of the knowledge base passes the harness (KernelBench-format problem, 5 trials,
fresh inputs, integrity checks). Needs no YAML/BM25: the GPU machine has none of the pure-Python dependencies."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def idiom_kernels() -> list[Path]:
    """examples/idioms/*/*.cu plus every `kernel:` an idiom entry names (e.g. examples/gemm_bf16 if one did)."""
    found = {p for p in (ROOT / "examples" / "idioms").glob("*/*.cu") if p.with_suffix(".py").exists()}
    for md in sorted((ROOT / "cute_knowledge" / "idioms").glob("*.md")):
        m = re.search(r"^kernel:\s*(\S+)\s*$", md.read_text(), re.M)
        if m and (ROOT / m.group(1)).is_file():
            found.add(ROOT / m.group(1))
    return sorted(found)


KERNELS = idiom_kernels()


ENGINE_SETTINGS = {"test_timeout": 120}  # the `engine` fixture's (tests/conftest.py)


def test_there_are_idiom_kernels():
    names = {p.stem for p in KERNELS}
    assert {"elementwise_vec128", "rmsnorm_rows", "gemm_sm90_tma_wgmma", "transpose_swizzle", "gemm_bias_relu",
            "gemm_sm80_mma_sync", "gemm_sm90_pipelined", "gemm_sm90_warpspecialized",
            "gemm_sm90_persistent_cooperative", "gemm_sm90_persistent_pingpong"} <= names, names


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", KERNELS, ids=lambda p: p.stem)
def test_idiom_kernel_passes_the_harness(engine, kernel):
    from cutegen.harness.run import verify_kernel

    builder, worker, state = engine
    record = verify_kernel(kernel, builder, worker, state_dir=state, timing=True)
    assert record.verdict == "pass", record.message
    print(f"{kernel.stem}: {record.timing and record.timing.median_ms} ms; {record.throughput}")
