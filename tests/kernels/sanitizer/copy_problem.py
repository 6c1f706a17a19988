"""The problem the sanitizer's broken kernels are run against: y = x for 4000 floats (not a multiple of a block,
so a kernel without a tail guard runs past the end). Small on purpose: the sanitizer slows every access."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.clone()


n = 4000


def get_inputs():
    return [torch.randn(n)]  # signed: a kernel that branches on the sign diverges


def get_init_inputs():
    return []
