"""Operator lookup in onnx's schema registry: cached by (op, version, domain), plus the op names per domain.

The domains "" and "ai.onnx" are the same domain; everything here takes the normalized spelling "".

The versions of every op (`op_versions`, `known_domains`, `op_names`) come from onnx's whole schema history, which
takes onnx about 8 ms to hand over as 2,000 schema objects; the table is kept in the user's cache folder, as
marshal data (about 1 ms to read), keyed by the onnx build it was read from.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import marshal
import os
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import Any

import onnx
import onnx.defs
from onnx.defs import OpSchema

from graphlsp.files import cache_dir


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
    """domain -> op name -> [(since_version, deprecated)], oldest first: from the cache when this onnx build was
    read before, else from onnx (and cached)."""
    return onnx_build_table("onnx-history", _read_history)


def onnx_build_table(stem: str, build: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """A table read from onnx (`build()`, marshal-able), kept in the user's cache per onnx build
    (`onnx_build_file`): read from there when it was built before."""
    cached = onnx_build_file(stem)
    if cached is not None:
        with contextlib.suppress(OSError, ValueError, EOFError, TypeError):
            data = marshal.loads(cached.read_bytes())
            if isinstance(data, dict):
                return data
    out = build()
    if cached is not None:
        tmp = cached.with_name(f"{cached.name}.{os.getpid()}.tmp")
        with contextlib.suppress(OSError, ValueError):
            tmp.write_bytes(marshal.dumps(out))
            os.replace(tmp, cached)
    return out


def onnx_build_file(stem: str) -> Path | None:
    """A cache file of a table read from this onnx build: named by onnx's version and its schema library's file
    (path, size and time), so another onnx, or the same version rebuilt, is read again."""
    lib = getattr(onnx.onnx_cpp2py_export, "__file__", None)
    folder = cache_dir()
    if lib is None or folder is None:
        return None
    try:
        st = os.stat(lib)
    except OSError:
        return None
    key = hashlib.sha256(f"{onnx.__version__}\0{lib}\0{st.st_size}\0{st.st_mtime_ns}".encode()).hexdigest()[:16]
    return folder / f"{stem}-{onnx.__version__}-{key}.marshal"


def _read_history() -> dict[str, dict[str, list[tuple[int, bool]]]]:
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
