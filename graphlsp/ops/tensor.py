"""Tensor ops: casts, constants, shape queries, reshaping, slicing, gathering and scattering, padding, resizing
and the other data-movement ops of ai.onnx, with the rules of every opset version that changed them.

Shape values (ONNX data propagation, `Inferred.sv`) flow through Shape, Size, Gather, Slice, Squeeze, Unsqueeze,
Concat, Split, Cast, Reshape, Flatten, Range and ConstantOfShape, and are consumed wherever an op takes a shape,
sizes, pads, repeats or a count as an input, so `Shape -> Gather -> Unsqueeze -> Concat -> Reshape` stays exact
with symbolic dims. Small constant inputs are folded with numpy (`Inferred.const`), and a folded output's shape
is the folded value's.

Problems are reported only when certain. Two assumptions about symbolic dims are made, both only to simplify or
to compare: a dim is never negative, and a dim_param is at least 1 (so `24*N` elements never fit `25*N`, and
`x[1:]` on a dim `N` has `N - 1` elements). Slice bounds of at least 2**31 - 1 in size mean "to the end".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from onnx import TensorProto, helper

from graphlsp.graph.tensor import Tensor
from graphlsp.infer import dims as d
from graphlsp.infer import shapes as sh
from graphlsp.infer.context import InferenceContext, InferenceError
from graphlsp.infer.dims import Dim, Expr
from graphlsp.infer.types import ELEM_BY_NAME, Shape, shape_str
from graphlsp.ops.registry import shape_fn

CONST_CAP = 1024  # elements: folded values this small are kept
SV_CAP = 64  # elements: shape values this long are carried
HUGE = 2**31 - 1  # a slice bound this large (or -HUGE and below) runs to the end of the dim

INT64 = TensorProto.INT64
INT_ELEMS = {
    TensorProto.INT8, TensorProto.INT16, TensorProto.INT32, TensorProto.INT64,
    TensorProto.UINT8, TensorProto.UINT16, TensorProto.UINT32, TensorProto.UINT64,
}  # fmt: skip
_NUMPY_ELEMS = INT_ELEMS | {TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.BOOL}
_BITS: dict[int, int] = {
    TensorProto.FLOAT: 32, TensorProto.INT32: 32, TensorProto.UINT32: 32, TensorProto.DOUBLE: 64,
    TensorProto.INT64: 64, TensorProto.UINT64: 64, TensorProto.COMPLEX64: 64, TensorProto.COMPLEX128: 128,
    TensorProto.FLOAT16: 16, TensorProto.BFLOAT16: 16, TensorProto.INT16: 16, TensorProto.UINT16: 16,
    TensorProto.INT8: 8, TensorProto.UINT8: 8, TensorProto.BOOL: 8, TensorProto.FLOAT8E4M3FN: 8,
    TensorProto.FLOAT8E4M3FNUZ: 8, TensorProto.FLOAT8E5M2: 8, TensorProto.FLOAT8E5M2FNUZ: 8,
    TensorProto.INT4: 4, TensorProto.UINT4: 4, TensorProto.FLOAT4E2M1: 4,
}  # fmt: skip
for _name, _bits in (("FLOAT8E8M0", 8), ("INT2", 2), ("UINT2", 2)):
    if hasattr(TensorProto, _name):
        _BITS[getattr(TensorProto, _name)] = _bits


# ---------------------------------------------------------------- symbolic arithmetic with bounds
Bounds = d.Bounds


def _bounds(x: Dim) -> Bounds:
    """Provable bounds of x, taking dims to be >= 0 and dim_params to be >= 1."""
    return d.bounds(x, 1)


def _lower(x: Dim) -> int | None:
    return _bounds(x)[0]


def _at_least(x: Dim, bound: int) -> bool:
    low = _lower(x)
    return low is not None and low >= bound


def _min(a: Dim, b: Dim) -> Dim:
    if a is None or b is None:
        return None
    if isinstance(a, int) and isinstance(b, int):
        return min(a, b)
    if _at_least(d.sub(b, a), 0):
        return a
    if _at_least(d.sub(a, b), 0):
        return b
    return d.minimum(a, b)


def _max(a: Dim, b: Dim) -> Dim:
    if a is None or b is None:
        return None
    if isinstance(a, int) and isinstance(b, int):
        return max(a, b)
    if _at_least(d.sub(a, b), 0):
        return a
    if _at_least(d.sub(b, a), 0):
        return b
    return d.maximum(a, b)


def _differ(a: Dim, b: Dim) -> bool:
    """True only when a and b are surely different (dim_params taken to be >= 1)."""
    if a is None or b is None:
        return False
    if d.equal(a, b) is False:
        return True
    diff = d.sub(a, b)
    return _at_least(diff, 1) or _at_least(d.neg(diff), 1)


def _atom_dim(atom: Any) -> Dim:
    if atom.kind == "sym":
        return d.symbol(atom.name)
    if atom.kind == "floor":
        return d.floordiv(atom.args[0], atom.args[1])
    fn = d.minimum if atom.kind == "min" else d.maximum
    return fn(atom.args[0], atom.args[1])


def _term(mono: Sequence[Any], coeff: int) -> Dim:
    return d.mul(coeff, d.product(_atom_dim(a) for a in mono))


def _mono_order(mono: tuple[Any, ...]) -> tuple[int, tuple[str, ...]]:
    return len(mono), tuple(a.key for a in mono)


def _lead(x: Expr) -> tuple[tuple[Any, ...], int]:
    return max(x.poly, key=lambda mc: _mono_order(mc[0]))


def _mono_div(m1: tuple[Any, ...], m2: tuple[Any, ...]) -> list[Any] | None:
    rest = list(m1)
    for atom in m2:
        if atom not in rest:
            return None
        rest.remove(atom)
    return rest


def _poly_div(a: Dim, b: Expr) -> Dim:
    """a / b when b divides a exactly as a polynomial (checked by multiplying back), else None."""
    q: Dim = 0
    r = a
    for _ in range(32):
        if r == 0:
            break
        if r is None:
            return None
        lm, lc = _lead(r) if isinstance(r, Expr) else ((), r)
        bm, bc = _lead(b)
        rest = _mono_div(lm, bm)
        if rest is None or lc % bc:
            return None
        t = _term(rest, lc // bc)
        q = d.add(q, t)
        r = d.sub(r, d.mul(t, b))
    return q if r == 0 and d.equal(d.mul(q, b), a) else None


def _exact_div(a: Dim, b: Dim) -> Dim:
    """a / b when the division is exact (for ints, or as polynomials); None otherwise."""
    if a is None or b is None or b == 0:
        return None
    if isinstance(a, int) and isinstance(b, int):
        return a // b if a % b == 0 else None
    if isinstance(b, int):
        if b < 0:
            a, b = d.neg(a), -b
        q = d.floordiv(a, b)
        return q if d.equal(d.mul(q, b), a) else None
    return _poly_div(a, b)


def _div_valid(a: Dim, b: int) -> Dim:
    """a / b for a positive int b that a valid model divides a by: exact, or floor(a / b)."""
    q = _exact_div(a, b)
    return q if q is not None else d.floordiv(a, b)


# ---------------------------------------------------------------- reading inputs and attributes
def _opset(ctx: InferenceContext) -> int:
    """The node's opset version; the newest rules when the model does not import the domain."""
    return ctx.version or 1 << 30


def _present(ctx: InferenceContext, i: int) -> bool:
    return i < len(ctx.node.inputs) and ctx.node.inputs[i] is not None


def _const(ctx: InferenceContext, i: int) -> np.ndarray | None:
    """Input i's value when known; the runner is asked only for inputs small enough to fold."""
    x = ctx.inputs[i] if i < len(ctx.inputs) else None
    if x is None:
        return None
    if x.const is not None:
        return x.const
    shape = ctx.input_shape(i)
    if shape is None or not all(isinstance(v, int) for v in shape) or math.prod(shape) > CONST_CAP:  # type: ignore[arg-type]
        return None
    return ctx.input_const(i)


def _ints_in(ctx: InferenceContext, i: int) -> list[int] | None:
    """Input i's elements when they are all known ints."""
    if not _present(ctx, i):
        return None
    const = _const(ctx, i)
    if const is not None and const.dtype.kind in "iub" and const.size <= CONST_CAP:
        return [int(v) for v in const.reshape(-1)]
    sv = ctx.input_shape_value(i)
    if sv is not None and all(isinstance(v, int) for v in sv):
        return [int(v) for v in sv]  # type: ignore[arg-type]
    return None


