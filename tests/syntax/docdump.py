"""A canonical, position-absolute dump of a SyntaxDocument, to compare two documents for equality."""

from __future__ import annotations

from typing import Any

from graphlsp.syntax import tree
from graphlsp.syntax.document import SyntaxDocument

_POSITION_FIELDS = {"start", "end", "elem_start", "op_start", "inputs_start"}


def _fields(x: Any) -> tuple[str, ...] | None:
    """The fields of a tree element (the tree's classes list them in `__slots__`); None for anything else
    (Numbers is dumped apart: its text and place)."""
    cls = type(x)
    if cls.__module__ != tree.__name__ or cls is tree.Numbers:
        return None
    return cls.__slots__  # type: ignore[no-any-return]


def _dump(x: Any, origin: int) -> Any:
    fields = _fields(x)
    if fields is not None:
        out = [type(x).__name__]
        for name in fields:
            v = getattr(x, name)
            if name == "elem_start" and getattr(x, "elem", None) is None:
                out.append((name, v))  # no element type: no position (0), whatever the piece's place
            elif name in _POSITION_FIELDS and isinstance(v, int):
                out.append((name, v + origin))
            else:
                out.append((name, _dump(v, origin)))
        return tuple(out)
    if isinstance(x, tree.Numbers):  # its text, and where its `{` is in the document
        return ("Numbers", x.text, x.start + origin)
    if isinstance(x, (list, tuple)):
        return tuple(_dump(v, origin) for v in x)
    if isinstance(x, float) and x != x:
        return "nan"
    return x


def dump(doc: SyntaxDocument) -> tuple[Any, ...]:
    pieces = tuple(
        (p.kind, p.abs_start, p.abs_end, p.block, p.failed, _dump(p.value, p.origin)) for p in doc.pieces
    )
    problems = tuple(sorted((q.code, q.message, q.start, q.end, tuple(q.related)) for q in doc.problems))
    return pieces, problems, tuple(doc.lines.starts)
