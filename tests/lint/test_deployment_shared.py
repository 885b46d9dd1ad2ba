"""The kernel check shares work between nodes only where the verdict cannot differ: a schema body's inference
between calls without attributes and with the same types, a Shape's verdict between Shapes whose input is static
(or not) alike."""

from __future__ import annotations

import pytest

from graphlsp.infer.refiner import ShapeRefiner
from graphlsp.lint.config import Settings
from graphlsp.lint.deployment import DeploymentCheck
from graphlsp.lint.runner import lint_text
from graphlsp.runtime import kernels

SETTINGS = Settings(targets=["onnxruntime:cpu"])


def gl7(text: str) -> list[tuple[int | None, str, str]]:
    return [(d.line, d.code, d.message) for d in lint_text(text, "m.onnxtxt", SETTINGS)[1] if d.code.startswith("GL7")]


def test_calls_of_a_schema_body_share_its_inference_when_nothing_else_differs(monkeypatch: pytest.MonkeyPatch) -> None:
    # HardSwish has no CPU kernel: inlined, its body's HardSigmoid has no bfloat16 kernel
    text = ('<ir_version: 10, opset_import: ["" : 14]>\n'
            "g (bfloat16[4, 5] x, bfloat16[6, 7] w) => (bfloat16[4, 5] a, bfloat16[4, 5] b, bfloat16[6, 7] c) {\n"
            "  a = HardSwish (x)\n  b = HardSwish (x)\n  c = HardSwish (w)\n}\n")
    calls: list[ShapeRefiner] = []  # the kernel check's inferences of the body (not shape inference's)
    infer_call, scratch = ShapeRefiner.infer_call, DeploymentCheck._scratch_refiner
    mine: list[ShapeRefiner] = []

    def counted(self: ShapeRefiner, *args: object) -> None:
        calls.append(self)
        infer_call(self, *args)  # type: ignore[arg-type]

    def kept(self: DeploymentCheck) -> ShapeRefiner:
        mine.append(scratch(self))
        return mine[-1]

    monkeypatch.setattr(ShapeRefiner, "infer_call", counted)
    monkeypatch.setattr(DeploymentCheck, "_scratch_refiner", kept)
    got = gl7(text)
    assert [(line, code) for line, code, _ in got] == [(3, "GL701"), (4, "GL701"), (5, "GL701")]
    label = kernels.table_for("onnxruntime:cpu").label
    assert {m for _, _, m in got} == {f"HardSwish(14) has no kernel and is inlined: its body's HardSigmoid: {label} "
                                      "has HardSigmoid(6) for float; not bfloat16"}
    assert len([r for r in calls if r in mine]) == 2  # a and b share one; c has other types


@pytest.mark.parametrize("first", ["static", "dynamic"])
def test_a_shape_of_a_static_input_does_not_decide_for_one_of_a_dynamic_input(first: str) -> None:
    # Shape(21) has no uint4 kernel on CPU; onnxruntime folds a Shape of a static shape away
    lines = {"static": "  p = Shape (x)\n", "dynamic": "  q = Shape (y)\n"}
    second = "dynamic" if first == "static" else "static"
    text = ('<ir_version: 10, opset_import: ["" : 21]>\n'
            "g (uint4[2, 3] x, uint4[N, 3] y) => (int64[2] p, int64[2] q) {\n"
            f"{lines[first]}{lines[second]}}}\n")
    dynamic_line = 3 if first == "dynamic" else 4
    assert [(line, code) for line, code, _ in gl7(text)] == [(dynamic_line, "GL701")]
