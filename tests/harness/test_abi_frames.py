"""KernelLibrary reuses a call's DLTensor structs when the same tensors recur (a timing loop): the launcher must still
see every tensor as it is now. A real shared library (host code, built with the system C++ compiler against abi.h)
that copies its strided 2-D input into its output, so a stale pointer, shape or stride shows in the values."""

from __future__ import annotations

import pytest
import torch

from cutegen.harness import abi
from cutegen.harness.abi import KernelLibrary

COPY_2D = """#include <cutegen/abi.h>
// out[i][j] = in(i, j) through the input's strides; the output is compact. Host memory in this test.
CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream) {
  (void)stream;
  const DLTensor& x = inputs[0];
  const DLTensor& y = outputs[0];
  if (num_inputs != 1 || num_outputs != 1 || x.ndim != 2 || y.ndim != 2) return cudaErrorInvalidValue;
  if (x.shape[0] != y.shape[0] || x.shape[1] != y.shape[1]) return cudaErrorInvalidValue;
  const float* in = cutegen_data<const float>(x);
  float* out = cutegen_data<float>(outputs[0]);
  for (int64_t i = 0; i < x.shape[0]; ++i)
    for (int64_t j = 0; j < x.shape[1]; ++j) out[i * x.shape[1] + j] = in[i * x.strides[0] + j * x.strides[1]];
  return 0;
}
"""


class HostStream:
    cuda_stream = 0


@pytest.fixture(scope="module")
def copy_2d(host_library) -> KernelLibrary:
    return KernelLibrary(host_library("copy", COPY_2D))


def copied(lib: KernelLibrary, x: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    out = torch.full(x.shape, float("nan")) if out is None else out
    assert lib([x], [out], HostStream()) == 0
    return out


def test_the_same_tensors_called_again_get_the_same_structs_and_the_right_values(copy_2d):
    x, out = torch.randn(3, 4), torch.empty(3, 4)
    copied(copy_2d, x, out)
    frames = dict(copy_2d._frames)
    for _ in range(3):
        x.add_(1.0)  # new values, same storage: the launcher reads them through the same pointer
        assert torch.equal(copied(copy_2d, x, out), x)
    assert copy_2d._frames == frames  # no new structs were built


def test_a_tensor_changed_in_place_is_described_anew(copy_2d):
    x, out = torch.randn(4, 4), torch.empty(4, 4)
    copied(copy_2d, x, out)
    other = torch.randn(4, 4)
    x.set_(other)  # the same Python object, another storage
    assert torch.equal(copied(copy_2d, x, out), other)
    square = torch.randn(4, 4)
    assert torch.equal(copied(copy_2d, square.t()), square.t())  # same storage and shape, other strides
    x.resize_(2, 8)  # same storage pointer, another shape
    assert torch.equal(copied(copy_2d, x), other.reshape(2, 8))


def test_more_tensor_sets_than_are_kept_all_compute_right_and_the_oldest_is_dropped(copy_2d):
    tensors = [(torch.randn(2, 3), torch.empty(2, 3)) for _ in range(abi._FRAMES_KEPT + 3)]
    for x, out in tensors * 2:
        assert torch.equal(copied(copy_2d, x, out), x)
    assert len(copy_2d._frames) == abi._FRAMES_KEPT
