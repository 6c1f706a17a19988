# cutegen: problem=softsign_ref.py
# Adversarial ModelNew -- "stride-0 / expanded-view output" (expect expanded-output): computes the first row and
# returns it expanded to the full shape, a view whose rows all share one row of memory: a fraction of the work and
# of the writes, and right only where every row is the same.
import sys
from pathlib import Path

import torch
import torch.nn as nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _softsign_ext import ext  # noqa: E402


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.softsign(x[:1].contiguous(), 0).expand_as(x)
