"""Indexing: Slice (starts, ends, axes and steps as inputs or attributes; a bound of at least 2**31 - 1 in size
runs to the end), Gather, GatherElements, GatherND, Scatter/ScatterElements and ScatterND, with known indices
checked against the dim they index.
"""

from __future__ import annotations

import numpy as np

from graphlsp.infer import dims as d
from graphlsp.infer import shapes as sh
from graphlsp.infer.context import InferenceContext
from graphlsp.infer.dims import Dim
from graphlsp.infer.types import Shape, shape_str
from graphlsp.ops.operands import (
    dims_in,
    fold,
    ints_in,
    move_values,
    norm_axes,
    norm_axis,
    opset,
    pass_bounds,
    present,
    set_value,
)
from graphlsp.ops.registry import shape_fn
from graphlsp.ops.symbolic import at_least, dim_max, dim_min

HUGE = 2**31 - 1  # a slice bound this large (or -HUGE and below) runs to the end of the dim


# ---- slice
def _slice_int(dim: int, start: int, end: int, step: int) -> tuple[int, int]:
    """onnx's clamping of start and end for a known dim."""
    if dim == 0:
        return 0, 0
    if start < 0:
        start += dim
    if end < 0:
        end += dim
    if step < 0:
        return max(0, min(start, dim - 1)), max(-1, min(end, dim - 1))
    return max(0, min(start, dim)), max(0, min(end, dim))


def _bound(x: Dim, dim: Dim, lo: int, hi_off: int) -> Dim:
    """x clamped to [lo, dim + hi_off] as onnx clamps slice bounds (negative x counts from the end)."""
    if x is None:
        return None
    if isinstance(x, int):
        if x >= HUGE:
            return d.add(dim, hi_off)
        if x <= -HUGE:
            return lo
        if x < 0:
            return dim_max(d.add(dim, x), lo)
        return dim_min(x, d.add(dim, hi_off))
    if at_least(x, 0):
        return dim_min(x, d.add(dim, hi_off))
    if at_least(d.neg(x), 1):  # a negative bound counts from the end (`x[-n:]` with n = Shape(x)[i])
        return dim_max(d.add(dim, x), lo)
    return None


