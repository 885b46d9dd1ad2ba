"""onnx 1.23's parser semantics for values, without importing onnx.

Shared by the tree builder (which records a problem wherever onnx's parser would reject the text) and
`to_proto.py` (which builds the protos): the type codes, the number conversions with onnx's range rules, and
the way an attribute's type follows from its annotation and its value(s).

Reference: onnx/defs/parser.cc (`ParserBase::Parse(Literal&)`, `OnnxParser::ParseSingleAttributeValue`,
`OnnxParser::Parse(AttributeProto&, std::string&)`, `OnnxParser::Parse(TensorProto&, const TypeProto&)`).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from graphlsp.lazymodule import lazy_module

if TYPE_CHECKING:
    from graphlsp.syntax import tree as t
else:
    t = lazy_module("graphlsp.syntax.tree", globals(), "t")  # read when a text is analysed

# TensorProto.DataType, as onnx's PrimitiveTypeNameMap spells them.
ELEM_TYPES: dict[str, int] = {
    "float": 1, "uint8": 2, "int8": 3, "uint16": 4, "int16": 5, "int32": 6, "int64": 7, "string": 8, "bool": 9,
    "float16": 10, "double": 11, "uint32": 12, "uint64": 13, "complex64": 14, "complex128": 15, "bfloat16": 16,
    "float8e4m3fn": 17, "float8e4m3fnuz": 18, "float8e5m2": 19, "float8e5m2fnuz": 20, "uint4": 21, "int4": 22,
    "float4e2m1": 23, "float8e8m0": 24, "uint2": 25, "int2": 26, "float6e2m3": 27, "float6e3m2": 28,
}  # fmt: skip

# Which repeated field of TensorProto a `{...}` literal fills, by element type name.
INT32_DATA = {
    "int2", "int4", "int8", "int16", "int32", "uint2", "uint4", "uint8", "uint16", "float16", "bfloat16",
    "float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz", "float8e8m0", "float6e2m3", "float6e3m2",
    "bool", "float4e2m1",
}  # fmt: skip
INT64_DATA = {"int64"}
UINT64_DATA = {"uint32", "uint64"}
FLOAT_DATA = {"float", "complex64"}
DOUBLE_DATA = {"double", "complex128"}
STRING_DATA = {"string"}


def data_field(elem: str) -> str:
    """The TensorProto field that holds `{...}` values of this element type."""
    if elem in INT32_DATA:
        return "int32_data"
    if elem in FLOAT_DATA:
        return "float_data"
    if elem in INT64_DATA:
        return "int64_data"
    if elem in UINT64_DATA:
        return "uint64_data"
    if elem in DOUBLE_DATA:
        return "double_data"
    return "string_data"


# AttributeProto.AttributeType
UNDEFINED, FLOAT, INT, STRING, TENSOR, GRAPH, FLOATS, INTS, STRINGS, TENSORS, GRAPHS = range(11)
SPARSE_TENSOR, SPARSE_TENSORS, TYPE_PROTO, TYPE_PROTOS = 11, 12, 13, 14
ATTR_TYPES: dict[str, int] = {
    "float": FLOAT, "int": INT, "string": STRING, "tensor": TENSOR, "graph": GRAPH, "sparse_tensor": SPARSE_TENSOR,
    "type_proto": TYPE_PROTO, "floats": FLOATS, "ints": INTS, "strings": STRINGS, "tensors": TENSORS,
    "graphs": GRAPHS, "sparse_tensors": SPARSE_TENSORS, "type_protos": TYPE_PROTOS,
}  # fmt: skip
ATTR_TYPE_NAMES = {v: k.upper() for k, v in ATTR_TYPES.items()} | {UNDEFINED: "UNDEFINED"}
_SINGLETON = {FLOATS: FLOAT, INTS: INT, STRINGS: STRING, TENSORS: TENSOR, GRAPHS: GRAPH,
              SPARSE_TENSORS: SPARSE_TENSOR, TYPE_PROTOS: TYPE_PROTO}  # fmt: skip
_SINGLETON_TYPES = {FLOAT, INT, STRING, TENSOR, GRAPH, SPARSE_TENSOR, TYPE_PROTO}
# A list element of these types is appended (and sets the list's type); any other element is parsed and dropped.
LIST_OF = {INT: INTS, FLOAT: FLOATS, STRING: STRINGS}


def to_singleton(code: int) -> int:
    return _SINGLETON.get(code, code)


# ---- numbers

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
UINT64_MAX = 2**64 - 1
_F32 = struct.Struct("<f")
_F64 = struct.Struct("<d")
_U64 = struct.Struct("<Q")
_F32_MAX = 3.4028234663852886e38
_TWO_150 = 2.0**150
_SUBNORMAL_F32 = 2.0**-126
_F32_OVERFLOW_MID = 2.0**128 - 2.0**103  # halfway between FLT_MAX and 2**128: the overflow threshold
_WORDS = {"inf", "infinity", "nan"}


class NumberError(ValueError):
    """A literal that onnx's parser rejects (out of range for its type)."""


