"""Operator lookup in onnx's schema registry: cached by (op, version, domain), plus the op names per domain.

The domains "" and "ai.onnx" are the same domain; everything here takes the normalized spelling "".
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from functools import cache

import onnx.defs
from onnx.defs import OpSchema


def normalize_domain(domain: str) -> str:
    return "" if domain == "ai.onnx" else domain


def domain_label(domain: str) -> str:
    """How messages name a domain: the default domain is ai.onnx."""
    return domain or "ai.onnx"


@cache
def schema_for(op_type: str, version: int, domain: str) -> OpSchema | None:
    """The schema onnx uses for the op at that opset version (the newest with since_version <= version)."""
    try:
        return onnx.defs.get_schema(op_type, version, domain)
    except (onnx.defs.SchemaError, TypeError, OverflowError):  # TypeError: a version past int32
        return None


@cache
def _history() -> dict[str, dict[str, list[tuple[int, bool]]]]:
    """domain -> op name -> [(since_version, deprecated)], oldest first."""
    out: dict[str, dict[str, list[tuple[int, bool]]]] = {}
    for s in onnx.defs.get_all_schemas_with_history():
        out.setdefault(normalize_domain(s.domain), {}).setdefault(s.name, []).append((s.since_version, s.deprecated))
    for ops in out.values():
        for versions in ops.values():
            versions.sort()
    return out


def known_domains() -> set[str]:
    """The domains onnx has schemas for ("", "ai.onnx.ml", "ai.onnx.preview.training", ...)."""
    return set(_history())


def op_versions(op_type: str, domain: str) -> list[tuple[int, bool]]:
    """Every (since_version, deprecated) of the op in the domain, oldest first; [] when onnx does not know it."""
    return _history().get(domain, {}).get(op_type, [])


def op_names(domain: str) -> list[str]:
    return sorted(_history().get(domain, {}))


def closest(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate closest to `name` (case-insensitive equality first, then difflib), or None.

    Linear in the candidates: for a large pool (a big graph's values) use `suggest.Suggester`.
    """
    lower = name.lower()
    n = len(name)
    near = []
    for c in candidates:
        if c == name:
            continue
        if c.lower() == lower:
            return c
        if abs(len(c) - n) <= max(2, n // 2):
            near.append(c)
    found = difflib.get_close_matches(name, near, n=1, cutoff=0.6)
    return found[0] if found else None
