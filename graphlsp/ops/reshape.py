"""Shape queries and reshaping: Shape and Size (where shape values start), Reshape (0 and -1 resolved, the element
count checked when it is certain), Flatten, Transpose, Squeeze and Unsqueeze, each carrying shape values through.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from graphlsp.infer import dims as d
from graphlsp.infer.context import InferenceContext, InferenceError
from graphlsp.infer.dims import Dim, Expr
from graphlsp.infer.types import Shape
from graphlsp.ops.operands import (
    INT64,
    attr_or_input,
    dims_in,
    dims_str,
    fail_on,
    fold,
    move_values,
    norm_axes,
    norm_axis,
    opset,
    pass_bounds,
    pass_sv,
    set_value,
)
from graphlsp.ops.registry import shape_fn
from graphlsp.ops.symbolic import differ, exact_div


# ---- shape queries
def _clamp_axis(v: int, rank: int) -> int:
    if v < 0:
        v += rank
    return max(0, min(v, rank))


@shape_fn("Shape")
def shape_op(ctx: InferenceContext) -> None:
    shape = ctx.input_shape(0)
    if shape is None:
        ctx.set_output(0, (None,), INT64)
        return
    rank = len(shape)
    start, end = 0, rank
    if opset(ctx) >= 15:
        start = _clamp_axis(int(ctx.attr("start", 0)), rank)
        end = _clamp_axis(int(ctx.attr("end", rank)), rank)
    dims = shape[start:end]
    ctx.set_output(0, (len(dims),), INT64)
    const = np.array(dims, dtype=np.int64) if all(isinstance(x, int) for x in dims) else None
    set_value(ctx, 0, sv=dims, const=const)


@shape_fn("Size")
def size_op(ctx: InferenceContext) -> None:
    ctx.set_output(0, (), INT64)
    shape = ctx.input_shape(0)
    if shape is not None:
        n = d.product(shape)
        set_value(ctx, 0, sv=(n,), const=np.array(n, dtype=np.int64) if isinstance(n, int) else None)


# ---- reshaping
def _reshape_dims(
    ctx: InferenceContext, data: Shape, target: Sequence[Dim], allowzero: int
) -> tuple[list[Dim], int | None]:
    out: list[Dim] = []
    neg: int | None = None
    for i, t in enumerate(target):
        if t is None or isinstance(t, Expr):
            out.append(t)
        elif t == -1:
            if neg is not None:
                raise ctx.fail("GL317", f"the target shape {dims_str(target)} has more than one -1", input=1)
            neg = i
            out.append(None)
        elif t == 0 and not allowzero:
            if data is not None and i >= len(data):
                raise ctx.fail("GL317", f"the target shape {dims_str(target)} copies dim {i} (0) but "
                                        f"{ctx.describe_input(0)} has rank {len(data)}", input=1)  # fmt: skip
            out.append(data[i] if data is not None else None)
        elif t < -1:
            raise ctx.fail("GL317", f"the target shape {dims_str(target)} has an invalid dim {t}", input=1)
        else:
            out.append(t)
    return out, neg


def _count_error(ctx: InferenceContext, total: Dim, target: Sequence[Dim], detail: str) -> InferenceError:
    return ctx.fail("GL304", f"{ctx.describe_input(0)} has {d.to_str(total)} elements, which the target shape "
                             f"{dims_str(target)} cannot hold: {detail}", input=1)  # fmt: skip


def _infer_minus_one(ctx: InferenceContext, data: Shape, out: list[Dim], neg: int, target: Sequence[Dim]) -> Dim:
    total = d.product(data) if data is not None else None
    known = d.product(x for j, x in enumerate(out) if j != neg)
    if known == 0 and total is not None and total != 0 and not isinstance(total, Expr):
        raise _count_error(ctx, total, target, "the dims besides -1 multiply to 0")
    q = exact_div(total, known)
    if q is None and isinstance(total, int) and isinstance(known, int) and known:
        raise _count_error(ctx, total, target, f"{total} is not a multiple of {known}")
    return q


def _check_count(ctx: InferenceContext, data: Shape, out: list[Dim], target: Sequence[Dim], allowzero: int) -> None:
    total = d.product(data) if data is not None else None
    if total is None:
        return
    unknown = [j for j, x in enumerate(out) if x is None]
    if len(unknown) == 1 and not allowzero:  # whatever that element is (-1, 0 or a size), the count decides it
        known = d.product(x for x in out if x is not None)
        if known != 0 and (not isinstance(known, int) or known > 0):
            out[unknown[0]] = exact_div(total, known)
        return
    produced = d.product(out)
    if differ(total, produced):
        raise _count_error(ctx, total, target, f"it has {d.to_str(produced)}")
    if d.equal(total, produced) is None:
        ctx.refiner.unifier.require(total, produced)  # holds only at some sizes (a target traced as a constant)


@shape_fn("Reshape")
def reshape(ctx: InferenceContext) -> None:
    if opset(ctx) < 5:
        shape_attr = ctx.attr("shape")
        target: tuple[Dim, ...] | None = tuple(shape_attr) if shape_attr is not None else None
    else:
        target = dims_in(ctx, 1)
    if target is None:
        ctx.set_output(0, None)
        return
    data = ctx.input_shape(0)
    allowzero = int(ctx.attr("allowzero", 0)) if opset(ctx) >= 14 else 0
    out, neg = _reshape_dims(ctx, data, target, allowzero)
    if neg is not None:
        out[neg] = _infer_minus_one(ctx, data, out, neg, target)
    else:
        _check_count(ctx, data, out, target, allowzero)
    ctx.set_output(0, tuple(out))
    pass_sv(ctx)
    if all(isinstance(x, int) for x in out):
        fold(ctx, lambda x: x.reshape(tuple(out)), [0])


@shape_fn("Flatten")
def flatten(ctx: InferenceContext) -> None:
    shape = ctx.input_shape(0)
    if shape is None:
        ctx.set_output(0, (None, None))
        return
    a = norm_axis(ctx, int(ctx.attr("axis", 1)), len(shape), allow_end=True)
    ctx.set_output(0, (d.product(shape[:a]), d.product(shape[a:])))
    pass_sv(ctx)
    fold(ctx, lambda x: x.reshape(int(np.prod(x.shape[:a])), -1), [0])


@shape_fn("Transpose")
def transpose(ctx: InferenceContext) -> None:
    shape = ctx.input_shape(0)
    perm = ctx.attr("perm")
    if shape is None:
        ctx.set_output(0, None if perm is None else (None,) * len(perm))
        return
    rank = len(shape)
    perm = list(range(rank - 1, -1, -1)) if perm is None else [int(p) for p in perm]
    if len(perm) != rank:
        raise ctx.fail("GL307", f"perm {perm} has {len(perm)} entries but {ctx.describe_input(0)} has rank {rank}",
                       attr="perm")  # fmt: skip
    bad = [p for p in perm if not 0 <= p < rank]
    if bad:
        raise ctx.fail("GL307", f"perm {perm} has {bad[0]}, outside 0..{rank - 1} for {ctx.describe_input(0)}",
                       attr="perm")  # fmt: skip
    if len(set(perm)) != rank:
        raise ctx.fail("GL307", f"perm {perm} repeats an axis", attr="perm")
    ctx.set_output(0, tuple(shape[p] for p in perm))
    pass_bounds(ctx)
    sv = ctx.input_shape_value(0)
    if sv is not None:
        move_values(ctx, sv, shape, lambda idx: np.transpose(idx, perm))
    fold(ctx, lambda x: np.transpose(x, perm), [0])


@shape_fn("Squeeze")
def squeeze(ctx: InferenceContext) -> None:
    given, axes = attr_or_input(ctx, "axes", 1, 13)
    shape = ctx.input_shape(0)
    src: int | str = 1 if opset(ctx) >= 13 else "axes"
    if shape is None or (given and axes is None):
        k = dims_in(ctx, 1) if given and shape is not None and opset(ctx) >= 13 else None
        ctx.set_output(0, None if k is None or shape is None else (None,) * (len(shape) - len(k)))
        return
    if not given or not axes:  # an empty axes input: onnx keeps every dim, onnxruntime squeezes the 1s
        if not all(isinstance(x, int) for x in shape) or (given and 1 in shape):
            ctx.set_output(0, None)
            return
        drop = [i for i, x in enumerate(shape) if x == 1]
    else:
        drop = norm_axes(ctx, axes or [], len(shape), src)
        for a in drop:
            if isinstance(shape[a], int) and shape[a] != 1:
                raise fail_on(ctx, "GL317", f"cannot squeeze axis {a}: {ctx.describe_input(0)}, whose dim {a} is "
                                          f"{shape[a]}, not 1", src)  # fmt: skip
    ctx.set_output(0, tuple(x for i, x in enumerate(shape) if i not in drop))
    pass_sv(ctx)
    fold(ctx, lambda x: x.reshape(tuple(int(v) for i, v in enumerate(x.shape) if i not in drop)), [0])


@shape_fn("Unsqueeze")
def unsqueeze(ctx: InferenceContext) -> None:
    _, axes = attr_or_input(ctx, "axes", 1, 13)
    shape = ctx.input_shape(0)
    src: int | str = 1 if opset(ctx) >= 13 else "axes"
    if shape is None or axes is None:
        k = dims_in(ctx, 1) if opset(ctx) >= 13 else None
        ctx.set_output(0, None if shape is None or k is None else (None,) * (len(shape) + len(k)))
        return
    rank = len(shape) + len(axes)
    where = norm_axes(ctx, axes, rank, src)
    rest = iter(shape)
    out = tuple(1 if i in where else next(rest) for i in range(rank))
    ctx.set_output(0, out)
    pass_sv(ctx)
    fold(ctx, lambda x: x.reshape(out), [0])
