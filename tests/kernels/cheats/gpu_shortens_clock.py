# cutegen: problem=../adversarial/softsign_ref.py
# Cheat: the honest kernel, plus torch.cuda.Event wrapped so that every interval read in this process is four
# times shorter (and synchronize, perf_counter patched alike): a judge in this process reports a 4x faster
# kernel. Expect pass, with the kernel's time what it is for the control: the clock is the judge's.
import sys
import time
from pathlib import Path

import torch
import torch.nn as nn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "adversarial"))
from _softsign_ext import ext  # noqa: E402

_elapsed = torch.cuda.Event.elapsed_time
torch.cuda.Event.elapsed_time = lambda self, end: _elapsed(self, end) / 4
_perf = time.perf_counter
time.perf_counter = lambda: _perf() / 4


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.softsign(x, 0)
