# Reference problem for softsign_modelnew.py (a KernelBench-style ModelNew submission).
# Small sizes: this pair exercises the ModelNew / load_inline path, not bandwidth.
import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Simple model that performs a Softsign activation.
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / (1 + torch.abs(x))


batch_size = 16
dim = 16384


def get_inputs():
    x = torch.rand(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
