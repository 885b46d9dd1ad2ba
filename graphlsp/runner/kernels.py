"""Our own kernels, for the ops where they beat `onnx.reference`: the shape plumbing exporters write (Shape,
Gather, Unsqueeze, Concat, Cast, Reshape, integer arithmetic) runs thousands of times on tiny tensors, where a
direct numpy call is 5-10x faster than building a NodeProto and an OpRun (`python -m bench fold` measures it);
and integer Div/Mod/Gather, where we check what numpy lets pass (division by zero, an index out of range).

A kernel takes the input values (None for an empty optional slot), the attributes with the schema's defaults
and the opset version, and returns the outputs; it returns NotImplemented to hand the node to onnx.reference,
and raises KernelError for a model that cannot run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from graphlsp.graph import enums
from graphlsp.graph.enums import TensorProto

Kernel = Callable[[list[Any], dict[str, Any], int], Any]


class KernelError(Exception):
    """The node cannot run on these values (division by zero, index out of range): a finding on the node."""


_PLAIN = {
    TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.INT8, TensorProto.INT16,
    TensorProto.INT32, TensorProto.INT64, TensorProto.UINT8, TensorProto.UINT16, TensorProto.UINT32,
    TensorProto.UINT64, TensorProto.BOOL,
}  # fmt: skip


def _numeric(*xs: Any) -> bool:
    return all(isinstance(x, np.ndarray) and x.dtype.kind in "biuf" for x in xs)


def _axis(axis: int, rank: int, what: str = "axis") -> int:
    if not -rank <= axis < rank:
        raise KernelError(f"{what} {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def _ints(x: Any) -> list[int]:
    return [int(v) for v in np.asarray(x).reshape(-1)]


# ---------------------------------------------------------------- constants and shapes
def constant(x: list[Any], a: dict[str, Any], v: int) -> Any:
    if isinstance(a.get("value"), np.ndarray):
        return [a["value"]]
    if a.get("value_int") is not None:
        return [np.array(a["value_int"], dtype=np.int64)]
    if a.get("value_ints") is not None:
        return [np.array(a["value_ints"], dtype=np.int64).reshape(-1)]
    if a.get("value_float") is not None:
        return [np.array(a["value_float"], dtype=np.float32)]
    if a.get("value_floats") is not None:
        return [np.array(a["value_floats"], dtype=np.float32).reshape(-1)]
    return NotImplemented  # strings and sparse values: onnx.reference


def shape(x: list[Any], a: dict[str, Any], v: int) -> Any:
    dims = x[0].shape
    rank = len(dims)
    start, end = 0, rank
    if v >= 15:
        start = _clamp(int(a.get("start") or 0), rank)
        end = _clamp(int(a["end"]), rank) if a.get("end") is not None else rank
    return [np.array(dims[start:end], dtype=np.int64)]


def _clamp(i: int, rank: int) -> int:
    return max(0, min(i + rank if i < 0 else i, rank))


def size(x: list[Any], a: dict[str, Any], v: int) -> Any:
    return [np.array(x[0].size, dtype=np.int64)]


def identity(x: list[Any], a: dict[str, Any], v: int) -> Any:
    return [x[0]]


def constant_of_shape(x: list[Any], a: dict[str, Any], v: int) -> Any:
    dims = _ints(x[0])
    if any(d < 0 for d in dims):
        raise KernelError(f"the shape {dims} has a negative dim")
    fill = a.get("value")
    if isinstance(fill, np.ndarray) and fill.size:
        return [np.full(dims, fill.reshape(-1)[0], dtype=fill.dtype)]
    return [np.zeros(dims, dtype=np.float32)]


# ---------------------------------------------------------------- indexing and layout
def gather(x: list[Any], a: dict[str, Any], v: int) -> Any:
    data, idx = x[0], x[1]
    if data.ndim == 0:
        raise KernelError("cannot gather from a scalar")
    axis = _axis(int(a.get("axis") or 0), data.ndim)
    n = data.shape[axis]
    flat = np.asarray(idx).reshape(-1)
    bad = flat[(flat < -n) | (flat >= n)]
    if bad.size:
        raise KernelError(f"index {int(bad[0])} is out of range for axis {axis} of size {n}")
    return [np.take(data, idx.astype(np.int64), axis=axis)]


def unsqueeze(x: list[Any], a: dict[str, Any], v: int) -> Any:
    axes = a.get("axes") if v < 13 else (x[1] if len(x) > 1 else None)
    if axes is None:
        return NotImplemented
    axes = _ints(axes)
    rank = x[0].ndim + len(axes)
    norm = sorted(_axis(ax, rank, "axes value") for ax in axes)
    if len(set(norm)) != len(norm):
        raise KernelError(f"axes {axes} name an axis twice")
    return [np.expand_dims(x[0], tuple(norm))]


def squeeze(x: list[Any], a: dict[str, Any], v: int) -> Any:
    data = x[0]
    axes = a.get("axes") if v < 13 else (x[1] if len(x) > 1 else None)
    if axes is None:
        return [np.squeeze(data)]
    norm = tuple(_axis(ax, data.ndim, "axes value") for ax in _ints(axes))
    for ax in norm:
        if data.shape[ax] != 1:
            raise KernelError(f"cannot squeeze axis {ax} of size {data.shape[ax]}")
    return [np.squeeze(data, axis=norm)]


def concat(x: list[Any], a: dict[str, Any], v: int) -> Any:
    parts = [p for p in x if p is not None]
    if not parts or any(not isinstance(p, np.ndarray) for p in parts) or parts[0].ndim == 0:
        return NotImplemented
    axis = _axis(int(a["axis"]), parts[0].ndim)
    return [np.concatenate(parts, axis=axis)]


def reshape(x: list[Any], a: dict[str, Any], v: int) -> Any:
    data = x[0]
    if v < 5:
        return NotImplemented
    target = _ints(x[1])
    allowzero = bool(a.get("allowzero") or 0) if v >= 14 else False
    out = []
    for i, t in enumerate(target):
        if t == 0 and not allowzero:
            if i >= data.ndim:
                raise KernelError(f"the target shape {target} copies dim {i} of a rank-{data.ndim} input")
            out.append(data.shape[i])
        else:
            out.append(t)
    if out.count(-1) > 1 or any(t < -1 for t in out):
        raise KernelError(f"the target shape {target} is invalid")
    try:
        return [np.reshape(data, out)]
    except ValueError:
        raise KernelError(f"cannot reshape {list(data.shape)} ({data.size} elements) to {target}") from None


def transpose(x: list[Any], a: dict[str, Any], v: int) -> Any:
    perm = a.get("perm")
    return [np.transpose(x[0], None if perm is None else [int(p) for p in perm])]


def expand(x: list[Any], a: dict[str, Any], v: int) -> Any:
    try:
        out = np.broadcast_shapes(x[0].shape, tuple(_ints(x[1])))
    except ValueError:
        raise KernelError(f"cannot expand {list(x[0].shape)} to {_ints(x[1])}") from None
    return [np.array(np.broadcast_to(x[0], out))]


# ---------------------------------------------------------------- casts and arithmetic
def cast(x: list[Any], a: dict[str, Any], v: int) -> Any:
    to = a.get("to")
    if to not in _PLAIN or not _numeric(x[0]) or x[0].dtype == np.float16 or to == TensorProto.FLOAT16:
        return NotImplemented  # strings, 8-bit floats, saturation rules: onnx.reference
    return [x[0].astype(enums.tensor_dtype_to_np_dtype(to))]


def _same_type(fn: Callable[[Any, Any], Any]) -> Kernel:
    def kernel(x: list[Any], a: dict[str, Any], v: int) -> Any:
        p, q = x[0], x[1]
        if not _numeric(p, q) or p.dtype != q.dtype:
            return NotImplemented
        out = np.asarray(fn(p, q))
        return [out if out.dtype == p.dtype else out.astype(p.dtype)]

    return kernel


def _compare(fn: Callable[[Any, Any], Any]) -> Kernel:
    def kernel(x: list[Any], a: dict[str, Any], v: int) -> Any:
        if not _numeric(x[0], x[1]):
            return NotImplemented
        return [np.asarray(fn(x[0], x[1]))]

    return kernel


def div(x: list[Any], a: dict[str, Any], v: int) -> Any:
    p, q = x[0], x[1]
    if not _numeric(p, q) or p.dtype != q.dtype:
        return NotImplemented
    if p.dtype.kind in "iu":
        if np.any(q == 0):
            raise KernelError("integer division by zero")
        quot = np.floor_divide(p, q)
        fix = (np.remainder(p, q) != 0) & ((p < 0) ^ (q < 0))
        return [(quot + fix.astype(quot.dtype)).astype(p.dtype)]  # truncation toward zero, as C and runtimes
    return [np.asarray(np.divide(p, q)).astype(p.dtype)]


def mod(x: list[Any], a: dict[str, Any], v: int) -> Any:
    p, q = x[0], x[1]
    if _numeric(p, q) and p.dtype.kind in "iu" and np.any(q == 0):
        raise KernelError("integer modulo by zero")
    return NotImplemented  # the fmod rules: onnx.reference


def where(x: list[Any], a: dict[str, Any], v: int) -> Any:
    c, p, q = x[0], x[1], x[2]
    if not (isinstance(c, np.ndarray) and c.dtype == np.bool_ and _numeric(p, q)) or p.dtype != q.dtype:
        return NotImplemented
    return [np.where(c, p, q)]


def _logical(fn: Callable[..., Any]) -> Kernel:
    def kernel(x: list[Any], a: dict[str, Any], v: int) -> Any:
        if not all(isinstance(p, np.ndarray) and p.dtype == np.bool_ for p in x):
            return NotImplemented
        return [np.asarray(fn(*x))]

    return kernel


def slice_(x: list[Any], a: dict[str, Any], v: int) -> Any:
    """Slice with the spec's clamping: starts/ends clamped to [0, dim] (to [-1, dim - 1] for negative steps)."""
    data = x[0]
    if not isinstance(data, np.ndarray) or data.ndim == 0:
        return NotImplemented
    if v < 10:
        starts, ends, axes, steps = a.get("starts"), a.get("ends"), a.get("axes"), None
    else:
        starts, ends = x[1], x[2]
        axes = x[3] if len(x) > 3 else None
        steps = x[4] if len(x) > 4 else None
    if starts is None or ends is None:
        return NotImplemented
    st, en = _ints(starts), _ints(ends)
    ax = _ints(axes) if axes is not None else list(range(len(st)))
    sp = _ints(steps) if steps is not None else [1] * len(st)
    if not len(st) == len(en) == len(ax) == len(sp):
        raise KernelError("starts, ends, axes and steps differ in length")
    index = [slice(None)] * data.ndim
    for s_, e_, axis, step in zip(st, en, ax, sp, strict=True):
        axis = _axis(axis, data.ndim, "axes value")
        if step == 0:
            raise KernelError("a step of 0")
        n = data.shape[axis]
        s_ = s_ + n if s_ < 0 else s_
        e_ = e_ + n if e_ < 0 else e_
        if step > 0:
            s_, e_ = max(0, min(s_, n)), max(0, min(e_, n))
        else:
            s_, e_ = max(-1, min(s_, n - 1)), max(-1, min(e_, n - 1))
        index[axis] = slice(s_, e_ if e_ >= 0 else None, step)
    return [data[tuple(index)]]


