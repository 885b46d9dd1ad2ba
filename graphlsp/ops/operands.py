"""What the tensor-family shape functions share: reading a node's inputs and attributes as ints, floats and
dims, normalizing axes, reporting at an input or attribute, and writing outputs' shape values and folded
constants.

Shape values (ONNX data propagation, `Inferred.sv`) flow through Shape, Size, Gather, Slice, Squeeze, Unsqueeze,
Concat, Split, Cast, Reshape, Flatten, Range and ConstantOfShape, and are consumed wherever an op takes a shape,
sizes, pads, repeats or a count as an input, so `Shape -> Gather -> Unsqueeze -> Concat -> Reshape` stays exact
with symbolic dims. Small constant inputs are folded with numpy (`Inferred.const`, see `fold`), and a folded
output's shape is the folded value's. Problems are reported only when certain.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from graphlsp.graph import enums
from graphlsp.graph.enums import TensorProto
from graphlsp.graph.tensor import Tensor
from graphlsp.infer.context import InferenceContext, InferenceError
from graphlsp.infer.dims import Dim
from graphlsp.infer.types import ELEM_BY_NAME, Shape, shape_str

CONST_CAP = 1024  # elements: folded values this small are kept
SV_CAP = 64  # elements: shape values this long are carried

INT64 = TensorProto.INT64
INT_ELEMS = {
    TensorProto.INT8, TensorProto.INT16, TensorProto.INT32, TensorProto.INT64,
    TensorProto.UINT8, TensorProto.UINT16, TensorProto.UINT32, TensorProto.UINT64,
}  # fmt: skip
_NUMPY_ELEMS = INT_ELEMS | {TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.BOOL}


# ---- reading inputs and attributes
def opset(ctx: InferenceContext) -> int:
    """The node's opset version; the newest rules when the model does not import the domain."""
    return ctx.version or 1 << 30


def present(ctx: InferenceContext, i: int) -> bool:
    return i < len(ctx.node.inputs) and ctx.node.inputs[i] is not None


def small_const(ctx: InferenceContext, i: int) -> np.ndarray | None:
    """Input i's value when known; the runner is asked only for inputs small enough to fold."""
    x = ctx.inputs[i] if i < len(ctx.inputs) else None
    if x is None:
        return None
    if x.const is not None:
        return x.const
    shape = ctx.input_shape(i)
    if shape is None or not all(isinstance(v, int) for v in shape) or math.prod(shape) > CONST_CAP:  # type: ignore[arg-type]
        return None
    return ctx.input_const(i)


def _flat_const(ctx: InferenceContext, i: int, kinds: str) -> np.ndarray | None:
    """Input i's known value, flattened, when its numpy kind is one of `kinds`."""
    const = small_const(ctx, i)
    if const is not None and const.dtype.kind in kinds and const.size <= CONST_CAP:
        return const.reshape(-1)
    return None


def ints_in(ctx: InferenceContext, i: int) -> list[int] | None:
    """Input i's elements when they are all known ints."""
    if not present(ctx, i):
        return None
    if (flat := _flat_const(ctx, i, "iub")) is not None:
        return [int(v) for v in flat]
    sv = ctx.input_shape_value(i)
    if sv is not None and all(isinstance(v, int) for v in sv):
        return [int(v) for v in sv]  # type: ignore[arg-type]
    return None


def floats_in(ctx: InferenceContext, i: int) -> list[float] | None:
    if not present(ctx, i):
        return None
    if (flat := _flat_const(ctx, i, "iuf")) is not None:
        return [float(v) for v in flat]
    ints = ints_in(ctx, i)
    return [float(v) for v in ints] if ints is not None else None


