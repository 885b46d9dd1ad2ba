"""Offsets <-> LSP positions in the negotiated encoding, and our diagnostics as LSP diagnostics."""

from __future__ import annotations

import json
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from typing import Any

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


_LINE_END = re.compile(r"\r\n?|\n")


class LspLines(LineIndex):
    """The lines of a text as LSP counts them: `\r\n`, `\n` and a lone `\r` each end a line. (The syntax's own
    index counts `\n` only; the server uses that one while a document holds no `\r` at all.) Kept up to date in
    place by `replace`, like the syntax's index."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0, *(m.end() for m in _LINE_END.finditer(text))]

    def line_end(self, line: int) -> int:
        """Offset of the line's line end (or end of text)."""
        if line + 1 < len(self.starts):
            nxt = self.starts[line + 1]
            return nxt - 2 if self.text.startswith("\r\n", nxt - 2) else nxt - 1
        return len(self.text)

    def replace(self, start: int, end: int, new: str, new_text: str) -> None:
        # Whether p starts a line depends on text[p - 1] and text[p] only: the starts in [start, end] of the old
        # text are looked at again, in [start, start + len(new)] of the new one; the ones after move by delta.
        stop = start + len(new)
        first = bisect_left(self.starts, max(start, 1))
        last = bisect_right(self.starts, end)
        delta = len(new) - (end - start)
        tail = self.starts[last:]
        if delta:
            tail = [s + delta for s in tail]
        found = [m.end() for m in _LINE_END.finditer(new_text, max(start - 1, 0), stop + 1) if start <= m.end() <= stop]
        self.starts[first:] = found + tail
        self.text = new_text


INTERNAL_ERROR = "internal-error"


def internal_error(lines: LineIndex, error: str, enc: str) -> lsp.Diagnostic:
    """A failure inside graphlsp (a bug), shown on line 1 of the document it happened on."""
    return lsp.Diagnostic(
        range=span_range(lines, 0, lines.line_end(0), enc),
        message=f"graphlsp could not analyse this file: internal error ({error}). The text is kept; it is analysed "
        "again at the next edit.",
        severity=lsp.DiagnosticSeverity.Error,
        code=INTERNAL_ERROR,
        source="graphlsp",
    )


def encoding_of(kind: object) -> str:
    return _ENCODING.get(str(getattr(kind, "value", kind)), "utf-16")


def units(s: str, enc: str) -> int:
    """The length of s in the encoding's code units."""
    if enc == "utf-32" or s.isascii():
        return len(s)
    if enc == "utf-16":
        return len(s.encode("utf-16-le")) // 2
    return len(s.encode("utf-8"))


class Positions:
    """Offsets to positions for many at once, as JSON-ready dicts (a document's symbols, its semantic tokens):
    on an ASCII text, or in code points, a column is a subtraction, with no slice of the line."""

    def __init__(self, lines: LineIndex, text: str, enc: str) -> None:
        self.lines, self.text, self.enc = lines, text, enc
        self.starts = lines.starts
        self.plain = enc == "utf-32" or text.isascii()

    def __call__(self, offset: int) -> tuple[int, int]:
        offset = max(0, min(offset, len(self.text)))
        line = bisect_right(self.starts, offset) - 1
        start = self.starts[line]
        return line, offset - start if self.plain else units(self.text[start:offset], self.enc)

    def range(self, start: int, end: int) -> dict[str, dict[str, int]]:
        (l1, c1), (l2, c2) = self(start), self(end)
        return {"start": {"line": l1, "character": c1}, "end": {"line": l2, "character": c2}}

    def tokens(self, toks: list[tuple[int, int, str]], types: dict[str, int]) -> list[int]:
        """LSP's semantic tokens (relative line, relative start, length, type, modifiers) of tokens sorted by
        start; a token that runs over its line's end is cut there (LSP tokens stay on one line)."""
        starts, text, enc, plain, line_end = self.starts, self.text, self.enc, self.plain, self.lines.line_end
        data: list[int] = []
        line, first, nxt = -1, 0, 0  # the current line, its start, the start of the next one
        prev_line = prev_col = 0
        for start, end, kind in toks:
            if not first <= start < nxt:
                line = bisect_right(starts, start) - 1
                first = starts[line]
                nxt = starts[line + 1] if line + 1 < len(starts) else len(text) + 1
            stop = end if end < nxt - 2 else min(end, line_end(line))
            if plain:
                col, length = start - first, stop - start
            else:
                col, length = units(text[first:start], enc), units(text[start:stop], enc)
            if length <= 0:
                continue
            data += [line - prev_line, col - prev_col if line == prev_line else col, length, types[kind], 0]
            prev_line, prev_col = line, col
        return data


def position(lines: LineIndex, offset: int, enc: str) -> lsp.Position:
    line, col = lines.position(offset, enc)
    return lsp.Position(line=line, character=col)


def span_range(lines: LineIndex, start: int, end: int, enc: str) -> lsp.Range:
    return lsp.Range(start=position(lines, start, enc), end=position(lines, end, enc))


def hover(lines: LineIndex, markdown: str, span: tuple[int, int], enc: str) -> lsp.Hover:
    """A hover of Markdown text over the span of the text it speaks of."""
    return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=markdown),
                     range=span_range(lines, *span, enc))  # fmt: skip


def offset(lines: LineIndex, pos: lsp.Position, enc: str) -> int:
    return lines.offset(pos.line, pos.character, enc)


