"""Python shape functions behind op-library declarations whose shapes the DSL cannot say (`shape python` in
`graphlsp/oplib/libraries/onnxruntime.onnxop`): onnxruntime's FusedMatMul and TransposeMatMul (transposes that
move batch dims), QLinearGlobalAveragePool and the NCHWc reorders (channels first or last by attribute), NCHWc
Conv (blocked channels). Each rearranges the inputs and runs onnx's own rule where one fits (`onnx_rule`), so
checks and messages are MatMul's, Conv's, GlobalAveragePool's.

A project's own ops get Python shape functions the same way: `@shape_fn("MyOp", domain="com.acme")` in a module
imported before checking; the declaration in the project's .onnxop file says `shape python`.
"""

from __future__ import annotations

from graphlsp.infer.context import InferenceContext
from graphlsp.infer.dims import Dim
from graphlsp.infer.types import TensorType
from graphlsp.ops.library import onnx_rule
from graphlsp.ops.registry import shape_fn

MS = "com.microsoft"
NCHWC = "com.microsoft.nchwc"


def _flag(ctx: InferenceContext, name: str) -> bool:
    v = ctx.attr(name, 0)
    return isinstance(v, int) and v != 0


def _fused_operand(shape: tuple[Dim, ...], trans: bool, trans_batch: bool) -> tuple[Dim, ...]:
    """onnxruntime's FusedMatMulShapeInference: `trans` swaps the last two dims; `trans_batch` moves the first dim
    into the row position (the others of the prefix become the batch dims). A vector is left as it is."""
    rank = len(shape)
    if rank < 2:
        return shape
    start, end = (1, rank - 1) if trans_batch else (0, rank - 2)
    row = rank - 1 if trans else (0 if trans_batch else rank - 2)
    col = (0 if trans_batch else rank - 2) if trans else rank - 1
    return (*shape[start:end], shape[row], shape[col])


@shape_fn("FusedMatMul", "TransposeMatMul", domain=MS)
def fused_matmul(ctx: InferenceContext) -> None:
    a, b = ctx.input_shape(0), ctx.input_shape(1)
    if a is None or b is None:
        return
    types = {
        0: TensorType(ctx.input_elem(0), _fused_operand(a, _flag(ctx, "transA"), _flag(ctx, "transBatchA"))),
        1: TensorType(ctx.input_elem(1), _fused_operand(b, _flag(ctx, "transB"), _flag(ctx, "transBatchB"))),
    }
    onnx_rule(ctx, "MatMul", [0, 1], [0], types=types)


@shape_fn("QLinearGlobalAveragePool", domain=MS)
def qlinear_global_average_pool(ctx: InferenceContext) -> None:
    if not _flag(ctx, "channels_last"):
        onnx_rule(ctx, "GlobalAveragePool", [0], [0])
        return
    x = ctx.input_shape(0)
    if x is None:
        return
    if len(x) < 3:
        raise ctx.fail("GL317", f"X must have rank 3 or more (N, spatial..., C), got rank {len(x)}: "
                       f"{ctx.describe_input(0)}", input=0)  # fmt: skip
    ctx.set_output(0, (x[0], *([1] * (len(x) - 2)), x[-1]))


@shape_fn("ReorderInput", domain=NCHWC)
def reorder_input(ctx: InferenceContext) -> None:
    """NCHW (or NHWC) to NCHWc: the channels are rounded up to the CPU's block size (8 or 16), so they are left
    unknown; the spatial dims keep their order."""
    x = ctx.input_shape(0)
    if x is None:
        return
    if len(x) < 2:
        raise ctx.fail("GL317", f"X must have rank 2 or more, got rank {len(x)}", input=0)
    spatial = x[1:-1] if _flag(ctx, "channels_last") else x[2:]
    ctx.set_output(0, (x[0], None, *spatial))


@shape_fn("ReorderOutput", domain=NCHWC)
def reorder_output(ctx: InferenceContext) -> None:
    x = ctx.input_shape(0)
    channels = ctx.attr("channels", 0)
    if x is None:
        return
    if len(x) < 2:
        raise ctx.fail("GL317", f"X must have rank 2 or more, got rank {len(x)}", input=0)
    if not isinstance(channels, int) or channels <= 0:
        raise ctx.fail("GL317", f"attribute 'channels' must be a positive count, got {channels}", attr="channels")
    spatial = x[2:]
    shape = (x[0], *spatial, channels) if _flag(ctx, "channels_last") else (x[0], channels, *spatial)
    ctx.set_output(0, shape)


@shape_fn("Conv", domain=NCHWC)
def nchwc_conv(ctx: InferenceContext) -> None:
    """Conv on blocked channels: onnx's rule gives the output (channels from W, spatial dims from the window).
    Input channels that another NCHWc op made are block-padded, so they are not checked against W; the first
    Conv reads the model's NCHW input, whose channels onnxruntime checks ("Input channels C is not equal to
    kernel channels * group")."""
    x = ctx.node.inputs[0] if ctx.node.inputs else None
    producer = x.producer if x is not None else None
    blocked = x is None or (producer is not None and producer.domain == NCHWC)
    onnx_rule(ctx, "Conv", [0, 1, 2], [0], drop=("GL305",) if blocked else ())


def _channels_last(ctx: InferenceContext, op: str, args: list[int | None]) -> None:
    """An NHWC (`channels_last = 1`) variant of an onnx op: input 0 is read as [N, C, spatial...], the op's rule
    runs, and output 0 goes back to [N, spatial..., C]. The weights keep onnx's layout (M, C/group, kernel...)."""
    if not _flag(ctx, "channels_last"):
        onnx_rule(ctx, op, args, [0])
        return
    x = ctx.input_shape(0)
    if x is None:
        return
    if len(x) < 3:
        raise ctx.fail("GL317", f"with channels_last, X must have rank 3 or more (N, spatial..., C), got rank "
                       f"{len(x)}: {ctx.describe_input(0)}", input=0)  # fmt: skip
    nchw = (x[0], x[-1], *x[1:-1])
    done = onnx_rule(ctx, op, args, [0], types={0: TensorType(ctx.input_elem(0), nchw)}, drop=("GL305",))
    out = ctx.outputs[0]
    shape = getattr(out.type, "shape", None) if out is not None and 0 in done else None
    if shape is not None and len(shape) >= 3:
        ctx.set_output(0, (shape[0], *shape[2:], shape[1]))


@shape_fn("QLinearAveragePool", domain=MS)
def qlinear_average_pool(ctx: InferenceContext) -> None:
    _channels_last(ctx, "AveragePool", [0])


@shape_fn("QLinearConv", domain=MS)
def qlinear_conv(ctx: InferenceContext) -> None:
    _channels_last(ctx, "Conv", [0, 3, 8])