def dims_in(ctx: InferenceContext, i: int) -> tuple[Dim, ...] | None:
    """A 1-D int input's elements as dims (symbolic where a shape value says so); when only its length is known,
    that many unknown dims."""
    if not present(ctx, i):
        return None
    sv = ctx.input_shape_value(i)
    if sv is not None:
        return sv
    ints = ints_in(ctx, i)
    if ints is not None:
        return tuple(ints)
    shape = ctx.input_shape(i)
    if shape is not None and len(shape) == 1 and isinstance(shape[0], int) and shape[0] <= 4096:
        return (None,) * shape[0]
    if shape == ():
        return (None,)
    return None


def elements(ctx: InferenceContext, i: int) -> tuple[Dim, ...] | None:
    """A small int input's elements: its shape value, or unknown dims when only its (1-D) length is known."""
    sv = ctx.input_shape_value(i)
    if sv is not None:
        return sv
    shape = ctx.input_shape(i)
    if ctx.input_elem(i) in INT_ELEMS and shape is not None and len(shape) <= 1:
        n = shape[0] if shape else 1
        return (None,) * n if isinstance(n, int) and n <= SV_CAP else None
    return None


def scalar_in(ctx: InferenceContext, i: int) -> Dim:
    """A one-element int input as a dim (an int, a symbolic dim, or None)."""
    dims = dims_in(ctx, i)
    return dims[0] if dims is not None and len(dims) == 1 else None


def attr_or_input(ctx: InferenceContext, name: str, i: int, since: int) -> tuple[bool, list[int] | None]:
    """(given, values) of a list of ints that is the attribute `name` before opset `since`, input i from it on."""
    if opset(ctx) < since:
        v = ctx.attr(name)
        return v is not None, (list(v) if v is not None else None)
    return present(ctx, i), ints_in(ctx, i)


def fail_on(ctx: InferenceContext, code: str, msg: str, src: int | str | None = None) -> InferenceError:
    if isinstance(src, int):
        return ctx.fail(code, msg, input=src)
    return ctx.fail(code, msg, attr=src)


def norm_axis(
    ctx: InferenceContext, axis: int, rank: int, what: str = "axis", src: int | str | None = "axis",
    allow_end: bool = False,
) -> int:  # fmt: skip
    hi = rank + 1 if allow_end else rank  # allow_end: the axis may be the rank itself (Flatten)
    if not -rank <= axis < hi:
        raise fail_on(ctx, "GL309", f"{what} {axis} is out of range for rank {rank} (allowed {-rank}..{hi - 1})", src)
    return axis + rank if axis < 0 else axis


def norm_axes(ctx: InferenceContext, axes: list[int], rank: int, src: int | str, what: str = "axes") -> list[int]:
    out = [norm_axis(ctx, a, rank, f"{what} value", src) for a in axes]
    if len(set(out)) != len(out):
        raise fail_on(ctx, "GL317", f"{what} {axes} name an axis twice", src)
    return out


def elem_attr(ctx: InferenceContext, name: str) -> int | None:
    v = ctx.attr(name)
    if isinstance(v, str):
        return ELEM_BY_NAME.get(v.lower())
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def str_attr(ctx: InferenceContext, name: str, default: str) -> str:
    v = ctx.attr(name, default)
    return v.decode() if isinstance(v, bytes) else str(v)


def attr_tensor(ctx: InferenceContext, name: str) -> tuple[np.ndarray | None, int | None, Shape]:
    """A tensor attribute: (value, element type, shape), from the value or, failing that, its written type."""
    value = ctx.attrs.get(name)
    arr = value if isinstance(value, np.ndarray) else None
    elem: int | None = None
    shape: Shape = arr.shape if arr is not None else None  # numpy's shape: a tuple of ints
    a = ctx.node.attributes.get(name)
    if a is not None and isinstance(a.value, Tensor):
        elem = a.value.dtype or None
        if shape is None and all(x >= 0 for x in a.value.shape):
            shape = a.value.shape
    if elem is None and arr is not None:
        try:
            elem = enums.np_dtype_to_tensor_dtype(arr.dtype)
        except Exception:
            elem = None
    return arr, elem, shape


