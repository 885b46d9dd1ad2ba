"""Concat and Split: the non-axis dims must agree (GL303), the axis dim is the sum of the parts; Split's sizes
come from the `split` input or attribute, or are equal parts (the last one smaller from opset 18), and must add
up to the dim. Shape values are concatenated and split like the tensors.
"""

from __future__ import annotations

import numpy as np

from graphlsp.infer import dims as d
from graphlsp.infer import shapes as sh
from graphlsp.infer.context import InferenceContext
from graphlsp.infer.dims import Dim
from graphlsp.ops.operands import dims_in, dims_str, elements, fail_on, fold, norm_axis, opset, present, set_value
from graphlsp.ops.registry import shape_fn
from graphlsp.ops.symbolic import differ, div_valid


def _concat_dim(ctx: InferenceContext, known: list[tuple[int, tuple[Dim, ...]]], j: int) -> Dim:
    out: Dim = None
    first = known[0][0]
    for i, s in known:
        try:
            out = sh.merge_dim(out, s[j], ctx.refiner.unifier)
        except sh.MergeError:
            raise ctx.fail("GL303", f"inputs differ in dim {j} (not the concatenation axis): "
                                    f"{ctx.describe_input(first)}, {ctx.describe_input(i)}", input=i,
                           related=[ctx.related_input(first)]) from None  # fmt: skip
    return out


@shape_fn("Concat")
def concat(ctx: InferenceContext) -> None:
    idx = [i for i in range(ctx.n_inputs) if present(ctx, i)]
    known = [(i, s) for i in idx if (s := ctx.input_shape(i)) is not None]
    if not known:
        ctx.set_output(0, None)
        return
    first, rank = known[0][0], len(known[0][1])
    for i, s in known:
        if len(s) != rank:
            msg = f"inputs have different ranks: {ctx.describe_input(first)}, {ctx.describe_input(i)}"
            raise ctx.fail("GL303", msg, input=i, related=[ctx.related_input(first)])
    axis = norm_axis(ctx, int(ctx.attr("axis", 1)), rank)
    along: Dim = 0 if len(known) == len(idx) else None
    for _, s in known:
        along = d.add(along, s[axis])
    ctx.set_output(0, tuple(along if j == axis else _concat_dim(ctx, known, j) for j in range(rank)))
    svs = [elements(ctx, i) for i in idx]
    if axis == 0 and all(sv is not None for sv in svs) and any(ctx.input_shape_value(i) for i in idx):
        set_value(ctx, 0, sv=tuple(x for sv in svs for x in sv or ()))
    fold(ctx, lambda *xs: np.concatenate(xs, axis=axis), idx)


def _split_given(ctx: InferenceContext) -> tuple[bool, list[Dim] | None, int | str]:
    """(given, sizes, where) of Split's sizes: the attribute (and in opset 1 the input) or the input."""
    if opset(ctx) < 13 and ctx.has_attr("split"):
        return True, list(ctx.attr("split")), "split"
    if opset(ctx) >= 13 or (opset(ctx) < 2 and present(ctx, 1)):
        dims = dims_in(ctx, 1)
        return present(ctx, 1), (list(dims) if dims is not None else None), 1
    return False, None, "split"


def _split_equal(ctx: InferenceContext, dim: Dim, n: int) -> list[Dim]:
    if opset(ctx) >= 18:
        k = ctx.attr("num_outputs")
        if k is None:
            raise ctx.fail("GL308", "needs the split input or the num_outputs attribute")
        if int(k) != n:
            raise ctx.fail("GL308", f"num_outputs is {k} but the node has {n} outputs", attr="num_outputs")
        chunk = d.ceildiv(dim, n)
        last = d.sub(dim, d.mul(chunk, n - 1))
        return [chunk] * (n - 1) + [None if isinstance(last, int) and last < 0 else last]
    if isinstance(dim, int) and dim % n:
        raise ctx.fail("GL308", f"{ctx.describe_input(0)} cannot be split evenly into {n} outputs")
    return [div_valid(dim, n)] * n


def _check_split(ctx: InferenceContext, sizes: list[Dim], dim: Dim, axis: int, where: int | str) -> None:
    n = ctx.n_outputs
    if len(sizes) != n:
        raise fail_on(ctx, "GL308", f"split {dims_str(sizes)} has {len(sizes)} sizes but the node has {n} outputs",
                    where)  # fmt: skip
    total: Dim = 0
    for s in sizes:
        total = d.add(total, s)
    if differ(total, dim):
        raise fail_on(ctx, "GL308", f"split {dims_str(sizes)} adds up to {d.to_str(total)} but dim {axis} of "
                                  f"{ctx.describe_input(0)} is {d.to_str(dim)}", where)  # fmt: skip


@shape_fn("Split")
def split(ctx: InferenceContext) -> None:
    given, sizes, where = _split_given(ctx)
    shape = ctx.input_shape(0)
    if shape is None:
        for i in range(ctx.n_outputs):
            ctx.set_output(i, None)
        return
    axis = norm_axis(ctx, int(ctx.attr("axis", 0)), len(shape))
    dim = shape[axis]
    if given and sizes is not None:
        _check_split(ctx, sizes, dim, axis, where)
    elif not given:
        sizes = _split_equal(ctx, dim, ctx.n_outputs)
    for i in range(ctx.n_outputs):
        size = sizes[i] if sizes is not None else None
        ctx.set_output(i, shape[:axis] + (size,) + shape[axis + 1 :])
    _split_values(ctx, shape, sizes)


def _split_values(ctx: InferenceContext, shape: tuple[Dim, ...], sizes: list[Dim] | None) -> None:
    sv = ctx.input_shape_value(0)
    if sv is None or len(shape) != 1 or sizes is None or not all(isinstance(s, int) for s in sizes):
        return
    at = 0
    for i, s in enumerate(sizes):
        set_value(ctx, i, sv=sv[at : at + s])  # type: ignore[operator]
        at += s  # type: ignore[operator]
