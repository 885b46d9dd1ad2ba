"""Lazy tensors of the IR: element type and shape up front, the elements only when someone asks.

A front end supplies a subclass that knows where the bytes are (a literal in a text file, a TensorProto's raw
bytes, a range of an external data file); nothing here reads them. `numpy()` decodes; `size`/`nbytes` answer
without decoding, so callers can refuse a value over their cap before paying for it.
"""

from __future__ import annotations

import math

import numpy as np

# bytes per element of onnx's element types (TensorProto.DataType); 0: not fixed (strings), fractional
# types (int4, float4) count a byte per element here, as the runner's cap is about what numpy would hold
ITEMSIZE = {
    1: 4, 2: 1, 3: 1, 4: 2, 5: 2, 6: 4, 7: 8, 8: 0, 9: 1, 10: 2, 11: 8, 12: 4, 13: 8, 14: 8, 15: 16, 16: 2,
    17: 1, 18: 1, 19: 1, 20: 1, 21: 1, 22: 1, 23: 1, 24: 1, 25: 1, 26: 1,
}  # fmt: skip


class TensorError(ValueError):
    """The tensor's data cannot be decoded (malformed, missing, or of the wrong size)."""


class Tensor:
    """A tensor value: `dtype` is onnx's element type number, `shape` a tuple of ints."""

    __slots__ = ("dtype", "shape", "name")

    def __init__(self, dtype: int, shape: tuple[int, ...], name: str = "") -> None:
        self.dtype = dtype
        self.shape = shape
        self.name = name

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * (ITEMSIZE.get(self.dtype) or 8)

    @property
    def external(self) -> bool:
        """Whether the data lives outside the model file (read from disk when decoded)."""
        return False

    def numpy(self) -> np.ndarray:
        """The elements; raises TensorError when they cannot be had."""
        raise TensorError("this tensor has no data")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, dtype={self.dtype}, shape={list(self.shape)})"


class ArrayTensor(Tensor):
    """A tensor whose elements are already a numpy array (computed values, tests)."""

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray, dtype: int, name: str = "") -> None:
        super().__init__(dtype, tuple(int(x) for x in array.shape), name)
        self.array = array

    def numpy(self) -> np.ndarray:
        return self.array


def location_problem(location: str) -> str:
    """Why an external data location may not be opened (it must stay inside the model's folder), or ""."""
    if not location:
        return "external data without a location"
    parts = location.replace("\\", "/").split("/")
    if location.startswith(("/", "\\")) or (len(parts[0]) >= 2 and parts[0][1] == ":"):
        return f"external data location '{location}' is absolute: it must be relative to the model's folder"
    if ".." in parts:
        return f"external data location '{location}' leaves the model's folder ('..'); it is not opened"
    return ""
