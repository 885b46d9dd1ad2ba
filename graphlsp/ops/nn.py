"""Neural-network ops: convolutions, pooling, normalization, dropout, recurrent cells, attention, ROI ops and
grid sampling.

Sliding windows follow onnx's rules (explicit pads, or auto_pad SAME_UPPER/SAME_LOWER/VALID; strides,
dilations, ceil_mode) and work on symbolic dims too: a spatial dim H gives `floor((H + c)/s) + k` expressions,
which fold when windows are stacked. Problems reported: channels that disagree with the weight and group
(GL305), a kernel larger than the padded input (GL306), and other provable shape conflicts (GL317).
"""

from __future__ import annotations

import math

from graphlsp.graph.enums import TensorProto
from graphlsp.infer import dims as d
from graphlsp.infer.context import InferenceContext
from graphlsp.infer.dims import Dim
from graphlsp.infer.types import Shape
from graphlsp.ops.math import int_attr, int_list, ints_attr, maybe_int, merge_dim, need_rank, str_attr
from graphlsp.ops.registry import shape_fn

SAME = ("SAME_UPPER", "SAME_LOWER")


# ---- sliding windows
def _span(kernel: Dim, dilation: int) -> Dim:
    """The extent a dilated kernel covers: (k - 1) * dilation + 1."""
    return d.add(d.mul(d.sub(kernel, 1), dilation), 1)


def _ceil(a: Dim, b: int) -> Dim:
    """ceil(a / b) written as a floor, so it folds with the floors of stacked windows."""
    return d.floordiv(d.add(a, b - 1), b)


def _window_count(size: Dim, span: Dim, stride: int, pads: tuple[int, int], ceil: bool) -> Dim:
    """Output length of a sliding window with explicit pads. In ceil mode a last window that would start in the
    end padding is dropped: the count is min(ceil((size + pads - span) / stride) + 1, ceil((size + begin) /
    stride)) when the end padding is smaller than the kernel (onnx drops at most one window)."""
    begin, end = pads
    room = d.sub(d.add(size, begin + end), span)
    if not ceil:
        return d.add(d.floordiv(room, stride), 1)
    out = d.add(_ceil(room, stride), 1)
    if isinstance(out, int) and isinstance(size, int):
        return out - 1 if (out - 1) * stride >= size + begin else out
    if not isinstance(span, int):
        return None
    if end >= span:
        return d.sub(out, 1)
    if span >= end + stride:
        return out  # the last window always starts before the end padding
    return d.minimum(out, _ceil(d.add(size, begin), stride))


def _same_pads(size: int, span: int, stride: int, lower: bool) -> tuple[int, int]:
    """onnx's SAME padding for a known size."""
    residual = size % stride
    total = max(span - (residual or stride), 0)
    small, big = total // 2, total - total // 2
    return (big, small) if lower else (small, big)


def _same_count(size: Dim, span: Dim, stride: int, ceil: bool, lower: bool) -> Dim:
    if isinstance(size, int) and isinstance(span, int):
        return _window_count(size, span, stride, _same_pads(size, span, stride, lower), ceil)
    if not ceil:
        return _ceil(size, stride)  # SAME gives ceil(size / stride) whatever the kernel
    return size if stride == 1 else None


def _positive(ctx: InferenceContext, name: str, values: list[int]) -> list[int]:
    if any(v <= 0 for v in values):
        raise ctx.fail("GL317", f"attribute '{name}' must be positive, got {values}", attr=name)
    return values


def _pads(ctx: InferenceContext, n: int) -> list[tuple[int, int]] | None:
    """Explicit pads as (begin, end) per spatial axis, or None when auto_pad decides."""
    pads = ctx.attr("pads")
    if pads is None:
        return None if str_attr(ctx, "auto_pad", "NOTSET") in SAME else [(0, 0)] * n
    pads = int_list(ctx, "pads", 2 * n, 0)
    if any(p < 0 for p in pads):
        raise ctx.fail("GL317", f"attribute 'pads' must not be negative, got {pads}", attr="pads")
    return [(pads[i], pads[i + n]) for i in range(n)]


