# The reference the in-process cheats are judged against: softsign on signed inputs, small enough that a CPU judge
# (`cutegen test --device cpu`, the CI's isolation tests) takes a second.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / (1 + torch.abs(x))


def get_inputs():
    return [torch.randn(64, 1024)]


def get_init_inputs():
    return []