def dims_str(dims: Sequence[Dim]) -> str:
    return shape_str(tuple(dims))


# ---- outputs: values and folding
def set_value(ctx: InferenceContext, i: int, sv: Sequence[Dim] | None = None, const: np.ndarray | None = None) -> None:
    x = ctx.outputs[i] if i < len(ctx.outputs) else None
    if x is None:
        return
    if sv is not None and len(sv) <= SV_CAP:
        x.sv = tuple(sv)
    if const is not None and const.size <= CONST_CAP:
        x.const = const
        if x.sv is None and const.dtype.kind in "iu" and const.size <= SV_CAP:
            x.sv = tuple(const.reshape(-1).tolist())  # Python ints


def move_values(ctx: InferenceContext, sv: Sequence[Dim], shape: Sequence[Dim], move: Callable[[Any], Any]) -> None:
    """The output's shape value when the op only moves the input's elements (Transpose, a Slice of a 2-D value):
    `move` applied to the input's element indices tells which element goes where."""
    if not all(isinstance(x, int) for x in shape) or math.prod(shape) != len(sv):  # type: ignore[arg-type]
        return
    idx = move(np.arange(len(sv)).reshape(tuple(shape)))  # type: ignore[arg-type]
    set_value(ctx, 0, sv=tuple(sv[int(i)] for i in np.asarray(idx).reshape(-1)))


def pass_sv(ctx: InferenceContext, src: int = 0, dst: int = 0) -> None:
    """The output holds the input's elements in the same order (Reshape, Squeeze, Unsqueeze, Flatten)."""
    x = ctx.inputs[src] if src < len(ctx.inputs) else None
    if x is not None and x.sv is not None:
        set_value(ctx, dst, sv=x.sv)
    pass_bounds(ctx, src, dst)


def pass_bounds(ctx: InferenceContext, src: int = 0, dst: int = 0) -> None:
    """The output's elements are some of the input's (moved, repeated, cast between ints): the same bounds."""
    x = ctx.inputs[src] if src < len(ctx.inputs) else None
    out = ctx.outputs[dst] if dst < len(ctx.outputs) else None
    if x is not None and x.bounds is not None and out is not None:
        out.bounds = x.bounds


def value_range(ctx: InferenceContext, i: int) -> tuple[Dim, Dim] | None:
    """Input i's elements lie in [lo, hi]: its bounds (a Range's indices and what is computed from them), or its
    least and greatest element when they are known (a constant, a dim read from a shape)."""
    x = ctx.inputs[i] if i < len(ctx.inputs) else None
    if x is None:
        return None
    if x.bounds is not None:
        return x.bounds
    if x.sv is not None and len(x.sv) == 1:
        return (x.sv[0], x.sv[0])
    ints = ints_in(ctx, i) if x.const is not None and x.const.size <= 64 else None
    if ints:
        return (min(ints), max(ints))
    return None


def fold(ctx: InferenceContext, fn: Callable[..., Any], inputs: Sequence[int], out: int = 0) -> bool:
    """Compute output `out` with numpy when the given inputs are known; the result also gives its shape."""
    x = ctx.outputs[out] if out < len(ctx.outputs) else None
    if x is None:
        return False
    consts = []
    for i in inputs:  # the first input that is not a constant ends it: the others need not be computed
        c = small_const(ctx, i)
        if c is None:
            return False
        consts.append(c)
    try:
        with np.errstate(all="ignore"):
            value = np.asarray(fn(*consts))
    except Exception:
        return False
    if value.size > CONST_CAP:
        return False
    elem = getattr(x.type, "elem", None)
    ctx.set_output(out, tuple(int(s) for s in value.shape), elem)
    set_value(ctx, out, sv=x.sv, const=value)
    return True


def np_dtype(elem: int | None) -> Any:
    if elem not in _NUMPY_ELEMS:
        return None
    return enums.tensor_dtype_to_np_dtype(elem)  # type: ignore[arg-type]
