"""Offsets <-> LSP positions in the negotiated encoding, and our diagnostics as LSP diagnostics."""

from __future__ import annotations

from lsprotocol import types as lsp

from graphlsp.lint.diagnostics import Diagnostic
from graphlsp.syntax.positions import LineIndex

SEVERITY = {
    "error": lsp.DiagnosticSeverity.Error,
    "warning": lsp.DiagnosticSeverity.Warning,
    "info": lsp.DiagnosticSeverity.Information,
    "hint": lsp.DiagnosticSeverity.Hint,
}
_ENCODING = {"utf-8": "utf-8", "utf-16": "utf-16", "utf-32": "utf-32"}


def encoding_of(kind: object) -> str:
    return _ENCODING.get(str(getattr(kind, "value", kind)), "utf-16")


def position(lines: LineIndex, offset: int, enc: str) -> lsp.Position:
    line, col = lines.position(offset, enc)
    return lsp.Position(line=line, character=col)


def span_range(lines: LineIndex, start: int, end: int, enc: str) -> lsp.Range:
    return lsp.Range(start=position(lines, start, enc), end=position(lines, end, enc))


def offset(lines: LineIndex, pos: lsp.Position, enc: str) -> int:
    return lines.offset(pos.line, pos.character, enc)


def diagnostic(lines: LineIndex, d: Diagnostic, uri: str, enc: str) -> lsp.Diagnostic:
    related = [
        lsp.DiagnosticRelatedInformation(
            location=lsp.Location(uri=uri, range=span_range(lines, r["start"], r["end"], enc)), message=r["message"]
        )
        for r in d.related
        if "start" in r
    ]
    return lsp.Diagnostic(
        range=span_range(lines, d.start, d.end, enc),
        message=d.message,
        severity=SEVERITY.get(d.severity, lsp.DiagnosticSeverity.Error),
        code=d.code,
        source="graphlsp",
        related_information=related or None,
    )
