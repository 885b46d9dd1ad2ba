"""The read-only text view of a binary model: it parses, its analysis is the binary's (same types, same values,
same fold hints), and the binary reader's findings land on the view's lines."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from graphlsp.analysis import ModelAnalysis
from graphlsp.binary.read import read_model
from graphlsp.infer.types import type_str
from graphlsp.query import hover
from graphlsp.view import render
from tests.binary.models import real_models
from tests.conftest import needs, shared, shared_reason

MODELS = [p for p in real_models() if p.stat().st_size < 4 << 20]


@needs(MODELS, shared_reason("realworld"))
@pytest.mark.parametrize("path", MODELS, ids=[p.name for p in MODELS])
def test_the_view_is_analysed_as_the_binary_is(path: Path) -> None:
    view = render(str(path))
    assert view.error == "" and view.analysis.doc.problems == []
    binary, found = read_model(path)
    b = ModelAnalysis(binary, found)
    v = view.analysis
    assert binary.graph is not None and v.model.graph is not None
    want = {name: type_str(b.refiner.type_of(x)) for name, x in binary.graph.values.items()}
    got = {name: type_str(v.refiner.type_of(x)) for name, x in v.model.graph.values.items()}
    assert got == want
    codes = sorted(f.code for f in b.findings() if f.code != "GL110")
    assert sorted(f.code for f in view.all_findings() if f.code != "GL110") == codes
    assert view.current()


def test_hover_on_a_node_output_shows_its_shape() -> None:
    path = shared("realworld", "ch_PP-OCRv4_det_infer.onnx")
    view = render(str(path))
    g = view.analysis.model.graph
    assert g is not None
    node = next(n for n in g.nodes if n.op_type == "Conv")
    out = node.outputs[0]
    assert out is not None and out.span is not None
    text, _ = hover(view.analysis, out.span[0] + 1) or ("", None)
    assert '"p2o.DynamicDimension.0"' in text or "DynamicDimension" in text


def test_binary_only_findings_land_on_the_view() -> None:
    path = shared("realworld", "ch_ppocr_mobile_v2.0_cls_infer.onnx")
    view = render(str(path))
    negative = [f for f in view.findings if f.code == "GL110"]
    assert negative
    for f in negative:  # on the value the warning names: its declaration, or the node that defines it
        line, _ = view.analysis.doc.lines.position(f.start)
        assert f.message.split("'")[1] in view.text.splitlines()[line]


def test_an_unreadable_file_gives_a_view_that_says_why(tmp_path: Path) -> None:
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\xff" * 64)
    view = render(str(bad))
    assert view.error and [f.code for f in view.findings] == ["GL106"]
    assert "cannot read" in view.text


def test_findings_are_placed_with_one_walk_of_the_subgraphs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by `make fuzz` (the view target): each reader finding walked every subgraph pair again to find its
    node's graph, 6,000 findings on 4,000 If branches took renderView 65 s (check: 1 s). One walk per render; each
    finding still lands on its node's op, in a branch too."""
    from onnx import TensorProto as T
    from onnx import helper as h

    import graphlsp.view as view_module

    branch = h.make_graph([h.make_node("Identity", ["x"], ["d"]), h.make_node("Identity", ["x"], ["d"])], "b", [],
                          [h.make_tensor_value_info("d", T.FLOAT, [2])])  # fmt: skip
    nodes = [h.make_node("If", ["c"], [f"y{i}"], then_branch=branch, else_branch=branch) for i in range(40)]
    nodes += [h.make_node("Identity", ["x"], ["dup"]) for _ in range(30)]
    graph = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [2]), h.make_tensor_value_info(
        "c", T.BOOL, [])], [h.make_tensor_value_info("y0", T.FLOAT, [2])])  # fmt: skip
    path = tmp_path / "m.onnx"
    path.write_bytes(h.make_model(graph, opset_imports=[h.make_opsetid("", 18)]).SerializeToString())
    walks = [0]
    real = view_module._graph_pairs

    def counted(*a):  # type: ignore[no-untyped-def]
        walks[0] += 1
        return real(*a)

    monkeypatch.setattr(view_module, "_graph_pairs", counted)
    v = render(str(path))
    dups = [f for f in v.findings if f.code == "GL202"]
    assert len(dups) == 29 + 80 and walks[0] <= 2  # adopt_tensors walks once too
    assert all(v.text[f.start : f.end] == "Identity" for f in dups)


