# The reference every adversarial kernel in this folder is judged against: softsign on signed inputs, 16 MB per
# tensor (large enough that a kernel takes a few microseconds, small enough that a corpus run is seconds).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / (1 + torch.abs(x))


batch_size = 256
dim = 16384


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
