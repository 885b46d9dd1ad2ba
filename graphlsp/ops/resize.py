"""Resizing and spatial rearrangement: Resize and Upsample (scales or sizes, axes and keep_aspect_ratio_policy),
DepthToSpace and SpaceToDepth (block sizes that must divide the dims), and Col2Im.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from graphlsp.infer import dims as d
from graphlsp.infer.context import InferenceContext
from graphlsp.infer.dims import Dim
from graphlsp.ops.operands import dims_in, dims_str, fail_on, floats_in, ints_in, norm_axes, opset, present, str_attr
from graphlsp.ops.registry import shape_fn
from graphlsp.ops.symbolic import div_valid


# ---- resize
def _scaled(dim: Dim, scale: float) -> Dim:
    """floor(dim * scale) as onnx computes it (scale is a float32)."""
    s = float(np.float32(scale))
    if isinstance(dim, int):
        return math.floor(float(dim) * s)
    if dim is None or not math.isfinite(s) or s < 0:
        return None
    from fractions import Fraction  # 2 ms of imports (decimal, ...): only for a scale of a symbolic dim

    f = Fraction(s)
    if f.denominator > 64:
        return None
    return d.floordiv(d.mul(dim, f.numerator), f.denominator)


def _apply_scales(ctx: InferenceContext, shape: tuple[Dim, ...], scales: list[float], where: int | str) -> None:
    if len(scales) != len(shape):
        raise fail_on(ctx, "GL317", f"scales {scales} has {len(scales)} entries for {ctx.describe_input(0)}", where)
    ctx.set_output(0, tuple(_scaled(x, s) for x, s in zip(shape, scales, strict=True)))


def _aspect_sizes(ctx: InferenceContext, shape: tuple[Dim, ...], axes: list[int], sizes: list[Dim]) -> list[Dim]:
    policy = str_attr(ctx, "keep_aspect_ratio_policy", "stretch") if opset(ctx) >= 18 else "stretch"
    if policy == "stretch":
        return sizes
    dims = [shape[a] for a in axes]
    if not all(isinstance(x, int) and x for x in dims) or not all(isinstance(s, int) for s in sizes):
        return [None] * len(sizes)
    ratios = [s / x for s, x in zip(sizes, dims, strict=True)]  # type: ignore[operator]
    scale = min(ratios) if policy == "not_larger" else max(ratios)
    return [math.floor(scale * x + 0.5) for x in dims]  # type: ignore[operator]


def _resize_sizes(ctx: InferenceContext, shape: tuple[Dim, ...], sizes: tuple[Dim, ...], axes: list[int]) -> None:
    if len(sizes) != len(axes):
        raise ctx.fail("GL317", f"sizes {dims_str(sizes)} has {len(sizes)} entries for {len(axes)} axes", input=3)
    out = list(shape)
    for a, s in zip(axes, _aspect_sizes(ctx, shape, axes, list(sizes)), strict=True):
        out[a] = s if not isinstance(s, int) or s > 0 else None
    ctx.set_output(0, tuple(out))


def _count(ctx: InferenceContext, i: int, values: Sequence[Any] | None) -> int | None:
    """How many elements optional input i has: 0 when absent, None when not known."""
    if not present(ctx, i):
        return 0
    if values is not None:
        return len(values)
    shape = ctx.input_shape(i)
    return shape[0] if shape is not None and len(shape) == 1 and isinstance(shape[0], int) else None


def _check_scales_sizes(ctx: InferenceContext, scales: list[float] | None, sizes: tuple[Dim, ...] | None) -> None:
    n_scales, n_sizes = _count(ctx, 2, scales), _count(ctx, 3, sizes)
    if n_scales and n_sizes:
        raise ctx.fail("GL317", "takes scales or sizes, not both", input=3)
    if opset(ctx) >= 13 and n_scales == 0 and n_sizes == 0:
        raise ctx.fail("GL317", "needs scales or sizes")


@shape_fn("Resize")
def resize(ctx: InferenceContext) -> None:
    shape = ctx.input_shape(0)
    if opset(ctx) < 11:
        scales = floats_in(ctx, 1)
        ctx.set_output(0, None if shape is None else (None,) * len(shape))
        if scales is not None and shape is not None:
            _apply_scales(ctx, shape, scales, 1)
        return
    scales, sizes = floats_in(ctx, 2), dims_in(ctx, 3)
    _check_scales_sizes(ctx, scales, sizes)
    axes_attr = ctx.attr("axes") if opset(ctx) >= 18 else None
    if shape is None:
        stretch = str_attr(ctx, "keep_aspect_ratio_policy", "stretch") == "stretch" or opset(ctx) < 18
        ctx.set_output(0, sizes if sizes and axes_attr is None and stretch else None)
        return
    rank = len(shape)
    axes = norm_axes(ctx, list(axes_attr), rank, "axes") if axes_attr is not None else list(range(rank))
    ctx.set_output(0, (None,) * rank)
    if sizes:
        _resize_sizes(ctx, shape, sizes, axes)
    elif scales:
        if len(scales) != len(axes):
            raise ctx.fail("GL317", f"scales {scales} has {len(scales)} entries for {len(axes)} axes", input=2)
        full = [1.0] * rank
        for a, sc in zip(axes, scales, strict=True):
            full[a] = sc
        _apply_scales(ctx, shape, full, 2)


@shape_fn("Upsample")
def upsample(ctx: InferenceContext) -> None:
    shape = ctx.input_shape(0)
    if shape is None:
        ctx.set_output(0, None)
        return
    ctx.set_output(0, (None,) * len(shape))
    if opset(ctx) < 7:
        if len(shape) != 4:
            raise ctx.fail("GL317", f"needs a 4-D input: {ctx.describe_input(0)}", input=0)
        hs, ws = float(ctx.attr("height_scale", 1.0)), float(ctx.attr("width_scale", 1.0))
        scales: list[float] | None = [1.0, 1.0, hs, ws]
        where: int | str = "height_scale"
    elif opset(ctx) < 9:
        v = ctx.attr("scales")
        scales, where = (list(v) if v is not None else None), "scales"
    else:
        scales, where = floats_in(ctx, 1), 1
    if scales is not None:
        _apply_scales(ctx, shape, scales, where)


# ---- depth/space, col2im
def _blocksize(ctx: InferenceContext) -> int:
    b = int(ctx.attr("blocksize", 0))
    if b <= 0:
        raise ctx.fail("GL317", f"blocksize must be positive, got {b}", attr="blocksize")
    return b


def _blocks(ctx: InferenceContext) -> tuple[int, tuple[Dim, ...]] | None:
    """DepthToSpace's and SpaceToDepth's blocksize and 4-D input shape; None (the output unknown) when the shape
    is."""
    b = _blocksize(ctx)
    shape = ctx.input_shape(0)
    if shape is not None and len(shape) != 4:
        raise ctx.fail("GL317", f"needs a 4-D input: {ctx.describe_input(0)}", input=0)
    if shape is None:
        ctx.set_output(0, None)
        return None
    return b, shape


def _divisible(ctx: InferenceContext, dim: Dim, by: int, what: str) -> Dim:
    if isinstance(dim, int) and dim % by:
        raise ctx.fail("GL317", f"{what} of {ctx.describe_input(0)} is not a multiple of {by}", input=0)
    return div_valid(dim, by)


@shape_fn("DepthToSpace")
def depth_to_space(ctx: InferenceContext) -> None:
    if (blocks := _blocks(ctx)) is None:
        return
    b, (n, c, h, w) = blocks
    ctx.set_output(0, (n, _divisible(ctx, c, b * b, "the channel dim"), d.mul(h, b), d.mul(w, b)))


@shape_fn("SpaceToDepth")
def space_to_depth(ctx: InferenceContext) -> None:
    if (blocks := _blocks(ctx)) is None:
        return
    b, (n, c, h, w) = blocks
    ctx.set_output(0, (n, d.mul(c, b * b), _divisible(ctx, h, b, "the height"), _divisible(ctx, w, b, "the width")))


@shape_fn("Col2Im")
def col2im(ctx: InferenceContext) -> None:
    shape = ctx.input_shape(0)
    image, block = dims_in(ctx, 1), ints_in(ctx, 2)
    if shape is not None and len(shape) != 3:
        raise ctx.fail("GL317", f"needs a 3-D input: {ctx.describe_input(0)}", input=0)
    if block is not None and any(b <= 0 for b in block):
        raise ctx.fail("GL317", f"block_shape {block} must be positive", input=2)
    if image is None:
        ctx.set_output(0, None)
        return
    n = shape[0] if shape is not None else None
    c = _divisible(ctx, shape[1], math.prod(block), "dim 1") if shape is not None and block is not None else None
    ctx.set_output(0, (n, c, *image))
