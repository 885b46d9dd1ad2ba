"""A canonical, position-absolute dump of a SyntaxDocument, to compare two documents for equality."""

from __future__ import annotations

import dataclasses
from typing import Any

from graphlsp.syntax.document import SyntaxDocument

_POSITION_FIELDS = {"start", "end", "elem_start", "op_start", "inputs_start"}


def _dump(x: Any, origin: int) -> Any:
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        out = [type(x).__name__]
        for f in dataclasses.fields(x):
            v = getattr(x, f.name)
            if f.name in _POSITION_FIELDS and isinstance(v, int):
                out.append((f.name, v + origin))
            else:
                out.append((f.name, _dump(v, origin)))
        return tuple(out)
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
