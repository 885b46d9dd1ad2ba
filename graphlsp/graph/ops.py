"""Operator lookup in onnx's schemas: by (op, version, domain), plus the op names per domain.

The domains "" and "ai.onnx" are the same domain; everything here takes the normalized spelling "".

Nothing here asks onnx's schema registry during a check: onnx builds it on the first `get_schema` (20-30 ms).
The versions of every op (`op_versions`, `known_domains`, `op_names`) come from onnx's whole schema history, and
each schema's signature, function facts and bodies from a table of every schema (`schemas`, `SchemaRef`); both
are read from onnx once per onnx build and kept in the user's cache folder as marshal data (about 1 ms to read).
"""

from __future__ import annotations

import marshal
import os
from collections.abc import Callable, Iterable
from functools import cache
from typing import Any

from graphlsp.files import cache_dir, digest, keep, read_kept


def normalize_domain(domain: str) -> str:
    return "" if domain == "ai.onnx" else domain


def domain_label(domain: str) -> str:
    """How messages name a domain: the default domain is ai.onnx."""
    return domain or "ai.onnx"


class SchemaRef:
    """onnx's schema of an op at one version, read from a table of every schema kept per onnx build (`schemas`):
    onnx's registry of schemas is built on its first `get_schema` (20-30 ms), which a check then never pays.
    The name, domain, version, deprecation and function facts are the table's; any other attribute is read from
    onnx's OpSchema, fetched on first use. The table's row (`row`) is decoded when a signature is first asked
    for."""

    __slots__ = ("name", "domain", "since_version", "deprecated", "_packed", "_schema")

    def __init__(self, name: str, domain: str, since_version: int, deprecated: bool, packed: bytes | None) -> None:
        self.name, self.domain, self.since_version, self.deprecated = name, domain, since_version, deprecated
        self._packed = packed
        self._schema: Any = None

    def row(self) -> tuple[Any, ...] | None:
        """(inputs, outputs, attributes, constraints, arities, function facts, doc, function bodies by opset) as
        `schema_row` wrote them;
        None when the table could not hold this schema (a default value marshal cannot write)."""
        return marshal.loads(self._packed) if self._packed is not None else None

    @property
    def has_function(self) -> bool:
        row = self.row()
        return bool(row[5]) if row is not None else bool(self.full().has_function)

    @property
    def has_context_dependent_function(self) -> bool:
        row = self.row()
        return bool(row[6]) if row is not None else bool(self.full().has_context_dependent_function)

    @property
    def function_opset_versions(self) -> list[int]:
        row = self.row()
        return list(row[7]) if row is not None else list(self.full().function_opset_versions)

    def get_function_with_opset_version(self, opset: int) -> bytes:
        """The serialized FunctionProto of the op's body for an opset (as onnx's OpSchema hands it over)."""
        row = self.row()
        if row is not None and opset in row[9]:
            return bytes(row[9][opset])
        return bytes(self.full().get_function_with_opset_version(opset))

    def full(self) -> Any:  # onnx's OpSchema (its stubs lack the function attributes)
        """onnx's own OpSchema of this op and version."""
        if self._schema is None:
            import onnx.defs

            self._schema = onnx.defs.get_schema(self.name, self.since_version, self.domain)
        return self._schema

    def __reduce__(self) -> tuple[Any, ...]:  # onnx's OpSchema does not pickle: fetched again when asked for
        return SchemaRef, (self.name, self.domain, self.since_version, self.deprecated, self._packed)

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("_"):  # a slot not set yet (copy, pickle) or a protocol probe: not onnx's to answer
            raise AttributeError(attr)
        return getattr(self.full(), attr)

    def __repr__(self) -> str:
        return f"SchemaRef({self.name!r}, {self.domain!r}, {self.since_version})"


@cache
def schema_for(op_type: str, version: int, domain: str) -> SchemaRef | None:
    """The schema onnx uses for the op at that opset version (the newest with since_version <= version), as
    onnx.defs.get_schema picks it."""
    if not isinstance(version, int) or not -(2**31) <= version < 2**31:  # onnx: a TypeError past int32
        return None
    best = None
    for since, deprecated in _history().get(domain, {}).get(op_type, []):
        if since <= version:
            best = (since, deprecated)
    if best is None:
        return None
    return SchemaRef(op_type, domain, best[0], best[1], schemas().get((domain, op_type, best[0])))


SCHEMA_ROW = 1  # the layout of a row: a new layout is a new cache file


@cache
def schemas() -> dict[tuple[str, str, int], bytes | None]:
    """(domain, op, since_version) -> the schema's row, marshal data (decoded per schema when asked for)."""
    return onnx_build_table(f"onnx-schemas{SCHEMA_ROW}", _read_schemas)


