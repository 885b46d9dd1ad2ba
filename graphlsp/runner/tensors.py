"""Tensor helpers for the runner: byte sizes (of values and of inferred types), previews and Constant text.

A runtime value is a numpy array, a list of arrays (a sequence) or `None` (an empty optional). Sizes count the
bytes a value holds (strings: their UTF-8 length), so one cap bounds every kind of value.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from graphlsp.graph import enums
from graphlsp.graph.enums import TensorProto
from graphlsp.infer.types import TensorType, ValueType, elem_name

STRING_BYTES = 16  # the size assumed for a string element whose text is not known yet


def elem_itemsize(elem: int | None) -> int | None:
    """Bytes per element of an onnx element type (None when unknown or not a numpy type)."""
    if elem is None:
        return None
    try:
        return _ITEMSIZE[elem]
    except KeyError:
        pass
    except TypeError:  # not hashable: no element type
        return None
    size: int | None
    if elem == TensorProto.STRING:
        size = STRING_BYTES
    else:
        try:
            size = int(np.dtype(enums.tensor_dtype_to_np_dtype(elem)).itemsize)
        except Exception:
            size = None
    _ITEMSIZE[elem] = size
    return size


_ITEMSIZE: dict[int, int | None] = {}  # elem -> elem_itemsize (a numpy dtype made per call cost 10 us)


def static_shape(ty: ValueType) -> tuple[int, ...] | None:
    """The shape of a tensor type whose dims are all known ints."""
    if not isinstance(ty, TensorType) or ty.shape is None:
        return None
    if not all(isinstance(x, int) for x in ty.shape):
        return None
    return tuple(int(x) for x in ty.shape)  # type: ignore[arg-type]


def type_bytes(ty: ValueType) -> int | None:
    """The bytes a value of this type holds, when its element type and every dim are known."""
    if not isinstance(ty, TensorType):
        return None
    shape = ty.shape
    if shape is None:
        return None
    count = 1
    for x in shape:  # (static_shape's test, without its tuple: this runs for most values of a check)
        if not isinstance(x, int):
            return None
        count *= x
    size = elem_itemsize(ty.elem)
    return None if size is None else count * size


def nbytes(value: Any) -> int:
    """The bytes a runtime value holds (a broadcast view counts as what it would take written out)."""
    if value is None:
        return 0
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            return sum(len(str(x).encode("utf-8")) for x in value.reshape(-1)) + value.size
        return int(value.size * value.dtype.itemsize)
    if isinstance(value, (list, tuple)):
        return sum(nbytes(x) for x in value)
    if isinstance(value, dict):
        return sum(nbytes(x) for x in value.values())
    return 16


def dtype_name(arr: np.ndarray) -> str:
    """The ONNX text name of an array's element type (`float`, `int64`, `string`)."""
    if arr.dtype == object or arr.dtype.kind in "US":
        return "string"
    try:
        return elem_name(enums.np_dtype_to_tensor_dtype(arr.dtype))
    except Exception:
        return str(arr.dtype)


def _scalar_str(x: Any) -> str:
    if isinstance(x, (bytes, str)):
        s = x.decode("utf-8", "replace") if isinstance(x, bytes) else x
        return repr(s if len(s) <= 16 else s[:13] + "...")
    if isinstance(x, (np.floating, float)):
        return f"{float(x):.6g}"
    if isinstance(x, (np.bool_, bool)):
        return "true" if x else "false"
    return str(x)


def preview(value: Any, count: int = 8) -> str:
    """`int64[4] [0, 0, 2, 8]`, `float 0.353553`, `float[64, 3] [0.1, 0.2, ...]`: type, shape, first elements."""
    if value is None:
        return "an empty optional"
    if isinstance(value, list):
        return f"a sequence of {len(value)} tensor{'s' if len(value) != 1 else ''}"
    if not isinstance(value, np.ndarray):
        return type(value).__name__
    name = dtype_name(value)
    flat = value.reshape(-1)
    items = ", ".join(_scalar_str(x) for x in flat[:count])
    if value.ndim == 0:
        return f"{name} {items}"
    more = ", ..." if flat.size > count else ""
    return f"{name}[{', '.join(str(s) for s in value.shape)}] [{items}{more}]"


