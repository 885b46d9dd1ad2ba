"""Offsets <-> LSP positions in the negotiated encoding, and our diagnostics as LSP diagnostics."""

from __future__ import annotations

import json
from collections.abc import Callable

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


_Key = tuple[object, ...]


class DiagnosticCache:
    """One document's diagnostics as the JSON text of LSP diagnostics, kept between edits: an edit changes few of
    them, and building and serializing a thousand fold hints again would cost more than the analysis of the edit.

    A diagnostic is looked up by what its LSP form depends on: code, severity, message, its lines and columns,
    and the text of those lines (columns in UTF-16 or UTF-8 depend on the characters before them). Diagnostics
    with related information are converted every time (conflicts are few)."""

    def __init__(self) -> None:
        self._entries: dict[_Key, str] = {}

    def convert(
        self, lines: LineIndex, text: str, diags: list[Diagnostic], uri: str, enc: str,
        unstructure: Callable[[object], dict[str, object]],
    ) -> list[str]:  # fmt: skip
        """Each diagnostic as the JSON text of an LSP Diagnostic; an unchanged one is the same str object as before."""
        kept: dict[_Key, str] = {}
        payload = []
        for d in diags:
            key: _Key | None = None
            if not d.related:
                first, last = (d.line or 1) - 1, (d.end_line or 1) - 1
                key = (enc, d.code, d.severity, d.message, d.line, d.col, d.end_line, d.end_col,
                       text[lines.line_start(first):lines.line_end(last)])  # fmt: skip
            entry = self._entries.get(key) if key is not None else None
            if entry is None:
                entry = json.dumps(unstructure(diagnostic(lines, d, uri, enc)))
            if key is not None:
                kept[key] = entry
            payload.append(entry)
        self._entries = kept
        return payload
