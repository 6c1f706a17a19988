# cutegen: problem=softsign_small.py
# Cheat: returns an empty tensor at once and computes it on a background thread that finishes after the call has
# returned. Expect result-not-ready or mismatch (the values were read when the call returned), never pass.
import threading
import time

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)

        def late():
            time.sleep(0.05)
            torch.div(x, 1 + x.abs(), out=out)
        threading.Thread(target=late, daemon=True).start()
        return out
