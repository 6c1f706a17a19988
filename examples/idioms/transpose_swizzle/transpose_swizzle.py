import torch
import torch.nn as nn


class Model(nn.Module):
    """Matrix transpose, materialized."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.t().contiguous()


M = 8192
N = 4096


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return []
