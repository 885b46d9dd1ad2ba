"""Contractions: MatMul and its quantized forms, Gemm, Einsum, and the recurrent ops' gate products.

A product of an [.., M, K] and a [.., K, N] matrix is 2*M*N*K FLOPs per batch element and M*N*K MACs, as
torch.utils.flop_counter counts mm and bmm: the output's elements times K, times 2. Bias and scale terms
(Gemm's C, alpha, beta; the zero points and scales of the quantized forms) are not counted, as torch counts addmm
as mm.
"""

from __future__ import annotations

from graphlsp.cost.formula import numel
from graphlsp.cost.registry import Call, Work, cost_fn
from graphlsp.infer import dims as d
from graphlsp.infer.dims import Dim


def contraction(out: Dim, k: Dim, note: str = "") -> Work:
    """An output of `out` elements, each a sum of `k` products."""
    macs = d.mul(out, k)
    return Work(d.mul(macs, 2), macs, note)


def _inner(shape: tuple[Dim, ...] | None) -> Dim:
    return None if not shape else shape[-1]


@cost_fn("MatMul", "MatMulInteger")
@cost_fn("MatMulInteger", "MatMulIntegerToFloat", "DynamicQuantizeMatMul", "FusedMatMul", domain="com.microsoft")
def matmul(c: Call) -> Work:
    a = c.shape(0)
    k = _inner(a)
    if c.op == "FusedMatMul" and a is not None and len(a) >= 2 and c.attr("transA", 0):
        k = a[-2]
    return contraction(numel(c.out()), k)


@cost_fn("QLinearMatMul")
@cost_fn("QLinearMatMul", domain="com.microsoft")
def qlinear_matmul(c: Call) -> Work:
    return contraction(numel(c.out()), _inner(c.shape(0)))


@cost_fn("MatMulNBits", domain="com.microsoft")
def matmul_nbits(c: Call) -> Work:
    """A [.., K] by the packed [N, K] weight: K and N are attributes."""
    return contraction(numel(c.out()), c.attr("K"), f"{c.attr('bits', 4)}-bit weights")


@cost_fn("Gemm")
@cost_fn("QGemm", "FusedGemm", domain="com.microsoft")
def gemm(c: Call) -> Work:
    a = c.shape(0)
    if a is None or len(a) != 2:
        return Work(None)
    k = a[0] if c.attr("transA", 0) else a[1]
    return contraction(numel(c.out()), k, "C, alpha and beta not counted (torch counts addmm as mm)")


@cost_fn("Einsum")
def einsum(c: Call) -> Work:
    """From the equation: every index (the ellipsis's dims taken from the output) multiplied together, times 2
    per product of two operands when an index is summed (a contraction: multiply-adds), else once per product."""
    eq = str(c.attr("equation", "")).replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    sizes: dict[str, Dim] = {}
    for i, term in enumerate(terms):
        shape = c.shape(i)
        letters = term.replace("...", "")
        if shape is None:
            return Work(None)
        if "..." in term:
            head, _, tail = term.partition("...")
            ell = len(shape) - len(letters)
            dims = [*shape[: len(head)], *shape[len(head) + ell :]]
        else:
            dims = list(shape)
        if len(dims) != len(letters):
            return Work(None)
        for ch, dim in zip(letters, dims, strict=True):
            if ch not in sizes or sizes[ch] == 1:
                sizes[ch] = dim
    if not arrow:  # implicit output: the letters that occur once, in order
        rhs = ("..." if "..." in lhs else "") + "".join(sorted(ch for ch in sizes if lhs.count(ch) == 1))
    space = d.product(sizes.values())
    if "..." in lhs:
        out = c.out()
        head, _, tail = rhs.partition("...")
        if "..." not in rhs or out is None:
            return Work(None)
        space = d.mul(space, d.product(out[len(head) : len(out) - len(tail)]))
    summed = any(ch not in rhs for ch in sizes)
    operands = len(terms)
    if operands == 1:
        return Work(space if summed else 0, 0, "a sum over indices" if summed else "a permutation")
    products = d.mul(space, operands - 1)
    if summed:
        return Work(d.mul(products, 2), products)
    return Work(products, 0)


def _recurrent(c: Call, gates: int) -> Work:
    """The gate products of RNN (1 gate), GRU (3) and LSTM (4): per step, direction and batch row, the input
    [I] and the hidden state [H] times [gates*H] weights; the element-wise gate arithmetic is not counted."""
    x, w = c.shape(0), c.shape(1)
    if x is None or w is None or len(x) != 3 or len(w) != 3:
        return Work(None)
    seq, batch = (x[1], x[0]) if c.attr("layout", 0) else (x[0], x[1])
    dirs, gh, inp = w
    hidden = c.attr("hidden_size")
    if hidden is None:
        return Work(None)
    per_row = d.mul(gh, d.add(inp, hidden))
    macs = d.product([seq, batch, dirs, per_row])
    return Work(d.mul(macs, 2), macs, f"the {gates}-gate products (input and hidden state); gate arithmetic not "
                "counted")


@cost_fn("LSTM")
def lstm(c: Call) -> Work:
    return _recurrent(c, 4)


@cost_fn("GRU")
def gru(c: Call) -> Work:
    return _recurrent(c, 3)


@cost_fn("RNN")
def rnn(c: Call) -> Work:
    return _recurrent(c, 1)


@cost_fn("LinearClassifier", "LinearRegressor", domain="ai.onnx.ml")
def linear_ml(c: Call) -> Work:
    """X [N, F] times the coefficients [classes or targets, F]: the scores are a contraction."""
    x = c.shape(0)
    if x is None or len(x) != 2:
        return Work(None)
    coefficients = c.attr("coefficients")
    if coefficients is None or not x[1] or not isinstance(x[1], int):
        return Work(None)
    outputs = len(coefficients) // x[1]
    return contraction(d.mul(x[0], outputs), x[1])
