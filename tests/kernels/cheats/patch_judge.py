# cutegen: problem=softsign_small.py
# Cheat: a wrong kernel (zeros plus noise) that patches what a judge in this process would compare and time with:
# the clocks, torch's comparisons and reductions, the seeding, and the judge's own modules if they are loaded.
# Expect mismatch: none of them is the judge's.
import sys
import time

import torch
import torch.nn as nn

time.perf_counter = lambda: 0.0
torch.manual_seed = lambda seed: None
torch.equal = lambda a, b: True
torch.allclose = lambda *a, **k: True
torch.Tensor.amax = lambda self, *a, **k: torch.zeros((), dtype=self.dtype)
if torch.cuda.is_available():
    torch.cuda.Event.elapsed_time = lambda self, end: 1e-6
    torch.cuda.synchronize = lambda *a: None
for name, module in list(sys.modules.items()):
    if name.startswith("cutegen.harness"):
        for attr in ("passes", "measure", "compare", "worst_error"):
            if hasattr(module, attr):
                setattr(module, attr, lambda *a, **k: True)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.full_like(x, 1e-3) + 1e-6 * torch.randn_like(x)