def _floats_in(ctx: InferenceContext, i: int) -> list[float] | None:
    if not _present(ctx, i):
        return None
    const = _const(ctx, i)
    if const is not None and const.dtype.kind in "iuf" and const.size <= CONST_CAP:
        return [float(v) for v in const.reshape(-1)]
    ints = _ints_in(ctx, i)
    return [float(v) for v in ints] if ints is not None else None


def _dims_in(ctx: InferenceContext, i: int) -> tuple[Dim, ...] | None:
    """A 1-D int input's elements as dims (symbolic where a shape value says so); when only its length is known,
    that many unknown dims."""
    if not _present(ctx, i):
        return None
    sv = ctx.input_shape_value(i)
    if sv is not None:
        return sv
    ints = _ints_in(ctx, i)
    if ints is not None:
        return tuple(ints)
    shape = ctx.input_shape(i)
    if shape is not None and len(shape) == 1 and isinstance(shape[0], int) and shape[0] <= 4096:
        return (None,) * shape[0]
    if shape == ():
        return (None,)
    return None


def _elements(ctx: InferenceContext, i: int) -> tuple[Dim, ...] | None:
    """A small int input's elements: its shape value, or unknown dims when only its (1-D) length is known."""
    sv = ctx.input_shape_value(i)
    if sv is not None:
        return sv
    shape = ctx.input_shape(i)
    if ctx.input_elem(i) in INT_ELEMS and shape is not None and len(shape) <= 1:
        n = shape[0] if shape else 1
        return (None,) * n if isinstance(n, int) and n <= SV_CAP else None
    return None


def _scalar_in(ctx: InferenceContext, i: int) -> Dim:
    """A one-element int input as a dim (an int, a symbolic dim, or None)."""
    dims = _dims_in(ctx, i)
    return dims[0] if dims is not None and len(dims) == 1 else None


def _attr_or_input(ctx: InferenceContext, name: str, i: int, since: int) -> tuple[bool, list[int] | None]:
    """(given, values) of a list of ints that is the attribute `name` before opset `since`, input i from it on."""
    if _opset(ctx) < since:
        v = ctx.attr(name)
        return v is not None, (list(v) if v is not None else None)
    return _present(ctx, i), _ints_in(ctx, i)


def _fail(ctx: InferenceContext, code: str, msg: str, src: int | str | None = None) -> InferenceError:
    if isinstance(src, int):
        return ctx.fail(code, msg, input=src)
    return ctx.fail(code, msg, attr=src)


def _norm_axis(
    ctx: InferenceContext, axis: int, rank: int, what: str = "axis", src: int | str | None = "axis",
    allow_end: bool = False,
) -> int:  # fmt: skip
    hi = rank + 1 if allow_end else rank  # allow_end: the axis may be the rank itself (Flatten)
    if not -rank <= axis < hi:
        raise _fail(ctx, "GL309", f"{what} {axis} is out of range for rank {rank} (allowed {-rank}..{hi - 1})", src)
    return axis + rank if axis < 0 else axis


def _norm_axes(ctx: InferenceContext, axes: list[int], rank: int, src: int | str, what: str = "axes") -> list[int]:
    out = [_norm_axis(ctx, a, rank, f"{what} value", src) for a in axes]
    if len(set(out)) != len(out):
        raise _fail(ctx, "GL317", f"{what} {axes} name an axis twice", src)
    return out


def _elem_attr(ctx: InferenceContext, name: str) -> int | None:
    v = ctx.attr(name)
    if isinstance(v, str):
        return ELEM_BY_NAME.get(v.lower())
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _str_attr(ctx: InferenceContext, name: str, default: str) -> str:
    v = ctx.attr(name, default)
    return v.decode() if isinstance(v, bytes) else str(v)


def _attr_tensor(ctx: InferenceContext, name: str) -> tuple[np.ndarray | None, int | None, Shape]:
    """A tensor attribute: (value, element type, shape), from the value or, failing that, its written type."""
    value = ctx.attrs.get(name)
    arr = value if isinstance(value, np.ndarray) else None
    elem: int | None = None
    shape: Shape = tuple(int(x) for x in arr.shape) if arr is not None else None
    a = ctx.node.attributes.get(name)
    if a is not None and isinstance(a.value, Tensor):
        elem = a.value.dtype or None
        if shape is None and all(x >= 0 for x in a.value.shape):
            shape = a.value.shape
    if elem is None and arr is not None:
        try:
            elem = helper.np_dtype_to_tensor_dtype(arr.dtype)
        except Exception:
            elem = None
    return arr, elem, shape


def _dims_str(dims: Sequence[Dim]) -> str:
    return shape_str(tuple(dims))


# ---------------------------------------------------------------- outputs: values and folding
def _set_value(ctx: InferenceContext, i: int, sv: Sequence[Dim] | None = None, const: np.ndarray | None = None) -> None:
    x = ctx.outputs[i] if i < len(ctx.outputs) else None
    if x is None:
        return
    if sv is not None and len(sv) <= SV_CAP:
        x.sv = tuple(sv)
    if const is not None and const.size <= CONST_CAP:
        x.const = const
        if x.sv is None and const.dtype.kind in "iu" and const.size <= SV_CAP:
            x.sv = tuple(int(v) for v in const.reshape(-1))


def _move_values(ctx: InferenceContext, sv: Sequence[Dim], shape: Sequence[Dim], move: Callable[[Any], Any]) -> None:
    """The output's shape value when the op only moves the input's elements (Transpose, a Slice of a 2-D value):
    `move` applied to the input's element indices tells which element goes where."""
    if not all(isinstance(x, int) for x in shape) or math.prod(shape) != len(sv):  # type: ignore[arg-type]
        return
    idx = move(np.arange(len(sv)).reshape(tuple(shape)))  # type: ignore[arg-type]
    _set_value(ctx, 0, sv=tuple(sv[int(i)] for i in np.asarray(idx).reshape(-1)))


def _pass_sv(ctx: InferenceContext, src: int = 0, dst: int = 0) -> None:
    """The output holds the input's elements in the same order (Reshape, Squeeze, Unsqueeze, Flatten)."""
    x = ctx.inputs[src] if src < len(ctx.inputs) else None
    if x is not None and x.sv is not None:
        _set_value(ctx, dst, sv=x.sv)
    _pass_bounds(ctx, src, dst)


def _pass_bounds(ctx: InferenceContext, src: int = 0, dst: int = 0) -> None:
    """The output's elements are some of the input's (moved, repeated, cast between ints): the same bounds."""
    x = ctx.inputs[src] if src < len(ctx.inputs) else None
    out = ctx.outputs[dst] if dst < len(ctx.outputs) else None
    if x is not None and x.bounds is not None and out is not None:
        out.bounds = x.bounds


def _fold(ctx: InferenceContext, fn: Callable[..., Any], inputs: Sequence[int], out: int = 0) -> bool:
    """Compute output `out` with numpy when the given inputs are known; the result also gives its shape."""
    x = ctx.outputs[out] if out < len(ctx.outputs) else None
    if x is None:
        return False
    consts = [_const(ctx, i) for i in inputs]
    if any(c is None for c in consts):
        return False
    try:
        with np.errstate(all="ignore"):
            value = np.asarray(fn(*consts))
    except Exception:
        return False
    if value.size > CONST_CAP:
        return False
    elem = getattr(x.type, "elem", None)
    ctx.set_output(out, tuple(int(s) for s in value.shape), elem)
    _set_value(ctx, out, sv=x.sv, const=value)
    return True


def _np_dtype(elem: int | None) -> Any:
    if elem not in _NUMPY_ELEMS:
        return None
    return helper.tensor_dtype_to_np_dtype(elem)  # type: ignore[arg-type]


# ---------------------------------------------------------------- casts and constants
def _cast_values(ctx: InferenceContext, to: int | None) -> None:
    dtype = _np_dtype(to)
    if dtype is not None and _fold(ctx, lambda x: x.astype(dtype), [0]):
        return
    sv = ctx.input_shape_value(0)
    # dims are whole numbers (below 2**24, where float32 holds them exactly): a dim cast to a float and back
    # keeps its value, so Range(0.0, Cast(Shape(x)[i], float), 1.0) has the dim's length (YOLO's anchor grid)
    whole = (TensorProto.INT64, TensorProto.INT32, TensorProto.FLOAT, TensorProto.DOUBLE)
    if sv is not None and ctx.input_elem(0) in INT_ELEMS | set(whole) and to in whole:
        _set_value(ctx, 0, sv=sv)
    if ctx.input_elem(0) in INT_ELEMS and to in (TensorProto.INT64, TensorProto.INT32):
        _pass_bounds(ctx)


