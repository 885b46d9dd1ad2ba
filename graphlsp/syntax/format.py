"""One canonical layout for ONNX text: onnx's printer's layout for every node (one statement per line, three-space
indentation), blank lines collapsed to one, trailing whitespace gone, and every comment kept where it was.

Only a file that parses without problems is formatted. A statement with a comment inside it is kept as written
(re-printing would lose the comment); headers and signatures keep their text, only the space around them changes.
onnx's printer cannot write every node: it writes `...` for the data of complex, int4/uint4, int2/uint2, float4 and
float6 tensors, and quotes tensor names its parser rejects. So a node is re-printed only when the printed text
parses back to the same node (the same NodeProto); any other node keeps its text as written. The result always
parses to the same model (a test checks it on every example and corpus model, and on every element type).
"""

from __future__ import annotations

import re

import onnx.printer

from graphlsp.syntax import tree as t
from graphlsp.syntax.document import Piece, SyntaxDocument
from graphlsp.syntax.grammar import get_parser
from graphlsp.syntax.positions import split_lines
from graphlsp.syntax.to_proto import ConversionError, node_to_proto

_COMMENT = re.compile(r'"(?:[^"\\]|\\.)*"|#[^\r\n]*')
INDENT = "   "


def _has_comment(text: str) -> bool:
    return any(m.group().startswith("#") for m in _COMMENT.finditer(text))


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_TRAILING = re.compile(r"(?<![ \t])[ \t]++(?=[\r\n])")  # from a run's start only: linear in a long run


def _strip_trailing(text: str) -> str:
    """Trailing spaces off every line, except inside a quoted string (where they are data)."""
    out, pos = [], 0
    for m in _STRING.finditer(text):
        out.append(_TRAILING.sub("", text[pos : m.start()]))
        out.append(m.group())
        pos = m.end()
    out.append(_TRAILING.sub("", text[pos:]))
    return "".join(out)


# element types whose `{...}` data onnx's printer writes in full (not complex, int4/2, float4/6, nor strings)
_PRINTED = {"float", "double", "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "uint16",
            "uint32", "uint64", "bool", "float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz", "float8e8m0"}


def _numbers(v: t.AttrValue | None) -> bool:
    if isinstance(v, t.LiteralValue):
        return v.literal.kind != "string"
    if isinstance(v, t.TensorValue):  # without a name (onnx's printer quotes it, its parser rejects that)
        ty = v.type
        return v.name is None and ty.kind == "tensor" and ty.elem in _PRINTED and (v.data is None or v.data.values
                                                                                  is not None)  # fmt: skip
    return isinstance(v, t.ListValue) and all(isinstance(x, t.LiteralValue) and x.literal.kind != "string"
                                              for x in v.items)  # fmt: skip


def _plain(node: t.Node) -> bool:
    """Names, a label and numbers only: what onnx's printer always writes back as it was read (it quotes and
    escapes names as they need; an empty label `[]` it leaves out)."""
    return not (node.has_label and node.label is None) and all(_numbers(a.value) for a in node.attributes)


def _reprinted(node: t.Node) -> str | None:
    """The node as onnx's printer writes it, when that text reads back as the same node; else None."""
    try:
        proto = node_to_proto(node)
    except ConversionError:
        return None
    printed = onnx.printer.to_text(proto).strip()
    if _plain(node):
        return printed
    parser = get_parser()
    again = parser.try_parse(printed, 0, len(printed), "node_seq")
    if again is None or len(again) != 1 or parser.builder.problems:
        return None
    try:
        same = node_to_proto(again[0]).SerializeToString(deterministic=True) == proto.SerializeToString(
            deterministic=True)  # fmt: skip
    except ConversionError:
        return None
    return printed if same else None


def _statement(doc: SyntaxDocument, p: Piece) -> str:
    text = doc.text[p.abs_start : p.abs_end]
    if p.kind == "node" and isinstance(p.value, t.Node) and not _has_comment(text):
        printed = _reprinted(p.value)
        if printed is not None:
            return _strip_trailing(printed)
    return _strip_trailing(text)


def _gap(gap: str, indent: str, first: bool) -> str:
    """The space and comments between two statements, normalized."""
    lines = split_lines(gap)  # a lone \r or \r\n becomes \n
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