def is_word(text: str) -> bool:
    """inf / infinity / nan in any case, with an optional sign."""
    return text.lstrip("-+").lower() in _WORDS


def _is_f32_midpoint(d: float) -> bool:
    """Is the double d exactly halfway between two adjacent float32 values? (Then double rounding may err.)"""
    a = abs(d)
    if a < _SUBNORMAL_F32:
        s = a * _TWO_150  # exact: scaling by a power of two
        return s.is_integer() and int(s) % 2 == 1
    return (_U64.unpack(_F64.pack(d))[0] & 0x1FFFFFFF) == 0x10000000


def _f32_exact(text: str, d: float) -> float:
    """Correct decimal -> float32 rounding when the double d of `text` sits exactly on a float32 midpoint."""
    from fractions import Fraction  # 1-2 ms of imports (decimal, ...), for a rare literal

    exact = Fraction(text)
    mid = Fraction(d)
    if abs(d) == _F32_OVERFLOW_MID:
        if abs(exact) >= abs(mid):
            raise NumberError(f"{text} is out of range for float")
        return math.copysign(_F32_MAX, d)
    r = _F32.unpack(_F32.pack(d))[0]  # round half to even
    other = 2 * d - r
    if exact == mid:
        return r
    below, above = (r, other) if r < other else (other, r)
    return below if exact < mid else above


def float32(text: str) -> float:
    """onnx's LocaleIndependentStof(text): correctly rounded to float32; overflow is an error (underflow is not).

    The text is parsed, not the literal's value, so that an int literal `-0` gives -0.0 as in onnx.
    """
    d = float(text)  # correctly rounded to double; a decimal beyond double range gives inf
    if d != d:
        return d
    if math.isinf(d):
        if is_word(text):
            return d
        raise NumberError(f"{text} is out of range for float")
    if _is_f32_midpoint(d):
        return _f32_exact(text, d)
    try:
        return _F32.unpack(_F32.pack(d))[0]
    except OverflowError:
        raise NumberError(f"{text} is out of range for float") from None


def float32_list(lits: Iterable[t.Literal]) -> list[float]:
    """float32() of many literals (the common case fast: no midpoint, no overflow)."""
    pack, unpack = _F32.pack, _F32.unpack
    out = []
    for lit in lits:
        v = lit.value
        if lit.kind == "float" and abs(v) <= _F32_MAX and not _is_f32_midpoint(v):  # type: ignore[arg-type]
            out.append(unpack(pack(v))[0])
        else:
            out.append(float32(lit.text))
    return out


def float64(text: str) -> float:
    """onnx's LocaleIndependentStod(text): overflow is an error (underflow is not)."""
    d = float(text)
    if math.isinf(d) and not is_word(text):
        raise NumberError(f"{text} is out of range for double")
    return d


def int64(value: int, text: str) -> int:
    """std::stoll: out of range is an error."""
    if not INT64_MIN <= value <= INT64_MAX:
        raise NumberError(f"{text} is out of range for int64")
    return value


