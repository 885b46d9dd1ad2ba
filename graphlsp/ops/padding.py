"""Growing a tensor: Expand (broadcast to a shape input), Tile (repeats), Pad (pads as an attribute or input,
with axes from opset 18) and CenterCropPad.
"""

from __future__ import annotations

import math

import numpy as np

from graphlsp.infer import dims as d
from graphlsp.infer import shapes as sh
from graphlsp.infer.context import InferenceContext
from graphlsp.infer.dims import Dim
from graphlsp.ops.operands import (
    CONST_CAP,
    dims_in,
    dims_str,
    fail_on,
    floats_in,
    fold,
    ints_in,
    norm_axes,
    norm_axis,
    opset,
    pass_bounds,
    present,
)
from graphlsp.ops.registry import shape_fn


@shape_fn("Expand")
def expand(ctx: InferenceContext) -> None:
    target = dims_in(ctx, 1)
    shape = ctx.input_shape(0)
    if target is None or shape is None:
        ctx.set_output(0, None)
        return
    try:
        out = sh.broadcast([shape, target], ctx.refiner.unifier)
    except sh.MergeError:
        raise ctx.fail("GL301", f"{ctx.describe_input(0)} does not broadcast to the shape {dims_str(target)}",
                       input=1) from None  # fmt: skip
    ctx.set_output(0, out)
    pass_bounds(ctx)
    if out is not None and all(isinstance(x, int) for x in out) and math.prod(out) <= CONST_CAP:  # type: ignore[arg-type]
        fold(ctx, lambda x, _: np.broadcast_to(x, out).copy(), [0, 1])  # type: ignore[arg-type]


@shape_fn("Tile")
def tile_v1(ctx: InferenceContext) -> None:
    """Opset 1: `tiles` copies along the scalar input `axis` (both of the data's type)."""
    shape = ctx.input_shape(0)
    axis_v, tiles_v = floats_in(ctx, 2), floats_in(ctx, 1)
    axis = int(axis_v[0]) if axis_v and len(axis_v) == 1 else None
    tiles = int(tiles_v[0]) if tiles_v and len(tiles_v) == 1 else None
    if shape is None or axis is None:
        ctx.set_output(0, None if shape is None else (None,) * len(shape))
        return
    a = norm_axis(ctx, axis, len(shape), src=2)
    ctx.set_output(0, tuple(d.mul(x, tiles) if i == a else x for i, x in enumerate(shape)))


@shape_fn("Tile", since=6)
def tile(ctx: InferenceContext) -> None:
    shape = ctx.input_shape(0)
    reps = dims_in(ctx, 1)
    if shape is None or reps is None:
        known = shape if shape is not None else reps
        ctx.set_output(0, None if known is None else (None,) * len(known))
        return
    if len(reps) != len(shape):
        raise ctx.fail("GL317", f"repeats {dims_str(reps)} has {len(reps)} entries for {ctx.describe_input(0)}",
                       input=1)  # fmt: skip
    if any(isinstance(r, int) and r < 0 for r in reps):
        raise ctx.fail("GL317", f"repeats {dims_str(reps)} has a negative entry", input=1)
    ctx.set_output(0, tuple(d.mul(x, r) for x, r in zip(shape, reps, strict=True)))
    pass_bounds(ctx)
    fold(ctx, np.tile, [0, 1])


def _pads_arg(ctx: InferenceContext) -> tuple[list[Dim] | None, int | str]:
    if opset(ctx) < 2:
        v = ctx.attr("paddings")
        return (list(v) if v is not None else None), "paddings"
    if opset(ctx) < 11:
        v = ctx.attr("pads")
        return (list(v) if v is not None else None), "pads"
    dims = dims_in(ctx, 1)
    return (list(dims) if dims is not None else None), 1


@shape_fn("Pad")
def pad(ctx: InferenceContext) -> None:
    shape = ctx.input_shape(0)
    pads, where = _pads_arg(ctx)
    if shape is None:
        ctx.set_output(0, None)
        return
    rank = len(shape)
    axes: list[int] | None = list(range(rank))
    if opset(ctx) >= 18 and present(ctx, 3):
        ints = ints_in(ctx, 3)
        axes = norm_axes(ctx, ints, rank, 3) if ints is not None else None
    if pads is None or axes is None:
        ctx.set_output(0, tuple(None if axes is None or i in axes else x for i, x in enumerate(shape)))
        return
    n = len(axes)
    if len(pads) != 2 * n:
        raise fail_on(ctx, "GL317", f"pads {dims_str(pads)} has {len(pads)} entries; {n} axes need {2 * n}", where)
    out = list(shape)
    for i, a in enumerate(axes):
        out[a] = d.add(d.add(shape[a], pads[i]), pads[n + i])
        if isinstance(out[a], int) and out[a] < 0:  # type: ignore[operator]
            raise fail_on(ctx, "GL317", f"pads {dims_str(pads)} remove more than dim {a} of "
                                      f"{ctx.describe_input(0)} has", where)  # fmt: skip
    mode = ctx.attr("mode", "constant")
    if (mode.decode() if isinstance(mode, bytes) else mode) == "reflect":
        for i, a in enumerate(axes):
            _reflect_bound(ctx, shape[a], a, pads[i], "pre")
            _reflect_bound(ctx, shape[a], a, pads[n + i], "post")
    ctx.set_output(0, tuple(out))


def _reflect_bound(ctx: InferenceContext, dim: Dim, axis: int, pad: Dim, side: str) -> None:
    """Reflect padding mirrors the dim without its edge: each pad at most dim - 1 (onnxruntime refuses more;
    silero VAD's STFT pads 64 samples, so the audio needs at least 65)."""
    if not isinstance(pad, int) or pad <= 0 or dim is None:
        return
    if isinstance(dim, int):
        if pad >= dim:
            raise ctx.fail("GL317", f"reflect {side}-pad {pad} must be less than dim {axis}: "
                                    f"{ctx.describe_input(0)}", input=0)  # fmt: skip
        return
    ctx.refiner.unifier.require(pad + 1, dim, at_most=True)


@shape_fn("CenterCropPad")
def center_crop_pad(ctx: InferenceContext) -> None:
    shape = ctx.input_shape(0)
    target = dims_in(ctx, 1)
    if shape is None:
        ctx.set_output(0, None)
        return
    axes_attr = ctx.attr("axes")
    axes = norm_axes(ctx, list(axes_attr), len(shape), "axes") if axes_attr is not None else list(range(len(shape)))
    if target is None:
        ctx.set_output(0, tuple(None if i in axes else x for i, x in enumerate(shape)))
        return
    if len(target) != len(axes):
        raise ctx.fail("GL317", f"shape {dims_str(target)} has {len(target)} entries for {len(axes)} axes",
                       input=1)  # fmt: skip
    out = list(shape)
    for a, t in zip(axes, target, strict=True):
        out[a] = t
    ctx.set_output(0, tuple(out))
