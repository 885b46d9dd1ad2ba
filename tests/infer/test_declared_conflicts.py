"""GL315: a declared type that contradicts inference. A graph output's is an error (the interface is wrong); a
value_info entry's a warning (an annotation runtimes recompute: the GenAI builder declares a Constant's int64[1]
as a scalar, and onnxruntime runs the model)."""

from __future__ import annotations

import onnx

from graphlsp.analysis import Analysis, ModelAnalysis
from graphlsp.binary.read import model_from_proto

H = '<ir_version: 10, opset_import: ["" : 21]>\n'


def _gl315(findings: list) -> list[str]:  # type: ignore[type-arg]
    return [f.severity for f in findings if f.code == "GL315"]


def test_a_wrong_graph_output_is_an_error() -> None:
    assert _gl315(Analysis(H + "g (float[2, 3] x) => (float[3, 2] y) {\n  y = Relu (x)\n}\n").findings()) == ["error"]


def test_a_wrong_value_info_is_a_warning_in_text_and_binary() -> None:
    text = (H + "g (float[2, 3] x) => (y) <int64 one> {\n"
            "  one = Constant <value: tensor = int64[1] {1}> ()\n  y = Relu (x)\n}\n")  # fmt: skip
    assert _gl315(Analysis(text).findings()) == ["warning"]
    model, findings = model_from_proto(onnx.parser.parse_model(text))
    assert _gl315(ModelAnalysis(model, findings).findings()) == ["warning"]
    # onnx's strict inference rejects the same declaration: the contradiction is real
    try:
        onnx.shape_inference.infer_shapes(onnx.parser.parse_model(text), strict_mode=True)
        raise AssertionError("onnx accepted it")
    except onnx.shape_inference.InferenceError as e:
        assert "differ in rank" in str(e)
