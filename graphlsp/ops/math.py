"""Math ops: matrix products (MatMul, Gemm and their integer/quantized forms), Einsum, Det, the Softmax family,
the losses, quantization, DFT/STFT, SwiGLU and TfIdfVectorizer.

Contraction dims that provably differ are GL302 with both operands described; dims that only might differ are
merged (recording symbol equalities in the unifier), never reported. A few helpers here (`merge_dim`,
`int_list`, `scalar_input`) are shared with `nn.py`.
"""

from __future__ import annotations

from graphlsp.graph.enums import TensorProto
from graphlsp.infer import dims as d
from graphlsp.infer import shapes as sh
from graphlsp.infer.context import InferenceContext, InferenceError
from graphlsp.infer.dims import Dim
from graphlsp.infer.types import Shape, elem_name, shape_str
from graphlsp.ops.registry import shape_fn


# ---- helpers shared with nn.py
def merge_dim(ctx: InferenceContext, a: Dim, b: Dim, what: str, code: str = "GL317") -> Dim:
    """Two views of one dim; a provable difference is reported (and stops the node)."""
    try:
        return sh.merge_dim(a, b, ctx.refiner.unifier)
    except sh.MergeError:
        raise ctx.fail(code, f"{what}: {d.to_str(a)} != {d.to_str(b)}") from None


def int_attr(ctx: InferenceContext, name: str, default: int) -> int:
    """An int attribute. A value of another type (GL314, reported by the refiner) stops the node quietly."""
    value = ctx.attr(name, default)
    if not isinstance(value, int):
        raise InferenceError(f"attribute '{name}' is not an int")
    return value


def maybe_int(ctx: InferenceContext, name: str) -> int | None:
    """An optional int attribute without a default: None when absent."""
    return int_attr(ctx, name, 0) if ctx.attr(name) is not None else None


def ints_attr(ctx: InferenceContext, name: str) -> list[int] | None:
    """An ints attribute, None when absent (another type stops the node quietly, like `int_attr`)."""
    value = ctx.attr(name)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, int) for v in value):
        raise InferenceError(f"attribute '{name}' is not a list of ints")
    return list(value)


def int_list(ctx: InferenceContext, name: str, n: int, default: int) -> list[int]:
    """An ints attribute of length n (or n copies of the default); a wrong length is GL317."""
    value = ints_attr(ctx, name)
    if value is None:
        return [default] * n
    if len(value) != n:
        raise ctx.fail("GL317", f"attribute '{name}' has {len(value)} values, expected {n}", attr=name)
    return value


def str_attr(ctx: InferenceContext, name: str, default: str) -> str:
    """A string attribute (schema defaults come as bytes)."""
    value = ctx.attr(name, default)
    return value.decode() if isinstance(value, bytes) else str(value)


def scalar_input(ctx: InferenceContext, i: int) -> Dim:
    """The single element of a known int input (a scalar or a 1-element tensor), else None."""
    if not ctx.has_input(i):
        return None
    sv = ctx.input_shape_value(i)
    return sv[0] if sv is not None and len(sv) == 1 else None


def need_rank(ctx: InferenceContext, i: int, ok: bool, want: str) -> None:
    """Report an input of the wrong rank (the rank is known here)."""
    if not ok:
        raise ctx.fail("GL317", f"{ctx.input_name(i)} must be {want}, got {shape_str(ctx.input_shape(i))}", input=i)


# ---- matrix products
def _contraction_error(ctx: InferenceContext, a: int, b: int) -> None:
    desc = f"{ctx.describe_input(a)}, {ctx.describe_input(b)}"
    related = [ctx.related_input(a), ctx.related_input(b)]
    raise ctx.fail("GL302", f"inner dimensions differ: {desc}", related=related)


def _contract(ctx: InferenceContext, ka: Dim, kb: Dim, a: int, b: int) -> None:
    """The contracted dims must be equal: report a provable difference, otherwise record the equality."""
    if ctx.dim_eq(ka, kb) is False:
        _contraction_error(ctx, a, b)
    try:
        sh.merge_dim(ka, kb, ctx.refiner.unifier)
    except sh.MergeError:
        _contraction_error(ctx, a, b)