def _float_unary(fn: Callable[[Any], Any]) -> Kernel:
    def kernel(x: list[Any], a: dict[str, Any], v: int) -> Any:
        if not (isinstance(x[0], np.ndarray) and x[0].dtype.kind == "f"):
            return NotImplemented
        with np.errstate(all="ignore"):
            return [fn(x[0]).astype(x[0].dtype)]

    return kernel


def _like_reference(out: Any) -> Any:
    """A result as onnx.reference hands it on: a numpy scalar becomes a 0-d array (OpRun._check_and_fix_outputs)."""
    return np.array(out) if np.isscalar(out) else out


# Exp, Reciprocal, Pow, Tile, ReduceMax and ReduceL2 are onnx.reference's own expressions: their values are the
# reference's, without importing onnx.reference's 200 op modules (about 55 ms) for a model whose plumbing meets one.
def exp(x: list[Any], a: dict[str, Any], v: int) -> Any:
    if not (isinstance(x[0], np.ndarray) and x[0].dtype.kind == "f"):
        return NotImplemented
    with np.errstate(all="ignore"):
        return [_like_reference(np.exp(x[0]).astype(x[0].dtype))]


def reciprocal(x: list[Any], a: dict[str, Any], v: int) -> Any:
    if not (isinstance(x[0], np.ndarray) and x[0].dtype.kind == "f"):
        return NotImplemented
    with np.errstate(all="ignore"):
        return [_like_reference(np.reciprocal(x[0]).astype(x[0].dtype))]


