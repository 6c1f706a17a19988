import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Simple model that performs a single square matrix multiplication (C = A * B) in bfloat16.
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """
        Performs the matrix multiplication.

        Args:
            A (torch.Tensor): Input matrix A of shape (M, K), bfloat16, row-major.
            B (torch.Tensor): Input matrix B of shape (K, N), bfloat16, row-major.

        Returns:
            torch.Tensor: Output matrix C of shape (M, N), bfloat16.
        """
        return torch.matmul(A, B)


# KernelBench level 1 #1 (square matmul) style, in bf16 to exercise the tensor cores.
M = 4096
N = 4096
K = 4096

# bf16 output: one bf16 ulp is 2^-8 relative, and the kernel's fp32 summation order differs from
# cuBLAS's, so compare at bf16 precision.
CUTEGEN_ATOL = 1e-2
CUTEGEN_RTOL = 1e-2


def get_flops():
    return 2 * M * N * K


def get_inputs():
    A = torch.randn(M, K, dtype=torch.bfloat16)
    B = torch.randn(K, N, dtype=torch.bfloat16)
    return [A, B]


def get_init_inputs():
    return []  # No special initialization inputs needed
