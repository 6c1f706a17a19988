# cutegen: problem=softsign_ref.py
# Adversarial ModelNew -- "a lower-precision computation passing only at a looser tolerance" (expect mismatch):
# the math in fp16, about 5e-4 off: inside fp16's 1e-2 tolerance, outside fp32's 1e-4.
import sys
from pathlib import Path

import torch
import torch.nn as nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _softsign_ext import ext  # noqa: E402


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.softsign_half(x)