def matmul_shape(ctx: InferenceContext, a: int, b: int) -> Shape:
    """numpy.matmul: 1-D operands are promoted (and the added dim dropped), batch dims broadcast."""
    sa, sb = ctx.input_shape(a), ctx.input_shape(b)
    if sa is None or sb is None:
        return None
    for i, s in ((a, sa), (b, sb)):
        need_rank(ctx, i, len(s) > 0, "at least 1-D")
    la = (1, *sa) if len(sa) == 1 else sa
    lb = (*sb, 1) if len(sb) == 1 else sb
    _contract(ctx, la[-1], lb[-2], a, b)
    try:
        batch = sh.broadcast([la[:-2], lb[:-2]])
    except sh.MergeError:
        desc = f"{ctx.describe_input(a)}, {ctx.describe_input(b)}"
        raise ctx.fail("GL301", f"batch dimensions do not broadcast: {desc}",
                       related=[ctx.related_input(a), ctx.related_input(b)]) from None  # fmt: skip
    assert batch is not None
    rows = (la[-2],) if len(sa) > 1 else ()
    cols = (lb[-1],) if len(sb) > 1 else ()
    return (*batch, *rows, *cols)


@shape_fn("MatMul", "MatMulInteger")
def matmul(ctx: InferenceContext) -> None:
    ctx.set_output(0, matmul_shape(ctx, 0, 1))


@shape_fn("QLinearMatMul")
def qlinear_matmul(ctx: InferenceContext) -> None:
    ctx.set_output(0, matmul_shape(ctx, 0, 3))


@shape_fn("Gemm")
def gemm(ctx: InferenceContext) -> None:
    sa, sb = ctx.input_shape(0), ctx.input_shape(1)
    for i, s in ((0, sa), (1, sb)):
        if s is not None:
            need_rank(ctx, i, len(s) == 2, "2-D")
    m = n = None
    if sa is not None:
        m = sa[1] if int_attr(ctx, "transA", 0) else sa[0]
    if sb is not None:
        n = sb[0] if int_attr(ctx, "transB", 0) else sb[1]
    if sa is not None and sb is not None:
        ka = sa[0] if int_attr(ctx, "transA", 0) else sa[1]
        kb = sb[1] if int_attr(ctx, "transB", 0) else sb[0]
        _contract(ctx, ka, kb, 0, 1)
    if ctx.version >= 7:
        _check_unidirectional(ctx, 2, (m, n))
    ctx.set_output(0, (m, n))


def _check_unidirectional(ctx: InferenceContext, i: int, target: tuple[Dim, ...]) -> None:
    """Input i must broadcast to `target` without changing it (Gemm's C)."""
    s = ctx.input_shape(i) if ctx.has_input(i) else None
    if s is None:
        return
    bad = len(s) > len(target)
    for x, y in zip(reversed(s), reversed(target), strict=False):
        if isinstance(x, int) and x != 1 and isinstance(y, int) and x != y:
            bad = True
    if bad:
        raise ctx.fail("GL301", f"{ctx.describe_input(i)} does not broadcast to {shape_str(target)}", input=i)


@shape_fn("Det")
def det(ctx: InferenceContext) -> None:
    s = ctx.input_shape(0)
    if s is None:
        return
    need_rank(ctx, 0, len(s) >= 2, "at least 2-D")
    merge_dim(ctx, s[-2], s[-1], "matrices must be square")
    ctx.set_output(0, s[:-2])


# ---- Einsum
def _einsum_terms(ctx: InferenceContext) -> tuple[list[str], str | None]:
    eq = ctx.attr("equation")
    if not isinstance(eq, str):
        raise InferenceError("no equation")  # missing or mistyped: the refiner reports GL313/GL314
    eq = eq.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != ctx.n_inputs:
        raise ctx.fail("GL317", f"equation has {len(terms)} operands but the node has {ctx.n_inputs} inputs",
                       attr="equation")  # fmt: skip
    for term in terms + [rhs]:
        body = term.replace("...", "", 1)
        if not all(c.isascii() and c.isalpha() for c in body):
            raise ctx.fail("GL317", f"bad term '{term}' in equation '{eq}'", attr="equation")
    return terms, rhs if arrow else None


