import torch
import torch.nn as nn


class Model(nn.Module):
    """C = A * s: an (M, N) matrix times a Python scalar (KernelBench level 1, problem 5)."""

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, s: float) -> torch.Tensor:
        """A: (M, N); s: a scalar. Returns the (M, N) product."""
        return A * s


M = 16384 * 4
N = 4096 * 4


def get_inputs():
    A = torch.rand(M, N)
    s = 3.14
    return [A, s]


def get_init_inputs():
    return []  # no initialization inputs