def _check_and_view(tmp_path: Path, model: object) -> tuple[list[Any], list[Any]]:
    """The model written as a binary: what `graphlsp check` reports, and what its view in the editor shows."""
    from graphlsp.lint.config import Settings
    from graphlsp.lint.runner import lint_binary
    from graphlsp.lsp import views

    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())  # type: ignore[attr-defined]
    return lint_binary(str(path), Settings()), views.diagnostics(render(str(path)), str(path))


def test_a_fact_the_reader_and_the_views_text_both_report_is_reported_once(tmp_path: Path) -> None:
    """A model without opset imports: the reader says `the model imports no opset`, the view's printed text says
    it again with advice for a text file; the view shows what `check` says (found comparing the two on mutated
    binaries)."""
    from onnx import TensorProto as T
    from onnx import helper as h

    graph = h.make_graph([h.make_node("Relu", ["x"], ["y"])], "g", [h.make_tensor_value_info("x", T.FLOAT, [2])],
                         [h.make_tensor_value_info("y", T.FLOAT, [2])])  # fmt: skip
    model = h.make_model(graph, opset_imports=[])
    model.ir_version = 8
    found, viewed = _check_and_view(tmp_path, model)
    check = sorted((d.code, d.message) for d in found)
    shown = sorted((d.code, d.message) for d in viewed)
    assert ("GL205", "the model imports no opset") in check
    assert shown == check


def test_a_value_defined_again_in_a_subgraph_is_reported_once_and_as_check_says(tmp_path: Path) -> None:
    """An If branch defines again a name its enclosing graph defines (onnx's checker and onnxruntime refuse it: not
    SSA): the reader and the view's text both find it, in the same words, and the view shows it once (found
    comparing the two on mutated binaries: every nested duplicate was shown twice)."""
    import onnx

    model = onnx.parser.parse_model("""<ir_version: 8, opset_import: ["" : 17]>
g (bool c, float[2] x) => (float[2] y) {
  t = Relu (x)
  y = If (c) <then_branch: graph = th () => (float[2] t) {
      t = Neg (x)
    }, else_branch: graph = el () => (float[2] t2) {
      t2 = Abs (x)
    }>
}""")
    found, viewed = _check_and_view(tmp_path, model)
    check = sorted((d.code, d.message) for d in found)
    shown = sorted((d.code, d.message) for d in viewed)
    assert check == [("GL202", "'t' is already defined in an enclosing graph: an ONNX graph defines each value once "
                                "(SSA)")]  # fmt: skip
    assert shown == check


def test_a_subgraph_reading_its_own_node_is_found_in_the_binary(tmp_path: Path) -> None:
    """A branch that returns its own If's output, and one that reads it: a cycle, which onnxruntime refuses ("the
    graph is not acyclic"). The text front end found it; the binary reader did not (found comparing check with the
    view on mutated binaries)."""
    import onnx

    model = onnx.parser.parse_model("""<ir_version: 8, opset_import: ["" : 17]>
g (bool c, float[2] x) => (float[2] y) {
  y = If (c) <then_branch: graph = th () => (float[2] y) {
      z = Neg (x)
    }, else_branch: graph = el () => (float[2] t2) {
      t2 = Abs (y)
    }>
}""")
    found, viewed = _check_and_view(tmp_path, model)
    order = sorted((d.code, d.message, d.node_index, d.detail) for d in found if d.code == "GL203")
    assert order == [("GL203", "cycle: 'y' is an output of the node that reads it", 0, "its subgraph else_branch reads 'y'"),
                     ("GL203", "cycle: 'y' is an output of the node that reads it", 0, "its subgraph then_branch reads 'y'")]  # fmt: skip
    shown = sorted((d.code, d.message) for d in viewed if d.code == "GL203")
    assert shown == [(code, message) for code, message, _, _ in order]


def test_the_view_judges_node_order_as_check_and_onnxruntime_do(tmp_path: Path) -> None:
    """Nodes that read values before their producers: the view shows what `check` says, in the same words and
    severities, and an error exactly where onnxruntime refuses the model (it sorts the main graph's nodes and
    runs it; it refuses cycles and unsorted bodies)."""
    from tests.order_models import cases, expected, onnxruntime_says, outcome

    want, got = {}, {}
    for name, model in cases().items():
        found, viewed = _check_and_view(tmp_path, model)
        said = sorted((d.code, d.severity, d.message) for d in found)
        assert sorted((d.code, d.severity, d.message) for d in viewed) == said, name
        want[name], got[name] = expected(onnxruntime_says(model)), outcome(viewed)
    assert got == want