def _einsum_bind(ctx: InferenceContext, terms: list[str]) -> tuple[dict[str, Dim], Shape]:
    """Each label's dim and the (broadcast) ellipsis dims; None ellipsis when unknown."""
    labels: dict[str, Dim] = {}
    ellipsis: list[Shape] = []
    for i, term in enumerate(terms):
        s = ctx.input_shape(i)
        letters = term.replace("...", "")
        if s is None:
            labels.update({c: None for c in letters if c not in labels})
            if "..." in term:
                ellipsis.append(None)
            continue
        n_ell = len(s) - len(letters)
        if n_ell < 0 or (n_ell > 0 and "..." not in term):
            raise ctx.fail("GL317", f"term '{term}' does not match {ctx.describe_input(i)}", input=i)
        head = term.find("...")
        dims = list(s)
        if head >= 0:
            ellipsis.append(tuple(dims[head : head + n_ell]))
            del dims[head : head + n_ell]
        for c, x in zip(letters, dims, strict=True):
            labels[c] = _einsum_dim(ctx, c, labels[c], x) if c in labels else x
    if not ellipsis:
        return labels, ()
    try:
        return labels, sh.broadcast(ellipsis)
    except sh.MergeError:
        raise ctx.fail("GL301", "the '...' dims of the operands do not broadcast") from None


def _einsum_dim(ctx: InferenceContext, label: str, a: Dim, b: Dim) -> Dim:
    if a is None or b is None:
        known = a if b is None else b
        return None if known == 1 else known  # a 1 may broadcast against the unknown dim
    try:
        return sh.broadcast_dim(a, b)
    except sh.MergeError:
        raise ctx.fail("GL302", f"label '{label}' is {a} in one operand and {b} in another") from None


@shape_fn("Einsum")
def einsum(ctx: InferenceContext) -> None:
    terms, rhs = _einsum_terms(ctx)
    labels, ell = _einsum_bind(ctx, terms)
    if rhs is None:
        letters = "".join(terms).replace("...", "")
        rhs = "..." + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    head = rhs.find("...")
    out = [_einsum_label(ctx, labels, c) for c in rhs.replace("...", "", 1)]
    if head >= 0:
        if ell is None:
            return
        out[head:head] = list(ell)
    ctx.set_output(0, tuple(out))


def _einsum_label(ctx: InferenceContext, labels: dict[str, Dim], c: str) -> Dim:
    if c not in labels:
        raise ctx.fail("GL317", f"output label '{c}' does not appear in the inputs", attr="equation")
    return labels[c]


# ---- Softmax family, SwiGLU
@shape_fn("Softmax", "LogSoftmax", "Hardmax")
def softmax(ctx: InferenceContext) -> None:
    s = ctx.input_shape(0)
    if s is not None and ctx.version >= 11:
        ctx.axis(int_attr(ctx, "axis", -1 if ctx.version >= 13 else 1), len(s))
    ctx.copy_input(0)


@shape_fn("SwiGLU")
def swiglu(ctx: InferenceContext) -> None:
    ctx.set_output(0, ctx.merge_shapes(ctx.input_shape(0), ctx.input_shape(1), "A and B must have the same shape"))


# ---- losses
def _loss_target(ctx: InferenceContext) -> Shape:
    """Input [N, C, d1..dk] and target [N, d1..dk] merged into the target's shape."""
    x, t = ctx.input_shape(0), ctx.input_shape(1)
    if x is not None:
        need_rank(ctx, 0, len(x) >= 2, "at least 2-D")
        from_x = (x[0], *x[2:])
        if t is None:
            return from_x
        need_rank(ctx, 1, len(t) == len(from_x), f"{len(from_x)}-D (the input's rank - 1)")
        return ctx.merge_shapes(from_x, t, "input and target dims differ")
    return t


def _check_weight(ctx: InferenceContext, i: int) -> None:
    x, w = ctx.input_shape(0), ctx.input_shape(i) if ctx.has_input(i) else None
    if w is not None:
        need_rank(ctx, i, len(w) == 1, "1-D")
        if x is not None and len(x) >= 2:
            merge_dim(ctx, x[1], w[0], "weight length differs from the class count")


@shape_fn("NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss")
def loss(ctx: InferenceContext) -> None:
    target = _loss_target(ctx)
    _check_weight(ctx, 2)
    ctx.set_output(0, target if str_attr(ctx, "reduction", "mean") == "none" else ())
    if ctx.op == "SoftmaxCrossEntropyLoss":
        ctx.copy_input(0, 1)