def pow_(x: list[Any], a: dict[str, Any], v: int) -> Any:
    base, exponent = x[0], x[1]
    if not (isinstance(base, np.ndarray) and base.dtype.kind == "f" and _numeric(exponent)):
        return NotImplemented  # integer powers (negative exponents raise in numpy): onnx.reference
    with np.errstate(all="ignore"):
        return [_like_reference(np.power(base, exponent).astype(base.dtype))]


def tile(x: list[Any], a: dict[str, Any], v: int) -> Any:
    data, repeats = x[0], x[1]
    if not (_numeric(data) and isinstance(repeats, np.ndarray) and repeats.dtype.kind in "iu"):
        return NotImplemented
    if repeats.ndim != 1 or repeats.size != data.ndim or (repeats < 0).any():
        return NotImplemented  # what onnx.reference makes of it
    return [_like_reference(np.tile(data, repeats))]


def _reduce_args(x: list[Any], a: dict[str, Any], v: int) -> tuple[Any, Any] | None:
    """(axes, keepdims) as onnx.reference's ReduceMax/ReduceL2 hand them to numpy (attribute `axes` before opset 18,
    input `axes` from 18 on); None where it is left to onnx.reference: empty data, axes out of range or repeated."""
    data = x[0]
    if not _numeric(data) or data.size == 0:
        return None
    if v < 18:
        listed = a.get("axes")
        axes: Any = tuple(int(i) for i in listed) if listed is not None and len(listed) else None
        keepdims = a.get("keepdims", 1)
    else:
        given = x[1] if len(x) > 1 else None
        noop = a.get("noop_with_empty_axes", 0)
        if given is None:
            axes = () if noop else None
        elif not (isinstance(given, np.ndarray) and given.dtype.kind in "iu"):
            return None
        elif given.ndim == 0:
            axes = int(given)
        elif 0 in given.shape:
            axes = () if noop else None
        else:
            axes = tuple(given.ravel().tolist())
        keepdims = a.get("keepdims", 1) != 0
    listed_axes = [axes] if isinstance(axes, int) else list(axes or ())
    if any(not -data.ndim <= i < data.ndim for i in listed_axes):
        return None
    if len({i % data.ndim for i in listed_axes}) != len(listed_axes):
        return None
    return axes, keepdims


