"""CPU model of the fp32 matmul kernels' arithmetic (examples/kernelbench/level1/common/gemm_3xtf32.cuh).

Why 3xTF32 with promotion, in numbers: each variant's worst |out - ref| / (1e-4 + 1e-4 |ref|) (the
harness's test at atol = rtol = 1e-4; <= 1 passes) against an fp64 reference, on a 16 x 16 x 8192
slice with KernelBench's torch.rand-like inputs and with signed (randn) inputs.

The tensor cores' accumulation is modelled as round-toward-zero after each 8-deep MMA (published
measurements of V100/A100 tensor cores show truncation); `promote` adds each 32-deep k-tile into the
main accumulator with IEEE round-to-nearest, as the kernel does. A model, not the hardware: the H200
run of the kernels is the real test.

    python bench/gemm_3xtf32_accuracy.py
"""

import numpy as np

M = N = 16
K = 8192


def tf32_round(x):  # cvt.rna.tf32.f32: nearest, ties away
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x1000) & 0xFFFFE000).astype(np.uint32).view(np.float32)


def tf32_truncate(x):
    return (x.astype(np.float32).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


def fp32_toward_zero(x):
    f = x.astype(np.float32)
    over = np.abs(f.astype(np.float64)) > np.abs(x)
    f[over] = np.nextafter(f[over], np.float32(0))
    return f


def gemm(a, b, *, three: bool, truncating: bool, promote: bool):
    a_big, b_big = tf32_round(a), tf32_round(b)
    a_small, b_small = tf32_truncate(a - a_big), tf32_truncate(b - b_big)
    terms = [(a_small, b_big), (a_big, b_small), (a_big, b_big)] if three else [(a_big, b_big)]
    acc = np.zeros((M, N), np.float32)
    tile = np.zeros((M, N), np.float32)
    for k0 in range(0, K, 8):
        ks = slice(k0, k0 + 8)
        target = tile if promote else acc
        for x, y in terms:
            s = target.astype(np.float64) + x[:, ks].astype(np.float64) @ y[ks, :].astype(np.float64)
            target[...] = fp32_toward_zero(s) if truncating else s.astype(np.float32)
        if promote and (k0 + 8) % 32 == 0:
            acc = (acc + tile).astype(np.float32)
            tile[...] = 0
    return acc


def worst(out, ref):
    return float(np.max(np.abs(out - ref) / (1e-4 + 1e-4 * np.abs(ref))))


def main():
    rng = np.random.default_rng(0)
    inputs = {
        "rand (KernelBench)": (rng.random((M, K), np.float32), rng.random((K, N), np.float32)),
        "randn (signed)": (
            rng.standard_normal((M, K)).astype(np.float32),
            rng.standard_normal((K, N)).astype(np.float32),
        ),
    }
    variants = {
        "fp32 (numpy BLAS)": None,
        "1xTF32, IEEE accumulation": dict(three=False, truncating=False, promote=False),
        "1xTF32, truncating + promotion": dict(three=False, truncating=True, promote=True),
        "3xTF32, truncating accumulation": dict(three=True, truncating=True, promote=False),
        "3xTF32, truncating + promotion (the kernel)": dict(three=True, truncating=True, promote=True),
    }
    print(f"worst error / tolerance, {M}x{N}x{K}:")
    for name, (a, b) in inputs.items():
        ref = a.astype(np.float64) @ b.astype(np.float64)
        for label, kw in variants.items():
            out = a @ b if kw is None else gemm(a, b, **kw)
            print(f"  {name:20s} {label:45s} {worst(out, ref):8.2f}")


if __name__ == "__main__":
    main()
