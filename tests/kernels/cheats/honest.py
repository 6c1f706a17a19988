# cutegen: problem=softsign_small.py
# A correct pure-PyTorch ModelNew: what every cheat in this folder is measured against (it must pass).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / (1 + x.abs())
