# cutegen: problem=softsign_ref.py
# Adversarial ModelNew -- "partial write" (expect mismatch): the output comes from torch.empty_like and the kernel
# writes its first half only; the rest is whatever that memory held (the allocator's previous block, never
# poisoned by the harness).
import sys
from pathlib import Path

import torch
import torch.nn as nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _softsign_ext import ext  # noqa: E402


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        ext.softsign_rows(x, out, x.shape[0] // 2)
        return out