@shape_fn("Cast")
def cast(ctx: InferenceContext) -> None:
    to = _elem_attr(ctx, "to")
    ctx.set_output(0, ctx.input_shape(0), to)
    _cast_values(ctx, to)


@shape_fn("CastLike")
def cast_like(ctx: InferenceContext) -> None:
    to = ctx.input_elem(1)
    ctx.set_output(0, ctx.input_shape(0), to)
    _cast_values(ctx, to)


@shape_fn("BitCast")
def bit_cast(ctx: InferenceContext) -> None:
    to = _elem_attr(ctx, "to")
    src = ctx.input_elem(0)
    a, b = _BITS.get(src or 0), _BITS.get(to or 0)
    if a and b and a != b:
        raise ctx.fail("GL317", f"cannot reinterpret {ctx.elem_str(0)} ({a} bits) as a {b}-bit type", attr="to")
    ctx.set_output(0, ctx.input_shape(0), to)


_CONST_ATTRS = ("value", "sparse_value", "value_int", "value_ints", "value_float", "value_floats",
                "value_string", "value_strings")  # fmt: skip


@shape_fn("Constant")
def constant(ctx: InferenceContext) -> None:
    written = set(ctx.node.attributes)
    given = [n for n in _CONST_ATTRS if n in written or ctx.has_attr(n)]
    if len(given) != 1:
        which = ", ".join(given) if given else "none"
        raise ctx.fail("GL317", f"needs exactly one of value, sparse_value, value_int(s), value_float(s), "
                                f"value_string(s) (given: {which})")  # fmt: skip
    name = given[0]
    v = ctx.attrs.get(name)
    if name in ("value", "sparse_value"):
        arr, elem, shape = _attr_tensor(ctx, name)
        ctx.set_output(0, shape, elem)
        if arr is not None and name == "value":
            _set_value(ctx, 0, const=arr)
        return
    kind = name.removeprefix("value_")
    elem = {"int": INT64, "float": TensorProto.FLOAT, "string": TensorProto.STRING}[kind.rstrip("s")]
    out: Shape = (len(v),) if kind.endswith("s") and isinstance(v, list) else (None,) if kind.endswith("s") else ()
    ctx.set_output(0, out, elem)
    if v is not None and kind != "string" and kind != "strings":
        _set_value(ctx, 0, const=np.array(v, dtype=np.int64 if elem == INT64 else np.float32))


@shape_fn("ConstantOfShape")
def constant_of_shape(ctx: InferenceContext) -> None:
    arr, elem, _ = _attr_tensor(ctx, "value")
    elem = elem if elem is not None else TensorProto.FLOAT
    dims = _dims_in(ctx, 0)
    for x in dims or ():
        if isinstance(x, int) and x < 0:
            raise ctx.fail("GL317", f"the shape {_dims_str(dims or ())} has a negative dim", input=0)
    ctx.set_output(0, dims, elem)
    if dims is None or not all(isinstance(x, int) for x in dims) or math.prod(dims) > CONST_CAP:  # type: ignore[arg-type]
        return
    fill = arr.reshape(-1)[0] if arr is not None and arr.size else 0
    dtype = arr.dtype if arr is not None else np.float32
    try:
        value = np.full(tuple(dims), fill, dtype=dtype)  # type: ignore[arg-type, type-var]
    except ValueError:  # a zero beside a dim numpy cannot index (2**63 - 1): empty, but not an array numpy makes
        return
    _set_value(ctx, 0, const=value)


@shape_fn("EyeLike")
def eye_like(ctx: InferenceContext) -> None:
    shape = ctx.input_shape(0)
    if shape is not None and len(shape) != 2:
        raise ctx.fail("GL317", f"needs a 2-D input: {ctx.describe_input(0)}", input=0)
    elem = _elem_attr(ctx, "dtype") if ctx.has_attr("dtype") else ctx.input_elem(0)
    ctx.set_output(0, shape, elem)


# ---------------------------------------------------------------- shape queries
def _clamp_axis(v: int, rank: int) -> int:
    if v < 0:
        v += rank
    return max(0, min(v, rank))


@shape_fn("Shape")
def shape_op(ctx: InferenceContext) -> None:
    shape = ctx.input_shape(0)
    if shape is None:
        ctx.set_output(0, (None,), INT64)
        return
    rank = len(shape)
    start, end = 0, rank
    if _opset(ctx) >= 15:
        start = _clamp_axis(int(ctx.attr("start", 0)), rank)
        end = _clamp_axis(int(ctx.attr("end", rank)), rank)
    dims = shape[start:end]
    ctx.set_output(0, (len(dims),), INT64)
    const = np.array(dims, dtype=np.int64) if all(isinstance(x, int) for x in dims) else None
    _set_value(ctx, 0, sv=dims, const=const)


@shape_fn("Size")
def size_op(ctx: InferenceContext) -> None:
    ctx.set_output(0, (), INT64)
    shape = ctx.input_shape(0)
    if shape is not None:
        n = d.product(shape)
        _set_value(ctx, 0, sv=(n,), const=np.array(n, dtype=np.int64) if isinstance(n, int) else None)


# ---------------------------------------------------------------- reshaping
def _reshape_dims(
    ctx: InferenceContext, data: Shape, target: Sequence[Dim], allowzero: int
) -> tuple[list[Dim], int | None]:
    out: list[Dim] = []
    neg: int | None = None
    for i, t in enumerate(target):
        if t is None or isinstance(t, Expr):
            out.append(t)
        elif t == -1:
            if neg is not None:
                raise ctx.fail("GL317", f"the target shape {_dims_str(target)} has more than one -1", input=1)
            neg = i
            out.append(None)
        elif t == 0 and not allowzero:
            if data is not None and i >= len(data):
                raise ctx.fail("GL317", f"the target shape {_dims_str(target)} copies dim {i} (0) but "
                                        f"{ctx.describe_input(0)} has rank {len(data)}", input=1)  # fmt: skip
            out.append(data[i] if data is not None else None)
        elif t < -1:
            raise ctx.fail("GL317", f"the target shape {_dims_str(target)} has an invalid dim {t}", input=1)
        else:
            out.append(t)
    return out, neg


def _count_error(ctx: InferenceContext, total: Dim, target: Sequence[Dim], detail: str) -> InferenceError:
    return ctx.fail("GL304", f"{ctx.describe_input(0)} has {d.to_str(total)} elements, which the target shape "
                             f"{_dims_str(target)} cannot hold: {detail}", input=1)  # fmt: skip


def _infer_minus_one(ctx: InferenceContext, data: Shape, out: list[Dim], neg: int, target: Sequence[Dim]) -> Dim:
    total = d.product(data) if data is not None else None
    known = d.product(x for j, x in enumerate(out) if j != neg)
    if known == 0 and total is not None and total != 0 and not isinstance(total, Expr):
        raise _count_error(ctx, total, target, "the dims besides -1 multiply to 0")
    q = _exact_div(total, known)
    if q is None and isinstance(total, int) and isinstance(known, int) and known:
        raise _count_error(ctx, total, target, f"{total} is not a multiple of {known}")
    return q


def _check_count(ctx: InferenceContext, data: Shape, out: list[Dim], target: Sequence[Dim], allowzero: int) -> None:
    total = d.product(data) if data is not None else None
    if total is None:
        return
    unknown = [j for j, x in enumerate(out) if x is None]
    if len(unknown) == 1 and not allowzero:  # whatever that element is (-1, 0 or a size), the count decides it
        known = d.product(x for x in out if x is not None)
        if known != 0 and (not isinstance(known, int) or known > 0):
            out[unknown[0]] = _exact_div(total, known)
        return
    produced = d.product(out)
    if _differ(total, produced):
        raise _count_error(ctx, total, target, f"it has {d.to_str(produced)}")
    if d.equal(total, produced) is None:
        ctx.refiner.unifier.require(total, produced)  # holds only at some sizes (a target traced as a constant)


@shape_fn("Reshape")
def reshape(ctx: InferenceContext) -> None:
    if _opset(ctx) < 5:
        shape_attr = ctx.attr("shape")
        target: tuple[Dim, ...] | None = tuple(shape_attr) if shape_attr is not None else None
    else:
        target = _dims_in(ctx, 1)
    if target is None:
        ctx.set_output(0, None)
        return
    data = ctx.input_shape(0)
    allowzero = int(ctx.attr("allowzero", 0)) if _opset(ctx) >= 14 else 0
    out, neg = _reshape_dims(ctx, data, target, allowzero)
    if neg is not None:
        out[neg] = _infer_minus_one(ctx, data, out, neg, target)
    else:
        _check_count(ctx, data, out, target, allowzero)
    ctx.set_output(0, tuple(out))
    _pass_sv(ctx)
    if all(isinstance(x, int) for x in out):
        _fold(ctx, lambda x: x.reshape(tuple(out)), [0])


