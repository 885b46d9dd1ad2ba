"""Casts and constants: Cast, CastLike and BitCast (a shape value cast to another int or float type stays a
shape value), Constant in all its attribute forms, ConstantOfShape and EyeLike.
"""

from __future__ import annotations

import math

import numpy as np

from graphlsp.graph.enums import TensorProto
from graphlsp.infer.context import InferenceContext
from graphlsp.infer.types import Shape
from graphlsp.ops.operands import (
    CONST_CAP,
    INT64,
    INT_ELEMS,
    attr_tensor,
    dims_in,
    dims_str,
    elem_attr,
    fold,
    np_dtype,
    pass_bounds,
    set_value,
)
from graphlsp.ops.registry import shape_fn

_BITS: dict[int, int] = {
    TensorProto.FLOAT: 32, TensorProto.INT32: 32, TensorProto.UINT32: 32, TensorProto.DOUBLE: 64,
    TensorProto.INT64: 64, TensorProto.UINT64: 64, TensorProto.COMPLEX64: 64, TensorProto.COMPLEX128: 128,
    TensorProto.FLOAT16: 16, TensorProto.BFLOAT16: 16, TensorProto.INT16: 16, TensorProto.UINT16: 16,
    TensorProto.INT8: 8, TensorProto.UINT8: 8, TensorProto.BOOL: 8, TensorProto.FLOAT8E4M3FN: 8,
    TensorProto.FLOAT8E4M3FNUZ: 8, TensorProto.FLOAT8E5M2: 8, TensorProto.FLOAT8E5M2FNUZ: 8,
    TensorProto.INT4: 4, TensorProto.UINT4: 4, TensorProto.FLOAT4E2M1: 4,
}  # fmt: skip
for _name, _bits in (("FLOAT8E8M0", 8), ("INT2", 2), ("UINT2", 2)):
    if hasattr(TensorProto, _name):
        _BITS[getattr(TensorProto, _name)] = _bits


def _cast_values(ctx: InferenceContext, to: int | None) -> None:
    dtype = np_dtype(to)
    if dtype is not None and fold(ctx, lambda x: x.astype(dtype), [0]):
        return
    sv = ctx.input_shape_value(0)
    # dims are whole numbers (below 2**24, where float32 holds them exactly): a dim cast to a float and back
    # keeps its value, so Range(0.0, Cast(Shape(x)[i], float), 1.0) has the dim's length (YOLO's anchor grid)
    whole = (TensorProto.INT64, TensorProto.INT32, TensorProto.FLOAT, TensorProto.DOUBLE)
    if sv is not None and ctx.input_elem(0) in INT_ELEMS | set(whole) and to in whole:
        set_value(ctx, 0, sv=sv)
    if ctx.input_elem(0) in INT_ELEMS and to in (TensorProto.INT64, TensorProto.INT32):
        pass_bounds(ctx)
    out = ctx.outputs[0] if ctx.outputs else None
    if ctx.input_elem(0) == TensorProto.BOOL and to in INT_ELEMS and out is not None and out.bounds is None:
        out.bounds = (0, 1)  # a mask (`input_ids != pad`) as numbers


@shape_fn("Cast")
def cast(ctx: InferenceContext) -> None:
    to = elem_attr(ctx, "to")
    ctx.set_output(0, ctx.input_shape(0), to)
    _cast_values(ctx, to)


@shape_fn("CastLike")
def cast_like(ctx: InferenceContext) -> None:
    to = ctx.input_elem(1)
    ctx.set_output(0, ctx.input_shape(0), to)
    _cast_values(ctx, to)


@shape_fn("BitCast")
def bit_cast(ctx: InferenceContext) -> None:
    to = elem_attr(ctx, "to")
    src = ctx.input_elem(0)
    a, b = _BITS.get(src or 0), _BITS.get(to or 0)
    if a and b and a != b:
        raise ctx.fail("GL317", f"cannot reinterpret {ctx.elem_str(0)} ({a} bits) as a {b}-bit type", attr="to")
    ctx.set_output(0, ctx.input_shape(0), to)


_CONST_ATTRS = ("value", "sparse_value", "value_int", "value_ints", "value_float", "value_floats",
                "value_string", "value_strings")  # fmt: skip


@shape_fn("Constant")
def constant(ctx: InferenceContext) -> None:
    written, attrs = ctx.node.attributes, ctx.attrs
    given = [n for n in _CONST_ATTRS if n in written or attrs.get(n) is not None]
    if len(given) != 1:
        which = ", ".join(given) if given else "none"
        raise ctx.fail("GL317", f"needs exactly one of value, sparse_value, value_int(s), value_float(s), "
                                f"value_string(s) (given: {which})")  # fmt: skip
    name = given[0]
    v = ctx.attrs.get(name)
    if name in ("value", "sparse_value"):
        arr, elem, shape = attr_tensor(ctx, name)
        ctx.set_output(0, shape, elem)
        if arr is not None and name == "value":
            set_value(ctx, 0, const=arr)
        return
    kind = name.removeprefix("value_")
    elem = {"int": INT64, "float": TensorProto.FLOAT, "string": TensorProto.STRING}[kind.rstrip("s")]
    out: Shape = (len(v),) if kind.endswith("s") and isinstance(v, list) else (None,) if kind.endswith("s") else ()
    ctx.set_output(0, out, elem)
    if v is not None and kind != "string" and kind != "strings":
        set_value(ctx, 0, const=np.array(v, dtype=np.int64 if elem == INT64 else np.float32))


@shape_fn("ConstantOfShape")
def constant_of_shape(ctx: InferenceContext) -> None:
    arr, elem, _ = attr_tensor(ctx, "value")
    elem = elem if elem is not None else TensorProto.FLOAT
    dims = dims_in(ctx, 0)
    for x in dims or ():
        if isinstance(x, int) and x < 0:
            raise ctx.fail("GL317", f"the shape {dims_str(dims or ())} has a negative dim", input=0)
    ctx.set_output(0, dims, elem)
    if dims is None or not all(isinstance(x, int) for x in dims) or math.prod(dims) > CONST_CAP:  # type: ignore[arg-type]
        return
    fill = arr.reshape(-1)[0] if arr is not None and arr.size else 0
    dtype = arr.dtype if arr is not None else np.float32
    try:
        value = np.full(tuple(dims), fill, dtype=dtype)  # type: ignore[arg-type, type-var]
    except ValueError:  # a zero beside a dim numpy cannot index (2**63 - 1): empty, but not an array numpy makes
        return
    set_value(ctx, 0, const=value)


@shape_fn("EyeLike")
def eye_like(ctx: InferenceContext) -> None:
    shape = ctx.input_shape(0)
    if shape is not None and len(shape) != 2:
        raise ctx.fail("GL317", f"needs a 2-D input: {ctx.describe_input(0)}", input=0)
    elem = elem_attr(ctx, "dtype") if ctx.has_attr("dtype") else ctx.input_elem(0)
    ctx.set_output(0, shape, elem)
