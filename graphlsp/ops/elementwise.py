"""Element-wise ops: unary (same shape), binary and variadic with multidirectional broadcasting, comparisons and
logic (bool outputs), Where, Clip. Arithmetic on shape values (Add/Sub/Mul/Div/Mod/Min/Max/Neg/Abs, Equal, Where)
is carried through, so `Shape -> Gather -> Mul -> Concat -> Reshape` stays exact.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from graphlsp.graph.enums import TensorProto
from graphlsp.infer import dims as d
from graphlsp.infer.context import InferenceContext
from graphlsp.infer.dims import Dim
from graphlsp.infer.types import TensorType
from graphlsp.ops.operands import INT_ELEMS, value_range
from graphlsp.ops.registry import shape_fn

UNARY = [
    "Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Ceil", "Cos", "Cosh", "Elu", "Erf", "Exp", "Floor",
    "HardSigmoid", "HardSwish", "Identity", "IsInf", "IsNaN", "LeakyRelu", "Log", "Mish", "Neg", "Reciprocal",
    "Relu", "Round", "Selu", "Sigmoid", "Sign", "Sin", "Sinh", "Softplus", "Softsign", "Sqrt", "Tan", "Tanh",
    "ThresholdedRelu", "Celu", "Gelu", "BitwiseNot", "Shrink", "Swish",
]  # fmt: skip
BINARY = ["Add", "Sub", "Mul", "Div", "Pow", "Mod", "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "PRelu"]
COMPARE = ["Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual", "And", "Or", "Xor"]
VARIADIC = ["Sum", "Max", "Min", "Mean"]


def _sv_unary(ctx: InferenceContext, f: Callable[[Dim], Dim]) -> None:
    sv = ctx.input_shape_value(0)
    if sv is not None and ctx.outputs[0] is not None:
        ctx.set_output_value(0, tuple(f(x) for x in sv))


@shape_fn(*UNARY)
def unary(ctx: InferenceContext) -> None:
    ctx.copy_input(0)
    if ctx.op in ("IsInf", "IsNaN"):
        ctx.set_output(0, ctx.input_shape(0), TensorProto.BOOL)
    if ctx.op == "Identity":
        x = ctx.inputs[0]
        if x is not None:
            ctx.set_output_type(0, x.type)
            ctx.set_output_value(0, x.sv, x.const)
            if ctx.outputs[0] is not None:
                ctx.outputs[0].items = x.items
                ctx.outputs[0].bounds = x.bounds
    elif ctx.op == "Neg":
        _sv_unary(ctx, d.neg)
    elif ctx.op == "Abs":
        _sv_unary(ctx, lambda x: d.neg(x) if isinstance(x, int) and x < 0 else x)  # |INT64_MIN| is past int64


def _broadcast_sv(
    ctx: InferenceContext, a: tuple[Dim, ...], b: tuple[Dim, ...], idx: tuple[int, int] = (0, 1)
) -> list[tuple[Dim, Dim]] | None:
    """The element pairs of a broadcast of two small inputs, flattened: for inputs of the same shape, with a
    one-element input, or both of rank <= 1 ([2, 1] with [1, 2] has 4 pairs, not 2)."""
    sa, sb = ctx.input_shape(idx[0]), ctx.input_shape(idx[1])
    if sa is None or sb is None:
        return None
    if not (len(a) == 1 or len(b) == 1 or sa == sb or (len(sa) <= 1 and len(sb) <= 1)):
        return None
    if len(a) == len(b):
        return list(zip(a, b, strict=True))
    if len(a) == 1:
        return [(a[0], y) for y in b]
    if len(b) == 1:
        return [(x, b[0]) for x in a]
    return None


def _int_div(a: Dim, b: Dim) -> Dim:
    if isinstance(a, int) and isinstance(b, int) and b != 0:
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b > 0) else -q  # ONNX integer Div truncates toward zero
    return d.floordiv(a, b)  # dims are >= 0, where truncation and floor agree


_SV_OPS: dict[str, Callable[[Dim, Dim], Dim]] = {
    "Add": d.add, "Sub": d.sub, "Mul": d.mul, "Div": _int_div, "Mod": d.mod, "Min": d.minimum, "Max": d.maximum,
}  # fmt: skip


def _sv_binary(ctx: InferenceContext, op: Callable[[Dim, Dim], Dim]) -> None:
    elem = ctx.input_elem(0)
    if elem not in (TensorProto.INT64, TensorProto.INT32):
        return
    a, b = ctx.input_shape_value(0), ctx.input_shape_value(1)
    if a is None or b is None:
        return
    pairs = _broadcast_sv(ctx, a, b)
    if pairs is not None and len(pairs) <= 64:
        ctx.set_output_value(0, tuple(op(x, y) for x, y in pairs))


@shape_fn(*BINARY)
def binary(ctx: InferenceContext) -> None:
    if ctx.op == "PRelu":  # slope broadcasts unidirectionally to X
        ctx.copy_input(0)
        return
    ctx.set_output(0, ctx.broadcast([0, 1]))
    op = _SV_OPS.get(ctx.op)
    if op is not None:
        _sv_binary(ctx, op)
    if ctx.op in ("Add", "Sub", "Mul"):
        _range_binary(ctx)


def _range_binary(ctx: InferenceContext) -> None:
    """Bounds of index arithmetic (bart's `positions + 2`, roberta's `cumsum(mask) * mask + 1`): where one side
    has bounds and the other is a constant, or for a product of two ranges that cannot be negative, the bounds the
    result reaches."""
    out = ctx.outputs[0] if ctx.outputs else None
    if out is None or ctx.input_elem(0) not in INT_ELEMS:
        return
    xs, ys = (ctx.inputs[i] if i < len(ctx.inputs) else None for i in (0, 1))
    if not ((xs is not None and xs.bounds is not None) or (ys is not None and ys.bounds is not None)):
        return
    a, b = value_range(ctx, 0), value_range(ctx, 1)
    if a is None or b is None:
        return
    (alo, ahi), (blo, bhi) = a, b
    exact = a[0] == a[1] or b[0] == b[1]  # one side a single value: the result's ends are reached
    if ctx.op == "Add" and exact:
        out.bounds = (d.add(alo, blo), d.add(ahi, bhi))
    elif ctx.op == "Sub" and exact:
        out.bounds = (d.sub(alo, bhi), d.sub(ahi, blo))
    elif ctx.op == "Mul" and all(_nonnegative(v) for v in (alo, blo)):
        out.bounds = (d.mul(alo, blo), d.mul(ahi, bhi))
    if out.bounds is not None and None in out.bounds:
        out.bounds = None


def _nonnegative(x: Dim) -> bool:
    low = d.bounds(x)[0] if x is not None else None
    return low is not None and low >= 0


def _values(ctx: InferenceContext, i: int) -> tuple[Dim, ...] | None:
    """Input i's elements as dims: a shape value, or a small known int or bool tensor (bools as 0 and 1)."""
    sv = ctx.input_shape_value(i)
    if sv is not None:
        return sv
    x = ctx.inputs[i] if i < len(ctx.inputs) else None
    if x is not None and x.const is not None and x.const.dtype.kind == "b" and x.const.size <= 64:
        return tuple(int(v) for v in x.const.reshape(-1))
    return None


