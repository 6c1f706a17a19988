"""On the GPU: the flagship Hopper GEMM (examples/gemm_bf16, CUTLASS 3 collectives) passes the harness at 4096^3,
handles shapes that do not divide its 128x256 tile, and refuses, rather than miscomputes, a shape TMA cannot
address (KernelBench's 8_irregular: K = 2949 and N = 5921 bf16 rows are not 16-byte multiples)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FLAGSHIP = ROOT / "examples" / "gemm_bf16" / "gemm_bf16.cu"
PROBLEM = FLAGSHIP.with_suffix(".py")


ENGINE_SETTINGS = {"test_timeout": 120}  # the `engine` fixture's (tests/conftest.py)


def problem_with_shape(folder: Path, m: int, n: int, k: int) -> Path:
    """examples/gemm_bf16/gemm_bf16.py with another M, N, K (same model, inputs and tolerance)."""
    text = PROBLEM.read_text()
    for name, value in (("M", m), ("N", n), ("K", k)):
        text, count = re.subn(rf"^{name} = \d+$", f"{name} = {value}", text, flags=re.M)
        assert count == 1, name
    path = folder / f"gemm_{m}x{n}x{k}.py"
    path.write_text(text)
    return path


def flagship_library(builder):
    """The flagship built through the build tier and loaded through the kernel ABI. The tests pass the module
    engine's Builder, whose state dir the harness test's build is cached in, so the flagship compiles once a run."""
    from cutegen.compile import Tier
    from cutegen.harness.abi import KernelLibrary

    outcome = builder.run(Tier.BUILD, FLAGSHIP)
    assert outcome.ok, outcome.raw_log[-2000:]
    return KernelLibrary(outcome.artifact)


def skip_unless_132_sms(torch) -> None:
    if torch.cuda.get_device_properties(0).multi_processor_count != 132:
        pytest.skip("the shapes are chosen for 132 SMs (H100 SXM, H200)")


def profiled_product(torch, lib, a, b, out):
    """One flagship call on the current stream under torch.profiler, its product checked; the profile."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        assert lib([a, b], [out], torch.cuda.current_stream()) == 0
        torch.cuda.synchronize()
    torch.testing.assert_close(out, (a.float() @ b.float()).bfloat16(), atol=1e-2, rtol=1e-2)
    return prof


@pytest.mark.gpu
def test_flagship_passes_the_harness_at_4096_cubed(engine):
    from cutegen.harness.run import verify_kernel

    builder, worker, state = engine
    record = verify_kernel(FLAGSHIP, builder, worker, state_dir=state, timing=True, baselines=("eager",))
    assert record.verdict == "pass", record.message
    print(f"gemm_bf16 4096^3: {record.timing and record.timing.median_ms} ms; {record.throughput}; "
          f"baselines {record.baselines}")


@pytest.mark.gpu
def test_flagship_handles_shapes_that_do_not_divide_the_tile(engine, tmp_path):
    from cutegen.harness.run import verify_kernel

    builder, worker, state = engine
    problem = problem_with_shape(tmp_path, 1000, 1032, 520)  # M, N, K off the 128x256x64 tile, 16-byte rows
    record = verify_kernel(FLAGSHIP, builder, worker, problem=problem, state_dir=state)
    assert record.verdict == "pass", record.message


@pytest.mark.gpu
def test_flagship_refuses_rows_tma_cannot_address(engine, tmp_path):
    from cutegen.harness.run import verify_kernel

    builder, worker, state = engine
    problem = problem_with_shape(tmp_path, 8205, 5921, 2949)  # KernelBench level 1 #8, in bf16
    record = verify_kernel(FLAGSHIP, builder, worker, problem=problem, state_dir=state)
    assert record.verdict == "launch-error", record.message
    assert "cudaErrorInvalidValue" in record.message


