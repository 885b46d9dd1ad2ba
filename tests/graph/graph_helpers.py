"""Shared helpers for the graph-layer tests: build a model from text, and locate findings by line and text."""

from __future__ import annotations

from pathlib import Path

from graphlsp.graph.core import Model
from graphlsp.graph.findings import Finding
from graphlsp.syntax.document import SyntaxDocument
from graphlsp.syntax.lower import build_model

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
BENCH = ROOT.parent / "shared" / "bench"
HEADER = '<ir_version: 9, opset_import: ["" : 18]>\n'


def build(text: str) -> tuple[SyntaxDocument, Model, list[Finding]]:
    doc = SyntaxDocument(text)
    model, findings = build_model(doc)
    return doc, model, findings


def line_of(doc: SyntaxDocument, offset: int) -> int:
    """1-based line of an offset."""
    return doc.lines.position(offset)[0] + 1


def described(doc: SyntaxDocument, findings: list[Finding]) -> list[tuple[str, int, str]]:
    """(kind, 1-based line, covered text) per finding: what a person would check."""
    return [(f.kind, line_of(doc, f.start), doc.text[f.start : f.end]) for f in findings]


def nth(text: str, needle: str, n: int = 0) -> int:
    """Offset of the n-th occurrence of needle."""
    pos = -1
    for _ in range(n + 1):
        pos = text.index(needle, pos + 1)
    return pos
