import torch
import torch.nn as nn


class Model(nn.Module):
    """C = diag(A) @ B: the diagonal matrix built from the vector A times the matrix B
    (KernelBench level 1, problem 12)."""

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A, B):
        """A: (N,), the diagonal; B: (N, M). Returns the (N, M) product."""
        return torch.diag(A) @ B


M = 4096
N = 4096


def get_inputs():
    A = torch.rand(N)
    B = torch.rand(N, M)
    return [A, B]


def get_init_inputs():
    return []  # no initialization inputs
