"""The shape-function registry: functions registered by (domain, op, since version).

    @shape_fn("Relu")                 # every version
    @shape_fn("Squeeze", since=13)    # from opset 13 on (axes became an input)

`lookup(domain, op, version)` returns the function registered with the greatest `since` <= version. It imports only
the family module that registers the op (`index.FAMILY_OF`): a check of a model loads the families its ops use.
"""

from __future__ import annotations

import importlib
from bisect import bisect_right
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from graphlsp.ops.index import FAMILY_OF

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
_FOUND: dict[tuple[str, str, int | None], ShapeFn] = {}  # lookup's answers from _REGISTRY (a check asks per node)
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
        _FOUND.clear()
        return fn

    return register


def unregister(op: str, domain: str = "") -> None:
    """Forget every shape function registered for the op (tests register their own for a while)."""
    _REGISTRY.pop((domain, op), None)
    _FOUND.clear()


def import_families(families: Iterable[str]) -> None:
    """Import the named family modules (each registers its shape functions on import); one that is not there is
    passed over."""
    for family in families:
        try:
            importlib.import_module(f"graphlsp.ops.{family}")
        except ModuleNotFoundError as e:
            if e.name != f"graphlsp.ops.{family}":
                raise


def family_index() -> dict[tuple[str, str], str]:
    """(domain, op) -> the family module registering its shape functions, read from the registry once every family
    is loaded (what `index.FAMILY_OF` holds: `python tools/ops_index.py` writes it)."""
    load_all()
    out: dict[tuple[str, str], str] = {}
    for key, entries in sorted(_REGISTRY.items()):
        modules = {fn.__module__ for _, fn in entries}
        if len(modules) != 1 or not next(iter(modules)).startswith("graphlsp.ops."):
            raise ValueError(f"{key} is registered by {sorted(modules)}: the index names one family per op")
        out[key] = next(iter(modules)).removeprefix("graphlsp.ops.")
    return out


def load_all() -> None:
    """Import every family module."""
    global _loaded
    if _loaded:
        return
    import_families(FAMILIES)
    _loaded = True


def lookup(domain: str, op: str, version: int | None) -> ShapeFn | None:
    found = _FOUND.get((domain, op, version))
    if found is not None:
        return found
    key = ("" if domain == "ai.onnx" else domain, op)
    if not _loaded:
        family = FAMILY_OF.get(key)
        if family is not None:
            import_families((family,))
    entries = _REGISTRY.get(key)
    if not entries:  # the fallback's answer is not kept: op libraries come and go
        return fallback(domain, op, version) if fallback is not None else None
    if version is None:
        found = entries[-1][1]
    else:
        i = bisect_right([e[0] for e in entries], version) - 1
        found = entries[i][1] if i >= 0 else None
    if found is not None:
        _FOUND[(domain, op, version)] = found
    return found


def registered_ops(domain: str = "") -> list[str]:
    load_all()
    return sorted(op for (dom, op) in _REGISTRY if dom == domain)
