"""The Analysis layer's own pieces: the server's warm-up model."""

from __future__ import annotations

import onnx.checker
import onnx.parser
import onnx.shape_inference

from graphlsp.analysis import _WARM_UP_MODEL, Analysis, warm_up


def test_warm_up_model_is_valid_and_clean() -> None:
    """The warm-up touches the parser, the shape rules and the runner; a model they reject would warm up less."""
    model = onnx.parser.parse_model(_WARM_UP_MODEL)
    onnx.checker.check_model(model, full_check=True)
    analysis = Analysis(_WARM_UP_MODEL)
    assert not analysis.doc.problems
    findings = analysis.findings()
    assert [f.code for f in findings] == ["GL402"]  # the computed Reshape target: the fold path runs too
    onnx.shape_inference.infer_shapes(model, strict_mode=True)  # raises where onnx finds the shapes inconsistent
    warm_up()