def reduce_max(x: list[Any], a: dict[str, Any], v: int) -> Any:
    got = _reduce_args(x, a, v)
    if got is None:
        return NotImplemented
    axes, keepdims = got
    return [_like_reference(np.maximum.reduce(x[0], axis=axes, keepdims=keepdims == 1))]


def reduce_l2(x: list[Any], a: dict[str, Any], v: int) -> Any:
    got = _reduce_args(x, a, v)
    if got is None or x[0].dtype == np.bool_:
        return NotImplemented
    axes, keepdims = got
    data = x[0]
    with np.errstate(all="ignore"):
        return [_like_reference(np.sqrt(np.sum(np.square(data), axis=axes, keepdims=keepdims)).astype(data.dtype))]


KERNELS: dict[str, Kernel] = {
    "Constant": constant, "Shape": shape, "Size": size, "Identity": identity, "ConstantOfShape": constant_of_shape,
    "Gather": gather, "Unsqueeze": unsqueeze, "Squeeze": squeeze, "Concat": concat, "Reshape": reshape,
    "Transpose": transpose, "Expand": expand, "Cast": cast, "Div": div, "Mod": mod, "Where": where,
    "Add": _same_type(np.add), "Sub": _same_type(np.subtract), "Mul": _same_type(np.multiply),
    "Equal": _compare(np.equal), "Less": _compare(np.less), "Greater": _compare(np.greater),
    "LessOrEqual": _compare(np.less_equal), "GreaterOrEqual": _compare(np.greater_equal),
    "Not": _logical(np.logical_not), "And": _logical(np.logical_and), "Or": _logical(np.logical_or),
    "Xor": _logical(np.logical_xor), "Slice": slice_, "Sqrt": _float_unary(np.sqrt), "Ceil": _float_unary(np.ceil),
    "Floor": _float_unary(np.floor), "Exp": exp, "Reciprocal": reciprocal, "Pow": pow_, "Tile": tile,
    "ReduceMax": reduce_max, "ReduceL2": reduce_l2,
}  # fmt: skip
