"""Selecting elements: TopK, NonZero, Compress and Unique, whose output sizes depend on the data (exact when it
is known), and the same-shape ops with checks, Trilu and ReverseSequence.
"""

from __future__ import annotations

import math

import numpy as np

from graphlsp.infer import dims as d
from graphlsp.infer.context import InferenceContext
from graphlsp.infer.dims import Dim
from graphlsp.ops.operands import INT64, fail_on, fold, norm_axis, opset, scalar_in, small_const
from graphlsp.ops.registry import shape_fn


# ---- outputs sized by the data
@shape_fn("TopK")
def top_k(ctx: InferenceContext) -> None:
    shape = ctx.input_shape(0)
    k: Dim = ctx.attr("k") if opset(ctx) < 10 else scalar_in(ctx, 1)
    if shape is None:
        ctx.set_output(0, None)
        ctx.set_output(1, None, INT64)
        return
    axis = norm_axis(ctx, int(ctx.attr("axis", -1)), len(shape))
    dim = shape[axis]
    where: int | str = "k" if opset(ctx) < 10 else 1
    if isinstance(k, int) and (k < 0 or (isinstance(dim, int) and k > dim)):
        raise fail_on(ctx, "GL317", f"k = {k} is not in 0..{d.to_str(dim)} for axis {axis} of "
                                  f"{ctx.describe_input(0)}", where)  # fmt: skip
    out = shape[:axis] + (k,) + shape[axis + 1 :]
    ctx.set_output(0, out)
    ctx.set_output(1, out, INT64)


@shape_fn("NonZero")
def non_zero(ctx: InferenceContext) -> None:
    rank = ctx.input_rank(0)
    ctx.set_output(0, (rank, None), INT64)
    fold(ctx, lambda x: np.array(np.nonzero(x), dtype=np.int64), [0])


@shape_fn("Compress")
def compress(ctx: InferenceContext) -> None:
    shape = ctx.input_shape(0)
    axis = ctx.attr("axis")
    cond = small_const(ctx, 1)
    if axis is None:
        ctx.set_output(0, (None,))
        if cond is not None and shape is not None and all(isinstance(x, int) for x in shape):
            ctx.set_output(0, (int(np.count_nonzero(cond.reshape(-1)[: math.prod(shape)])),))  # type: ignore[arg-type]
    elif shape is None:
        ctx.set_output(0, None)
    else:
        a = norm_axis(ctx, int(axis), len(shape))
        n = shape[a]
        kept = int(np.count_nonzero(cond.reshape(-1)[:n])) if cond is not None and isinstance(n, int) else None
        ctx.set_output(0, shape[:a] + (kept,) + shape[a + 1 :])
    fold(ctx, lambda x, c: np.compress(c.reshape(-1), x, axis=axis), [0, 1])


@shape_fn("Unique")
def unique(ctx: InferenceContext) -> None:
    shape = ctx.input_shape(0)
    axis = ctx.attr("axis")
    a = norm_axis(ctx, int(axis), len(shape)) if axis is not None and shape is not None else None
    if axis is None:
        ctx.set_output(0, (None,))
        inverse: Dim = d.product(shape) if shape is not None else None
    else:
        ctx.set_output(0, None if shape is None or a is None else shape[:a] + (None,) + shape[a + 1 :])
        inverse = shape[a] if shape is not None and a is not None else None
    for i, out in ((1, (None,)), (2, (inverse,)), (3, (None,))):
        ctx.set_output(i, out, INT64)
    x = small_const(ctx, 0)
    if x is not None:
        _unique_fold(ctx, x, a)


def _unique_fold(ctx: InferenceContext, x: np.ndarray, axis: int | None) -> None:
    try:
        y, idx, inv, counts = np.unique(x, return_index=True, return_inverse=True, return_counts=True, axis=axis)
    except Exception:
        return
    ctx.set_output(0, tuple(int(s) for s in y.shape))
    for i, v in ((1, idx), (2, inv.reshape(-1)), (3, counts)):
        ctx.set_output(i, (int(v.size),), INT64)


# ---- same-shape ops with checks
@shape_fn("Trilu")
def trilu(ctx: InferenceContext) -> None:
    shape = ctx.input_shape(0)
    if shape is not None and len(shape) < 2:
        raise ctx.fail("GL317", f"needs an input of rank >= 2: {ctx.describe_input(0)}", input=0)
    ctx.copy_input(0)


@shape_fn("ReverseSequence")
def reverse_sequence(ctx: InferenceContext) -> None:
    shape, lens = ctx.input_shape(0), ctx.input_shape(1)
    if shape is not None and len(shape) < 2:
        raise ctx.fail("GL317", f"needs an input of rank >= 2: {ctx.describe_input(0)}", input=0)
    if lens is not None and len(lens) != 1:
        raise ctx.fail("GL317", f"sequence_lens must be 1-D: {ctx.describe_input(1)}", input=1)
    if shape is not None and lens is not None:
        b = norm_axis(ctx, int(ctx.attr("batch_axis", 1)), len(shape), "batch_axis", "batch_axis")
        if d.equal(shape[b], lens[0]) is False:
            raise ctx.fail("GL317", f"sequence_lens has {d.to_str(lens[0])} entries but the batch dim of "
                                    f"{ctx.describe_input(0)} is {d.to_str(shape[b])}", input=1)  # fmt: skip
    ctx.copy_input(0)
