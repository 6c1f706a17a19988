"""What a ModelNew returns must be a plain tensor whose memory holds its values: a lazy subclass and an expanded
(stride-0) or overlapping view get verdicts of their own (they passed the old judge: it timed forward alone and
materialized the result in its untimed copy). Judged through the worker's handler on the CPU, as
test_modelnew_seed.py does; the load_inline versions run on the GPU (tests/gpu/test_adversarial_gpu.py)."""

from __future__ import annotations

import textwrap

import pytest

from cutegen.harness.worker import _handle

REFERENCE = """
import torch, torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return x / (1 + torch.abs(x))
def get_inputs():
    return [torch.randn(8, 64)]
def get_init_inputs():
    return []
"""

HEADER = """
import torch
import torch.nn as nn
from torch.utils._pytree import tree_map

def softsign(x):
    return x / (1 + x.abs())
"""

CASES = {
    "lazy_subclass": ("lazy-output", """
class Lazy(torch.Tensor):
    '''Holds x; computes softsign(x) only when an op reads it.'''
    @staticmethod
    def __new__(cls, x):
        r = torch.Tensor._make_wrapper_subclass(cls, x.shape, dtype=x.dtype, device=x.device)
        r.x = x
        return r

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        real = lambda a: softsign(a.x) if isinstance(a, Lazy) else a
        return func(*tree_map(real, args), **tree_map(real, kwargs or {}))

class ModelNew(nn.Module):
    def forward(self, x):
        return Lazy(x)
"""),
    "plain_subclass": ("lazy-output", """
class Marked(torch.Tensor):
    pass

class ModelNew(nn.Module):
    def forward(self, x):
        return softsign(x).as_subclass(Marked)
"""),
    "expanded_row": ("expanded-output", """
class ModelNew(nn.Module):
    '''Computes one row and expands it: right only where every row is the same, and never written out.'''
    def forward(self, x):
        return softsign(x[:1]).expand_as(x)
"""),
    "overlapping_view": ("expanded-output", """
class ModelNew(nn.Module):
    def forward(self, x):
        flat = softsign(x).reshape(-1)
        return flat.as_strided(x.shape, (1, 1))
"""),
    "dense_slice_of_a_bigger_buffer": ("pass", """
class ModelNew(nn.Module):
    '''A padded buffer and a view of the real part: every element is in memory, so it is accepted.'''
    def forward(self, x):
        buf = torch.empty(x.shape[0], x.shape[1] + 5, dtype=x.dtype, device=x.device)
        buf[:, :x.shape[1]] = softsign(x)
        return buf[:, :x.shape[1]]
"""),
    "wrong_dtype": ("mismatch", """
class ModelNew(nn.Module):
    def forward(self, x):
        return softsign(x).double()
"""),
    "not_a_tensor": ("mismatch", """
class ModelNew(nn.Module):
    def forward(self, x):
        return softsign(x).tolist()
"""),
}


@pytest.mark.parametrize("name", list(CASES))
def test_what_forward_returns_is_judged_by_its_kind(tmp_path, name):
    expected, body = CASES[name]
    (tmp_path / "ref.py").write_text(REFERENCE)
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(HEADER) + textwrap.dedent(body))
    reply = _handle({"problem": str(tmp_path / "ref.py"), "modelnew": str(tmp_path / f"{name}.py"), "trials": 2})
    assert reply["verdict"] == expected, reply["message"]
    if expected == "lazy-output":
        assert "subclass" in reply["message"] or "storage" in reply["message"]
    if expected == "expanded-output":
        assert "strides" in reply["message"]