def window_dims(ctx: InferenceContext, x: tuple[Dim, ...], kernel: list[Dim], pool: bool = False) -> list[Dim]:
    """The spatial output dims of a convolution or pooling over x ([N, C, spatial...]); a pooling whose kernel
    is larger than its padded input gets onnxruntime's count (`_runtime_pool_count`)."""
    n = len(kernel)
    strides = _positive(ctx, "strides", int_list(ctx, "strides", n, 1))
    dilations = _positive(ctx, "dilations", int_list(ctx, "dilations", n, 1))
    pads = _pads(ctx, n)
    ceil = bool(int_attr(ctx, "ceil_mode", 0))
    lower = str_attr(ctx, "auto_pad", "NOTSET") == "SAME_LOWER"
    out: list[Dim] = []
    for i in range(n):
        size, span = x[2 + i], _span(kernel[i], dilations[i])
        if pads is None:
            out.append(_same_count(size, span, strides[i], ceil, lower))
            continue
        if pool and (got := _runtime_pool_count(ctx, i, size, span, strides[i], pads[i], ceil)) is not None:
            out.append(got)
            continue
        if pool and not isinstance(size, int) and not _fits_any(span, pads[i]):  # past the input onnxruntime's
            ctx.refiner.unifier.exact_within(span, d.add(size, pads[i][0] + pads[i][1]))  # count is not the spec's
        _check_fits(ctx, i, size, span, pads[i], assume=not pool)
        out.append(_window_count(size, span, strides[i], pads[i], ceil))
    return out


