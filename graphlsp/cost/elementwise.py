"""Element-wise ops and reductions: one FLOP per output element per operation, whatever its arithmetic (an add,
an exp, an erf and a comparison each count 1), as onnx-tool and fvcore count them; torch's counter does not count
them at all. A variadic op (Sum, Max, Min, Mean) counts one per output element per operand after the first (Mean
one more, the division). A reduction counts one per input element; a cumulative sum one per element.
onnxruntime's fused activations (Gelu, FastGelu, BiasGelu, QuickGelu) count 1 per output element too, their
bias add 1 more; RotaryEmbedding 3 (two products and a sum per rotated element).
"""

from __future__ import annotations

from graphlsp.cost.formula import numel
from graphlsp.cost.registry import Call, Work, cost_fn
from graphlsp.infer import dims as d

UNARY = (
    "Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Ceil", "Celu", "Cos", "Cosh", "Elu", "Erf", "Exp",
    "Floor", "Gelu", "HardSigmoid", "HardSwish", "IsInf", "IsNaN", "LeakyRelu", "Log", "Mish", "Neg", "Not",
    "PRelu", "Reciprocal", "Relu", "Round", "Selu", "Shrink", "Sigmoid", "Sign", "Sin", "Sinh", "Softplus",
    "Softsign", "Sqrt", "Tan", "Tanh", "ThresholdedRelu", "Clip", "BitwiseNot",
)  # fmt: skip
BINARY = (
    "Add", "Sub", "Mul", "Div", "Pow", "Mod", "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "And", "Or",
    "Xor", "Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual", "Where",
)  # fmt: skip
QUANTIZE = ("QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear")
REDUCE = (
    "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum",
    "ReduceLogSumExp", "ReduceSumSquare", "ArgMax", "ArgMin", "TopK",
)  # fmt: skip


@cost_fn(*UNARY, *BINARY, *QUANTIZE)
@cost_fn("Gelu", "FastGelu", "QuickGelu", "BiasGelu", "BiasAdd", "QuantizeLinear", "DequantizeLinear",
         "QLinearAdd", "QLinearMul", "QLinearSigmoid", "QLinearLeakyRelu", domain="com.microsoft")  # fmt: skip
def elementwise(c: Call) -> Work:
    k = 1
    if c.domain == "com.microsoft" and c.op in ("FastGelu", "Gelu", "BiasGelu", "QuickGelu") and c.has(1):
        k = 2
    return Work(d.mul(numel(c.out()), k), 0, "1 per output element" if k == 1 else f"{k} per output element")


@cost_fn("Sum", "Max", "Min", "Mean")
def variadic(c: Call) -> Work:
    k = max(sum(c.present) - 1, 0) + (c.op == "Mean")
    return Work(d.mul(numel(c.out()), k), 0, f"{k} per output element")


@cost_fn(*REDUCE)
def reduce(c: Call) -> Work:
    return Work(numel(c.shape(0)), 0, "1 per input element")


@cost_fn("Scaler", "Normalizer", "Binarizer", domain="ai.onnx.ml")
def ml_elementwise(c: Call) -> Work:
    return Work(numel(c.out()), 0, "1 per output element")


@cost_fn("CumSum", "CumProd")
def cumulative(c: Call) -> Work:
    return Work(numel(c.shape(0)), 0, "1 per element")


@cost_fn("RotaryEmbedding")
@cost_fn("RotaryEmbedding", domain="com.microsoft")
def rotary(c: Call) -> Work:
    return Work(d.mul(numel(c.out()), 3), 0, "3 per output element")
