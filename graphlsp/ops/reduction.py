"""Reductions: ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare, ArgMax/ArgMin, CumSum/CumProd.

The reduced axes come from the `axes` attribute up to opset 12 (ReduceSum) or 17 (the others) and from the
optional `axes` input after that; empty axes reduce everything unless `noop_with_empty_axes` is set. When the
axes input is not known, `keepdims=1` still gives the rank (a dim of 1 stays 1, the rest become unknown).
Reducing a shape value carries its elements: ReduceProd(Shape(x)) is x's element count as a dim.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from graphlsp.graph.enums import TensorProto
from graphlsp.infer import dims as d
from graphlsp.infer.context import InferenceContext
from graphlsp.infer.dims import Dim
from graphlsp.infer.types import Shape
from graphlsp.ops.registry import shape_fn

REDUCE_OPS = [
    "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum",
    "ReduceLogSumExp", "ReduceSumSquare",
]  # fmt: skip

# Shape-value folding: how a reduction combines the dims of a 1-D int tensor.
_SV_FOLD: dict[str, Callable[[Dim, Dim], Dim]] = {
    "ReduceSum": d.add, "ReduceProd": d.mul, "ReduceMax": d.maximum, "ReduceMin": d.minimum,
}  # fmt: skip


def _axes_from_input(ctx: InferenceContext) -> list[int] | None:
    """The axes input's values: [] when absent or empty, None when not known."""
    if not ctx.has_input(1):
        return []
    const = ctx.input_const(1)
    if const is not None:
        return [int(v) for v in np.asarray(const).reshape(-1)]
    sv = ctx.input_shape_value(1)
    known = [v for v in sv or () if isinstance(v, int)]
    if sv is not None and len(known) == len(sv):
        return known
    shape = ctx.input_shape(1)
    if shape is not None and any(x == 0 for x in shape):
        return []
    return None


def _normalize_axes(ctx: InferenceContext, axes: list[int], rank: int, from_input: bool) -> list[int]:
    out = []
    for a in axes:
        if not -rank <= a < rank:
            msg = f"axes value {a} is out of range for rank {rank} (allowed {-rank}..{rank - 1})"
            if from_input:
                raise ctx.fail("GL309", msg, input=1)
            raise ctx.fail("GL309", msg, attr="axes")
        out.append(a + rank if a < 0 else a)
    return out


def _unknown_axes_shape(ctx: InferenceContext, shape: tuple[Dim, ...], keepdims: bool) -> Shape:
    """Axes not known: with keepdims each dim is itself or 1; without, one axis removes one dim, and for more
    (perhaps repeated) axes even the rank is unknown."""
    if keepdims:
        return tuple(1 if x == 1 else None for x in shape)
    axes_shape = ctx.input_shape(1)
    if axes_shape is not None and len(axes_shape) == 1 and axes_shape[0] == 1 and shape:
        return (None,) * (len(shape) - 1)
    return None


def reduced_shape(shape: tuple[Dim, ...], axes: list[int], keepdims: bool) -> tuple[Dim, ...]:
    """The shape after reducing `axes` (normalized; empty means all)."""
    out: list[Dim] = []
    for i, x in enumerate(shape):
        if axes and i not in axes:
            out.append(x)
        elif keepdims:
            out.append(1)
    return tuple(out)


def _axes_input_version(ctx: InferenceContext) -> bool:
    return ctx.version >= (13 if ctx.op == "ReduceSum" else 18)


@shape_fn(*REDUCE_OPS)
def reduce(ctx: InferenceContext) -> None:
    keepdims = bool(ctx.attr("keepdims", 1))
    from_input = _axes_input_version(ctx)
    axes = _axes_from_input(ctx) if from_input else list(ctx.attr("axes") or [])
    noop = from_input and bool(ctx.attr("noop_with_empty_axes", 0))
    shape = ctx.input_shape(0)
    if shape is None:
        if axes is not None and not axes and noop:
            ctx.set_output(0, None)
        return
    if axes is None:
        ctx.set_output(0, _unknown_axes_shape(ctx, shape, keepdims))
        return
    if not axes and noop:
        ctx.copy_input(0)
        _fold_shape_value(ctx, [], identity=True)
        return
    norm = _normalize_axes(ctx, axes, len(shape), from_input)
    ctx.set_output(0, reduced_shape(shape, norm, keepdims))
    _fold_shape_value(ctx, norm, identity=False)


def _fold_shape_value(ctx: InferenceContext, axes: list[int], identity: bool) -> None:
    """ReduceProd/Sum/Max/Min of a 1-D shape value (or a scalar) over all of it."""
    sv = ctx.input_shape_value(0)
    shape = ctx.input_shape(0)
    if sv is None or shape is None or len(shape) > 1 or ctx.outputs[0] is None:
        return
    if identity:
        ctx.set_output_value(0, sv)
        return
    fold = _SV_FOLD.get(ctx.op)
    if fold is None or not sv or (axes and axes != [0]):
        return
    acc = sv[0]
    for x in sv[1:]:
        acc = fold(acc, x)
    ctx.set_output_value(0, (acc,))


@shape_fn("ArgMax", "ArgMin")
def arg_reduce(ctx: InferenceContext) -> None:
    shape = ctx.input_shape(0)
    if shape is None:
        ctx.set_output(0, None, TensorProto.INT64)
        return
    axis = ctx.axis(int(ctx.attr("axis", 0)), len(shape))
    assert axis is not None
    ctx.set_output(0, reduced_shape(shape, [axis], bool(ctx.attr("keepdims", 1))), TensorProto.INT64)


@shape_fn("CumSum", "CumProd")
def cumulative(ctx: InferenceContext) -> None:
    """Same shape as x; a known axis must lie in [-r, r-1]."""
    ctx.copy_input(0)
    rank = ctx.input_rank(0)
    const = ctx.input_const(1)
    if not rank or const is None or np.asarray(const).size != 1:
        return
    axis = int(np.asarray(const).reshape(-1)[0])
    if not -rank <= axis < rank:
        ctx.error("GL309", f"axis {axis} is out of range for rank {rank} (allowed {-rank}..{rank - 1})", input=1)
        return
    if ctx.op == "CumSum":
        _cumsum_bounds(ctx, axis)


def _cumsum_bounds(ctx: InferenceContext, axis: int) -> None:
    """A running sum of values in [lo, hi] with 0 <= lo (roberta's `cumsum(mask)` of a 0/1 mask) lies in
    [lo, n * hi] along an axis of n ([0, (n - 1) * hi] when exclusive); both ends are reached."""
    x, out, shape = ctx.inputs[0], ctx.outputs[0] if ctx.outputs else None, ctx.input_shape(0)
    if x is None or x.bounds is None or out is None or shape is None:
        return
    lo, hi = x.bounds
    n = shape[axis]
    if not isinstance(lo, int) or lo < 0 or n is None:
        return
    if ctx.attr("exclusive", 0):
        out.bounds = (0, d.mul(d.sub(n, 1), hi))
    else:
        out.bounds = (lo, d.mul(n, hi))
    if None in out.bounds:
        out.bounds = None