@shape_fn("Flatten")
def flatten(ctx: InferenceContext) -> None:
    shape = ctx.input_shape(0)
    if shape is None:
        ctx.set_output(0, (None, None))
        return
    a = _norm_axis(ctx, int(ctx.attr("axis", 1)), len(shape), allow_end=True)
    ctx.set_output(0, (d.product(shape[:a]), d.product(shape[a:])))
    _pass_sv(ctx)
    _fold(ctx, lambda x: x.reshape(int(np.prod(x.shape[:a])), -1), [0])


@shape_fn("Transpose")
def transpose(ctx: InferenceContext) -> None:
    shape = ctx.input_shape(0)
    perm = ctx.attr("perm")
    if shape is None:
        ctx.set_output(0, None if perm is None else (None,) * len(perm))
        return
    rank = len(shape)
    perm = list(range(rank - 1, -1, -1)) if perm is None else [int(p) for p in perm]
    if len(perm) != rank:
        raise ctx.fail("GL307", f"perm {perm} has {len(perm)} entries but {ctx.describe_input(0)} has rank {rank}",
                       attr="perm")  # fmt: skip
    bad = [p for p in perm if not 0 <= p < rank]
    if bad:
        raise ctx.fail("GL307", f"perm {perm} has {bad[0]}, outside 0..{rank - 1} for {ctx.describe_input(0)}",
                       attr="perm")  # fmt: skip
    if len(set(perm)) != rank:
        raise ctx.fail("GL307", f"perm {perm} repeats an axis", attr="perm")
    ctx.set_output(0, tuple(shape[p] for p in perm))
    _pass_bounds(ctx)
    sv = ctx.input_shape_value(0)
    if sv is not None:
        _move_values(ctx, sv, shape, lambda idx: np.transpose(idx, perm))
    _fold(ctx, lambda x: np.transpose(x, perm), [0])


@shape_fn("Squeeze")
def squeeze(ctx: InferenceContext) -> None:
    given, axes = _attr_or_input(ctx, "axes", 1, 13)
    shape = ctx.input_shape(0)
    src: int | str = 1 if _opset(ctx) >= 13 else "axes"
    if shape is None or (given and axes is None):
        k = _dims_in(ctx, 1) if given and shape is not None and _opset(ctx) >= 13 else None
        ctx.set_output(0, None if k is None or shape is None else (None,) * (len(shape) - len(k)))
        return
    if not given or not axes:  # an empty axes input: onnx keeps every dim, onnxruntime squeezes the 1s
        if not all(isinstance(x, int) for x in shape) or (given and 1 in shape):
            ctx.set_output(0, None)
            return
        drop = [i for i, x in enumerate(shape) if x == 1]
    else:
        drop = _norm_axes(ctx, axes or [], len(shape), src)
        for a in drop:
            if isinstance(shape[a], int) and shape[a] != 1:
                raise _fail(ctx, "GL317", f"cannot squeeze axis {a}: {ctx.describe_input(0)}, whose dim {a} is "
                                          f"{shape[a]}, not 1", src)  # fmt: skip
    ctx.set_output(0, tuple(x for i, x in enumerate(shape) if i not in drop))
    _pass_sv(ctx)
    _fold(ctx, lambda x: x.reshape(tuple(int(v) for i, v in enumerate(x.shape) if i not in drop)), [0])


@shape_fn("Unsqueeze")
def unsqueeze(ctx: InferenceContext) -> None:
    _, axes = _attr_or_input(ctx, "axes", 1, 13)
    shape = ctx.input_shape(0)
    src: int | str = 1 if _opset(ctx) >= 13 else "axes"
    if shape is None or axes is None:
        k = _dims_in(ctx, 1) if _opset(ctx) >= 13 else None
        ctx.set_output(0, None if shape is None or k is None else (None,) * (len(shape) + len(k)))
        return
    rank = len(shape) + len(axes)
    where = _norm_axes(ctx, axes, rank, src)
    rest = iter(shape)
    out = tuple(1 if i in where else next(rest) for i in range(rank))
    ctx.set_output(0, out)
    _pass_sv(ctx)
    _fold(ctx, lambda x: x.reshape(out), [0])


# ---------------------------------------------------------------- concat and split
def _concat_dim(ctx: InferenceContext, known: list[tuple[int, tuple[Dim, ...]]], j: int) -> Dim:
    out: Dim = None
    first = known[0][0]
    for i, s in known:
        try:
            out = sh.merge_dim(out, s[j], ctx.refiner.unifier)
        except sh.MergeError:
            raise ctx.fail("GL303", f"inputs differ in dim {j} (not the concatenation axis): "
                                    f"{ctx.describe_input(first)}, {ctx.describe_input(i)}", input=i,
                           related=[ctx.related_input(first)]) from None  # fmt: skip
    return out


@shape_fn("Concat")
def concat(ctx: InferenceContext) -> None:
    idx = [i for i in range(ctx.n_inputs) if _present(ctx, i)]
    known = [(i, s) for i in idx if (s := ctx.input_shape(i)) is not None]
    if not known:
        ctx.set_output(0, None)
        return
    first, rank = known[0][0], len(known[0][1])
    for i, s in known:
        if len(s) != rank:
            msg = f"inputs have different ranks: {ctx.describe_input(first)}, {ctx.describe_input(i)}"
            raise ctx.fail("GL303", msg, input=i, related=[ctx.related_input(first)])
    axis = _norm_axis(ctx, int(ctx.attr("axis", 1)), rank)
    along: Dim = 0 if len(known) == len(idx) else None
    for _, s in known:
        along = d.add(along, s[axis])
    ctx.set_output(0, tuple(along if j == axis else _concat_dim(ctx, known, j) for j in range(rank)))
    svs = [_elements(ctx, i) for i in idx]
    if axis == 0 and all(sv is not None for sv in svs) and any(ctx.input_shape_value(i) for i in idx):
        _set_value(ctx, 0, sv=tuple(x for sv in svs for x in sv or ()))
    _fold(ctx, lambda *xs: np.concatenate(xs, axis=axis), idx)


def _split_given(ctx: InferenceContext) -> tuple[bool, list[Dim] | None, int | str]:
    """(given, sizes, where) of Split's sizes: the attribute (and in opset 1 the input) or the input."""
    if _opset(ctx) < 13 and ctx.has_attr("split"):
        return True, list(ctx.attr("split")), "split"
    if _opset(ctx) >= 13 or (_opset(ctx) < 2 and _present(ctx, 1)):
        dims = _dims_in(ctx, 1)
        return _present(ctx, 1), (list(dims) if dims is not None else None), 1
    return False, None, "split"


def _split_equal(ctx: InferenceContext, dim: Dim, n: int) -> list[Dim]:
    if _opset(ctx) >= 18:
        k = ctx.attr("num_outputs")
        if k is None:
            raise ctx.fail("GL308", "needs the split input or the num_outputs attribute")
        if int(k) != n:
            raise ctx.fail("GL308", f"num_outputs is {k} but the node has {n} outputs", attr="num_outputs")
        chunk = d.ceildiv(dim, n)
        last = d.sub(dim, d.mul(chunk, n - 1))
        return [chunk] * (n - 1) + [None if isinstance(last, int) and last < 0 else last]
    if isinstance(dim, int) and dim % n:
        raise ctx.fail("GL308", f"{ctx.describe_input(0)} cannot be split evenly into {n} outputs")
    return [_div_valid(dim, n)] * n


def _check_split(ctx: InferenceContext, sizes: list[Dim], dim: Dim, axis: int, where: int | str) -> None:
    n = ctx.n_outputs
    if len(sizes) != n:
        raise _fail(ctx, "GL308", f"split {_dims_str(sizes)} has {len(sizes)} sizes but the node has {n} outputs",
                    where)  # fmt: skip
    total: Dim = 0
    for s in sizes:
        total = d.add(total, s)
    if _differ(total, dim):
        raise _fail(ctx, "GL308", f"split {_dims_str(sizes)} adds up to {d.to_str(total)} but dim {axis} of "
                                  f"{ctx.describe_input(0)} is {d.to_str(dim)}", where)  # fmt: skip


