"""Shared by the shape-rule tests: infer a model written as text and read back every value's type."""

from __future__ import annotations

from pathlib import Path

from graphlsp.graph.findings import Finding
from graphlsp.infer.refiner import ShapeRefiner
from graphlsp.infer.types import type_str
from graphlsp.syntax.document import SyntaxDocument
from graphlsp.syntax.lower import build_model


def infer(text: str) -> tuple[dict[str, str], list[Finding]]:
    """Types of every value (as text; the main graph's first, then subgraphs' new names) and the findings."""
    doc = SyntaxDocument(text)
    assert not doc.problems, doc.problems
    model, _ = build_model(doc)
    refiner = ShapeRefiner(model)
    refiner.run()
    assert model.graph is not None
    types: dict[str, str] = {}
    for graph in model.graphs():
        for name, value in graph.values.items():
            types.setdefault(name, type_str(refiner.type_of(value)))
    return types, refiner.findings()


def read_known(path: Path) -> dict[str, str]:
    """A known-gaps list: `name<TAB>reason` lines, `#` comments."""
    out = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                name, _, reason = line.partition("\t")
                out[name] = reason
    return out
