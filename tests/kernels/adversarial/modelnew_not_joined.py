# cutegen: problem=softsign_ref.py
# Adversarial ModelNew -- "result not ready at return" (expect result-not-ready): the side stream waits for the
# caller's (the inputs are right), the ~2 ms kernel runs there, and forward returns without
# `torch.cuda.current_stream().wait_stream(side)`: the caller reads the result before it is written.
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
        self.side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.side):
            return ext.softsign(x, 2000)
