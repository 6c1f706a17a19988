"""Calls a kernel library's `cutegen_forward` through ctypes with DLPack-layout tensors (see include/cutegen/abi.h)."""

from __future__ import annotations

import ctypes

import torch


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


_KDL_INT, _KDL_UINT, _KDL_FLOAT, _KDL_BFLOAT, _KDL_BOOL = 0, 1, 2, 4, 6
_DTYPES = {
    torch.float32: (_KDL_FLOAT, 32), torch.float16: (_KDL_FLOAT, 16), torch.float64: (_KDL_FLOAT, 64),
    torch.bfloat16: (_KDL_BFLOAT, 16), torch.int32: (_KDL_INT, 32), torch.int64: (_KDL_INT, 64),
    torch.int8: (_KDL_INT, 8), torch.uint8: (_KDL_UINT, 8), torch.bool: (_KDL_BOOL, 8),
}


class KernelLibrary:
    """A built kernel library; `__call__` launches on the current torch stream and returns the error code."""

    def __init__(self, path: str):
        self.path = path
        self._lib = ctypes.CDLL(path, mode=ctypes.RTLD_LOCAL)
        try:
            self._fn = self._lib.cutegen_forward
        except AttributeError:
            raise LookupError(
                f"{path} exports no `cutegen_forward`: define it with CUTEGEN_EXPORT (see the README's kernel ABI)"
            ) from None
        self._fn.restype = ctypes.c_int
        self._fn.argtypes = [ctypes.POINTER(DLTensor), ctypes.c_int, ctypes.POINTER(DLTensor), ctypes.c_int, ctypes.c_void_p]

    def __call__(self, inputs: list[torch.Tensor], outputs: list[torch.Tensor], stream: torch.cuda.Stream) -> int:
        keep: list = []  # the shape/stride arrays must outlive the call
        ins = (DLTensor * max(1, len(inputs)))(*[_dl(t, keep) for t in inputs])
        outs = (DLTensor * max(1, len(outputs)))(*[_dl(t, keep) for t in outputs])
        return self._fn(ins, len(inputs), outs, len(outputs), ctypes.c_void_p(stream.cuda_stream))

    timed_call = __call__  # what timing measures: the launcher writes straight into the outputs

    @staticmethod
    def arguments(values: list) -> list[torch.Tensor]:
        return kernel_arguments(values)


def kernel_arguments(inputs: list) -> list[torch.Tensor]:
    """What the kernel is handed for `get_inputs()`'s values: tensors as they are, and a Python number (KernelBench's
    matrix-scalar problem passes a float) as the 0-d HOST tensor PyTorch itself wraps a number in, holding it exactly
    (float → float64, int → int64, bool → bool): the launcher reads it and passes it by value, no copy, no sync."""
    return [x if isinstance(x, torch.Tensor) else torch.tensor(x, dtype=_SCALAR_DTYPES[type(x)], device="cpu")
            for x in inputs]


_SCALAR_DTYPES = {bool: torch.bool, int: torch.int64, float: torch.float64}
SCALARS = tuple(_SCALAR_DTYPES)


def _dl(t: torch.Tensor, keep: list) -> DLTensor:
    if t.dtype not in _DTYPES:
        raise TypeError(f"dtype {t.dtype} is not supported by the kernel ABI")
    shape = (ctypes.c_int64 * max(1, t.dim()))(*t.shape)
    strides = (ctypes.c_int64 * max(1, t.dim()))(*t.stride())
    keep += [shape, strides]
    code, bits = _DTYPES[t.dtype]
    device = DLDevice(2 if t.is_cuda else 1, t.device.index or 0)
    return DLTensor(t.data_ptr(), device, t.dim(), DLDataType(code, bits, 1), shape, strides, 0)
