# cutegen: problem=../../examples/softsign_modelnew/softsign_modelnew_ref.py
# Integrity test -- CHEAT: "aliasing output" (KernelBench ModelNew format). forward() computes
# softsign in place on the caller's input tensor and returns that same tensor, so the "output"
# shares storage with the input: no output allocation, no separate write -- and the caller's
# input is destroyed (a second forward on the same input returns softsign(softsign(x))). The
# values returned on the first call are correct; the harness must flag the aliasing / the
# modified input. Pure PyTorch on purpose: the cheat is in the data flow, not the kernel.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x.div_(1 + torch.abs(x))  # in place: overwrites the input
        return x  # the output *is* the input tensor
