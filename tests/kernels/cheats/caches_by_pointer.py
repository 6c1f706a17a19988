# cutegen: problem=softsign_small.py
# Cheat: computes once per input address and returns the remembered result when the same buffer comes again.
# Expect cached-results: the judge writes new values into the same buffers every trial.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.seen = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        key = x.data_ptr()
        if key not in self.seen:
            self.seen[key] = x / (1 + x.abs())
        return self.seen[key].clone()
