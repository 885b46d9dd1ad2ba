"""Generators: the random ops (RandomNormal/Uniform and their *Like forms, Multinomial, Bernoulli), the windows
(Blackman/Hann/Hamming), MelWeightMatrix, Range and OneHot. Sizes given as inputs are read as shape values, so a
window of length `Gather(Shape(x), 0)` is `[N]` and `Range(0, Gather(Shape(x), 1), 1)` has `W` elements.
(Constant, ConstantOfShape and EyeLike live in casts.py.)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from graphlsp.graph.enums import TensorProto
from graphlsp.infer import dims as d
from graphlsp.infer.context import InferenceContext
from graphlsp.infer.dims import Dim, Expr
from graphlsp.ops.operands import INT_ELEMS, SV_CAP, fold, norm_axis, scalar_in, set_value, small_const
from graphlsp.ops.registry import shape_fn
from graphlsp.ops.symbolic import dim_max


def _dtype_attr(ctx: InferenceContext, name: str = "dtype", default: int | None = None) -> int | None:
    v = ctx.attr(name)
    return int(v) if v is not None else default


# ---- random
@shape_fn("RandomNormal", "RandomUniform")
def random(ctx: InferenceContext) -> None:
    shape = ctx.attr("shape")
    ctx.set_output(0, tuple(int(x) for x in shape) if shape is not None else None,
                   _dtype_attr(ctx, "dtype", TensorProto.FLOAT))  # fmt: skip


@shape_fn("RandomNormalLike", "RandomUniformLike", "Bernoulli")
def random_like(ctx: InferenceContext) -> None:
    ctx.set_output(0, ctx.input_shape(0), _dtype_attr(ctx, "dtype", ctx.input_elem(0)))


@shape_fn("Multinomial")
def multinomial(ctx: InferenceContext) -> None:
    shape = ctx.input_shape(0)
    if shape is not None and len(shape) != 2:
        raise ctx.fail("GL317", f"input must be 2-D [batch_size, class_size], got rank {len(shape)}", input=0)
    batch = shape[0] if shape is not None else None
    ctx.set_output(0, (batch, int(ctx.attr("sample_size", 1))), _dtype_attr(ctx, "dtype", TensorProto.INT32))


# ---- windows, MelWeightMatrix
def _scalar_dim(ctx: InferenceContext, i: int) -> Dim:
    sv = ctx.input_shape_value(i)
    if sv is None or len(sv) != 1:
        return None
    return sv[0]


@shape_fn("BlackmanWindow", "HannWindow", "HammingWindow")
def window(ctx: InferenceContext) -> None:
    size = _scalar_dim(ctx, 0)
    if isinstance(size, int) and size <= 0:
        raise ctx.fail("GL317", f"size must be positive, got {size}", input=0)
    ctx.set_output(0, (size,), _dtype_attr(ctx, "output_datatype", TensorProto.FLOAT))


@shape_fn("MelWeightMatrix")
def mel_weight_matrix(ctx: InferenceContext) -> None:
    bins, dft = _scalar_dim(ctx, 0), _scalar_dim(ctx, 1)
    bins = None if isinstance(bins, int) and bins <= 0 else bins
    rows = None if isinstance(dft, int) and dft <= 0 else d.add(d.floordiv(dft, 2), 1)
    ctx.set_output(0, (rows, bins), _dtype_attr(ctx, "output_datatype", TensorProto.FLOAT))


# ---- ranges and one-hot
def _range_len(start: Any, limit: Any, delta: Any) -> Dim:
    # whole floats (0.0, 1.0) around a symbolic limit count as ints: Range(0.0, float(W), 1.0) has W elements
    if isinstance(limit, Expr) or isinstance(start, Expr):
        start, delta = (int(v) if isinstance(v, float) and v.is_integer() else v for v in (start, delta))
    if all(isinstance(v, int) for v in (start, limit, delta)):
        return max(0, -((start - limit) // delta))
    if all(isinstance(v, (int, float)) for v in (start, limit, delta)):
        return max(0, math.ceil((limit - start) / delta))
    if not isinstance(delta, int) or start is None or limit is None:
        return None
    span = d.sub(limit, start) if delta > 0 else d.sub(start, limit)
    return dim_max(d.ceildiv(span, abs(delta)), 0)


def _range_arg(ctx: InferenceContext, i: int) -> Any:
    const = small_const(ctx, i)
    if const is not None and const.size == 1:
        v = const.reshape(-1)[0]
        return int(v) if const.dtype.kind in "iu" else float(v)
    return scalar_in(ctx, i)


@shape_fn("Range")
def range_op(ctx: InferenceContext) -> None:
    start, limit, delta = (_range_arg(ctx, i) for i in range(3))
    if delta == 0:
        raise ctx.fail("GL317", "delta is 0", input=2)
    n = _range_len(start, limit, delta)
    ctx.set_output(0, (n,))
    ints = ctx.input_elem(0) in INT_ELEMS and isinstance(delta, int) and not isinstance(start, float)
    out = ctx.outputs[0]
    if ints and isinstance(delta, int) and delta > 0 and start is not None and limit is not None and out is not None:
        out.bounds = (start, d.sub(limit, 1))  # every element in [start, limit - 1] (none when empty)
    if isinstance(n, int) and n <= SV_CAP and ints and start is not None:
        set_value(ctx, 0, sv=tuple(d.add(start, i * delta) for i in range(n)))
    fold(ctx, lambda a, b, c: np.arange(a.item(), b.item(), c.item(), dtype=a.dtype), [0, 1, 2])


def _one_hot_depth(ctx: InferenceContext) -> Dim:
    const = small_const(ctx, 1)
    depth: Dim = int(const.reshape(-1)[0]) if const is not None and const.size == 1 else scalar_in(ctx, 1)
    if isinstance(depth, int) and depth < 0:
        raise ctx.fail("GL317", f"depth {depth} is negative", input=1)
    ds = ctx.input_shape(1)
    if ds is not None and (len(ds) > 1 or (ds and isinstance(ds[0], int) and ds[0] > 1)):
        raise ctx.fail("GL317", f"depth must be a scalar or have one element: {ctx.describe_input(1)}", input=1)
    vs = ctx.input_shape(2)
    if vs is not None and (len(vs) != 1 or (isinstance(vs[0], int) and vs[0] != 2)):
        raise ctx.fail("GL317", f"values must have two elements (off, on): {ctx.describe_input(2)}", input=2)
    return depth


@shape_fn("OneHot")
def one_hot(ctx: InferenceContext) -> None:
    depth = _one_hot_depth(ctx)
    shape = ctx.input_shape(0)
    if shape is None:
        ctx.set_output(0, None)
        return
    axis = norm_axis(ctx, int(ctx.attr("axis", -1)), len(shape) + 1)
    ctx.set_output(0, shape[:axis] + (depth,) + shape[axis:])
