# cutegen: problem=softsign_ref.py
# Control ModelNew (expect pass): a side stream used the way PyTorch's documentation says -- it waits for the
# caller's current stream before the kernel, and the current stream waits for it before forward returns (plus
# record_stream, so the allocator does not hand the output's memory to another stream too early).
import sys
from pathlib import Path

import torch
import torch.nn as nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _softsign_ext import ext  # noqa: E402


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.side = torch.cuda.Stream()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        current = torch.cuda.current_stream()
        self.side.wait_stream(current)
        with torch.cuda.stream(self.side):
            out = ext.softsign(x, 2000)
        current.wait_stream(self.side)
        out.record_stream(current)
        return out
