"""One table of GPU ceilings (hardware.py), and the vocabularies the producers own."""

from __future__ import annotations

import pytest

from cutegen import hardware


@pytest.mark.parametrize("device, name, arch", [
    ("NVIDIA H200", "H200", "sm_90a"), ("NVIDIA H100 80GB HBM3", "H100 SXM", "sm_90a"),
    ("NVIDIA H100 PCIe", "H100 PCIe", "sm_90a"), ("NVIDIA A100-SXM4-80GB", "A100", "sm_80"),
    ("NVIDIA L40S", "L40S", "sm_89"), ("NVIDIA GeForce RTX 4090", "RTX 4090", "sm_89"), ("NVIDIA B200", "B200", "sm_100a"),
])
def test_each_gpu_has_one_row(device, name, arch):
    row = hardware.by_name(device)
    assert row.name == name and row.arch == arch
    assert row.source == ("measured" if name == "H200" else "datasheet")
    assert {"bfloat16", "float16", "tf32", "float32", "ffma"} <= set(row.peaks)


def test_the_h200_row_holds_the_figures_measured_here():
    h = hardware.H200
    assert h.copy_bandwidth == 4.30e12 and h.peaks["bfloat16"] == 776e12 and h.peaks["float32"] == 50.9e12
    assert h.peaks["ffma"] == 56.8e12 and h.peaks["tf32"] == 401e12 and h.peaks["float16"] == 745e12
    assert hardware.by_name("Tesla V100") is None and hardware.by_name(None) is None


def test_timing_shares_are_of_the_gpu_given():
    torch = pytest.importorskip("torch")  # noqa: F841  (timing.py imports torch)
    from cutegen.harness.timing import throughput

    h = throughput(1e-3, 4_300_000_000, None, "float32", hardware.H200)
    a = throughput(1e-3, 4_300_000_000, None, "float32", hardware.by_name("A100"))
    assert h["bandwidth_share"] == pytest.approx(1.0) and a["bandwidth_share"] == pytest.approx(4.30 / 2.039)
    assert (h["gpu"], a["ceiling_source"]) == ("H200", "datasheet")
    gemm = throughput(1e-3, 1, 776_000_000_000, "bfloat16", hardware.H200)
    assert gemm["compute_share"] == pytest.approx(1.0) and gemm["math"] == "bfloat16"


def test_arch_choice_gives_hopper_and_blackwell_the_a_variant():
    assert [hardware.arch_of(cc) for cc in ("80", "89", "90", "100", "120")] == [
        "sm_80", "sm_89", "sm_90a", "sm_100a", "sm_120"]


def test_the_knowledge_schema_uses_the_producers_names():
    from cutegen.harness.verdicts import MismatchPattern, Verdict
    from cutegen.knowledge import schema
    from cutegen.profiler.signals import Signal

    assert set(schema.VERDICTS) == {v.value for v in Verdict}
    assert set(schema.SIGNALS) == {s.value for s in Signal}
    assert set(schema.MISMATCH_PATTERNS) == {p.value for p in MismatchPattern}


@pytest.mark.gpu
def test_the_gpu_present_has_a_row():
    """On the device: nvidia-smi's name finds its row, and the build's arch is that row's."""
    from cutegen.toolchain import local_gpu_arch

    local = hardware.local()
    assert local is not None and hardware.present() is not None, local
    assert local_gpu_arch() == hardware.present().arch