@pytest.mark.gpu
def test_flagship_relaunch_follows_the_tensors_not_the_last_call(engine):
    """The launcher relaunches the last call's kernel parameters when the same tensors come again: new values in
    them are read anew, another output, shape or input is never served the last call's parameters, and a split
    kernel's sums do not carry over from the call before."""
    import torch

    lib = flagship_library(engine.builder)
    stream = torch.cuda.current_stream()
    a, b = (torch.randn(512, 256, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    b = b.T.contiguous()  # (256, 512)

    def gemm(x, y, out):
        assert lib([x, y], [out], stream) == 0
        torch.testing.assert_close(out, (x.float() @ y.float()).bfloat16(), atol=1e-2, rtol=1e-2)

    out = torch.empty(512, 512, device="cuda", dtype=torch.bfloat16)
    gemm(a, b, out)
    a.mul_(-2)  # same tensors, new values: the relaunch must read them
    gemm(a, b, out)
    gemm(a, b, torch.empty_like(out))  # another output
    gemm(a[:256], b, out[:256])  # another shape on the same storage
    gemm(a.clone(), b, out)  # another input
    gemm(a, b, out)  # back to the first: parameters rebuilt, not stale
    # 256x512x8192 runs the split kernel on 132 SMs: relaunched, its workspace's partial sums start at zero each call
    a = torch.randn(256, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 512, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(256, 512, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):
        gemm(a, b, out)
    a.mul_(-1)
    gemm(a, b, out)


@pytest.mark.gpu
def test_flagship_picks_a_kernel_per_shape_and_each_computes_right(engine):
    """On 132 SMs the flagship's cost model (waves x tile area / throughput per SM) gives each of these shapes
    another of its six kernels: 64x128 at 1024^3, 128x128 at 1280^2 x 512, 192x96 at 1536^2 x 512, 128x256 at
    2048^2 x 512, 128x192 at 3072^2 x 512, 128x64 split 8 ways at 256x512x8192. Calls going round the six, twice,
    each get the product (each kernel keeps its own last launch; the split one's pieces are summed anew each call)
    and each shape always runs the same kernel, a different one from every other shape's."""
    import torch

    skip_unless_132_sms(torch)
    lib = flagship_library(engine.builder)
    shapes = [(1024, 1024, 1024), (1280, 1280, 512), (1536, 1536, 512), (2048, 2048, 512), (3072, 3072, 512),
              (256, 512, 8192)]
    tensors = {}
    for m, n, k in shapes:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        tensors[m, n, k] = (a, b, torch.empty(m, n, device="cuda", dtype=torch.bfloat16))

    def gemm(shape) -> str:
        a, b, out = tensors[shape]
        out.fill_(float("nan"))
        prof = profiled_product(torch, lib, a, b, out)
        gpu = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
        kernels = [name for name in gpu if "device_kernel" in name]
        assert len(kernels) == 1, kernels
        return kernels[0]

    ran: dict[tuple, set[str]] = {shape: set() for shape in shapes}
    for shape in shapes * 2:
        ran[shape].add(gemm(shape))
    assert all(len(names) == 1 for names in ran.values()), ran
    assert len({next(iter(names)) for names in ran.values()}) == len(shapes), "two shapes ran the same kernel"
    print({shape: next(iter(names))[:400] for shape, names in ran.items()})


@pytest.mark.gpu
def test_flagship_spreads_its_tiles_evenly_over_its_waves(engine, tmp_path):
    """4096 x 4096 makes 512 tiles of 128x256: 4 waves on 132 SMs or on 128, so the persistent grid is 128 CTAs
    (even_waves); 2816 x 3072 makes 264 = 2 waves of exactly 132, so its grid keeps every SM."""
    import json

    import torch

    skip_unless_132_sms(torch)
    lib = flagship_library(engine.builder)

    def grid(m: int, n: int, k: int) -> int:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        prof = profiled_product(torch, lib, a, b, torch.empty(m, n, device="cuda", dtype=torch.bfloat16))
        trace = tmp_path / f"{m}x{n}x{k}.json"
        prof.export_chrome_trace(str(trace))
        kernels = [e for e in json.loads(trace.read_text())["traceEvents"]
                   if e.get("cat") == "kernel" and "device_kernel" in e.get("name", "")]
        assert len(kernels) == 1, [e.get("name") for e in kernels]
        x, y, z = kernels[0]["args"]["grid"]
        return x * y * z

    assert grid(4096, 4096, 512) == 128
    assert grid(2816, 3072, 512) == 132
