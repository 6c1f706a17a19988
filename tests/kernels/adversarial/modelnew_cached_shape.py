# cutegen: problem=softsign_ref.py
# Adversarial ModelNew -- "results cached across calls, keyed by shape" (expect cached-results): the first call's
# result is kept per input shape and returned for every later input of that shape.
import sys
from pathlib import Path

import torch
import torch.nn as nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _softsign_ext import ext  # noqa: E402


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.cache = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape not in self.cache:
            self.cache[x.shape] = ext.softsign(x, 0)
        return self.cache[x.shape]