def diagnostic(lines: LineIndex, d: Diagnostic, uri: str, enc: str) -> lsp.Diagnostic:
    related = [(r["message"], r["start"], r["end"]) for r in d.related if "start" in r]
    out = row_diagnostic(lines, (d.start, d.end, d.code, d.severity, d.message, related), uri, enc)
    python = [python_related(r) for r in d.related if r.get("file")]  # the Python line that made the node
    if python:
        out.related_information = [*(out.related_information or []), *python]
    return out


def python_related(r: dict[str, Any]) -> lsp.DiagnosticRelatedInformation:
    """Related information in another file, at a 1-based line (graphlsp.provenance: a Python line)."""
    from pathlib import Path

    line = max(0, int(r["line"]) - 1)
    where = lsp.Range(start=lsp.Position(line=line, character=0), end=lsp.Position(line=line + 1, character=0))
    return lsp.DiagnosticRelatedInformation(location=lsp.Location(uri=Path(r["file"]).as_uri(), range=where),
                                            message=r["message"])  # fmt: skip


# A diagnostic as the server's fast path holds it: start, end (offsets, start <= end <= len(text)), code, severity,
# message, related information (message, start, end).
Row = tuple[int, int, str, str, str, list[tuple[str, int, int]]]


def row_diagnostic(lines: LineIndex, row: Row, uri: str, enc: str) -> lsp.Diagnostic:
    start, end, code, severity, message, rel = row
    related = [
        lsp.DiagnosticRelatedInformation(location=lsp.Location(uri=uri, range=span_range(lines, s, e, enc)), message=m)
        for m, s, e in rel
    ]
    return lsp.Diagnostic(
        range=span_range(lines, start, max(start, end), enc),
        message=message,
        severity=SEVERITY.get(severity, lsp.DiagnosticSeverity.Error),
        code=code,
        source="graphlsp",
        related_information=related or None,
    )


_Key = tuple[object, ...]


class DiagnosticCache:
    """One document's diagnostics as the JSON text of LSP diagnostics, kept between edits: an edit changes few of
    them, and building and serializing a thousand fold hints again would cost more than the analysis of the edit.

    A diagnostic is looked up by what its LSP form depends on: code, severity, message, its lines and columns
    (as LSP counts lines: `lines` is an LSP line index), and the text of those lines (columns in UTF-16 or UTF-8
    depend on the characters before them). Diagnostics with related information are converted every time
    (conflicts are few)."""

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
                end = max(d.start, d.end)
                first, last = lines.line_of(d.start), lines.line_of(end)
                line_start, last_start = lines.line_start(first), lines.line_start(last)
                key = (enc, d.code, d.severity, d.message, first, d.start - line_start, last, end - last_start,
                       text[line_start:lines.line_end(last)])  # fmt: skip
            entry = self._entries.get(key) if key is not None else None
            if entry is None:
                entry = json.dumps(unstructure(diagnostic(lines, d, uri, enc)))
            if key is not None:
                kept[key] = entry
            payload.append(entry)
        self._entries = kept
        return payload

    def convert_rows(self, lines: LineIndex, text: str, rows: list[Row], uri: str, enc: str,
                     unstructure: Callable[[object], dict[str, object]]) -> list[str]:  # fmt: skip
        """`convert` of diagnostics held as rows (no Diagnostic objects): the same JSON text. On an ASCII text (or
        in code points) a column is an offset from its line's start, so the key holds no slice of the text."""
        kept: dict[_Key, str] = {}
        payload = []
        entries, starts = self._entries, lines.starts
        plain = enc == "utf-32" or text.isascii()
        for row in rows:
            start, end, code, severity, message, related = row
            if related:
                payload.append(json.dumps(unstructure(row_diagnostic(lines, row, uri, enc))))
                continue
            first = bisect_right(starts, start) - 1
            last = bisect_right(starts, end, first) - 1
            line_start, last_start = starts[first], starts[last]
            key: _Key = (enc, code, severity, message, first, start - line_start, last, end - last_start)
            if not plain:
                key += (text[line_start : lines.line_end(last)],)
            entry = entries.get(key)
            if entry is None:
                entry = json.dumps(unstructure(row_diagnostic(lines, row, uri, enc)))
            kept[key] = entry
            payload.append(entry)
        self._entries = kept
        return payload


class KeptHints:
    """The fold hints' diagnostics (their JSON text) of a text document's last computation, kept across edits: an
    edit leaves nearly every hint where it was, and a hint's JSON holds only its lines and columns, which stay the
    same while its statement is not parsed again and no edit adds or removes a line. `entries` holds, per hint's
    node, the hint it was made from (the fold plan's (node, code, message), the same object while the hint is the
    same: `FoldPlan.fold_hints` keeps the hints an update did not move), its statement, its start within the
    statement, its severity and its JSON. `note_edit` hears of every edit of the text: statements parsed again are
    noted (their hints are made again), and what it cannot follow (a full parse, lines added or removed) drops every
    entry."""

    __slots__ = ("plan", "enc", "entries", "replaced")

    def __init__(self) -> None:
        self.plan: object = None
        self.enc = ""
        self.entries: dict[Any, tuple[object, Any, int, str, str]] = {}
        self.replaced: set[int] = set()  # ids of statements parsed again since the entries were checked

    def drop(self) -> None:
        self.plan = None
        self.entries = {}
        self.replaced = set()

    def note_edit(self, lines_before: int, lines_after: int, report: Any) -> None:
        if lines_before != lines_after or report is None or report.mode != "incremental":
            self.drop()
        else:
            self.replaced.update(id(p) for p in report.old_pieces)