def uint64(value: int, text: str) -> int:
    """std::stoull: a leading '-' negates modulo 2**64; a magnitude beyond 2**64 - 1 is an error."""
    if abs(value) > UINT64_MAX:
        raise NumberError(f"{text} is out of range for uint64")
    return value % (2**64)


def tensor_value(elem: str, lit: t.Literal) -> int | float | str:
    """One `{...}` element of a tensor of element type `elem`, as onnx stores it; NumberError if onnx rejects it."""
    kind = lit.kind
    if elem in INT32_DATA or elem in INT64_DATA or elem in UINT64_DATA:
        if kind != "int":
            raise NumberError(f"{elem} data takes integers, not {lit.text}")
        if elem in UINT64_DATA:
            return uint64(lit.value, lit.text)  # type: ignore[arg-type]
        v = int64(lit.value, lit.text)  # type: ignore[arg-type]
        if elem in INT32_DATA and not INT32_MIN <= v <= INT32_MAX:
            raise NumberError(f"{lit.text} does not fit the int32 storage of {elem} data")
        return v
    if elem in STRING_DATA:
        if kind != "string":
            raise NumberError(f"string data takes quoted strings, not {lit.text}")
        return lit.value
    if kind == "string":
        raise NumberError(f"{elem} data takes numbers, not a string")
    if elem in DOUBLE_DATA:
        return float64(lit.text)
    return float32(lit.text)


_F64_MAX = 1.7976931348623157e308


def numbers_array(elem: str, nums: t.Numbers) -> np.ndarray | None:
    """A Numbers list as the values onnx stores for a tensor of element type `elem` (float32 for float and
    complex64, float64 for double and complex128, int64 for the types stored as integers), all at once: None when
    some element is not plainly valid (out of range, a float where an integer is required), for the element by
    element path to say which. float32 values are rounded from the text exactly as `float32()` rounds them."""
    parts = nums.parts()
    if elem in FLOAT_DATA or elem in DOUBLE_DATA:
        try:
            d = np.array(parts, dtype=np.float64)
        except (ValueError, OverflowError):
            return None
        a = np.abs(d)
        if not np.isfinite(d).all() or (a > (_F32_MAX if elem in FLOAT_DATA else _F64_MAX)).any():
            return None
        if elem in DOUBLE_DATA:
            return d
        f = d.astype(np.float32)
        mid = (d.view(np.uint64) & 0x1FFFFFFF) == 0x10000000  # on a float32 midpoint: double rounding may err
        small = a < _SUBNORMAL_F32
        if small.any():
            scaled = a[small] * _TWO_150
            mid[small] = (scaled == np.floor(scaled)) & (np.fmod(scaled, 2.0) == 1.0)
        for i in np.flatnonzero(mid):
            f[i] = float32(parts[i].strip())
        return f
    if elem in STRING_DATA or "." in nums.text or "e" in nums.text or "E" in nums.text:
        return None
    try:
        v = np.array(parts, dtype=np.int64)
    except (ValueError, OverflowError):
        return None
    if elem in INT32_DATA and v.size and (v.min() < INT32_MIN or v.max() > INT32_MAX):
        return None
    return v


# ---- tensors


def tensor_type_problem(ty: t.TypeRef | None) -> str | None:
    """onnx parses tensor data only for a tensor type of known rank with numeric dims."""
    if ty is None or ty.kind != "tensor":
        return "tensor data needs a tensor type such as float[2, 3]"
    if ty.dims is None:
        return "tensor data needs a known shape: `float[]` is a tensor of unknown rank"
    for d in ty.dims:
        if d.kind != "value":
            return "the dims of a tensor with data must be numbers"
    return None


