"""A folded constant's text, written without onnx (graphlsp/runner/tensors.py), against onnx's printer, the oracle:
the same text for every name, element type, shape and float, or left to the printer."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from graphlsp.runner import tensors

RNG = np.random.default_rng(38)


def _printer(name: str, value: np.ndarray, label: str | None) -> str:
    kwargs = {"name": label} if label is not None else {}
    node = helper.make_node("Constant", [], [name], value=numpy_helper.from_array(value), **kwargs)
    return onnx.printer.to_text(node).strip()


def _floats(dtype: Any, count: int) -> np.ndarray:
    """Floats from random bit patterns (every exponent), and the values where fixed and scientific forms meet."""
    bits = np.dtype(dtype).itemsize * 8
    raw = RNG.integers(0, 2**bits, size=count, dtype=np.uint64).astype(f"uint{bits}").view(dtype)
    edges = [0.0, -0.0, 1e-4, 1e-5, 1.5e-5, 0.1, 1 / 3, 100.0, 123456789.0, 1e8, 1e15, 1e16, 1e17, 1234567.0,
             12345678.0, 3.4e38, 1e-45, 5e-324, 1.7976931348623157e308, np.inf, -np.inf, 2.5, -7.0]  # fmt: skip
    with np.errstate(over="ignore"):
        return np.concatenate([raw, np.array(edges).astype(dtype)])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_floats_as_to_chars(dtype: Any) -> None:
    values = _floats(dtype, 20000)
    values = values[~np.isnan(values)]
    ours = tensors._quick_constant_text("x", values, None)
    assert ours is not None
    assert ours == _printer("x", values, None)


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint64", "uint32", "uint16", "uint8", "bool"])
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3), (1, 0, 2)])
def test_integers(dtype: str, shape: tuple[int, ...]) -> None:
    info = np.iinfo(dtype) if dtype != "bool" else None
    low, high = (info.min, info.max) if info else (0, 1)
    value = RNG.integers(low, high, size=shape, dtype=dtype if dtype != "bool" else "int8", endpoint=True)
    value = value.astype(dtype)
    for name, label in [("x", None), ("x", "lab"), ("/b.0/a/Mul_output_0", "/b.0/a/Mul"), ("float", "int64")]:
        assert tensors.constant_node_text(name, value, label) == _printer(name, value, label)
        assert tensors._quick_constant_text(name, value, label) is not None


@pytest.mark.parametrize("name", ["a", "_a9", "1a", "a.b", 'a"b', "a\\b", "é", "x y", "Constant", "nan", "", "a\nb"])
def test_names(name: str) -> None:
    value = np.array([1.5, -2], np.float32)
    assert tensors.constant_node_text(name, value, name or None) == _printer(name, value, name or None)


@pytest.mark.parametrize("value", [np.array([np.nan], np.float32), np.array([1], np.float16),
                                   np.array(["s"], dtype=object), np.array([1 + 2j], np.complex64)])  # fmt: skip
def test_left_to_onnx_printer(value: np.ndarray) -> None:
    assert tensors._quick_constant_text("x", value, None) is None
