"""The shape-function registry: functions registered by (domain, op, since version).

    @shape_fn("Relu")                 # every version
    @shape_fn("Squeeze", since=13)    # from opset 13 on (axes became an input)

`lookup(domain, op, version)` returns the function registered with the greatest `since` <= version.
"""

from __future__ import annotations

import importlib
from bisect import bisect_right
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from graphlsp.infer.context import InferenceContext

ShapeFn = Callable[["InferenceContext"], None]

FAMILIES = [
    "elementwise", "math", "nn",
    "casts", "reshape", "concat", "indexing", "padding", "resize", "selection",  # the tensor ops
    "reduction", "controlflow", "sequence", "generator",
    "misc",  # the ops no family before it covers (`misc.fallback_fn`)
    "ml",
    "contrib",  # Python rules behind op-library declarations (`shape python`)
]  # fmt: skip

_REGISTRY: dict[tuple[str, str], list[tuple[int, ShapeFn]]] = {}
_loaded = False
# Where an op has no Python rule: the shape contracts of op libraries (`graphlsp.ops.library` installs it).
fallback: Callable[[str, str, int | None], ShapeFn | None] | None = None


def shape_fn(*ops: str, since: int = 1, domain: str = "") -> Callable[[ShapeFn], ShapeFn]:
    def register(fn: ShapeFn) -> ShapeFn:
        for op in ops:
            entries = _REGISTRY.setdefault((domain, op), [])
            entries[:] = [e for e in entries if e[0] != since]
            entries.append((since, fn))
            entries.sort(key=lambda e: e[0])
        return fn

    return register


def import_families(families: Iterable[str]) -> None:
    """Import the named family modules (each registers its shape functions on import); one that is not there is
    passed over."""
    for family in families:
        try:
            importlib.import_module(f"graphlsp.ops.{family}")
        except ModuleNotFoundError as e:
            if e.name != f"graphlsp.ops.{family}":
                raise


def load_all() -> None:
    """Import every family module."""
    global _loaded
    if _loaded:
        return
    import_families(FAMILIES)
    _loaded = True


def lookup(domain: str, op: str, version: int | None) -> ShapeFn | None:
    load_all()
    entries = _REGISTRY.get(("" if domain == "ai.onnx" else domain, op))
    if not entries:
        return fallback(domain, op, version) if fallback is not None else None
    if version is None:
        return entries[-1][1]
    i = bisect_right([e[0] for e in entries], version) - 1
    return entries[i][1] if i >= 0 else None


def registered_ops(domain: str = "") -> list[str]:
    load_all()
    return sorted(op for (dom, op) in _REGISTRY if dom == domain)