def tensor_problems(
    ty: t.TypeRef | None, data: t.TensorData | None, start: int, end: int
) -> list[tuple[str, int, int]]:
    """Where onnx's parser would reject `type [name] = data`: (message, start, end) for each problem."""
    problems: list[tuple[str, int, int]] = []
    msg = tensor_type_problem(ty)
    if msg is not None:
        problems.append((msg, start, end))
        return problems
    assert ty is not None and ty.elem is not None
    if data is None:
        return problems
    if data.values is not None:
        elem = ty.elem
        if isinstance(data.values, t.Numbers) and numbers_array(elem, data.values) is not None:
            return problems  # every element valid, checked at once
        # the fast path: a number well inside the type's range needs no conversion
        ok_kinds: tuple[str, ...]
        if elem in FLOAT_DATA or elem in DOUBLE_DATA:
            limit = _F32_MAX if elem in FLOAT_DATA else 1.7976931348623157e308
            ok_kinds = ("int", "float")
        elif elem in STRING_DATA:
            limit, ok_kinds = 0.0, ("string",)
        else:
            limit = INT32_MAX if elem in INT32_DATA else INT64_MAX
            ok_kinds = ("int",)
        for lit in data.values:
            if lit.kind in ok_kinds and (lit.kind == "string" or -limit <= lit.value <= limit):  # type: ignore[operator]
                continue
            try:
                tensor_value(elem, lit)
            except NumberError as e:
                problems.append((str(e), lit.start, lit.end))
                break
    elif data.external is not None:
        if not data.external:
            problems.append(('external data needs at least one "key": "value" entry', data.start, data.end))
        for kv in data.external:
            if kv.value.kind != "string":
                problems.append(('external data entries are "key": "value" strings', kv.start, kv.end))
                break
    return problems


# ---- attributes


def single_type(value: t.AttrValue, expected: int, in_list: bool) -> int:
    """The type ParseSingleAttributeValue gives one value. A `@ref` keeps the type it had (none in a list)."""
    if isinstance(value, t.LiteralValue):
        kind = value.literal.kind
        if kind == "int":
            return FLOAT if expected == FLOAT else INT
        return FLOAT if kind == "float" else STRING
    if isinstance(value, t.TensorValue):
        return TENSOR
    if isinstance(value, t.TypeValue):
        return TYPE_PROTO
    if isinstance(value, t.GraphValue):
        return GRAPH
    if isinstance(value, t.RefValue):
        return UNDEFINED if in_list else expected
    return UNDEFINED


def _literal_problem(value: t.AttrValue, got: int) -> str | None:
    if not isinstance(value, t.LiteralValue):
        return None
    lit = value.literal
    try:
        if got == INT:
            int64(lit.value, lit.text)  # type: ignore[arg-type]
        elif got == FLOAT:
            float32(lit.text)
    except NumberError as e:
        return str(e)
    return None


def _mismatch(expected: int, got: int) -> str:
    return f"the attribute is declared {ATTR_TYPE_NAMES[expected]} but the value is {ATTR_TYPE_NAMES[got]}"


def attribute_problem(declared: t.Name | None, value: t.AttrValue | None, in_function: bool = False) -> str | None:
    """Why onnx's parser rejects `name[: declared] = value`, or None.

    A function's attribute default (`in_function`) is parsed by the same code, but onnx ignores the error when a
    single value does not match the annotation (the value's own type wins); errors inside a list still fail.
    """
    if value is None:
        return None
    code = ATTR_TYPES.get(declared.value, UNDEFINED) if declared is not None else UNDEFINED
    if isinstance(value, t.ListValue):
        if not value.items:
            if code == UNDEFINED:
                return "an empty list needs a type annotation, e.g. `axes: ints = []`"
            if code in _SINGLETON_TYPES:
                return f"a {ATTR_TYPE_NAMES[code]} attribute cannot be given a list"
            return None
        current = code
        for item in value.items:
            expected = to_singleton(current)
            got = single_type(item, expected, in_list=True)
            msg = _literal_problem(item, got)
            if msg is not None:
                return msg
            if expected != UNDEFINED and expected != got:
                return f"a list of {ATTR_TYPE_NAMES[expected]} cannot hold a {ATTR_TYPE_NAMES[got]} value"
            current = LIST_OF.get(got, current)
        return None
    got = single_type(value, code, in_list=False)
    msg = _literal_problem(value, got)
    if msg is not None:
        return msg
    if code != UNDEFINED and code != got and not in_function:
        return _mismatch(code, got)
    return None
