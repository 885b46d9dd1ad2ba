"""graphlsp's own kernels for Exp, Pow and Tile (graphlsp/runner/kernels.py) against onnx.reference, the oracle
they stand in for: the same values, dtypes and shapes, and the cases they leave to it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import helper

from graphlsp.runner import kernels
from graphlsp.runner.reference import run_node

RNG = np.random.default_rng(25)
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # onnx.reference's overflow in float16 exp


def _reference(op: str, args: list[Any], version: int) -> list[Any]:
    names = [f"x{i}" for i in range(len(args))]
    node = helper.make_node(op, names, ["y"])
    return run_node(node, args, version, {"": version})


def _same(op: str, args: list[Any], version: int = 17) -> None:
    ours = kernels.KERNELS[op](args, {}, version)
    assert ours is not NotImplemented
    [want] = _reference(op, args, version)
    [got] = ours
    assert isinstance(got, np.ndarray) and got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("shape", [(), (1,), (3, 4), (2, 0, 3)])
def test_exp(dtype: Any, shape: tuple[int, ...]) -> None:
    x = np.asarray(RNG.standard_normal(shape) * 20).astype(dtype)  # overflows to inf in float16 too
    _same("Exp", [x])


@pytest.mark.parametrize("base", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("exponent", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("shapes", [((), ()), ((3, 4), ()), ((3, 4), (4,)), ((1, 4), (3, 1))])
def test_pow(base: Any, exponent: Any, shapes: tuple[tuple[int, ...], tuple[int, ...]]) -> None:
    a = np.asarray(RNG.standard_normal(shapes[0]) * 3).astype(base)  # negative bases: nan for fractional exponents
    b = np.asarray(RNG.standard_normal(shapes[1]) * 3).astype(exponent)
    _same("Pow", [a, b], 15)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_, np.uint8])
@pytest.mark.parametrize(("shape", "repeats"), [((), []), ((3,), [2]), ((2, 3), [1, 4]), ((2, 0), [3, 2]),
                                                ((2, 3), [0, 1])])  # fmt: skip
def test_tile(dtype: Any, shape: tuple[int, ...], repeats: list[int]) -> None:
    x = np.asarray(RNG.standard_normal(shape) * 5).astype(dtype)
    _same("Tile", [x, np.array(repeats, dtype=np.int64)], 13)


@pytest.mark.parametrize(("op", "args"), [
    ("Exp", [np.array([1, 2], dtype=np.int64)]),
    ("Pow", [np.array([2, 3], dtype=np.int64), np.array([-1], dtype=np.int64)]),  # numpy raises: the reference's
    ("Tile", [np.zeros((2, 3), np.float32), np.array([2, -1], dtype=np.int64)]),
    ("Tile", [np.zeros((2, 3), np.float32), np.array([2, 1, 1], dtype=np.int64)]),  # not one repeat per axis
])  # fmt: skip
def test_what_they_leave_to_onnx_reference(op: str, args: list[Any]) -> None:
    assert kernels.KERNELS[op](args, {}, 17) is NotImplemented