def _slice_len(dim: Dim, start: Dim, end: Dim, step: int) -> Dim:
    if dim == 0:
        return 0
    if isinstance(dim, int) and isinstance(start, int) and isinstance(end, int):
        s, e = _slice_int(dim, start, end, step)
        return max(0, -((s - e) // step))
    if dim is None:
        return None
    if step > 0:
        first = start if isinstance(start, int) and 0 <= start < HUGE else _bound(start, dim, 0, 0)
        return dim_max(d.ceildiv(d.sub(_bound(end, dim, 0, 0), first), step), 0)
    first = _bound(start, dim, 0, -1)
    return dim_max(d.ceildiv(d.sub(first, _bound(end, dim, -1, -1)), -step), 0)


SliceArgs = tuple[list[Dim] | None, list[Dim] | None, list[int] | None, bool, list[int] | None, bool]


def _slice_args(ctx: InferenceContext) -> SliceArgs:
    """(starts, ends, axes, axes_given, steps, steps_given): lists of known values, or None where unknown."""
    if opset(ctx) < 10:
        axes, starts, ends = ctx.attr("axes"), ctx.attr("starts"), ctx.attr("ends")
        return starts, ends, (list(axes) if axes is not None else None), axes is not None, None, False
    starts, ends = dims_in(ctx, 1), dims_in(ctx, 2)
    return (list(starts) if starts is not None else None, list(ends) if ends is not None else None,
            ints_in(ctx, 3), present(ctx, 3), ints_in(ctx, 4), present(ctx, 4))  # fmt: skip


def _slice_axes(ctx: InferenceContext, n: int, axes: list[int] | None, given: bool, rank: int) -> list[int] | None:
    if not given:
        if n > rank:
            raise ctx.fail("GL309", f"{n} starts/ends for {ctx.describe_input(0)} of rank {rank}", input=1)
        return list(range(n))
    if axes is None:
        return None
    if len(axes) != n:
        raise ctx.fail("GL317", f"axes {axes} has {len(axes)} entries but starts/ends have {n}", input=3)
    return norm_axes(ctx, axes, rank, 3 if opset(ctx) >= 10 else "axes")


def _slice_steps(ctx: InferenceContext, n: int, steps: list[int] | None, given: bool) -> list[int] | None:
    if not given:
        return [1] * n
    if steps is not None and len(steps) != n:
        raise ctx.fail("GL317", f"steps has {len(steps)} entries but starts/ends have {n}", input=4)
    if steps is not None and 0 in steps:
        raise ctx.fail("GL317", f"steps {steps} has a 0", input=4)
    return steps


@shape_fn("Slice")
def slice_op(ctx: InferenceContext) -> None:
    shape = ctx.input_shape(0)
    starts, ends, axes, axes_given, steps, steps_given = _slice_args(ctx)
    if shape is None:
        ctx.set_output(0, None)
        return
    if starts is not None and ends is not None and len(starts) != len(ends):
        raise ctx.fail("GL317", f"starts has {len(starts)} entries but ends has {len(ends)}", input=2)
    n = len(starts) if starts is not None else len(ends) if ends is not None else None
    where = _slice_axes(ctx, n, axes, axes_given, len(shape)) if n is not None else None
    if where is None or n is None:
        ctx.set_output(0, (None,) * len(shape))
        return
    step_list = _slice_steps(ctx, n, steps, steps_given)
    out = list(shape)
    for k, a in enumerate(where):
        s = starts[k] if starts is not None else None
        e = ends[k] if ends is not None else None
        out[a] = _slice_len(shape[a], s, e, step_list[k]) if step_list is not None else None
    ctx.set_output(0, tuple(out))
    pass_bounds(ctx)
    _slice_values(ctx, shape, where, starts, ends, step_list)


def _slice_values(
    ctx: InferenceContext, shape: tuple[Dim, ...], where: list[int], starts: list[Dim] | None,
    ends: list[Dim] | None, steps: list[int] | None,
) -> None:  # fmt: skip
    sv = ctx.input_shape_value(0)
    if sv is None or starts is None or ends is None or steps is None:
        return
    if len(shape) != 1 or where != [0]:  # a 2-D shape value ([4, 2] pads, as torch's F.pad computes them)
        bounds = [(s, e) for s, e in zip(starts, ends, strict=True)]
        if not all(isinstance(x, int) for se in bounds for x in se) or not all(steps):
            return
        cuts: list[slice] = [slice(None)] * len(shape)
        for a, (s, e), st in zip(where, bounds, steps, strict=True):
            if not isinstance(shape[a], int):
                return
            lo, hi = _slice_int(shape[a], s, e, st)  # type: ignore[arg-type]
            cuts[a] = slice(lo, hi if hi >= 0 else None, st)
        move_values(ctx, sv, shape, lambda idx: idx[tuple(cuts)])
        return
    s, e, st = starts[0], ends[0], steps[0]
    if not isinstance(s, int) or not isinstance(e, int) or not st:
        return
    s, e = _slice_int(len(sv), s, e, st)
    set_value(ctx, 0, sv=tuple(sv[i] for i in range(s, e, st)))
    if all(isinstance(x, int) for x in sv):
        ctx.set_output(0, (len(range(s, e, st)),))
        set_value(ctx, 0, sv=tuple(sv[i] for i in range(s, e, st)),
                   const=np.array([sv[i] for i in range(s, e, st)], dtype=np.int64))  # fmt: skip


# ---- gather and scatter
def _check_indices(ctx: InferenceContext, dim: Dim, axis: int, data: int = 0, idx: int = 1) -> list[int] | None:
    ints = ints_in(ctx, idx)
    if ints is None or not isinstance(dim, int):
        return ints
    bad = [i for i in ints if not -dim <= i < dim]
    if bad:
        raise ctx.fail("GL310", f"index {bad[0]} is out of range for dim {axis} of {ctx.describe_input(data)} "
                                f"(allowed {-dim}..{dim - 1})", input=idx)  # fmt: skip
    return ints


def _indices_in_bounds(ctx: InferenceContext, dim: Dim) -> None:
    """Indices whose range is known (a Range over a dim, as position ids are made) must stay below the gathered
    dim: a condition on the input dims (a position table bounds the sequence length)."""
    x = ctx.inputs[1] if len(ctx.inputs) > 1 else None
    if x is None or x.bounds is None or dim is None or x.sv is not None:
        return
    lo, hi = x.bounds
    top = d.add(hi, 1)
    if top is None or d.equal(top, dim) is True:
        return
    if (high := d.bounds(d.sub(top, dim))[1]) is not None and high <= 0:
        return  # provably within
    lowest = d.bounds(lo)[0]
    if lowest is None or lowest < 0:
        return  # (negative indices count from the end: not these)
    over = d.bounds(d.sub(top, dim))[0]
    if over is not None and over > 0:  # the greatest index (one the model reaches) is past the dim
        raise ctx.fail("GL310", f"indices reach {d.to_str(hi)}, out of range for the {d.to_str(dim)} entries of "
                                f"{ctx.describe_input(0)}", input=1)  # fmt: skip
    ctx.refiner.unifier.require(top, dim, at_most=True)


@shape_fn("Gather")
def gather(ctx: InferenceContext) -> None:
    data, indices = ctx.input_shape(0), ctx.input_shape(1)
    if data is None:
        ctx.set_output(0, None)
        return
    axis = norm_axis(ctx, int(ctx.attr("axis", 0)), len(data))
    ints = _check_indices(ctx, data[axis], axis)
    if indices is None:
        ctx.set_output(0, None)
        return
    ctx.set_output(0, data[:axis] + indices + data[axis + 1 :])
    _indices_in_bounds(ctx, data[axis])
    sv = ctx.input_shape_value(0)
    if sv is not None and len(data) == 1 and ints is not None and all(-len(sv) <= i < len(sv) for i in ints):
        set_value(ctx, 0, sv=tuple(sv[i] for i in ints))
    fold(ctx, lambda x, i: np.take(x, i, axis=axis), [0, 1])


def _check_element_indices(ctx: InferenceContext, data: Shape, indices: Shape) -> None:
    """GatherElements' and ScatterElements' indices: the rank of data, and in range along `axis` when known."""
    if data is None:
        return
    axis = norm_axis(ctx, int(ctx.attr("axis", 0)), len(data))
    if indices is not None and len(indices) != len(data):
        raise ctx.fail("GL317", f"indices must have the rank of data: {ctx.describe_input(0)}, "
                                f"{ctx.describe_input(1)}", input=1)  # fmt: skip
    _check_indices(ctx, data[axis], axis)


@shape_fn("GatherElements")
def gather_elements(ctx: InferenceContext) -> None:
    data, indices = ctx.input_shape(0), ctx.input_shape(1)
    _check_element_indices(ctx, data, indices)
    ctx.set_output(0, indices)


@shape_fn("GatherND")
def gather_nd(ctx: InferenceContext) -> None:
    data, indices = ctx.input_shape(0), ctx.input_shape(1)
    b = int(ctx.attr("batch_dims", 0)) if opset(ctx) >= 12 else 0
    if data is None or indices is None or not indices or not isinstance(indices[-1], int):
        ctx.set_output(0, None)
        return
    k = indices[-1]
    if k > len(data) - b:
        raise ctx.fail("GL317", f"indices' last dim ({k}) exceeds the rank of {ctx.describe_input(0)} less "
                                f"batch_dims ({b})", input=1)  # fmt: skip
    ctx.set_output(0, indices[:-1] + data[b + k :])


def _shapes_agree(ctx: InferenceContext, a: Shape, b: Shape, what: str, i: int) -> None:
    try:
        sh.merge(a, b)
    except sh.MergeError as e:
        raise ctx.fail("GL317", f"{what}: {shape_str(a)} and {shape_str(b)} differ ({e})", input=i) from None


@shape_fn("Scatter", "ScatterElements")
def scatter_elements(ctx: InferenceContext) -> None:
    data, indices, updates = (ctx.input_shape(i) for i in range(3))
    _check_element_indices(ctx, data, indices)
    _shapes_agree(ctx, indices, updates, "updates must have the shape of indices", 2)
    ctx.set_output(0, data)


@shape_fn("ScatterND")
def scatter_nd(ctx: InferenceContext) -> None:
    data, indices, updates = (ctx.input_shape(i) for i in range(3))
    if data is not None and indices and isinstance(indices[-1], int):
        k = indices[-1]
        if k > len(data):
            raise ctx.fail("GL317", f"indices' last dim ({k}) exceeds the rank of {ctx.describe_input(0)}",
                           input=1)  # fmt: skip
        _shapes_agree(ctx, indices[:-1] + data[k:], updates, "updates must be indices.shape[:-1] + data.shape[k:]", 2)
    ctx.set_output(0, data)
