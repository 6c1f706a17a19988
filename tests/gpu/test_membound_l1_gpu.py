"""On the GPU: the memory-bound KernelBench L1 kernels (#4 matvec, #5 matrix-scalar, #12 diag(A) @ B) on shapes
off their benchmark sizes, so the paths the benchmark never takes run too: partial tiles, the predicated scalar
path (sizes not a multiple of 4), and the matvec's K split across a thread-block cluster (few rows, an empty rank)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cutegen.harness.run import verify_kernel

LEVEL1 = Path(__file__).resolve().parents[2] / "examples" / "kernelbench" / "level1"

PROBLEMS = {
    "4_Matrix_vector_multiplication_": ("torch.matmul(A, B)", "[torch.rand({M}, {K}), torch.rand({K}, 1)]"),
    "5_Matrix_scalar_multiplication": ("A * B", "[torch.rand({M}, {K}), {s}]"),
    "12_Matmul_with_diagonal_matrices_": ("torch.diag(A) @ B", "[torch.rand({M}), torch.rand({M}, {K})]"),
}
CASES = [  # (kernel, M, K, scalar): what each shape exercises
    ("4_Matrix_vector_multiplication_", 3, 5003, None),  # K % 4: predicated; 4-way split of 5 chunks
    ("4_Matrix_vector_multiplication_", 37, 65536, None),  # partial row tile; K split 8-way (cluster of 8)
    ("4_Matrix_vector_multiplication_", 1030, 4100, None),  # partial K chunk, vectorized full chunks, 2-way split
    ("4_Matrix_vector_multiplication_", 2048, 8192, None),  # enough row tiles: no split
    ("5_Matrix_scalar_multiplication", 3, 8195, -2.5),  # partial last tile
    ("5_Matrix_scalar_multiplication", 64, 8192, 7),  # an int scalar (int64 on the host)
    ("12_Matmul_with_diagonal_matrices_", 7, 3001, None),  # M % 4 != 0: predicated everywhere
    ("12_Matmul_with_diagonal_matrices_", 9, 4100, None),  # partial row and column tiles
]


ENGINE_SETTINGS = {"test_timeout": 120}  # the `engine` fixture's (tests/conftest.py)


@pytest.mark.gpu
@pytest.mark.parametrize("name,m,k,s", CASES, ids=lambda v: str(v))
def test_membound_kernel_passes_off_its_benchmark_size(engine, tmp_path, name, m, k, s):
    builder, worker, state = engine
    forward, inputs = PROBLEMS[name]
    problem = tmp_path / f"{name}_{m}x{k}.py"
    problem.write_text(
        "import torch, torch.nn as nn\n"
        "class Model(nn.Module):\n"
        f"    def forward(self, A, B):\n        return {forward}\n"
        f"def get_inputs():\n    return {inputs.format(M=m, K=k, s=s)}\n"
        "def get_init_inputs():\n    return []\n")
    record = verify_kernel(LEVEL1 / f"{name}.cu", builder, worker, problem=problem, state_dir=state)
    assert record.verdict == "pass", record.message
