"""A node's attributes as the Python values shape functions read.

int -> int, float -> float, string -> str, lists -> list, tensor -> numpy array when it is small (a lazy
`Tensor` otherwise: its dtype and shape are known without reading it), graph -> the attribute's name (the
graphs are the node's subgraphs), type_proto -> TypeSpec, `@ref` -> Ref (bound by the caller of a function).
"""

from __future__ import annotations

from typing import Any

from graphlsp.graph.core import Attr, Ref
from graphlsp.graph.tensor import Tensor, TensorError

__all__ = ["DECODE_CAP", "Ref", "attribute_values", "plain"]

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
