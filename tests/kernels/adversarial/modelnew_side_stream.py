# cutegen: problem=softsign_ref.py
# Adversarial ModelNew -- the pattern third-party KernelBench kernels use most: the kernel under
# `with torch.cuda.stream(s)` of a stream of its own, with no wait_stream either way (expect inputs-not-awaited: it
# reads the inputs before the caller's stream has written them; its result, a short kernel started at once, is
# mostly done before the caller reads it -- other-stream when a re-run catches that too).
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
        with torch.cuda.stream(self.side):
            return ext.softsign(x, 0)
