"""Element-wise ops: unary (same shape), binary and variadic with multidirectional broadcasting, comparisons and
logic (bool outputs), Where, Clip. Arithmetic on shape values (Add/Sub/Mul/Div/Mod/Min/Max/Neg/Abs, Equal, Where)
is carried through, so `Shape -> Gather -> Mul -> Concat -> Reshape` stays exact.
"""

from __future__ import annotations

from collections.abc import Callable

from onnx import TensorProto

from graphlsp.infer import dims as d
from graphlsp.infer.context import InferenceContext
from graphlsp.infer.dims import Dim
from graphlsp.ops.registry import shape_fn

UNARY = [
    "Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Ceil", "Cos", "Cosh", "Elu", "Erf", "Exp", "Floor",
    "HardSigmoid", "HardSwish", "Identity", "IsInf", "IsNaN", "LeakyRelu", "Log", "Mish", "Neg", "Not", "Reciprocal",
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
    elif ctx.op == "Neg":
        _sv_unary(ctx, d.neg)
    elif ctx.op == "Abs":
        _sv_unary(ctx, lambda x: x if not isinstance(x, int) else abs(x))


def _broadcast_sv(a: tuple[Dim, ...], b: tuple[Dim, ...]) -> list[tuple[Dim, Dim]] | None:
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
    pairs = _broadcast_sv(a, b)
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


@shape_fn(*COMPARE)
def compare(ctx: InferenceContext) -> None:
    ctx.set_output(0, ctx.broadcast([0, 1]), TensorProto.BOOL)
    if ctx.op == "Equal":
        a, b = ctx.input_shape_value(0), ctx.input_shape_value(1)
        if a is not None and b is not None:
            pairs = _broadcast_sv(a, b)
            if pairs is not None:
                out = [d.equal(x, y) for x, y in pairs]
                if all(v is not None for v in out):
                    ctx.set_output_value(0, tuple(int(bool(v)) for v in out))


@shape_fn(*VARIADIC)
def variadic(ctx: InferenceContext) -> None:
    ctx.set_output(0, ctx.broadcast())
    if ctx.op in ("Max", "Min") and ctx.n_inputs == 2:
        _sv_binary(ctx, _SV_OPS[ctx.op])


@shape_fn("Where")
def where(ctx: InferenceContext) -> None:
    ctx.set_output(0, ctx.broadcast([0, 1, 2]), ctx.input_elem(1))
    cond, a, b = (ctx.input_shape_value(i) for i in range(3))
    if cond is not None and a is not None and b is not None and ctx.input_elem(1) in (TensorProto.INT64,):
        n = max(len(cond), len(a), len(b))
        if all(len(x) in (1, n) for x in (cond, a, b)):
            pick = [
                (a[i if len(a) > 1 else 0] if cond[i if len(cond) > 1 else 0] else b[i if len(b) > 1 else 0])
                for i in range(n)
            ]
            ctx.set_output_value(0, tuple(pick))


@shape_fn("Clip")
def clip(ctx: InferenceContext) -> None:
    ctx.copy_input(0)
