"""Generators: the random ops (RandomNormal/Uniform and their *Like forms, Multinomial, Bernoulli), the windows
(Blackman/Hann/Hamming) and MelWeightMatrix. Sizes given as inputs are read as shape values, so a window of
length `Gather(Shape(x), 0)` is `[N]`. (Constant, ConstantOfShape, EyeLike and Range live in tensor.py.)
"""

from __future__ import annotations

from onnx import TensorProto

from graphlsp.infer import dims as d
from graphlsp.infer.context import InferenceContext
from graphlsp.infer.dims import Dim
from graphlsp.ops.registry import shape_fn


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