@shape_fn("Split")
def split(ctx: InferenceContext) -> None:
    given, sizes, where = _split_given(ctx)
    shape = ctx.input_shape(0)
    if shape is None:
        for i in range(ctx.n_outputs):
            ctx.set_output(i, None)
        return
    axis = _norm_axis(ctx, int(ctx.attr("axis", 0)), len(shape))
    dim = shape[axis]
    if given and sizes is not None:
        _check_split(ctx, sizes, dim, axis, where)
    elif not given:
        sizes = _split_equal(ctx, dim, ctx.n_outputs)
    for i in range(ctx.n_outputs):
        size = sizes[i] if sizes is not None else None
        ctx.set_output(i, shape[:axis] + (size,) + shape[axis + 1 :])
    _split_values(ctx, shape, sizes)


def _split_values(ctx: InferenceContext, shape: tuple[Dim, ...], sizes: list[Dim] | None) -> None:
    sv = ctx.input_shape_value(0)
    if sv is None or len(shape) != 1 or sizes is None or not all(isinstance(s, int) for s in sizes):
        return
    at = 0
    for i, s in enumerate(sizes):
        _set_value(ctx, i, sv=sv[at : at + s])  # type: ignore[operator]
        at += s  # type: ignore[operator]


# ---------------------------------------------------------------- slice
def _slice_int(dim: int, start: int, end: int, step: int) -> tuple[int, int]:
    """onnx's clamping of start and end for a known dim."""
    if dim == 0:
        return 0, 0
    if start < 0:
        start += dim
    if end < 0:
        end += dim
    if step < 0:
        return max(0, min(start, dim - 1)), max(-1, min(end, dim - 1))
    return max(0, min(start, dim)), max(0, min(end, dim))


def _bound(x: Dim, dim: Dim, lo: int, hi_off: int) -> Dim:
    """x clamped to [lo, dim + hi_off] as onnx clamps slice bounds (negative x counts from the end)."""
    if x is None:
        return None
    if isinstance(x, int):
        if x >= HUGE:
            return d.add(dim, hi_off)
        if x <= -HUGE:
            return lo
        if x < 0:
            return _max(d.add(dim, x), lo)
        return _min(x, d.add(dim, hi_off))
    if _at_least(x, 0):
        return _min(x, d.add(dim, hi_off))
    if _at_least(d.neg(x), 1):  # a negative bound counts from the end (`x[-n:]` with n = Shape(x)[i])
        return _max(d.add(dim, x), lo)
    return None


