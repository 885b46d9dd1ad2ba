"""Convolutions and pooling.

Conv is torch.utils.flop_counter's `conv_flop_count`: 2 * batch * prod(W) * prod(output spatial dims), W the
[C_out, C_in/group, k...] weight (each output point is a dot product of C_in/group * prod(k) pairs; the bias is not
counted). ConvTranspose uses the input's spatial dims instead, with W [C_in, C_out/group, k...], as torch counts
a transposed convolution. Pooling is one operation per window element per output element (max or add); global
pooling one per input element.
"""

from __future__ import annotations

from graphlsp.cost.formula import numel
from graphlsp.cost.registry import Call, Work, cost_fn
from graphlsp.infer import dims as d


def _conv(c: Call, x: int, w: int, transposed: bool = False) -> Work:
    xs, ws, ys = c.shape(x), c.shape(w), c.out()
    if xs is None or ws is None or len(xs) < 2:
        return Work(None)
    spatial = xs[2:] if transposed else (ys[2:] if ys is not None else None)
    if spatial is None:
        return Work(None)
    macs = d.product([xs[0], *ws, *spatial])
    return Work(d.mul(macs, 2), macs, "bias not counted")


@cost_fn("Conv", "ConvInteger")
@cost_fn("FusedConv", "NhwcConv", domain="com.microsoft")
def conv(c: Call) -> Work:
    if c.op == "NhwcConv":  # [N, H, W, C]: the spatial dims are the middle ones
        xs, ws, ys = c.shape(0), c.shape(1), c.out()
        if xs is None or ws is None or ys is None:
            return Work(None)
        macs = d.product([xs[0], *ws, *ys[1:-1]])
        return Work(d.mul(macs, 2), macs, "bias not counted")
    return _conv(c, 0, 1)


@cost_fn("QLinearConv")
@cost_fn("QLinearConv", domain="com.microsoft")
def qlinear_conv(c: Call) -> Work:
    return _conv(c, 0, 3)


@cost_fn("ConvTranspose")
def conv_transpose(c: Call) -> Work:
    return _conv(c, 0, 1, transposed=True)


@cost_fn("MaxPool", "AveragePool", "LpPool")
@cost_fn("QLinearAveragePool", domain="com.microsoft")
def pool(c: Call) -> Work:
    kernel = c.attr("kernel_shape")
    if kernel is None:
        return Work(None)
    return Work(d.mul(numel(c.out()), d.product(kernel)), 0, "one operation per window element")


@cost_fn("GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool")
@cost_fn("QLinearGlobalAveragePool", domain="com.microsoft")
def global_pool(c: Call) -> Work:
    return Work(numel(c.shape(0)), 0, "one operation per input element")
