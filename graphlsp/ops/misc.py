"""Strings and images (StringNormalizer, StringConcat, StringSplit, RegexFullMatch, ImageDecoder), and the
ai.onnx ops no other family covers, registered through `fallback_fn` so a family that does cover one wins.
"""

from __future__ import annotations

from collections.abc import Callable

from graphlsp.graph.enums import TensorProto
from graphlsp.infer import dims as d
from graphlsp.infer import shapes as sh
from graphlsp.infer.context import InferenceContext
from graphlsp.infer.dims import Dim
from graphlsp.ops import registry
from graphlsp.ops.registry import ShapeFn, shape_fn

_OTHER_FAMILIES = registry.FAMILIES[: registry.FAMILIES.index("misc")]  # the families listed before this one


def fallback_fn(*ops: str, since: int = 1) -> Callable[[ShapeFn], ShapeFn]:
    """Register a shape function for those of `ops` that no other family registers (imported first here, so
    the answer does not depend on import order)."""
    registry.import_families(_OTHER_FAMILIES)

    def register(fn: ShapeFn) -> ShapeFn:
        free = [op for op in ops if ("", op) not in registry._REGISTRY]
        if free:
            shape_fn(*free, since=since)(fn)
        return fn

    return register


@shape_fn("StringConcat")
def string_concat(ctx: InferenceContext) -> None:
    ctx.set_output(0, ctx.broadcast([0, 1]), TensorProto.STRING)


@shape_fn("RegexFullMatch")
def regex_full_match(ctx: InferenceContext) -> None:
    ctx.set_output(0, ctx.input_shape(0), TensorProto.BOOL)


@shape_fn("StringSplit")
def string_split(ctx: InferenceContext) -> None:
    """Y gets one more dim, the most substrings of any element; Z counts them per element."""
    shape = ctx.input_shape(0)
    ctx.set_output(0, None if shape is None else (*shape, None), TensorProto.STRING)
    ctx.set_output(1, shape, TensorProto.INT64)


@shape_fn("StringNormalizer")
def string_normalizer(ctx: InferenceContext) -> None:
    """[C] or [1, C]; removing stopwords makes C unknown."""
    shape = ctx.input_shape(0)
    if shape is not None:
        if len(shape) not in (1, 2) or (len(shape) == 2 and isinstance(shape[0], int) and shape[0] != 1):
            raise ctx.fail("GL317", f"input must be [C] or [1, C], got rank {len(shape)} {list(shape)}", input=0)
        if ctx.attr("stopwords"):
            shape = (*shape[:-1], None)
    ctx.set_output(0, shape, TensorProto.STRING)


@shape_fn("ImageDecoder")
def image_decoder(ctx: InferenceContext) -> None:
    """[H, W, C]: C is 1 for Grayscale, 3 for RGB and BGR."""
    rank = ctx.input_rank(0)
    if rank is not None and rank != 1:
        raise ctx.fail("GL317", f"encoded_stream must be 1-D, got rank {rank}", input=0)
    fmt = ctx.attr("pixel_format", "RGB")
    if isinstance(fmt, bytes):
        fmt = fmt.decode()
    channels = {"Grayscale": 1, "RGB": 3, "BGR": 3}.get(fmt)
    ctx.set_output(0, (None, None, channels), TensorProto.UINT8)


# ---- ops no other family covers (fallbacks: a family that registers one wins)
@fallback_fn("TensorScatter")
def tensor_scatter(ctx: InferenceContext) -> None:
    """past_cache's shape; update matches it outside `axis` (not the batch axis 0), write_indices is [batch]."""
    cache, update = ctx.input_shape(0), ctx.input_shape(1)
    if cache is None:
        ctx.set_output(0, None)
        return
    out = list(cache)
    if update is not None:
        if len(update) != len(cache):
            raise ctx.fail("GL317", f"update has rank {len(update)}, past_cache rank {len(cache)}", input=1)
        axis = int(ctx.attr("axis", -2))
        norm = axis + len(cache) if axis < 0 else axis
        if not 0 < norm < len(cache):
            raise ctx.fail("GL309", f"axis {axis} is out of range for rank {len(cache)} (the batch axis 0 is "
                           "not allowed)", attr="axis")  # fmt: skip
        for i, x in enumerate(update):
            if i != norm:
                out[i] = _merge(ctx, out[i], x, f"update dim {i}", 1)
    indices = ctx.input_shape(2)
    if indices is not None and len(indices) == 1 and out:
        out[0] = _merge(ctx, out[0], indices[0], "write_indices length", 2)
    ctx.set_output(0, tuple(out))


def _merge(ctx: InferenceContext, a: Dim, b: Dim, what: str, i: int) -> Dim:
    try:
        return sh.merge_dim(a, b, ctx.refiner.unifier)
    except sh.MergeError:
        raise ctx.fail("GL317", f"{what} is {d.to_str(b)}, but past_cache has {d.to_str(a)}", input=i) from None