def _truth(v: Dim) -> bool | None:
    """An element of a bool shape value: 0 or 1 when known."""
    return bool(v) if isinstance(v, int) else None


def _compare(op: str, a: Dim, b: Dim) -> bool | None:
    """a <op> b when provable (every symbol a dim, so >= 0), else None."""
    if op in ("And", "Or", "Xor"):
        x, y = _truth(a), _truth(b)
        if op == "And":
            return False if x is False or y is False else (True if x and y else None)
        if op == "Or":
            return True if x or y else (False if x is False and y is False else None)
        return None if x is None or y is None else x != y
    if a is None or b is None:
        return None
    if op == "Equal" and d.equal(a, b):
        return True
    lo, hi = d.bounds(d.sub(a, b))  # of a - b
    if op == "Equal":
        return False if (lo is not None and lo > 0) or (hi is not None and hi < 0) else None
    if op in ("Less", "GreaterOrEqual"):
        known = True if hi is not None and hi < 0 else False if lo is not None and lo >= 0 else None
    else:
        known = True if hi is not None and hi <= 0 else False if lo is not None and lo > 0 else None
    if known is None:
        return None
    return known if op in ("Less", "LessOrEqual") else not known


def _set_bools(ctx: InferenceContext, out: list[bool | None]) -> None:
    """A bool output's elements (known ones as 0 / 1); its value too when every element is known."""
    sv = tuple(None if v is None else int(v) for v in out)
    const = None
    ty = ctx.outputs[0].type if ctx.outputs[0] is not None else None
    shape = getattr(ty, "shape", None)
    if all(v is not None for v in out) and shape is not None and all(isinstance(n, int) for n in shape):
        try:
            const = np.array(out, dtype=bool).reshape(shape)
        except ValueError:
            const = None
    ctx.set_output_value(0, sv, const)


