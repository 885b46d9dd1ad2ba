"""A shape rule never reads an attribute or input value its schema would refuse, also when the model's imports are
unknown (none, or a header that does not parse: the newest schema decides, silently, whether the rule runs), and a
value numpy cannot make stays unknown: no GL399 (an internal error) on any of these (issue 20, LOW)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from onnx import TensorProto as T
from onnx import helper as h

from graphlsp.cli import main

NODES = [
    h.make_node("Transpose", ["x"], ["y"], perm=[1.5, 0.0]),
    h.make_node("Constant", [], ["ax"], value=h.make_tensor("a", T.FLOAT, [], [float("inf")])),
    h.make_node("CumSum", ["x", "ax"], ["z"]),
    h.make_node("Constant", [], ["s"], value=h.make_tensor("s", T.INT64, [2], [0, 2**63 - 1])),
    h.make_node("ConstantOfShape", ["s"], ["w"]),
    h.make_node("Concat", ["x", "x"], ["cc"], axis="a"),
    h.make_node("Gather", ["x", "x"], ["g"], axis=2.5),
]
OUTS = ["y", "z", "w", "cc", "g"]


@pytest.mark.parametrize("imports", [[], [h.make_opsetid("", 18)], [h.make_opsetid("", 999)]], ids=["none", "18", "999"])
def test_no_internal_error_on_values_a_schema_refuses(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      imports: list) -> None:  # type: ignore[type-arg]  # fmt: skip
    graph = h.make_graph(NODES, "g", [h.make_tensor_value_info("x", T.FLOAT, [2, 3])],
                         [h.make_tensor_value_info(n, T.FLOAT, None) for n in OUTS])  # fmt: skip
    model = h.make_model(graph, opset_imports=imports)
    model.ir_version = 8
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    main(["check", "--no-cache", "--format", "json", str(path)])
    diags = json.loads(capsys.readouterr().out)
    assert not [d for d in diags if d["code"] == "GL399"], [d["message"] for d in diags if d["code"] == "GL399"]
    if imports and imports[0].version == 18:  # known imports: the refused values are reported
        assert {d["code"] for d in diags} >= {"GL314", "GL311"}, diags


def test_constant_of_shape_with_a_zero_beside_a_huge_dim(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "m.onnxtxt"
    path.write_text('<ir_version: 8, opset_import: ["" : 18]>\ng (float[2] x) => (float[0, 9223372036854775807] w) '
                    "{\n  s = Constant <value = int64[2] {0, 9223372036854775807}> ()\n  w = ConstantOfShape (s)\n}\n")
    main(["check", "--no-cache", "--format", "json", str(path)])
    diags = json.loads(capsys.readouterr().out)
    assert not [d for d in diags if d["code"] in ("GL399", "GL403")], diags
