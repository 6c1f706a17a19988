"""The host time of one call through the kernel ABI (`KernelLibrary.__call__`: ctypes, DLTensor structs) with a
launcher that does nothing, so only the bridge is timed: the structs reused when the same tensors recur (today's
path) against the structs built on every call (the path to 2026-12-06), interleaved in one process, each round in a
random order; the median of the per-block ratios with their min..max.

Why it matters: back to back, a GEMM of a few microseconds is bound by the host's work per call (the H100 ran
`torch.matmul` at ~16 us a call at 512^3 and our bridge at ~32 us); the harness hides host time behind a flush and
a spin, but a timing loop or a Python caller does not.

    python bench/abi_call_overhead.py [--out abi_call_overhead.json] [--blocks 5] [--calls 20000]

CPU tensors unless a GPU is there (then CUDA tensors on the current stream: `data_ptr()` and `device` cost a little
more there). The no-op launcher is built with the system C++ compiler against abi.h, as the ABI's tests build theirs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "server"), str(ROOT)]

import torch  # noqa: E402

from cutegen.harness.abi import KernelLibrary, _Frame  # noqa: E402
from cutegen.toolchain import discover  # noqa: E402
from tests.support import host_library  # noqa: E402

NOOP = """#include <cutegen/abi.h>
CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream) {
  (void)stream;
  return num_inputs == 2 && num_outputs == 1 && inputs[0].ndim == 2 && outputs[0].ndim == 2 ? 0 : 1;
}
"""


def build_noop(folder: Path) -> KernelLibrary:
    cxx = host_library.compiler()
    if cxx is None:
        sys.exit("abi_call_overhead: no host C++ compiler")
    return KernelLibrary(host_library.build(folder, "noop", NOOP, discover().cuda_root, cxx))


def per_call_us(fn, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls * 1e6


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path)
    ap.add_argument("--blocks", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=20000)
    args = ap.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    stream = torch.cuda.current_stream() if device == "cuda" else type("HostStream", (), {"cuda_stream": 0})()
    a, b, d = (torch.empty(512, 512, device=device) for _ in range(3))
    with tempfile.TemporaryDirectory() as tmp:
        lib = build_noop(Path(tmp))

        def rebuilt():  # what __call__ did before: the structs built anew for every call
            frame = _Frame.build([a, b], [d])
            return lib._fn(*frame.arguments, stream.cuda_stream)

        fns = {"reused": lambda: lib([a, b], [d], stream), "rebuilt": rebuilt}
        assert all(fn() == 0 for fn in fns.values()), "the no-op launcher refused its arguments"
        blocks = [block(fns, args.rounds, args.calls) for _ in range(args.blocks)]
    ratios = sorted(b["rebuilt"] / b["reused"] for b in blocks)
    report = {"date": time.strftime("%Y-%m-%d"), "device": device, "machine": platform.machine(),
              "cores": len(os.sched_getaffinity(0)), "calls_per_round": args.calls,
              "us_per_call": {n: statistics.median(b[n] for b in blocks) for n in fns},
              "speedup": statistics.median(ratios), "speedup_interval": [ratios[0], ratios[-1]], "blocks": blocks}
    print(f"{device}: reused {report['us_per_call']['reused']:.2f} us/call, rebuilt "
          f"{report['us_per_call']['rebuilt']:.2f} us/call: reused is {report['speedup']:.2f}x faster "
          f"[{ratios[0]:.2f}, {ratios[-1]:.2f}] ({args.blocks} blocks)")
    if args.out:
        args.out.write_text(json.dumps(report, indent=1))


def block(fns: dict, rounds: int, calls: int) -> dict:
    """Each function's median µs per call over `rounds` rounds, each round in a new random order."""
    times: dict[str, list[float]] = {n: [] for n in fns}
    for _ in range(rounds):
        for name in random.sample(list(fns), len(fns)):
            times[name].append(per_call_us(fns[name], calls))
    return {n: statistics.median(t) for n, t in times.items()}


if __name__ == "__main__":
    main()
