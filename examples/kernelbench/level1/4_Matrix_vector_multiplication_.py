import torch
import torch.nn as nn


class Model(nn.Module):
    """C = A @ B: an (M, K) matrix times a (K, 1) column vector (KernelBench level 1, problem 4)."""

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """A: (M, K); B: (K, 1). Returns the (M, 1) product."""
        return torch.matmul(A, B)


M = 256 * 8  # 2048
K = 131072 * 8  # 1048576


def get_inputs():
    A = torch.rand(M, K)
    B = torch.rand(K, 1)
    return [A, B]


def get_init_inputs():
    return []  # no initialization inputs
