# Reference for modelnew_depthwise.py: a depthwise convolution followed by a linear layer, both with random
# (kaiming-uniform) weights drawn at construction -- the case where the judge must build Model and ModelNew from
# the same random state. Small sizes: this checks the seeding, not speed.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels: int, kernel_size: int, features: int):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size, padding=kernel_size // 2, groups=channels)
        self.fc = nn.Linear(width, features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.conv(x))


batch_size, channels, height, width = 4, 8, 16, 16
kernel_size, features = 3, 12


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, kernel_size, features]
