"""GL203 in the binary reader, judged by onnxruntime: the main graph's nodes out of order are a warning (onnxruntime
sorts them and runs the model; onnx.checker refuses it), a cycle or an unsorted subgraph or function body an error
(onnxruntime refuses them); shapes are inferred in topological order, as onnxruntime computes them."""

from __future__ import annotations

from pathlib import Path

import onnx

from graphlsp.analysis import ModelAnalysis
from graphlsp.binary.read import read_model
from graphlsp.infer.types import type_str
from graphlsp.lint.config import Settings
from graphlsp.lint.runner import lint_binary
from tests.order_models import UNSORTED_FEEDS, cases, expected, onnxruntime_says, outcome, run_shapes, unsorted_model


def _checker_refuses(model: onnx.ModelProto) -> bool:
    try:
        onnx.checker.check_model(model)
    except onnx.checker.ValidationError as e:
        return "topologically sorted" in str(e)
    return False


def test_gl203_is_an_error_exactly_where_onnxruntime_refuses_the_model(tmp_path: Path) -> None:
    want, got, warned = {}, {}, {}
    for i, (name, model) in enumerate(cases().items()):
        path = tmp_path / f"{i}.onnx"
        onnx.save(model, path)
        want[name] = expected(onnxruntime_says(model))
        found = lint_binary(str(path), Settings())
        got[name] = outcome(found)
        if want[name] == "runs" and _checker_refuses(model):  # worth a warning: onnx's checker refuses it
            warned[name] = any(d.code == "GL203" and d.severity == "warning" for d in found)
    assert got == want
    assert warned and all(warned.values()), warned


def test_an_unsorted_main_graph_gets_onnxruntimes_shapes_and_no_error(tmp_path: Path) -> None:
    model = unsorted_model()
    assert onnxruntime_says(model, UNSORTED_FEEDS) == ""
    path = tmp_path / "unsorted.onnx"
    onnx.save(model, path)
    binary, findings = read_model(path)
    a = ModelAnalysis(binary, findings)
    assert binary.graph is not None
    want = run_shapes(model)
    assert {name: type_str(a.refiner.type_of(binary.graph.values[name])) for name in want} == want
    assert [(f.code, f.message) for f in a.findings() if f.severity == "error"] == []
