# cutegen: problem=../adversarial/softsign_ref.py
# Cheat: the honest kernel, plus torch.abs (which the reference calls) replaced by eight chained abs, so that a
# judge in this process times eager PyTorch several times slower and reports a large speedup. Expect pass, with
# eager's time what it is for the control (the judge's torch is its own).
import sys
from pathlib import Path

import torch
import torch.nn as nn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "adversarial"))
from _softsign_ext import ext  # noqa: E402

_abs = torch.abs


def slow_abs(x, *a, **k):
    for _ in range(7):
        x = _abs(x)
    return _abs(x, *a, **k)


torch.abs = slow_abs
torch.Tensor.abs = slow_abs


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.softsign(x, 0)
