"""One canonical layout for ONNX text: onnx's printer's layout for every node (one statement per line, three-space
indentation), blank lines collapsed to one, trailing whitespace gone, and every comment kept where it was.

Only a file that parses without problems is formatted. A statement with a comment inside it is kept as written
(re-printing would lose the comment); headers and signatures keep their text, only the space around them changes.
The result always parses to the same model (a test checks it on every example and corpus model).
"""

from __future__ import annotations

import re

import onnx.printer

from graphlsp.syntax import tree as t
from graphlsp.syntax.document import Piece, SyntaxDocument
from graphlsp.syntax.to_proto import node_to_proto

_COMMENT = re.compile(r'"(?:[^"\\]|\\.)*"|#[^\n]*')
INDENT = "   "


def _has_comment(text: str) -> bool:
    return any(m.group().startswith("#") for m in _COMMENT.finditer(text))


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_TRAILING = re.compile(r"[ \t]+(?=\n)")


def _strip_trailing(text: str) -> str:
    """Trailing spaces off every line, except inside a quoted string (where they are data)."""
    out, pos = [], 0
    for m in _STRING.finditer(text):
        out.append(_TRAILING.sub("", text[pos : m.start()]))
        out.append(m.group())
        pos = m.end()
    out.append(_TRAILING.sub("", text[pos:]))
    return "".join(out)


def _statement(doc: SyntaxDocument, p: Piece) -> str:
    text = doc.text[p.abs_start : p.abs_end]
    if p.kind == "node" and isinstance(p.value, t.Node) and not _has_comment(text):
        printed = onnx.printer.to_text(node_to_proto(p.value)).rstrip()
        return _strip_trailing(printed.lstrip())
    return _strip_trailing(text)


def _gap(gap: str, indent: str, first: bool) -> str:
    """The space and comments between two statements, normalized."""
    lines = gap.split("\n")
    out = []
    trailing = lines[0].strip()
    if trailing and not first:
        out.append("  " + trailing)  # a comment after the previous statement, on its line
    elif trailing:
        out.append(trailing)
    blank = False
    for line in lines[1:-1] if len(lines) > 1 else []:
        stripped = line.strip()
        if not stripped:
            blank = True
            continue
        out.append("\n" + ("\n" if blank and out else "") + indent + stripped)
        blank = False
    if len(lines) > 1:
        last = lines[-1].strip()
        if last:  # a comment right before the statement on its line cannot be: a comment runs to the line's end
            out.append("\n" + indent + last)
        out.append("\n" + ("\n" if blank and (out or not first) else "") + indent)
    elif not first:
        out.append(" ")
    return "".join(out)


def format_text(text: str) -> str | None:
    """The canonical text, or None when the file does not parse cleanly."""
    doc = SyntaxDocument(text)
    if doc.problems or not doc.pieces:
        return None
    out = []
    prev = 0
    for i, p in enumerate(doc.pieces):
        indent = INDENT if p.kind == "node" else ""
        out.append(_gap(text[prev : p.abs_start], indent, i == 0))
        out.append(_statement(doc, p))
        prev = p.abs_end
    tail = text[prev:]
    out.append(_gap(tail, "", False).rstrip() + "\n")
    result = "".join(out)
    return result