# A folded constant as onnx's printer writes it, without importing onnx (a quarter of a second): its names bare
# when they are C identifiers, else quoted with `\\` and `"` escaped; integers as decimals; floats as std::to_chars
# writes them (the shortest digits that round-trip, fixed or scientific, whichever is shorter, fixed on a tie).
# Anything else (NaN, float16, strings, a name holding NUL) is left to onnx's printer.
_BARE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_ELEM_WORDS = {np.dtype(t): t for t in ("int64", "int32", "int16", "int8", "uint64", "uint32", "uint16", "uint8",
                                        "float32", "float64", "bool")}  # fmt: skip
_ELEM_WORDS[np.dtype("float32")], _ELEM_WORDS[np.dtype("float64")] = "float", "double"


def _printed_name(name: str) -> str | None:
    if _BARE.match(name):
        return name
    if "\0" in name:
        return None
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _to_chars(x: np.floating) -> str | None:
    """A float as std::to_chars writes it with no format given; None for NaN (whose sign onnx's printer shows)."""
    if np.isnan(x):
        return None
    if np.isinf(x):
        return "-inf" if x < 0 else "inf"
    sci = np.format_float_scientific(x, unique=True, trim="-", exp_digits=2)
    mantissa, exponent = sci.split("e")
    sign = "-" if mantissa.startswith("-") else ""
    digits = mantissa.lstrip("-").replace(".", "")
    e = int(exponent)
    if e >= len(digits) - 1:
        fixed = sign + str(abs(int(x)))  # every digit of the integer, as to_chars writes it in fixed form
    elif e >= 0:
        fixed = sign + digits[: e + 1] + "." + digits[e + 1 :]
    else:
        fixed = sign + "0." + "0" * (-e - 1) + digits
    return fixed if len(fixed) <= len(sci) else sci


def _quick_constant_text(name: str, value: Any, label: str | None) -> str | None:
    if not isinstance(value, np.ndarray):
        return None
    elem = _ELEM_WORDS.get(value.dtype)
    printed = _printed_name(name)
    tag = _printed_name(label) if label is not None else ""
    if elem is None or printed is None or tag is None:
        return None
    flat = value.reshape(-1)
    if value.dtype.kind == "f":
        items = [_to_chars(x) for x in flat]
        if None in items:
            return None
        numbers = ",".join(items)  # type: ignore[arg-type]
    else:
        numbers = ",".join(map(str, (flat.view(np.uint8) if elem == "bool" else flat).tolist()))
    dims = f"[{','.join(map(str, value.shape))}]" if value.ndim else ""
    head = f"[{tag}] " if label is not None else ""
    return f"{head}{printed} = Constant <value: tensor = {elem}{dims} {{{numbers}}}> ()"


def constant_node_text(name: str, value: np.ndarray, label: str | None = None) -> str | None:
    """`[label] name = Constant <value: tensor = int64[4] {0,0,2,8}> ()` as onnx's printer writes it; None when
    the value cannot be written as text (complex or 4-bit types, which the printer elides)."""
    quick = _quick_constant_text(name, value, label)
    if quick is not None:
        return quick
    import onnx.printer
    from onnx import helper, numpy_helper

    if not isinstance(value, np.ndarray):
        return None
    try:
        tensor = numpy_helper.from_array(value if value.flags.c_contiguous else value.copy())  # 0-d stays 0-d
    except Exception:
        return None
    kwargs: dict[str, Any] = {"name": label} if label is not None else {}
    node = helper.make_node("Constant", [], [name], value=tensor, **kwargs)
    text = onnx.printer.to_text(node).strip()
    if "..." in text.split("=", 2)[-1].split("{", 1)[0] or "]...>" in text or "...>" in text:
        return None
    return text
