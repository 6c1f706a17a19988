# cutegen: problem=softsign_ref.py
# Adversarial ModelNew -- "an event recorded but not waited" (expect result-not-ready): the work is ordered after
# the caller's inputs and an event is recorded after it, but forward returns the event's tensor without
# `torch.cuda.current_stream().wait_event(done)`.
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
        self.done = torch.cuda.Event()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.side):
            out = ext.softsign(x, 2000)
            self.done.record(self.side)  # recorded ... never waited on
        return out
