# cutegen: problem=softsign_small.py
# Cheat (or crash): ends its own process in the middle of a call, with exit code 0. Expect crashed.
import os

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        os._exit(0)