def _slice_len(dim: Dim, start: Dim, end: Dim, step: int) -> Dim:
    if dim == 0:
        return 0
    if isinstance(dim, int) and isinstance(start, int) and isinstance(end, int):
        s, e = _slice_int(dim, start, end, step)
        return max(0, -((s - e) // step))
    if dim is None:
        return None
    if step > 0:
        first = start if isinstance(start, int) and 0 <= start < HUGE else _bound(start, dim, 0, 0)
        return _max(d.ceildiv(d.sub(_bound(end, dim, 0, 0), first), step), 0)
    first = _bound(start, dim, 0, -1)
    return _max(d.ceildiv(d.sub(first, _bound(end, dim, -1, -1)), -step), 0)


SliceArgs = tuple[list[Dim] | None, list[Dim] | None, list[int] | None, bool, list[int] | None, bool]


def _slice_args(ctx: InferenceContext) -> SliceArgs:
    """(starts, ends, axes, axes_given, steps, steps_given): lists of known values, or None where unknown."""
    if _opset(ctx) < 10:
        axes, starts, ends = ctx.attr("axes"), ctx.attr("starts"), ctx.attr("ends")
        return starts, ends, (list(axes) if axes is not None else None), axes is not None, None, False
    starts, ends = _dims_in(ctx, 1), _dims_in(ctx, 2)
    return (list(starts) if starts is not None else None, list(ends) if ends is not None else None,
            _ints_in(ctx, 3), _present(ctx, 3), _ints_in(ctx, 4), _present(ctx, 4))  # fmt: skip


def _slice_axes(ctx: InferenceContext, n: int, axes: list[int] | None, given: bool, rank: int) -> list[int] | None:
    if not given:
        if n > rank:
            raise ctx.fail("GL309", f"{n} starts/ends for {ctx.describe_input(0)} of rank {rank}", input=1)
        return list(range(n))
    if axes is None:
        return None
    if len(axes) != n:
        raise ctx.fail("GL317", f"axes {axes} has {len(axes)} entries but starts/ends have {n}", input=3)
    return _norm_axes(ctx, axes, rank, 3 if _opset(ctx) >= 10 else "axes")


def _slice_steps(ctx: InferenceContext, n: int, steps: list[int] | None, given: bool) -> list[int] | None:
    if not given:
        return [1] * n
    if steps is not None and len(steps) != n:
        raise ctx.fail("GL317", f"steps has {len(steps)} entries but starts/ends have {n}", input=4)
    if steps is not None and 0 in steps:
        raise ctx.fail("GL317", f"steps {steps} has a 0", input=4)
    return steps


@shape_fn("Slice")
def slice_op(ctx: InferenceContext) -> None:
    shape = ctx.input_shape(0)
    starts, ends, axes, axes_given, steps, steps_given = _slice_args(ctx)
    if shape is None:
        ctx.set_output(0, None)
        return
    if starts is not None and ends is not None and len(starts) != len(ends):
        raise ctx.fail("GL317", f"starts has {len(starts)} entries but ends has {len(ends)}", input=2)
    n = len(starts) if starts is not None else len(ends) if ends is not None else None
    where = _slice_axes(ctx, n, axes, axes_given, len(shape)) if n is not None else None
    if where is None or n is None:
        ctx.set_output(0, (None,) * len(shape))
        return
    step_list = _slice_steps(ctx, n, steps, steps_given)
    out = list(shape)
    for k, a in enumerate(where):
        s = starts[k] if starts is not None else None
        e = ends[k] if ends is not None else None
        out[a] = _slice_len(shape[a], s, e, step_list[k]) if step_list is not None else None
    ctx.set_output(0, tuple(out))
    _pass_bounds(ctx)
    _slice_values(ctx, shape, where, starts, ends, step_list)


def _slice_values(
    ctx: InferenceContext, shape: tuple[Dim, ...], where: list[int], starts: list[Dim] | None,
    ends: list[Dim] | None, steps: list[int] | None,
) -> None:  # fmt: skip
    sv = ctx.input_shape_value(0)
    if sv is None or starts is None or ends is None or steps is None:
        return
    if len(shape) != 1 or where != [0]:  # a 2-D shape value ([4, 2] pads, as torch's F.pad computes them)
        bounds = [(s, e) for s, e in zip(starts, ends, strict=True)]
        if not all(isinstance(x, int) for se in bounds for x in se) or not all(steps):
            return
        cuts: list[slice] = [slice(None)] * len(shape)
        for a, (s, e), st in zip(where, bounds, steps, strict=True):
            if not isinstance(shape[a], int):
                return
            lo, hi = _slice_int(shape[a], s, e, st)  # type: ignore[arg-type]
            cuts[a] = slice(lo, hi if hi >= 0 else None, st)
        _move_values(ctx, sv, shape, lambda idx: idx[tuple(cuts)])
        return
    s, e, st = starts[0], ends[0], steps[0]
    if not isinstance(s, int) or not isinstance(e, int) or not st:
        return
    s, e = _slice_int(len(sv), s, e, st)
    _set_value(ctx, 0, sv=tuple(sv[i] for i in range(s, e, st)))
    if all(isinstance(x, int) for x in sv):
        ctx.set_output(0, (len(range(s, e, st)),))
        _set_value(ctx, 0, sv=tuple(sv[i] for i in range(s, e, st)),
                   const=np.array([sv[i] for i in range(s, e, st)], dtype=np.int64))  # fmt: skip


# ---------------------------------------------------------------- gather and scatter
def _check_indices(ctx: InferenceContext, dim: Dim, axis: int, data: int = 0, idx: int = 1) -> list[int] | None:
    ints = _ints_in(ctx, idx)
    if ints is None or not isinstance(dim, int):
        return ints
    bad = [i for i in ints if not -dim <= i < dim]
    if bad:
        raise ctx.fail("GL310", f"index {bad[0]} is out of range for dim {axis} of {ctx.describe_input(data)} "
                                f"(allowed {-dim}..{dim - 1})", input=idx)  # fmt: skip
    return ints


def _indices_in_bounds(ctx: InferenceContext, dim: Dim) -> None:
    """Indices whose range is known (a Range over a dim, as position ids are made) must stay below the gathered
    dim: a condition on the input dims (a position table bounds the sequence length)."""
    x = ctx.inputs[1] if len(ctx.inputs) > 1 else None
    if x is None or x.bounds is None or dim is None or x.sv is not None:
        return
    lo, hi = x.bounds
    top = d.add(hi, 1)
    if top is None or d.equal(top, dim) is True:
        return
    if (high := d.bounds(d.sub(top, dim))[1]) is not None and high <= 0:
        return  # provably within
    lowest = d.bounds(lo)[0]
    if lowest is not None and lowest >= 0:  # (negative indices count from the end: not these)
        ctx.refiner.unifier.require(top, dim, at_most=True)


@shape_fn("Gather")
def gather(ctx: InferenceContext) -> None:
    data, indices = ctx.input_shape(0), ctx.input_shape(1)
    if data is None:
        ctx.set_output(0, None)
        return
    axis = _norm_axis(ctx, int(ctx.attr("axis", 0)), len(data))
    ints = _check_indices(ctx, data[axis], axis)
    if indices is None:
        ctx.set_output(0, None)
        return
    ctx.set_output(0, data[:axis] + indices + data[axis + 1 :])
    _indices_in_bounds(ctx, data[axis])
    sv = ctx.input_shape_value(0)
    if sv is not None and len(data) == 1 and ints is not None and all(-len(sv) <= i < len(sv) for i in ints):
        _set_value(ctx, 0, sv=tuple(sv[i] for i in ints))
    _fold(ctx, lambda x, i: np.take(x, i, axis=axis), [0, 1])


@shape_fn("GatherElements")
def gather_elements(ctx: InferenceContext) -> None:
    data, indices = ctx.input_shape(0), ctx.input_shape(1)
    if data is not None:
        axis = _norm_axis(ctx, int(ctx.attr("axis", 0)), len(data))
        if indices is not None and len(indices) != len(data):
            raise ctx.fail("GL317", f"indices must have the rank of data: {ctx.describe_input(0)}, "
                                    f"{ctx.describe_input(1)}", input=1)  # fmt: skip
        _check_indices(ctx, data[axis], axis)
    ctx.set_output(0, indices)


@shape_fn("GatherND")
def gather_nd(ctx: InferenceContext) -> None:
    data, indices = ctx.input_shape(0), ctx.input_shape(1)
    b = int(ctx.attr("batch_dims", 0)) if _opset(ctx) >= 12 else 0
    if data is None or indices is None or not indices or not isinstance(indices[-1], int):
        ctx.set_output(0, None)
        return
    k = indices[-1]
    if k > len(data) - b:
        raise ctx.fail("GL317", f"indices' last dim ({k}) exceeds the rank of {ctx.describe_input(0)} less "
                                f"batch_dims ({b})", input=1)  # fmt: skip
    ctx.set_output(0, indices[:-1] + data[b + k :])


def _shapes_agree(ctx: InferenceContext, a: Shape, b: Shape, what: str, i: int) -> None:
    try:
        sh.merge(a, b)
    except sh.MergeError as e:
        raise ctx.fail("GL317", f"{what}: {shape_str(a)} and {shape_str(b)} differ ({e})", input=i) from None


@shape_fn("Scatter", "ScatterElements")
def scatter_elements(ctx: InferenceContext) -> None:
    data, indices, updates = (ctx.input_shape(i) for i in range(3))
    if data is not None:
        axis = _norm_axis(ctx, int(ctx.attr("axis", 0)), len(data))
        if indices is not None and len(indices) != len(data):
            raise ctx.fail("GL317", f"indices must have the rank of data: {ctx.describe_input(0)}, "
                                    f"{ctx.describe_input(1)}", input=1)  # fmt: skip
        _check_indices(ctx, data[axis], axis)
    _shapes_agree(ctx, indices, updates, "updates must have the shape of indices", 2)
    ctx.set_output(0, data)


@shape_fn("ScatterND")
def scatter_nd(ctx: InferenceContext) -> None:
    data, indices, updates = (ctx.input_shape(i) for i in range(3))
    if data is not None and indices and isinstance(indices[-1], int):
        k = indices[-1]
        if k > len(data):
            raise ctx.fail("GL317", f"indices' last dim ({k}) exceeds the rank of {ctx.describe_input(0)}",
                           input=1)  # fmt: skip
        _shapes_agree(ctx, indices[:-1] + data[k:], updates, "updates must be indices.shape[:-1] + data.shape[k:]", 2)
    ctx.set_output(0, data)


# ---------------------------------------------------------------- expand, tile, pad
@shape_fn("Expand")
def expand(ctx: InferenceContext) -> None:
    target = _dims_in(ctx, 1)
    shape = ctx.input_shape(0)
    if target is None or shape is None:
        ctx.set_output(0, None)
        return
    try:
        out = sh.broadcast([shape, target], ctx.refiner.unifier)
    except sh.MergeError:
        raise ctx.fail("GL301", f"{ctx.describe_input(0)} does not broadcast to the shape {_dims_str(target)}",
                       input=1) from None  # fmt: skip
    ctx.set_output(0, out)
    _pass_bounds(ctx)
    if out is not None and all(isinstance(x, int) for x in out) and math.prod(out) <= CONST_CAP:  # type: ignore[arg-type]
        _fold(ctx, lambda x, _: np.broadcast_to(x, out).copy(), [0, 1])  # type: ignore[arg-type]


@shape_fn("Tile")
def tile_v1(ctx: InferenceContext) -> None:
    """Opset 1: `tiles` copies along the scalar input `axis` (both of the data's type)."""
    shape = ctx.input_shape(0)
    axis_v, tiles_v = _floats_in(ctx, 2), _floats_in(ctx, 1)
    axis = int(axis_v[0]) if axis_v and len(axis_v) == 1 else None
    tiles = int(tiles_v[0]) if tiles_v and len(tiles_v) == 1 else None
    if shape is None or axis is None:
        ctx.set_output(0, None if shape is None else (None,) * len(shape))
        return
    a = _norm_axis(ctx, axis, len(shape), src=2)
    ctx.set_output(0, tuple(d.mul(x, tiles) if i == a else x for i, x in enumerate(shape)))


@shape_fn("Tile", since=6)
def tile(ctx: InferenceContext) -> None:
    shape = ctx.input_shape(0)
    reps = _dims_in(ctx, 1)
    if shape is None or reps is None:
        known = shape if shape is not None else reps
        ctx.set_output(0, None if known is None else (None,) * len(known))
        return
    if len(reps) != len(shape):
        raise ctx.fail("GL317", f"repeats {_dims_str(reps)} has {len(reps)} entries for {ctx.describe_input(0)}",
                       input=1)  # fmt: skip
    if any(isinstance(r, int) and r < 0 for r in reps):
        raise ctx.fail("GL317", f"repeats {_dims_str(reps)} has a negative entry", input=1)
    ctx.set_output(0, tuple(d.mul(x, r) for x, r in zip(shape, reps, strict=True)))
    _fold(ctx, np.tile, [0, 1])


def _pads_arg(ctx: InferenceContext) -> tuple[list[Dim] | None, int | str]:
    if _opset(ctx) < 2:
        v = ctx.attr("paddings")
        return (list(v) if v is not None else None), "paddings"
    if _opset(ctx) < 11:
        v = ctx.attr("pads")
        return (list(v) if v is not None else None), "pads"
    dims = _dims_in(ctx, 1)
    return (list(dims) if dims is not None else None), 1


@shape_fn("Pad")
def pad(ctx: InferenceContext) -> None:
    shape = ctx.input_shape(0)
    pads, where = _pads_arg(ctx)
    if shape is None:
        ctx.set_output(0, None)
        return
    rank = len(shape)
    axes: list[int] | None = list(range(rank))
    if _opset(ctx) >= 18 and _present(ctx, 3):
        ints = _ints_in(ctx, 3)
        axes = _norm_axes(ctx, ints, rank, 3) if ints is not None else None
    if pads is None or axes is None:
        ctx.set_output(0, tuple(None if axes is None or i in axes else x for i, x in enumerate(shape)))
        return
    n = len(axes)
    if len(pads) != 2 * n:
        raise _fail(ctx, "GL317", f"pads {_dims_str(pads)} has {len(pads)} entries; {n} axes need {2 * n}", where)
    out = list(shape)
    for i, a in enumerate(axes):
        out[a] = d.add(d.add(shape[a], pads[i]), pads[n + i])
        if isinstance(out[a], int) and out[a] < 0:  # type: ignore[operator]
            raise _fail(ctx, "GL317", f"pads {_dims_str(pads)} remove more than dim {a} of "
                                      f"{ctx.describe_input(0)} has", where)  # fmt: skip
    ctx.set_output(0, tuple(out))


@shape_fn("CenterCropPad")
def center_crop_pad(ctx: InferenceContext) -> None:
    shape = ctx.input_shape(0)
    target = _dims_in(ctx, 1)
    if shape is None:
        ctx.set_output(0, None)
        return
    axes_attr = ctx.attr("axes")
    axes = _norm_axes(ctx, list(axes_attr), len(shape), "axes") if axes_attr is not None else list(range(len(shape)))
    if target is None:
        ctx.set_output(0, tuple(None if i in axes else x for i, x in enumerate(shape)))
        return
    if len(target) != len(axes):
        raise ctx.fail("GL317", f"shape {_dims_str(target)} has {len(target)} entries for {len(axes)} axes",
                       input=1)  # fmt: skip
    out = list(shape)
    for a, t in zip(axes, target, strict=True):
        out[a] = t
    ctx.set_output(0, tuple(out))


# ---------------------------------------------------------------- resize
def _scaled(dim: Dim, scale: float) -> Dim:
    """floor(dim * scale) as onnx computes it (scale is a float32)."""
    s = float(np.float32(scale))
    if isinstance(dim, int):
        return math.floor(float(dim) * s)
    if dim is None or not math.isfinite(s) or s < 0:
        return None
    from fractions import Fraction  # 2 ms of imports (decimal, ...): only for a scale of a symbolic dim

    f = Fraction(s)
    if f.denominator > 64:
        return None
    return d.floordiv(d.mul(dim, f.numerator), f.denominator)


def _apply_scales(ctx: InferenceContext, shape: tuple[Dim, ...], scales: list[float], where: int | str) -> None:
    if len(scales) != len(shape):
        raise _fail(ctx, "GL317", f"scales {scales} has {len(scales)} entries for {ctx.describe_input(0)}", where)
    ctx.set_output(0, tuple(_scaled(x, s) for x, s in zip(shape, scales, strict=True)))


def _aspect_sizes(ctx: InferenceContext, shape: tuple[Dim, ...], axes: list[int], sizes: list[Dim]) -> list[Dim]:
    policy = _str_attr(ctx, "keep_aspect_ratio_policy", "stretch") if _opset(ctx) >= 18 else "stretch"
    if policy == "stretch":
        return sizes
    dims = [shape[a] for a in axes]
    if not all(isinstance(x, int) and x for x in dims) or not all(isinstance(s, int) for s in sizes):
        return [None] * len(sizes)
    ratios = [s / x for s, x in zip(sizes, dims, strict=True)]  # type: ignore[operator]
    scale = min(ratios) if policy == "not_larger" else max(ratios)
    return [math.floor(scale * x + 0.5) for x in dims]  # type: ignore[operator]


def _resize_sizes(ctx: InferenceContext, shape: tuple[Dim, ...], sizes: tuple[Dim, ...], axes: list[int]) -> None:
    if len(sizes) != len(axes):
        raise ctx.fail("GL317", f"sizes {_dims_str(sizes)} has {len(sizes)} entries for {len(axes)} axes", input=3)
    out = list(shape)
    for a, s in zip(axes, _aspect_sizes(ctx, shape, axes, list(sizes)), strict=True):
        out[a] = s if not isinstance(s, int) or s > 0 else None
    ctx.set_output(0, tuple(out))


def _count(ctx: InferenceContext, i: int, values: Sequence[Any] | None) -> int | None:
    """How many elements optional input i has: 0 when absent, None when not known."""
    if not _present(ctx, i):
        return 0
    if values is not None:
        return len(values)
    shape = ctx.input_shape(i)
    return shape[0] if shape is not None and len(shape) == 1 and isinstance(shape[0], int) else None


def _check_scales_sizes(ctx: InferenceContext, scales: list[float] | None, sizes: tuple[Dim, ...] | None) -> None:
    n_scales, n_sizes = _count(ctx, 2, scales), _count(ctx, 3, sizes)
    if n_scales and n_sizes:
        raise ctx.fail("GL317", "takes scales or sizes, not both", input=3)
    if _opset(ctx) >= 13 and n_scales == 0 and n_sizes == 0:
        raise ctx.fail("GL317", "needs scales or sizes")


@shape_fn("Resize")
def resize(ctx: InferenceContext) -> None:
    shape = ctx.input_shape(0)
    if _opset(ctx) < 11:
        scales = _floats_in(ctx, 1)
        ctx.set_output(0, None if shape is None else (None,) * len(shape))
        if scales is not None and shape is not None:
            _apply_scales(ctx, shape, scales, 1)
        return
    scales, sizes = _floats_in(ctx, 2), _dims_in(ctx, 3)
    _check_scales_sizes(ctx, scales, sizes)
    axes_attr = ctx.attr("axes") if _opset(ctx) >= 18 else None
    if shape is None:
        stretch = _str_attr(ctx, "keep_aspect_ratio_policy", "stretch") == "stretch" or _opset(ctx) < 18
        ctx.set_output(0, sizes if sizes and axes_attr is None and stretch else None)
        return
    rank = len(shape)
    axes = _norm_axes(ctx, list(axes_attr), rank, "axes") if axes_attr is not None else list(range(rank))
    ctx.set_output(0, (None,) * rank)
    if sizes:
        _resize_sizes(ctx, shape, sizes, axes)
    elif scales:
        if len(scales) != len(axes):
            raise ctx.fail("GL317", f"scales {scales} has {len(scales)} entries for {len(axes)} axes", input=2)
        full = [1.0] * rank
        for a, sc in zip(axes, scales, strict=True):
            full[a] = sc
        _apply_scales(ctx, shape, full, 2)


@shape_fn("Upsample")
def upsample(ctx: InferenceContext) -> None:
    shape = ctx.input_shape(0)
    if shape is None:
        ctx.set_output(0, None)
        return
    ctx.set_output(0, (None,) * len(shape))
    if _opset(ctx) < 7:
        if len(shape) != 4:
            raise ctx.fail("GL317", f"needs a 4-D input: {ctx.describe_input(0)}", input=0)
        hs, ws = float(ctx.attr("height_scale", 1.0)), float(ctx.attr("width_scale", 1.0))
        scales: list[float] | None = [1.0, 1.0, hs, ws]
        where: int | str = "height_scale"
    elif _opset(ctx) < 9:
        v = ctx.attr("scales")
        scales, where = (list(v) if v is not None else None), "scales"
    else:
        scales, where = _floats_in(ctx, 1), 1
    if scales is not None:
        _apply_scales(ctx, shape, scales, where)


# ---------------------------------------------------------------- depth/space, col2im
def _blocksize(ctx: InferenceContext) -> int:
    b = int(ctx.attr("blocksize", 0))
    if b <= 0:
        raise ctx.fail("GL317", f"blocksize must be positive, got {b}", attr="blocksize")
    return b


def _rank4(ctx: InferenceContext) -> tuple[Dim, ...] | None:
    shape = ctx.input_shape(0)
    if shape is not None and len(shape) != 4:
        raise ctx.fail("GL317", f"needs a 4-D input: {ctx.describe_input(0)}", input=0)
    return shape


def _divisible(ctx: InferenceContext, dim: Dim, by: int, what: str) -> Dim:
    if isinstance(dim, int) and dim % by:
        raise ctx.fail("GL317", f"{what} of {ctx.describe_input(0)} is not a multiple of {by}", input=0)
    return _div_valid(dim, by)


@shape_fn("DepthToSpace")
def depth_to_space(ctx: InferenceContext) -> None:
    b = _blocksize(ctx)
    shape = _rank4(ctx)
    if shape is None:
        ctx.set_output(0, None)
        return
    n, c, h, w = shape
    ctx.set_output(0, (n, _divisible(ctx, c, b * b, "the channel dim"), d.mul(h, b), d.mul(w, b)))


@shape_fn("SpaceToDepth")
def space_to_depth(ctx: InferenceContext) -> None:
    b = _blocksize(ctx)
    shape = _rank4(ctx)
    if shape is None:
        ctx.set_output(0, None)
        return
    n, c, h, w = shape
    ctx.set_output(0, (n, d.mul(c, b * b), _divisible(ctx, h, b, "the height"), _divisible(ctx, w, b, "the width")))


@shape_fn("Col2Im")
def col2im(ctx: InferenceContext) -> None:
    shape = ctx.input_shape(0)
    image, block = _dims_in(ctx, 1), _ints_in(ctx, 2)
    if shape is not None and len(shape) != 3:
        raise ctx.fail("GL317", f"needs a 3-D input: {ctx.describe_input(0)}", input=0)
    if block is not None and any(b <= 0 for b in block):
        raise ctx.fail("GL317", f"block_shape {block} must be positive", input=2)
    if image is None:
        ctx.set_output(0, None)
        return
    n = shape[0] if shape is not None else None
    c = _divisible(ctx, shape[1], math.prod(block), "dim 1") if shape is not None and block is not None else None
    ctx.set_output(0, (n, c, *image))


# ---------------------------------------------------------------- generators
def _range_len(start: Any, limit: Any, delta: Any) -> Dim:
    # whole floats (0.0, 1.0) around a symbolic limit count as ints: Range(0.0, float(W), 1.0) has W elements
    if isinstance(limit, Expr) or isinstance(start, Expr):
        start, delta = (int(v) if isinstance(v, float) and v.is_integer() else v for v in (start, delta))
    if all(isinstance(v, int) for v in (start, limit, delta)):
        return max(0, -((start - limit) // delta))
    if all(isinstance(v, (int, float)) for v in (start, limit, delta)):
        return max(0, math.ceil((limit - start) / delta))
    if not isinstance(delta, int) or start is None or limit is None:
        return None
    span = d.sub(limit, start) if delta > 0 else d.sub(start, limit)
    return _max(d.ceildiv(span, abs(delta)), 0)


def _range_arg(ctx: InferenceContext, i: int) -> Any:
    const = _const(ctx, i)
    if const is not None and const.size == 1:
        v = const.reshape(-1)[0]
        return int(v) if const.dtype.kind in "iu" else float(v)
    return _scalar_in(ctx, i)


@shape_fn("Range")
def range_op(ctx: InferenceContext) -> None:
    start, limit, delta = (_range_arg(ctx, i) for i in range(3))
    if delta == 0:
        raise ctx.fail("GL317", "delta is 0", input=2)
    n = _range_len(start, limit, delta)
    ctx.set_output(0, (n,))
    ints = ctx.input_elem(0) in INT_ELEMS and isinstance(delta, int) and not isinstance(start, float)
    out = ctx.outputs[0]
    if ints and isinstance(delta, int) and delta > 0 and start is not None and limit is not None and out is not None:
        out.bounds = (start, d.sub(limit, 1))  # every element in [start, limit - 1] (none when empty)
    if isinstance(n, int) and n <= SV_CAP and ints and start is not None:
        _set_value(ctx, 0, sv=tuple(d.add(start, i * delta) for i in range(n)))
    _fold(ctx, lambda a, b, c: np.arange(a.item(), b.item(), c.item(), dtype=a.dtype), [0, 1, 2])


def _one_hot_depth(ctx: InferenceContext) -> Dim:
    const = _const(ctx, 1)
    depth: Dim = int(const.reshape(-1)[0]) if const is not None and const.size == 1 else _scalar_in(ctx, 1)
    if isinstance(depth, int) and depth < 0:
        raise ctx.fail("GL317", f"depth {depth} is negative", input=1)
    ds = ctx.input_shape(1)
    if ds is not None and (len(ds) > 1 or (ds and isinstance(ds[0], int) and ds[0] > 1)):
        raise ctx.fail("GL317", f"depth must be a scalar or have one element: {ctx.describe_input(1)}", input=1)
    vs = ctx.input_shape(2)
    if vs is not None and (len(vs) != 1 or (isinstance(vs[0], int) and vs[0] != 2)):
        raise ctx.fail("GL317", f"values must have two elements (off, on): {ctx.describe_input(2)}", input=2)
    return depth


@shape_fn("OneHot")
def one_hot(ctx: InferenceContext) -> None:
    depth = _one_hot_depth(ctx)
    shape = ctx.input_shape(0)
    if shape is None:
        ctx.set_output(0, None)
        return
    axis = _norm_axis(ctx, int(ctx.attr("axis", -1)), len(shape) + 1)
    ctx.set_output(0, shape[:axis] + (depth,) + shape[axis:])


@shape_fn("TopK")
def top_k(ctx: InferenceContext) -> None:
    shape = ctx.input_shape(0)
    k: Dim = ctx.attr("k") if _opset(ctx) < 10 else _scalar_in(ctx, 1)
    if shape is None:
        ctx.set_output(0, None)
        ctx.set_output(1, None, INT64)
        return
    axis = _norm_axis(ctx, int(ctx.attr("axis", -1)), len(shape))
    dim = shape[axis]
    where: int | str = "k" if _opset(ctx) < 10 else 1
    if isinstance(k, int) and (k < 0 or (isinstance(dim, int) and k > dim)):
        raise _fail(ctx, "GL317", f"k = {k} is not in 0..{d.to_str(dim)} for axis {axis} of "
                                  f"{ctx.describe_input(0)}", where)  # fmt: skip
    out = shape[:axis] + (k,) + shape[axis + 1 :]
    ctx.set_output(0, out)
    ctx.set_output(1, out, INT64)


# ---------------------------------------------------------------- data-dependent shapes
@shape_fn("NonZero")
def non_zero(ctx: InferenceContext) -> None:
    rank = ctx.input_rank(0)
    ctx.set_output(0, (rank, None), INT64)
    _fold(ctx, lambda x: np.array(np.nonzero(x), dtype=np.int64), [0])


@shape_fn("Compress")
def compress(ctx: InferenceContext) -> None:
    shape = ctx.input_shape(0)
    axis = ctx.attr("axis")
    cond = _const(ctx, 1)
    if axis is None:
        ctx.set_output(0, (None,))
        if cond is not None and shape is not None and all(isinstance(x, int) for x in shape):
            ctx.set_output(0, (int(np.count_nonzero(cond.reshape(-1)[: math.prod(shape)])),))  # type: ignore[arg-type]
    elif shape is None:
        ctx.set_output(0, None)
    else:
        a = _norm_axis(ctx, int(axis), len(shape))
        n = shape[a]
        kept = int(np.count_nonzero(cond.reshape(-1)[:n])) if cond is not None and isinstance(n, int) else None
        ctx.set_output(0, shape[:a] + (kept,) + shape[a + 1 :])
    _fold(ctx, lambda x, c: np.compress(c.reshape(-1), x, axis=axis), [0, 1])


@shape_fn("Unique")
def unique(ctx: InferenceContext) -> None:
    shape = ctx.input_shape(0)
    axis = ctx.attr("axis")
    a = _norm_axis(ctx, int(axis), len(shape)) if axis is not None and shape is not None else None
    if axis is None:
        ctx.set_output(0, (None,))
        inverse: Dim = d.product(shape) if shape is not None else None
    else:
        ctx.set_output(0, None if shape is None or a is None else shape[:a] + (None,) + shape[a + 1 :])
        inverse = shape[a] if shape is not None and a is not None else None
    for i, out in ((1, (None,)), (2, (inverse,)), (3, (None,))):
        ctx.set_output(i, out, INT64)
    x = _const(ctx, 0)
    if x is not None:
        _unique_fold(ctx, x, a)


def _unique_fold(ctx: InferenceContext, x: np.ndarray, axis: int | None) -> None:
    try:
        y, idx, inv, counts = np.unique(x, return_index=True, return_inverse=True, return_counts=True, axis=axis)
    except Exception:
        return
    ctx.set_output(0, tuple(int(s) for s in y.shape))
    for i, v in ((1, idx), (2, inv.reshape(-1)), (3, counts)):
        ctx.set_output(i, (int(v.size),), INT64)


# ---------------------------------------------------------------- same-shape ops with checks
@shape_fn("Trilu")
def trilu(ctx: InferenceContext) -> None:
    shape = ctx.input_shape(0)
    if shape is not None and len(shape) < 2:
        raise ctx.fail("GL317", f"needs an input of rank >= 2: {ctx.describe_input(0)}", input=0)
    ctx.copy_input(0)


@shape_fn("ReverseSequence")
def reverse_sequence(ctx: InferenceContext) -> None:
    shape, lens = ctx.input_shape(0), ctx.input_shape(1)
    if shape is not None and len(shape) < 2:
        raise ctx.fail("GL317", f"needs an input of rank >= 2: {ctx.describe_input(0)}", input=0)
    if lens is not None and len(lens) != 1:
        raise ctx.fail("GL317", f"sequence_lens must be 1-D: {ctx.describe_input(1)}", input=1)
    if shape is not None and lens is not None:
        b = _norm_axis(ctx, int(ctx.attr("batch_axis", 1)), len(shape), "batch_axis", "batch_axis")
        if d.equal(shape[b], lens[0]) is False:
            raise ctx.fail("GL317", f"sequence_lens has {d.to_str(lens[0])} entries but the batch dim of "
                                    f"{ctx.describe_input(0)} is {d.to_str(shape[b])}", input=1)  # fmt: skip
    ctx.copy_input(0)
