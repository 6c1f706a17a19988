# cutegen: problem=modelnew_depthwise_ref.py
# A correct KernelBench-style ModelNew with random-weight layers: it declares the same layers in the same order
# as the reference and computes the same function through functional calls, as third-party agents' submissions
# do. Judged right only if the harness seeds identically before constructing Model and ModelNew.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, channels: int, kernel_size: int, features: int):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size, padding=kernel_size // 2, groups=channels)
        self.fc = nn.Linear(16, features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.conv2d(x, self.conv.weight, self.conv.bias, padding=self.conv.padding, groups=self.conv.groups)
        return torch.addmm(self.fc.bias, y.reshape(-1, y.shape[-1]), self.fc.weight.t()).reshape(*y.shape[:-1], -1)