@shape_fn(*COMPARE)
def compare(ctx: InferenceContext) -> None:
    ctx.set_output(0, ctx.broadcast([0, 1]), TensorProto.BOOL)
    a, b = _values(ctx, 0), _values(ctx, 1)
    if a is None or b is None or ctx.outputs[0] is None:
        return
    pairs = _broadcast_sv(ctx, a, b)
    if pairs is not None and len(pairs) <= 64:
        out = [_compare(ctx.op, x, y) for x, y in pairs]
        if any(v is not None for v in out):
            _set_bools(ctx, out)


@shape_fn("Not")
def not_(ctx: InferenceContext) -> None:
    ctx.copy_input(0)
    a = _values(ctx, 0)
    if a is not None and ctx.outputs[0] is not None:
        out = [None if (t := _truth(x)) is None else not t for x in a]
        if any(v is not None for v in out):
            _set_bools(ctx, out)


@shape_fn(*VARIADIC)
def variadic(ctx: InferenceContext) -> None:
    ctx.set_output(0, ctx.broadcast())
    if ctx.op in ("Max", "Min") and ctx.n_inputs == 2:
        _sv_binary(ctx, _SV_OPS[ctx.op])


@shape_fn("Where")
def where(ctx: InferenceContext) -> None:
    ctx.set_output(0, ctx.broadcast([0, 1, 2]), ctx.input_elem(1))
    cond, a, b = _values(ctx, 0), ctx.input_shape_value(1), ctx.input_shape_value(2)
    if cond is None or a is None or b is None or ctx.input_elem(1) not in (TensorProto.INT64, TensorProto.INT32):
        return
    n = max(len(cond), len(a), len(b))
    if n > 64 or not all(len(x) in (1, n) for x in (cond, a, b)):
        return
    out = ctx.outputs[0]
    shape = out.type.shape if out is not None and isinstance(out.type, TensorType) else None
    if shape is None or len(shape) > 1:
        return
    pick: list[Dim] = []
    for i in range(n):
        c, x, y = cond[i if len(cond) > 1 else 0], a[i if len(a) > 1 else 0], b[i if len(b) > 1 else 0]
        t = _truth(c)
        pick.append(x if t else y if t is False else (x if d.equal(x, y) else None))
    if any(v is not None for v in pick):
        ctx.set_output_value(0, tuple(pick))


@shape_fn("Clip")
def clip(ctx: InferenceContext) -> None:
    ctx.copy_input(0)