def _runtime_pool_count(ctx: InferenceContext, axis: int, size: Dim, span: Dim, stride: int,
                        pads: tuple[int, int], ceil: bool) -> int | None:  # fmt: skip
    """onnxruntime's pooling count where the kernel is larger than the padded input: it divides with C++'s
    truncation, so (2 - 3) / 3 + 1 = 1 window of kernel 3, stride 3 on a height of 2 (paddle2onnx's PP-OCR
    recognizer pools so), where the spec's floor gives 0; it fails only when the count is negative. A warning,
    with onnxruntime's count; None where the kernel fits (or the sizes are not known)."""
    if not isinstance(size, int) or not isinstance(span, int):
        return None
    begin, end = pads
    room = size + begin + end - span
    if room >= 0:
        return None
    if ceil:
        count = math.ceil(room / stride + 1)
        count = count - 1 if (count - 1) * stride >= size + begin else count
    else:
        count = -(-room // stride) + 1  # truncation toward zero
    if count < 0:
        return None  # onnxruntime fails too: the error of `_check_fits`
    ctx.error("GL306", f"kernel extent {span} is larger than the padded input ({size} + pads {begin}+{end}) along "
              f"spatial axis {axis}: onnxruntime truncates the division and gives {count} (the spec's floor "
              f"gives {room // stride + 1}); other runtimes may differ: {ctx.describe_input(0)}",
              severity="warning")  # fmt: skip
    return count


def _fits_any(span: Dim, pads: tuple[int, int]) -> bool:
    """Whether the kernel fits every input of at least 1 (3 with pads 1 and 1): no condition to note."""
    return isinstance(span, int) and span - pads[0] - pads[1] <= 1


def _check_fits(ctx: InferenceContext, axis: int, size: Dim, span: Dim, pads: tuple[int, int],
                assume: bool = True) -> None:  # fmt: skip
    """The kernel within the padded input: an error where it is not, a condition on the sizes where that depends
    on them (`assume`: not for pooling, which onnxruntime runs with a kernel past the input)."""
    padded = d.add(size, pads[0] + pads[1])
    room = d.sub(padded, span)
    if assume and room is not None and not isinstance(room, int) and not _fits_any(span, pads):
        ctx.refiner.unifier.require(span, padded, at_most=True)
    if isinstance(room, int) and room < 0:
        what = f"{d.to_str(size)} + pads {pads[0]}+{pads[1]}" if any(pads) else d.to_str(size)
        raise ctx.fail("GL306", f"kernel extent {d.to_str(span)} is larger than the padded input "
                       f"({what}) along spatial axis {axis}: {ctx.describe_input(0)}",
                       related=[ctx.related_input(0)])  # fmt: skip


def _kernel(ctx: InferenceContext, w: Shape, n: int) -> list[Dim]:
    """kernel_shape, or the weight's spatial dims."""
    if ctx.attr("kernel_shape") is not None:
        return list(_positive(ctx, "kernel_shape", int_list(ctx, "kernel_shape", n, 1)))
    if w is None:
        return [None] * n
    return list(w[2:])


# ---- convolutions
def _check_rank(ctx: InferenceContext, xi: int, wi: int) -> tuple[Shape, Shape]:
    x, w = ctx.input_shape(xi), ctx.input_shape(wi)
    if x is not None:
        need_rank(ctx, xi, len(x) >= 3, "at least 3-D [N, C, spatial...]")
    if w is not None:
        need_rank(ctx, wi, len(w) >= 3 and (x is None or len(w) == len(x)),
                  f"{len(x)}-D like the input" if x is not None else "at least 3-D")  # fmt: skip
    return x, w


def _group(ctx: InferenceContext) -> int:
    group = int_attr(ctx, "group", 1)
    if group <= 0:
        raise ctx.fail("GL305", f"group must be positive, got {group}", attr="group")
    return group


def _channel_error(ctx: InferenceContext, what: str, xi: int, wi: int) -> None:
    desc = f"{ctx.describe_input(xi)}, {ctx.describe_input(wi)}"
    raise ctx.fail("GL305", f"{what}: {desc}", related=[ctx.related_input(xi), ctx.related_input(wi)])


def _check_conv_channels(ctx: InferenceContext, xi: int, wi: int, bi: int | None, group: int) -> None:
    x, w = ctx.input_shape(xi), ctx.input_shape(wi)
    if x is None or w is None:
        return
    channels = ctx.dim_eq(x[1], d.mul(w[1], group))
    if channels is False:
        g = f" x group {group}" if group != 1 else ""
        _channel_error(ctx, f"input channels {d.to_str(x[1])} != weight channels {d.to_str(w[1])}{g}", xi, wi)
    if channels is None:
        ctx.refiner.unifier.require(x[1], d.mul(w[1], group))  # the weight fixes the input's channels
    if isinstance(w[0], int) and w[0] % group:
        _channel_error(ctx, f"output channels {w[0]} are not divisible by group {group}", xi, wi)
    if bi is None or not ctx.has_input(bi):
        return
    b = ctx.input_shape(bi)
    if b is not None:
        need_rank(ctx, bi, len(b) == 1, "1-D")
        if ctx.dim_eq(b[0], w[0]) is False:
            _channel_error(ctx, f"bias has {d.to_str(b[0])} values but the weight has {d.to_str(w[0])} "
                           "output channels", bi, wi)  # fmt: skip


def conv_shape(ctx: InferenceContext, xi: int, wi: int, bi: int | None) -> Shape:
    x, w = _check_rank(ctx, xi, wi)
    group = _group(ctx)
    _check_conv_channels(ctx, xi, wi, bi, group)
    if x is None:
        return None
    kernel = _kernel(ctx, w, len(x) - 2)
    return (x[0], _out_channels(ctx, w, bi), *window_dims(ctx, x, kernel))


def _out_channels(ctx: InferenceContext, w: Shape, bi: int | None) -> Dim:
    """The weight's first dim, or the bias length when the weight's shape is unknown."""
    if w is not None:
        return w[0]
    b = ctx.input_shape(bi) if bi is not None and ctx.has_input(bi) else None
    return b[0] if b is not None and len(b) == 1 else None


@shape_fn("Conv")
def conv(ctx: InferenceContext) -> None:
    ctx.set_output(0, conv_shape(ctx, 0, 1, 2))


@shape_fn("ConvInteger")
def conv_integer(ctx: InferenceContext) -> None:
    ctx.set_output(0, conv_shape(ctx, 0, 1, None))


@shape_fn("QLinearConv")
def qlinear_conv(ctx: InferenceContext) -> None:
    ctx.set_output(0, conv_shape(ctx, 0, 3, 8))


@shape_fn("DeformConv")
def deform_conv(ctx: InferenceContext) -> None:
    out = conv_shape(ctx, 0, 1, 3)
    offset = ctx.input_shape(2)
    if out is not None and offset is not None and len(offset) == len(out):
        spatial = ctx.merge_shapes(out[2:], offset[2:], "offset's spatial dims differ from the output's")
        assert spatial is not None
        out = (merge_dim(ctx, out[0], offset[0], "offset's batch differs from X's"), out[1], *spatial)
    ctx.set_output(0, out)


@shape_fn("ConvTranspose")
def conv_transpose(ctx: InferenceContext) -> None:
    x, w = _check_rank(ctx, 0, 1)
    group = _group(ctx)
    same = ctx.dim_eq(x[1], w[0]) if x is not None and w is not None else True
    if same is False:
        assert x is not None and w is not None
        _channel_error(ctx, f"input channels {d.to_str(x[1])} != the weight's first dim {d.to_str(w[0])}", 0, 1)
    if same is None:
        assert x is not None and w is not None
        ctx.refiner.unifier.require(x[1], w[0])
    if x is not None and isinstance(x[1], int) and x[1] % group:
        _channel_error(ctx, f"input channels {x[1]} are not divisible by group {group}", 0, 1)
    if x is None:
        return
    n = len(x) - 2
    channels = d.mul(w[1], group) if w is not None else None
    ctx.set_output(0, (x[0], channels, *_transpose_dims(ctx, x, _kernel(ctx, w, n))))


def _transpose_dims(ctx: InferenceContext, x: tuple[Dim, ...], kernel: list[Dim]) -> list[Dim]:
    n = len(kernel)
    shape = ints_attr(ctx, "output_shape")
    if shape is not None:
        if len(shape) not in (n, n + 2):
            raise ctx.fail("GL317", f"output_shape has {len(shape)} values, expected {n}", attr="output_shape")
        return list(shape[-n:])
    strides = _positive(ctx, "strides", int_list(ctx, "strides", n, 1))
    dilations = _positive(ctx, "dilations", int_list(ctx, "dilations", n, 1))
    extra = int_list(ctx, "output_padding", n, 0)
    pads = _pads(ctx, n)
    out: list[Dim] = []
    for i in range(n):
        size, span, s = x[2 + i], _span(kernel[i], dilations[i]), strides[i]
        if pads is not None:
            begin, end = pads[i]
        elif isinstance(span, int):
            total = max(span - s, 0)
            begin, end = total // 2, total - total // 2
        else:
            out.append(None)
            continue
        full = d.add(d.mul(s, d.sub(size, 1)), d.add(span, extra[i]))
        out.append(d.sub(full, begin + end))
    return out


# ---- pooling
@shape_fn("AveragePool", "MaxPool", "LpPool")
def pool(ctx: InferenceContext) -> None:
    x = ctx.input_shape(0)
    if x is not None:
        need_rank(ctx, 0, len(x) >= 3, "at least 3-D [N, C, spatial...]")
    if x is None or ctx.attr("kernel_shape") is None:
        return
    kernel = _kernel(ctx, None, len(x) - 2)
    out = (x[0], x[1], *window_dims(ctx, x, kernel, pool=True))
    ctx.set_output(0, out)
    if ctx.op == "MaxPool":
        ctx.set_output(1, out, TensorProto.INT64)


@shape_fn("GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool")
def global_pool(ctx: InferenceContext) -> None:
    x = ctx.input_shape(0)
    if x is not None and len(x) >= 2:
        ctx.set_output(0, (x[0], x[1], *[1] * (len(x) - 2)))


@shape_fn("MaxUnpool")
def max_unpool(ctx: InferenceContext) -> None:
    x, idx = ctx.input_shape(0), ctx.input_shape(1)
    if x is None:
        return
    need_rank(ctx, 0, len(x) >= 2, "at least 2-D [N, C, spatial...]")
    if ctx.has_input(2):
        sv = ctx.input_shape_value(2)
        ctx.set_output(0, sv if sv is not None and len(sv) == len(x) else (None,) * len(x))
        return
    n = len(x) - 2
    if ctx.attr("kernel_shape") is None:
        return
    kernel = int_list(ctx, "kernel_shape", n, 1)
    strides = int_list(ctx, "strides", n, 1)
    pads = _pads(ctx, n) or [(0, 0)] * n
    spatial = [d.sub(d.add(d.mul(strides[i], d.sub(x[2 + i], 1)), kernel[i]), sum(pads[i])) for i in range(n)]
    channels = x[1] if idx is None or len(idx) < 2 else merge_dim(ctx, x[1], idx[1], "X and I channels differ")
    ctx.set_output(0, (x[0], channels, *spatial))


def _rois(ctx: InferenceContext, width: int) -> tuple[Dim, Dim]:
    """(num_rois, channels) from X [N, C, H, W] and rois [num_rois, width]."""
    x, rois = ctx.input_shape(0), ctx.input_shape(1)
    if x is not None:
        need_rank(ctx, 0, len(x) == 4, "4-D [N, C, H, W]")
    if rois is not None:
        need_rank(ctx, 1, len(rois) == 2, f"2-D [num_rois, {width}]")
        merge_dim(ctx, rois[1], width, f"rois must have {width} columns")
    return (rois[0] if rois is not None else None), (x[1] if x is not None else None)


@shape_fn("MaxRoiPool")
def max_roi_pool(ctx: InferenceContext) -> None:
    num, channels = _rois(ctx, 5)
    pooled: list[Dim] = [None, None]
    if ctx.attr("pooled_shape") is not None:
        pooled = list(_positive(ctx, "pooled_shape", int_list(ctx, "pooled_shape", 2, 1)))
    ctx.set_output(0, (num, channels, *pooled))


@shape_fn("RoiAlign")
def roi_align(ctx: InferenceContext) -> None:
    num, channels = _rois(ctx, 4)
    index = ctx.input_shape(2)
    if index is not None:
        need_rank(ctx, 2, len(index) == 1, "1-D [num_rois]")
        num = merge_dim(ctx, num, index[0], "rois and batch_indices differ in length")
    ctx.set_output(0, (num, channels, int_attr(ctx, "output_height", 1), int_attr(ctx, "output_width", 1)))


# ---- normalization, dropout
@shape_fn("BatchNormalization")
def batch_norm(ctx: InferenceContext) -> None:
    x = ctx.input_shape(0)
    channels = _channels(ctx, range(1, 5))
    ctx.set_output(0, _with_channels(x, channels))
    extra = [i for i in range(1, ctx.n_outputs) if ctx.has_output(i)]
    if ctx.version >= 14 and extra and not int_attr(ctx, "training_mode", 0):
        raise ctx.fail("GL317", "extra outputs need training_mode=1")
    if ctx.version >= 9 or int_attr(ctx, "spatial", 1):
        for i in extra:
            ctx.set_output(i, (channels,))


def _channels(ctx: InferenceContext, params: range) -> Dim:
    """X's channel dim merged with the lengths of the per-channel 1-D parameters."""
    x = ctx.input_shape(0)
    channels: Dim = None
    if x is not None:
        channels = x[1] if len(x) > 1 else 1
    for i in params:
        s = ctx.input_shape(i) if ctx.has_input(i) else None
        if s is not None:
            need_rank(ctx, i, len(s) == 1, "1-D [C]")
            channels = merge_dim(ctx, channels, s[0], f"{ctx.input_name(i)} length differs from the channels")
    return channels


def _with_channels(x: Shape, channels: Dim) -> Shape:
    return x if x is None or len(x) < 2 else (x[0], channels, *x[2:])


@shape_fn("InstanceNormalization")
def instance_norm(ctx: InferenceContext) -> None:
    ctx.set_output(0, _with_channels(ctx.input_shape(0), _channels(ctx, range(1, 3))))


@shape_fn("LRN", "MeanVarianceNormalization", "GroupNormalization", "RotaryEmbedding")
def same_shape(ctx: InferenceContext) -> None:
    ctx.copy_input(0)


@shape_fn("LpNormalization", "RMSNormalization")
def axis_norm(ctx: InferenceContext) -> None:
    ctx.axis(int_attr(ctx, "axis", -1), ctx.input_rank(0))
    ctx.copy_input(0)


@shape_fn("LayerNormalization")
def layer_norm(ctx: InferenceContext) -> None:
    x = ctx.input_shape(0)
    ctx.copy_input(0)
    axis = ctx.axis(int_attr(ctx, "axis", -1), ctx.input_rank(0))
    stats = None if x is None or axis is None else (*x[:axis], *[1] * (len(x) - axis))
    stash = int_attr(ctx, "stash_type", TensorProto.FLOAT)
    for i in (1, 2):
        ctx.set_output(i, stats, stash)


@shape_fn("Dropout")
def dropout(ctx: InferenceContext) -> None:
    for i in (1, 2):
        s = ctx.input_shape(i) if ctx.has_input(i) else None
        if s is not None:
            need_rank(ctx, i, len(s) == 0, "a scalar")
    ctx.copy_input(0)
    ctx.set_output(1, ctx.input_shape(0))


# ---- recurrent
def _directions(ctx: InferenceContext) -> Dim:
    return {"forward": 1, "reverse": 1, "bidirectional": 2}.get(str_attr(ctx, "direction", "forward"))


def _hidden(ctx: InferenceContext) -> Dim:
    hidden = maybe_int(ctx, "hidden_size")
    if hidden is not None and hidden > 0:
        return hidden
    r = ctx.input_shape(2)
    return r[2] if r is not None and len(r) == 3 else None


@shape_fn("RNN", "GRU", "LSTM")
def recurrent(ctx: InferenceContext) -> None:
    x = ctx.input_shape(0)
    seq = batch = None
    layout = int_attr(ctx, "layout", 0)
    if x is not None:
        need_rank(ctx, 0, len(x) == 3, "3-D")
        seq, batch = (x[0], x[1]) if layout == 0 else (x[1], x[0])
    if ctx.version < 7 and not int_attr(ctx, "output_sequence", 0):
        return  # which outputs are present is ambiguous there (onnx leaves them unknown too)
    nd, hidden = _directions(ctx), _hidden(ctx)
    if layout == 0:
        ctx.set_output(0, (seq, nd, batch, hidden))
        state: Shape = (nd, batch, hidden)
    else:
        ctx.set_output(0, (batch, seq, nd, hidden))
        state = (batch, nd, hidden)
    for i in (1, 2):
        ctx.set_output(i, state)


# ---- attention
def _heads(ctx: InferenceContext, i: int, attr: str) -> tuple[Dim, Dim, Dim, Dim] | None:
    """(batch, heads, sequence, head size) of a 4-D input, or of a 3-D one split by the heads attribute."""
    s = ctx.input_shape(i)
    if s is None:
        return None
    need_rank(ctx, i, len(s) in (3, 4), "3-D or 4-D")
    if len(s) == 4:
        return s[0], s[1], s[2], s[3]
    heads = maybe_int(ctx, attr)
    if heads is None or heads <= 0:
        return s[0], None, s[1], None
    if isinstance(s[2], int) and s[2] % heads:
        raise ctx.fail("GL317", f"{ctx.describe_input(i)}: last dim is not divisible by {attr}={heads}", input=i)
    return s[0], heads, s[1], d.floordiv(s[2], heads)


def _pick(ctx: InferenceContext, *dims: Dim) -> Dim:
    out: Dim = None
    for x in dims:
        out = merge_dim(ctx, out, x, "batch sizes differ")
    return out


@shape_fn("Attention")
def attention(ctx: InferenceContext) -> None:
    q, k, v = (_heads(ctx, i, "q_num_heads" if i == 0 else "kv_num_heads") for i in range(3))
    past_k, past_v = (_heads(ctx, i, "kv_num_heads") if ctx.has_input(i) else None for i in (4, 5))
    n = _pick(ctx, *(s[0] for s in (q, k, v) if s is not None))
    hq, sq = (q[1], q[2]) if q is not None else (None, None)
    kv_len = k[2] if k is not None else (v[2] if v is not None else None)
    past = past_k[2] if past_k is not None else (past_v[2] if past_v is not None else None)
    total = d.add(past, kv_len) if ctx.has_input(4) else kv_len
    dv = v[3] if v is not None else None
    if q is not None and ctx.input_rank(0) == 3:
        ctx.set_output(0, (n, sq, d.mul(hq, dv)))
    elif q is not None:
        ctx.set_output(0, (n, hq, sq, dv))
    hkv = k[1] if k is not None else (v[1] if v is not None else None)
    dk = k[3] if k is not None else (q[3] if q is not None else None)
    ctx.set_output(1, (n, hkv, total, dk))
    ctx.set_output(2, (n, hkv, total, dv))
    ctx.set_output(3, (n, hq, sq, total))


@shape_fn("LinearAttention")
def linear_attention(ctx: InferenceContext) -> None:
    q, k, v = (ctx.input_shape(i) for i in range(3))
    for i, s in enumerate((q, k, v)):
        if s is not None:
            need_rank(ctx, i, len(s) == 3, "3-D [B, T, heads * head size]")
    hq, hkv = maybe_int(ctx, "q_num_heads"), maybe_int(ctx, "kv_num_heads")
    if hq is None or hkv is None or hq <= 0 or hkv <= 0:
        return
    n = _pick(ctx, *(s[0] for s in (q, k, v) if s is not None))
    t = q[1] if q is not None else None
    dk = d.floordiv(k[2], hkv) if k is not None else (d.floordiv(q[2], hq) if q is not None else None)
    dv = d.floordiv(v[2], hkv) if v is not None else None
    state: Shape = (n, hkv, dk, dv)
    past = ctx.input_shape(3) if ctx.has_input(3) else None
    if past is not None:
        state = ctx.merge_shapes(state, past, "past_state differs from (B, kv_num_heads, d_k, d_v)")
    assert state is not None
    ctx.set_output(0, (n, t, d.mul(hq, state[3])))
    ctx.set_output(1, state, ctx.input_elem(3) if ctx.has_input(3) else ctx.input_elem(0))


@shape_fn("CausalConvWithState")
def causal_conv_with_state(ctx: InferenceContext) -> None:
    x, w = ctx.input_shape(0), ctx.input_shape(1)
    ctx.copy_input(0)
    n, c = (x[0], x[1]) if x is not None and len(x) == 3 else (None, None)
    k = w[2] if w is not None and len(w) == 3 else None
    state: Shape = (n, c, d.sub(k, 1))
    past = ctx.input_shape(3) if ctx.has_input(3) else None
    if past is not None:
        state = ctx.merge_shapes(state, past, "past_state differs from (B, C, k - 1)")
    ctx.set_output(1, state, ctx.input_elem(0))


# ---- sampling grids, detection
@shape_fn("GridSample")
def grid_sample(ctx: InferenceContext) -> None:
    x, grid = ctx.input_shape(0), ctx.input_shape(1)
    if x is None or grid is None:
        return
    if len(x) != len(grid) or len(x) < 3:
        raise ctx.fail("GL317", f"X and grid need the same rank >= 3: {ctx.describe_input(0)}, "
                       f"{ctx.describe_input(1)}")  # fmt: skip
    merge_dim(ctx, grid[-1], len(x) - 2, "the grid's last dim must be the number of spatial dims")
    ctx.set_output(0, (merge_dim(ctx, x[0], grid[0], "batch sizes differ"), x[1], *grid[1:-1]))


@shape_fn("AffineGrid")
def affine_grid(ctx: InferenceContext) -> None:
    theta, size = ctx.input_shape(0), ctx.input_shape_value(1)
    if size is None:
        n = ctx.input_shape(1)
        if n is not None and len(n) == 1 and n[0] in (4, 5):
            spatial = n[0] - 2
            batch = theta[0] if theta is not None and len(theta) == 3 else None
            ctx.set_output(0, (batch, *[None] * spatial, spatial))
        return
    if len(size) not in (4, 5):
        raise ctx.fail("GL317", f"size must have 4 or 5 values, got {len(size)}", input=1)
    batch = size[0] if theta is None else merge_dim(ctx, theta[0], size[0], "theta's batch differs from size")
    ctx.set_output(0, (batch, *size[2:], len(size) - 2))


@shape_fn("NonMaxSuppression")
def non_max_suppression(ctx: InferenceContext) -> None:
    ctx.set_output(0, (None, 3), TensorProto.INT64)
