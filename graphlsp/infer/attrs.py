"""A node's attributes as the Python values shape functions read.

int -> int, float -> float, string -> str, lists -> list, tensor -> numpy array when it is small (a lazy
`Tensor` otherwise: its dtype and shape are known without reading it), graph -> the attribute's name (the
graphs are the node's subgraphs), type_proto -> TypeSpec, `@ref` -> Ref (bound by the caller of a function).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from graphlsp.graph.core import Attr, Ref, TypeSpec
from graphlsp.graph.tensor import Tensor, TensorError

__all__ = ["DECODE_CAP", "Ref", "attribute_values", "non_finite", "plain", "value_problem"]

DECODE_CAP = 1 << 16  # bytes: a tensor attribute this small is decoded for the shape functions


def plain(value: Any) -> Any:
    """A small tensor as a numpy array (None when it cannot be decoded); anything else as it is."""
    if isinstance(value, Tensor) and value.nbytes <= DECODE_CAP:
        try:
            return value.numpy()
        except TensorError:
            return None
        except Exception:  # a malformed literal or protobuf: the checks report it
            return None
    return value


def attribute_values(attributes: dict[str, Attr]) -> dict[str, Any]:
    return {name: plain(a.value) for name, a in attributes.items()}


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _number(v: Any) -> bool:
    return isinstance(v, float) or (_is_int(v) and INT64_MIN <= v <= INT64_MAX)


def _tensor(v: Any) -> bool:
    return isinstance(v, (Tensor, np.ndarray))


_SINGLE: dict[str, Callable[[Any], bool]] = {
    "int": _is_int, "float": _number, "string": lambda v: isinstance(v, str), "tensor": _tensor,
    "graph": lambda v: isinstance(v, str), "type_proto": lambda v: isinstance(v, TypeSpec),
    "sparse_tensor": lambda v: True,
}  # fmt: skip


_PLAIN: dict[str, type] = {"int": int, "float": float, "string": str, "tensor": np.ndarray}  # the common kinds


def _what(v: Any) -> str:
    if isinstance(v, list):
        bad = next((x for x in v if not _is_int(x)), v[0] if v else None)
        return f"a list holding {_what(bad)}" if v else "an empty list"
    if _is_int(v):
        return f"{v}" if len(str(v)) <= 24 else "an int of more than 24 digits"
    return {float: "a float", str: "a string", bool: "a bool"}.get(type(v), type(v).__name__)


def value_problem(type_name: str, value: Any) -> tuple[str, bool] | None:
    """Why `value` cannot be an attribute of the schema's type `type_name` (int, floats, tensor, ...), and whether
    the front end has said so already (an int outside int64, a list of mixed kinds: the text reports them); None
    when it can. None values are absent attributes (the schema's default applies)."""
    kind = type(value)
    if kind is _PLAIN.get(type_name) and (kind is not int or INT64_MIN <= value <= INT64_MAX):
        return None  # nearly every attribute of every node: the value is of the schema's kind
    if value is None or type_name in ("graph", "graphs"):  # a graph's value is its attribute's name
        return None
    many = type_name.endswith("s") and type_name[:-1] in _SINGLE
    check = _SINGLE.get(type_name[:-1] if many else type_name)
    if check is None:
        return None
    items = value if many else [value]
    if many and not isinstance(value, list):
        return f"must be {type_name}, got {_what(value)}", False
    for x in items:
        if _is_int(x) and not INT64_MIN <= x <= INT64_MAX:
            return f"{_what(x)} is outside int64", True
        if not check(x):
            mixed = many and len({type(y) for y in items}) > 1
            return f"must be {type_name}, got {_what(value)}", mixed
    return None


def non_finite(values: Any) -> str | None:
    """'nan', 'inf' or '-inf' when a float value (array, list or number) holds one, else None."""
    if values is None or isinstance(values, (str, Tensor)):
        return None
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        return None
    if arr.dtype.kind != "f" or arr.size == 0 or bool(np.isfinite(arr).all()):
        return None
    bad = arr[~np.isfinite(arr)].reshape(-1)[0]
    return "nan" if bad != bad else ("inf" if bad > 0 else "-inf")
