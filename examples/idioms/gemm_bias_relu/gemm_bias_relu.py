import torch
import torch.nn as nn


class Model(nn.Module):
    """relu(A @ B + bias) in bfloat16 (a linear layer's forward with a fused activation)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        return torch.relu(torch.matmul(A, B) + bias)


M = 4096
N = 4096
K = 4096

# bf16 output: compare at bf16 precision (the reference rounds A @ B to bf16 before adding the bias; the
# kernel adds in fp32 and rounds once).
CUTEGEN_ATOL = 2e-2
CUTEGEN_RTOL = 2e-2


def get_flops():
    return 2 * M * N * K


def get_inputs():
    A = torch.randn(M, K, dtype=torch.bfloat16)
    B = torch.randn(K, N, dtype=torch.bfloat16)
    bias = torch.randn(N, dtype=torch.bfloat16)
    return [A, B, bias]


def get_init_inputs():
    return []
