"""graphlsp's own kernels for Exp, Reciprocal, Pow, Tile, ReduceMax and ReduceL2 (graphlsp/runner/kernels.py) against onnx.reference, the oracle
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


def _reference(op: str, args: list[Any], version: int, attrs: dict[str, Any]) -> list[Any]:
    names = [f"x{i}" if x is not None else "" for i, x in enumerate(args)]
    node = helper.make_node(op, names, ["y"], **attrs)
    return run_node(node, [x for x in args if x is not None], version, {"": version})


def _same(op: str, args: list[Any], version: int = 17, attrs: dict[str, Any] | None = None,
          defaults: dict[str, Any] | None = None) -> None:  # fmt: skip
    """`defaults`: the schema's defaults, which the runner hands every kernel beside the node's attributes."""
    ours = kernels.KERNELS[op](args, {**(defaults or {}), **(attrs or {})}, version)
    assert ours is not NotImplemented
    [want] = _reference(op, args, version, attrs or {})
    [got] = ours
    assert isinstance(got, np.ndarray) and got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("shape", [(), (1,), (3, 4), (2, 0, 3)])
def test_exp(dtype: Any, shape: tuple[int, ...]) -> None:
    x = np.asarray(RNG.standard_normal(shape) * 20).astype(dtype)  # overflows to inf in float16 too
    _same("Exp", [x])


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("shape", [(), (1,), (3, 4), (2, 0, 3)])
def test_reciprocal(dtype: Any, shape: tuple[int, ...]) -> None:
    x = np.asarray(RNG.standard_normal(shape) * 20).astype(dtype)
    if x.size:
        x.flat[0] = 0  # 1/0: inf, as the reference gives it
    _same("Reciprocal", [x], 13)


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


REDUCE_CASES = [  # (shape, axes or None, keepdims, noop_with_empty_axes)
    ((3, 4), None, 1, 0), ((3, 4), None, 0, 0), ((3, 4), [1], 1, 0), ((3, 4), [-1], 0, 0), ((2, 3, 4), [0, 2], 0, 0),
    ((2, 3, 4), [2, 0], 1, 0), ((5,), [0], 0, 0), ((), None, 0, 0), ((3, 4), [], 1, 1), ((3, 4), None, 0, 1),
]  # fmt: skip


@pytest.mark.parametrize("op", ["ReduceMax", "ReduceL2"])
@pytest.mark.parametrize("version", [13, 18])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("case", REDUCE_CASES)
def test_reductions(op: str, version: int, dtype: Any, case: tuple[Any, ...]) -> None:
    shape, axes, keepdims, noop = case
    x = np.asarray(RNG.standard_normal(shape) * 10).astype(dtype)
    if version < 18:
        if noop:
            return  # no such attribute before opset 18
        attrs: dict[str, Any] = {"keepdims": keepdims} | ({"axes": axes} if axes is not None else {})
        _same(op, [x], version, attrs, {"keepdims": 1})
    else:
        attrs = {"keepdims": keepdims, "noop_with_empty_axes": noop}
        given = np.array(axes, dtype=np.int64) if axes is not None else None
        _same(op, [x, given], version, attrs, {"keepdims": 1, "noop_with_empty_axes": 0})


@pytest.mark.parametrize(("op", "args"), [
    ("Exp", [np.array([1, 2], dtype=np.int64)]),
    ("Reciprocal", [np.array([1, 2], dtype=np.int64)]),
    ("Pow", [np.array([2, 3], dtype=np.int64), np.array([-1], dtype=np.int64)]),  # numpy raises: the reference's
    ("Tile", [np.zeros((2, 3), np.float32), np.array([2, -1], dtype=np.int64)]),
    ("Tile", [np.zeros((2, 3), np.float32), np.array([2, 1, 1], dtype=np.int64)]),  # not one repeat per axis
    ("ReduceMax", [np.zeros((2, 0), np.float32), np.array([1], dtype=np.int64)]),  # empty: the reference's constant
    ("ReduceMax", [np.zeros((2, 3), np.float32), np.array([2], dtype=np.int64)]),  # axis out of range
    ("ReduceL2", [np.zeros((2, 3), np.float32), np.array([1, -1], dtype=np.int64)]),  # an axis twice
])  # fmt: skip
def test_what_they_leave_to_onnx_reference(op: str, args: list[Any]) -> None:
    assert kernels.KERNELS[op](args, {}, 17 if op in ("Exp", "Reciprocal", "Pow", "Tile") else 18) is NotImplemented
