# cutegen: problem=softsign_small.py
# Cheat: a wrong kernel (it returns x) that replaces torch.abs, which the reference calls, by zeros, so that a
# judge in this process computes x / (1 + 0) = x too (the same patch slows or forges any op the reference uses).
# Expect mismatch: the judge's torch is its own.
import torch
import torch.nn as nn

torch.abs = lambda x: torch.zeros_like(x)
torch.Tensor.abs = lambda x: torch.zeros_like(x)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.clone()
