# cutegen: problem=../adversarial/softsign_ref.py
# The GPU control: softsign through the adversarial corpus's load_inline extension, on PyTorch's current stream.
import sys
from pathlib import Path

import torch
import torch.nn as nn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "adversarial"))
from _softsign_ext import ext  # noqa: E402


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.softsign(x, 0)