# ---- quantization
@shape_fn("QuantizeLinear")
def quantize(ctx: InferenceContext) -> None:
    elem: int | None = int_attr(ctx, "output_dtype", 0) or None
    if ctx.has_input(2):
        zp = ctx.input_elem(2)
        if elem is not None and zp is not None and zp != elem:
            want = f"output_dtype {elem_name(elem)}"
            raise ctx.fail("GL311", f"{want} differs from y_zero_point's type {ctx.elem_str(2)}", attr="output_dtype")
        elem = zp if zp is not None else elem
    elif elem is None:
        elem = TensorProto.UINT8
    ctx.set_output(0, ctx.input_shape(0), elem)


@shape_fn("DequantizeLinear")
def dequantize(ctx: InferenceContext) -> None:
    elem = int_attr(ctx, "output_dtype", 0) or None
    if elem is None:
        elem = ctx.input_elem(1) if ctx.version >= 19 else TensorProto.FLOAT
    ctx.set_output(0, ctx.input_shape(0), elem)


@shape_fn("DynamicQuantizeLinear")
def dynamic_quantize(ctx: InferenceContext) -> None:
    ctx.set_output(0, ctx.input_shape(0), TensorProto.UINT8)
    ctx.set_output(1, (), TensorProto.FLOAT)
    ctx.set_output(2, (), TensorProto.UINT8)


# ---- DFT, STFT
def _dft_axis(ctx: InferenceContext, rank: int) -> int | None:
    if ctx.version < 20:
        axis: Dim = int_attr(ctx, "axis", 1)
    elif ctx.has_input(2):
        axis = scalar_input(ctx, 2)
    else:
        axis = -2
    if not isinstance(axis, int):
        return None
    if not (-rank <= axis < rank - 1 and axis != -1):
        raise ctx.fail("GL309", f"axis {axis} is out of range for rank {rank} (the last dim holds re/im)")
    return axis % rank


def _dft_len(n: Dim, length: Dim, onesided: bool, inverse: bool) -> Dim:
    if length is not None:
        return d.add(d.floordiv(length, 2), 1) if onesided and not inverse else length
    if not onesided:
        return n
    return d.mul(2, d.sub(n, 1)) if inverse else d.add(d.floordiv(n, 2), 1)


@shape_fn("DFT")
def dft(ctx: InferenceContext) -> None:
    s = ctx.input_shape(0)
    if s is None:
        return
    need_rank(ctx, 0, len(s) >= 2, "at least 2-D (the last dim holds re/im)")
    onesided, inverse = bool(int_attr(ctx, "onesided", 0)), bool(int_attr(ctx, "inverse", 0))
    last = 1 if onesided and inverse else 2
    axis = _dft_axis(ctx, len(s))
    length = scalar_input(ctx, 1)
    if axis is None:  # only the transformed axis changes: unknown which one, unless none does
        same = not onesided and not ctx.has_input(1)
        ctx.set_output(0, (*(s[:-1] if same else [None] * (len(s) - 1)), last))
        return
    if ctx.has_input(1) and length is None:
        n: Dim = None
    else:
        n = _dft_len(s[axis], length, onesided, inverse)
    out = list(s)
    out[axis], out[-1] = n, last
    ctx.set_output(0, tuple(out))


@shape_fn("STFT")
def stft(ctx: InferenceContext) -> None:
    s = ctx.input_shape(0)
    if s is None:
        return
    need_rank(ctx, 0, len(s) >= 2, "3-D [batch, signal_length, 1 or 2]")
    step = scalar_input(ctx, 1)
    window = ctx.input_shape(2) if ctx.has_input(2) else None
    if window is not None:
        need_rank(ctx, 2, len(window) == 1, "1-D")
    length = scalar_input(ctx, 3)
    if window is not None:
        length = merge_dim(ctx, length, window[0], "window length differs from frame_length")
    frames = None
    if isinstance(step, int) and step > 0:
        frames = d.add(d.floordiv(d.sub(s[1], length), step), 1)
    bins = d.add(d.floordiv(length, 2), 1) if int_attr(ctx, "onesided", 1) else length
    ctx.set_output(0, (s[0], frames, bins, 2))


# ---- TfIdfVectorizer
@shape_fn("TfIdfVectorizer")
def tfidf(ctx: InferenceContext) -> None:
    idx = ints_attr(ctx, "ngram_indexes")
    if not idx or min(idx) < 0:
        raise ctx.fail("GL317", "ngram_indexes must be non-empty and non-negative", attr="ngram_indexes")
    s = ctx.input_shape(0)
    if s is None:
        return
    need_rank(ctx, 0, len(s) in (1, 2), "1-D or 2-D")
    ctx.set_output(0, (*s[:-1], max(idx) + 1))
