"""Diagnostics from every layer of one file, in people's coordinates (1-based lines and columns)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from graphlsp.lint.rules import rule
from graphlsp.syntax.document import SyntaxDocument

if TYPE_CHECKING:
    from graphlsp.analysis import Analysis


@dataclass(slots=True)
class Diagnostic:
    file: str
    line: int
    col: int
    end_line: int
    end_col: int
    severity: str
    code: str
    name: str
    message: str
    start: int = 0  # offsets into the text, for editors and fixes
    end: int = 0
    related: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        del d["start"], d["end"]
        d["related"] = [{k: v for k, v in r.items() if k not in ("start", "end")} for r in d["related"]]
        if not d["related"]:
            del d["related"]
        return d


def _make(
    doc: SyntaxDocument, path: str, code: str, message: str, start: int, end: int, severity: str | None,
    related: list[tuple[str, int, int]],
) -> Diagnostic:  # fmt: skip
    r = rule(code)
    line, col = doc.lines.position(start)
    end_line, end_col = doc.lines.position(max(start, end))
    rel = []
    for msg, s, e in related:
        rl, rc = doc.lines.position(s)
        rel.append({"message": msg, "line": rl + 1, "col": rc + 1, "start": s, "end": e})
    return Diagnostic(
        path, line + 1, col + 1, end_line + 1, end_col + 1, severity or r.severity, code, r.name, message,
        start, max(start, end), rel,
    )  # fmt: skip


def collect_analysis(analysis: Analysis, path: str = "<text>") -> list[Diagnostic]:
    """Diagnostics of an up-to-date Analysis (the editor keeps one per open document)."""
    doc = analysis.doc
    out = [_make(doc, path, p.code, p.message, p.start, p.end, None, p.related) for p in doc.problems]
    if doc.model.graph is not None:
        for f in analysis.findings():
            out.append(_make(doc, path, f.code, f.message, f.start, f.end, f.severity, list(f.related)))
    out.sort(key=lambda d: (d.start, d.code))
    return out


def collect(doc: SyntaxDocument, path: str = "<text>") -> list[Diagnostic]:
    """Syntax problems, structural findings of the graph and shape findings, sorted by position."""
    from graphlsp.analysis import Analysis

    return collect_analysis(Analysis(doc), path)
