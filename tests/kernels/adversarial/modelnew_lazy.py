# cutegen: problem=softsign_ref.py
# Adversarial ModelNew -- "lazy output" (expect lazy-output): forward returns a torch.Tensor subclass that holds
# the input and launches the kernel only when an op reads it. Timing sees only forward (microseconds for any
# size); the old judge then materialized it in its untimed copy and called it 71x faster than eager.
import sys
from pathlib import Path

import torch
import torch.nn as nn
from torch.utils._pytree import tree_map

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _softsign_ext import ext  # noqa: E402


class LazySoftsign(torch.Tensor):
    @staticmethod
    def __new__(cls, x):
        r = torch.Tensor._make_wrapper_subclass(cls, x.shape, dtype=x.dtype, device=x.device)
        r.x = x
        return r

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        real = lambda a: ext.softsign(a.x, 0) if isinstance(a, LazySoftsign) else a  # noqa: E731
        return func(*tree_map(real, args), **tree_map(real, kwargs or {}))


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return LazySoftsign(x)
