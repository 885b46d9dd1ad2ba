"""GL203 in the text front end, judged by onnxruntime, and in the binary reader's words: the main graph's nodes
out of order are a warning (onnxruntime sorts them and runs the model; onnx.checker refuses it), a cycle or an
unsorted subgraph or function body an error (onnxruntime refuses them)."""

from __future__ import annotations

from pathlib import Path

import onnx
import onnx.printer

from graphlsp.infer.report import value_shapes
from graphlsp.infer.types import type_str
from graphlsp.lint.config import Settings
from graphlsp.lint.runner import lint_binary, lint_text
from graphlsp.query import hover
from tests.order_models import UNSORTED_FEEDS, cases, expected, onnxruntime_says, outcome, run_shapes, unsorted_model


def test_gl203_is_an_error_exactly_where_onnxruntime_refuses_the_model() -> None:
    want, got, warned = {}, {}, {}
    for name, model in cases().items():
        want[name] = expected(onnxruntime_says(model))
        _, found = lint_text(onnx.printer.to_text(model), "m.onnxtxt", Settings())
        got[name] = outcome(found)
        if want[name] == "runs":
            warned[name] = [d.severity for d in found if d.code == "GL203"]
    assert got == want
    assert warned and all(severities and set(severities) == {"warning"} for severities in warned.values()), warned


def test_both_front_ends_say_the_same(tmp_path: Path) -> None:
    """The same findings, severities and words from the text and from the binary (the text names the node by its
    line, the binary by its index)."""
    for i, (name, model) in enumerate(cases().items()):
        path = tmp_path / f"{i}.onnx"
        onnx.save(model, path)
        _, text = lint_text(onnx.printer.to_text(model), "m.onnxtxt", Settings())
        binary = lint_binary(str(path), Settings())
        said = sorted({(d.code, d.severity, d.message) for d in text})
        assert sorted({(d.code, d.severity, d.message) for d in binary}) == said, name


def test_an_unsorted_main_graph_gets_onnxruntimes_shapes_and_no_error() -> None:
    """`graphlsp shapes` and the hover give each value the shape onnxruntime computes, though every node reads
    values of nodes after it."""
    model = unsorted_model()
    assert onnxruntime_says(model, UNSORTED_FEEDS) == ""
    text = onnx.printer.to_text(model)
    a, found = lint_text(text, "m.onnxtxt", Settings())
    want = run_shapes(model)
    rows = value_shapes(a.model, a.refiner, a.doc.lines.position)
    assert {v.name: type_str(v.type) for v in rows if v.name in want} == want
    assert a.model.graph is not None
    for name, shape in want.items():
        span = a.model.graph.values[name].span
        assert span is not None
        shown, _ = hover(a, span[0]) or ("", None)
        assert shape in shown, (name, shown)
    assert [(d.code, d.message) for d in found if d.severity == "error"] == []