def _read_schemas() -> dict[tuple[str, str, int], bytes | None]:
    import onnx.defs

    out: dict[tuple[str, str, int], bytes | None] = {}
    for s in onnx.defs.get_all_schemas_with_history():
        try:
            packed: bytes | None = marshal.dumps(schema_row(s))
        except ValueError:  # a default value marshal cannot write: read from onnx when asked for
            packed = None
        out[(normalize_domain(s.domain), s.name, s.since_version)] = packed
    return out


def schema_row(s: Any) -> tuple[Any, ...]:
    """One OpSchema as plain data (what `SchemaRef.row` hands back)."""

    def params(formal: Any) -> list[tuple[str, str, int, bool, int]]:
        return [(p.name, p.type_str, int(p.option), bool(p.is_homogeneous), int(p.min_arity)) for p in formal]

    attrs = [(name, int(a.type.value), bool(a.required), attribute_default(a), a.description)
             for name, a in s.attributes.items()]  # fmt: skip
    constraints = [(c.type_param_str, list(c.allowed_type_strs)) for c in s.type_constraints]
    arity = (s.min_input, s.max_input, s.min_output, s.max_output)
    return (params(s.inputs), params(s.outputs), attrs, constraints, arity, bool(s.has_function),
            bool(s.has_context_dependent_function), list(s.function_opset_versions), s.doc or "",
            {v: bytes(s.get_function_with_opset_version(v)) for v in s.function_opset_versions})  # fmt: skip


def attribute_default(attr: Any) -> Any:
    """A schema attribute's default as a Python value (str for strings), None when it has none."""
    import onnx

    proto = attr.default_value
    if proto is None or proto.type == onnx.AttributeProto.UNDEFINED:
        return None
    try:
        value = onnx.helper.get_attribute_value(proto)
    except Exception:
        return None
    if isinstance(value, bytes):  # string attributes come back as bytes; the text holds str
        return value.decode("utf-8", errors="replace")
    if isinstance(value, list) and value and isinstance(value[0], bytes):
        return [v.decode("utf-8", errors="replace") for v in value]
    return value


@cache
def _history() -> dict[str, dict[str, list[tuple[int, bool]]]]:
    """domain -> op name -> [(since_version, deprecated)], oldest first: from the cache when this onnx build was
    read before, else from onnx (and cached)."""
    return onnx_build_table("onnx-history", _read_history)


def onnx_build_table(stem: str, build: Callable[[], dict[Any, Any]]) -> dict[Any, Any]:
    """A table read from onnx (`build()`, marshal-able), kept in the user's cache per onnx build
    (`onnx_build_file`): read from there when it was built before."""
    cached = onnx_build_file(stem)
    found = read_kept(cached) if cached is not None else None
    if found is not None:
        return found
    out = build()
    if cached is not None:
        keep(cached, out)
    return out


def onnx_build_file(stem: str) -> str | None:
    """A cache file of a table read from this onnx build: named by onnx's version and its schema library's file
    (path, size and time), so another onnx, or the same version rebuilt, is read again."""
    found = _onnx_build()
    folder = cache_dir()
    if found is None or folder is None:
        return None
    lib, version = found
    try:
        st = os.stat(lib)
    except OSError:
        return None
    key = f"{digest(lib.encode()).hexdigest()[:8]}{st.st_size:x}{st.st_mtime_ns:x}"
    return os.path.join(folder, f"{stem}-{version}-{key}.marshal")


@cache
def _onnx_build() -> tuple[str, str] | None:
    """(the file of onnx's schema library, onnx's version), found without importing onnx (100 ms with protobuf):
    the library next to onnx's package, the version from its dist-info folder; from onnx itself when either is
    not where pip puts it (or onnx is imported already)."""
    import sys

    if "onnx" not in sys.modules:
        from importlib.machinery import EXTENSION_SUFFIXES
        from importlib.util import find_spec

        spec = find_spec("onnx")
        origin = spec.origin if spec is not None else None
        if origin is not None:
            package = os.path.dirname(origin)
            libs = [os.path.join(package, f"onnx_cpp2py_export{suffix}") for suffix in EXTENSION_SUFFIXES]
            site = os.path.dirname(package)
            try:
                names = os.listdir(site)
            except OSError:
                names = []
            versions = [n[5:-10] for n in names if n.startswith("onnx-") and n.endswith(".dist-info")]
            lib = next((p for p in libs if os.path.isfile(p)), None)
            if lib is not None and len(versions) == 1:
                return lib, versions[0]
    import onnx

    lib = getattr(onnx.onnx_cpp2py_export, "__file__", None)
    return (lib, onnx.__version__) if lib is not None else None


def _read_history() -> dict[str, dict[str, list[tuple[int, bool]]]]:
    import onnx.defs

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
    import difflib

    found = difflib.get_close_matches(name, near, n=1, cutoff=0.6)
    return found[0] if found else None
