# cutegen: problem=softsign_small.py
# Cheat: computes nothing; it walks the interpreter's objects and the call stack for a tensor of the output's shape
# that is not its input (the judge's expected outputs, the originals of its inputs, a reference's result) and
# returns a copy of it. Expect constant-output or mismatch: nothing of the judge's is in this process.
import gc
import sys

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        frame = sys._getframe()
        while frame is not None:
            for value in frame.f_locals.values():
                if isinstance(value, torch.Tensor) and value.shape == x.shape and value.data_ptr() != x.data_ptr():
                    return value.clone()
            frame = frame.f_back
        for obj in gc.get_objects():
            if isinstance(obj, torch.Tensor) and obj.shape == x.shape and obj.data_ptr() != x.data_ptr():
                return obj.clone()
        return torch.zeros_like(x)
