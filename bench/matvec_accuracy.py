"""CPU model of KernelBench L1 #4's summation (examples/kernelbench/level1/4_Matrix_vector_multiplication_.cu)
against an fp64 product, with signed (randn) inputs at the problem's K = 2^20.

Each row's dot product is summed as the kernel does: 256 threads, thread t taking columns 1024 c + 4 t + j
(j = 0..3) for c = 0 .. K/1024 - 1 in order, then a 32-lane xor-shuffle tree and the 8 warps.
Variants: the old kernel (fp32 fmaf lanes, fp32 tree) and the new one (one Kahan accumulator per row and thread,
its 4 lanes added in order, each term one fmaf of the exact product and the compensation; then an fp64 tree);
numpy's fp32 dot for comparison. The model measures each variant's RMS error on ROWS rows, then predicts the worst
|y - T| / (1e-4 + 1e-4 |T|) over the problem's 2048 rows (T ~ N(0, K), errors drawn at that RMS: 200 draws),
the quantity the harness's fp64 rule compares with 1. The issue measured the old kernel on the H200 at 3.6x and
cuBLAS at 0.81x; the model gives the old kernel 3.9x. A model of the arithmetic, not the hardware.

    python bench/matvec_accuracy.py [--rows 32]
"""

from __future__ import annotations

import argparse

import numpy as np

K = 1 << 20
THREADS, LANES = 256, 4
CHUNKS = K // (THREADS * LANES)


def f32(x):
    return x.astype(np.float32)


def tree32(acc, rows):
    t = (acc[..., 0] + acc[..., 1]) + (acc[..., 2] + acc[..., 3])
    w = t.reshape(rows, 8, 32)
    for off in (16, 8, 4, 2, 1):
        w = f32(w + w[..., np.arange(32) ^ off])
    s = np.zeros(rows, np.float32)
    for k in range(8):
        s = f32(s + w[:, k, 0])
    return s


def tree64(acc, rows):
    t = (acc[..., 0] + acc[..., 1]) + (acc[..., 2] + acc[..., 3])
    w = t.reshape(rows, 8, 32)
    for off in (16, 8, 4, 2, 1):
        w = w + w[..., np.arange(32) ^ off]
    return f32(w[:, :, 0].sum(axis=1))


def variants(a, x, rows) -> dict[str, np.ndarray]:
    ac, xc = a.reshape(rows, CHUNKS, THREADS, LANES), x.reshape(CHUNKS, THREADS, LANES)
    plain = np.zeros((rows, THREADS, LANES), np.float32)
    s, c = np.zeros((rows, THREADS), np.float32), np.zeros((rows, THREADS), np.float32)  # the new kernel
    for k in range(CHUNKS):
        p64 = ac[:, k].astype(np.float64) * xc[k].astype(np.float64)  # exact (48-bit) products
        plain = f32(p64 + plain)  # fmaf into 4 lane accumulators
        for v in range(LANES):  # one Kahan accumulator per row and thread, its lanes in order
            y = f32(p64[..., v] - c)  # fmaf(a, x, -c): one rounding
            t = f32(s + y)
            c, s = f32(f32(t - s) - y), t
    lanes64 = np.zeros((rows, THREADS, LANES))
    lanes64[..., 0] = s.astype(np.float64) - c
    return {"old kernel (fp32 lanes, fp32 tree)": tree32(plain, rows),
            "new kernel (Kahan per thread by fmaf, fp64 tree)": tree64(lanes64, rows),
            "numpy fp32 dot": a @ x}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=32)
    args = ap.parse_args()
    rng = np.random.default_rng(1)
    a = rng.standard_normal((args.rows, K), dtype=np.float32)
    x = rng.standard_normal(K, dtype=np.float32)
    truth = a.astype(np.float64) @ x.astype(np.float64)
    print(f"{'variant':<48} {'RMS error':>10} {'worst e, 2048 rows: median':>27} {'p90':>6}")
    for name, y in variants(a, x, args.rows).items():
        rms = float(np.sqrt(np.mean((y.astype(np.float64) - truth) ** 2)))
        worst = []
        for _ in range(200):
            t = rng.standard_normal(2048) * np.sqrt(K)
            worst.append(np.max(np.abs(rng.standard_normal(2048) * rms) / (1e-4 + 1e-4 * np.abs(t))))
        print(f"{name:<48} {rms:10.3g} {np.median(worst):27.3g} {np.percentile(worst, 90):6.3g}", flush=True)


if __name__ == "__main__":
    main()
