# cutegen: problem=softsign_ref.py
# Adversarial ModelNew -- "waiting on the wrong stream" (expect inputs-not-awaited): the side stream waits for the
# DEFAULT stream, assuming the caller works there; the caller's current stream is another one. The result is
# joined back correctly.
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
        self.side.wait_stream(torch.cuda.default_stream())  # the wrong stream
        with torch.cuda.stream(self.side):
            out = ext.softsign(x, 0)
        torch.cuda.current_stream().wait_stream(self.side)
        return out
