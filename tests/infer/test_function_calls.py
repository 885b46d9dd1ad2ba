"""A model-local function's body is inferred for each call with that call's types and attributes; a problem
inside it is reported at the call, the body's line as related information (issue 16, item 3)."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest

from graphlsp.analysis import Analysis, ModelAnalysis
from graphlsp.binary.read import model_from_proto
from graphlsp.infer.types import type_str
from graphlsp.lint.config import Settings
from graphlsp.lint.runner import check_file

HEADER = '<ir_version: 10, opset_import: ["" : 21, "local" : 1]>\n'
MM = '<domain: "local", opset_import: ["" : 21]>\nMM (x, w) => (out) {\n  out = MatMul (x, w)\n}\n'


def _model(body: str, functions: str = MM) -> str:
    return HEADER + body + functions


TWO_CALLS = _model(
    "g (float[4, 3] a, float[5, 2] b, float[3, 2] c) => (y, z) {\n"
    "  y = local.MM (a, b)\n"
    "  z = local.MM (a, c)\n"
    "}\n"
)


def _errors(text: str) -> list:  # type: ignore[type-arg]
    return [f for f in Analysis(text).findings() if f.severity == "error"]


def test_a_shape_error_inside_a_function_is_reported_at_the_bad_call_only() -> None:
    errors = _errors(TWO_CALLS)
    assert len(errors) == 1, errors
    f = errors[0]
    assert f.code == "GL302"
    call = TWO_CALLS.index("local.MM (a, b)") + len("local.")
    assert (f.start, f.end) == (call, call + 2)  # the call's op name
    assert "its body fails" in f.message and "[4, 3]" in f.message and "[5, 2]" in f.message
    matmul = TWO_CALLS.index("MatMul (x, w)")
    assert f.related and f.related[0][1] == matmul and "inside local.MM" in f.related[0][0]
    # the good call's outputs are inferred through the body
    a = Analysis(TWO_CALLS)
    z = a.model.graph.lookup("z")  # type: ignore[union-attr]
    assert z is not None and type_str(a.refiner.type_of(z)) == "float[4, 2]"


def test_every_call_is_checked_with_its_own_attributes() -> None:
    functions = ('<domain: "local", opset_import: ["" : 21]>\nT <perm> (x) => (out) {\n'
                 "  out = Transpose <perm: ints = @perm> (x)\n}\n")  # fmt: skip
    text = _model(
        "g (float[2, 3] a) => (y, z) {\n"
        "  y = local.T <perm = [1, 0]> (a)\n"
        "  z = local.T <perm = [0, 2]> (a)\n"
        "}\n",
        functions,
    )
    errors = _errors(text)
    assert len(errors) == 1 and errors[0].start == text.index("T <perm = [0, 2]>")
    assert "perm" in errors[0].message
    a = Analysis(text)
    y = a.model.graph.lookup("y")  # type: ignore[union-attr]
    assert y is not None and type_str(a.refiner.type_of(y)) == "float[3, 2]"


def test_a_problem_two_calls_deep_reaches_the_outer_call_with_both_places() -> None:
    functions = MM + '<domain: "local", opset_import: ["" : 21, "local" : 1]>\nOuter (x, w) => (out) {\n' \
        "  out = local.MM (x, w)\n}\n"  # fmt: skip
    text = _model("g (float[4, 3] a, float[5, 2] b) => (y) {\n  y = local.Outer (a, b)\n}\n", functions)
    errors = _errors(text)
    assert len(errors) == 1 and errors[0].start == text.index("Outer (a, b)")
    places = [r[1] for r in errors[0].related]
    assert text.index("MM (x, w)\n}") in places  # the inner call, in Outer's body
    assert text.index("MatMul (x, w)") in places  # and the MatMul in MM's body


def test_fixing_the_call_by_an_edit_clears_the_error() -> None:
    a = Analysis(TWO_CALLS)
    assert len([f for f in a.findings() if f.severity == "error"]) == 1
    at = TWO_CALLS.index("float[5, 2] b") + len("float[")
    a.apply_edit(at, at + 1, "3")  # b becomes [3, 2]
    assert [f for f in a.findings() if f.severity == "error"] == []
    at = TWO_CALLS.index("MatMul (x, w)")
    a.apply_edit(at, at + len("MatMul"), "Add")  # now every call fails: [4, 3] + [3, 2] do not broadcast
    assert {f.code for f in a.findings() if f.severity == "error"} == {"GL301"}


def test_a_binary_model_names_the_body_node() -> None:
    proto = onnx.parser.parse_model(TWO_CALLS.replace("out = MatMul", "out = MatMul").replace(
        "MM (x, w) => (out) {\n  out = MatMul (x, w)", "MM (x, w) => (out) {\n  [mm] out = MatMul (x, w)"))
    model, findings = model_from_proto(proto)
    errors = [f for f in ModelAnalysis(model, findings).findings() if f.severity == "error"]
    assert len(errors) == 1 and errors[0].node is not None and errors[0].node.index == 0
    assert "node 'mm'" in errors[0].message and errors[0].start == -1


def test_check_reports_it_with_the_body_line(tmp_path: Path) -> None:
    path = tmp_path / "m.onnxtxt"
    path.write_text(TWO_CALLS)
    result = check_file(str(path), Settings())
    [d] = [d for d in result.diagnostics if d.severity == "error"]
    assert (d.line, d.code) == (3, "GL302")
    assert d.related and d.related[0]["line"] == 8  # type: ignore[index]


@pytest.mark.parametrize("model", ["TWO_CALLS"])
def test_onnx_agrees_that_the_model_is_wrong(model: str) -> None:
    with pytest.raises(onnx.shape_inference.InferenceError, match="Incompatible dimensions"):
        onnx.shape_inference.infer_shapes(onnx.parser.parse_model(globals()[model]), strict_mode=True)
