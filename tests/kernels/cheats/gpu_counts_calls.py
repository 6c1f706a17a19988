# cutegen: problem=../adversarial/softsign_ref.py
# Cheat: computes for the first calls (the checks, it guesses) and afterwards returns its last result again
# without launching anything: timed, it looks many times faster. Expect timed-calls-wrong (or cached-results,
# when a re-verified trial is among the skipped calls).
import sys
from pathlib import Path

import torch
import torch.nn as nn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "adversarial"))
from _softsign_ext import ext  # noqa: E402


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls, self.last = 0, None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        if self.calls <= 12 or self.last is None:
            self.last = ext.softsign(x, 0)
            return self.last
        return self.last  # no launch at all
