"""GL315 on an If branch's output: a branch that contradicts its declaration is a finding only when it is the branch
taken (the condition known) or when every branch contradicts it (issue 34: optimum's merged decoders at
past_decoder_sequence_length=0, where the branch with past returns an empty constant for the encoder's key)."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from tests.conftest import ROOT
from tests.infer import size_oracle as oracle

MERGED = ["optimum_t5__decoder_model_merged.onnx", "optimum_whisper__decoder_model_merged.onnx"]
AT = {"batch_size": 1, "encoder_sequence_length": 8, "decoder_sequence_length": 1, "past_decoder_sequence_length": 0}


@pytest.mark.parametrize("name", MERGED)
def test_merged_decoder_at_no_past_has_no_error_and_runs(name: str) -> None:
    pytest.importorskip("onnxruntime")
    path = ROOT / "corpus" / "models" / name
    assert [x for x in oracle.check(path, AT) if x[0] == "error"] == []
    import numpy as np
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    feeds = oracle._feeds(session, AT)
    feeds["use_cache_branch"] = np.array([False])  # no past: the branch that computes the encoder's key
    got = dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds), strict=True))
    assert list(got["present.0.encoder.key"].shape) == [1, 4, 8, 8]  # as declared


def _branch(value: str, n: int) -> onnx.GraphProto:
    out = helper.make_tensor_value_info(value, TensorProto.FLOAT, [3])
    const = helper.make_node("Constant", [], [value], value=helper.make_tensor("c", TensorProto.FLOAT, [n], [0.0] * n))
    return helper.make_graph([const], f"b_{value}", [], [out])


def _model(tmp_path: Path, then_n: int, else_n: int, cond: bool | None) -> Path:
    nodes = []
    inputs = []
    if cond is None:
        inputs.append(helper.make_tensor_value_info("cond", TensorProto.BOOL, []))
    else:
        nodes.append(helper.make_node("Constant", [], ["cond"], value=helper.make_tensor("k", TensorProto.BOOL, [],
                                                                                         [cond])))  # fmt: skip
    nodes.append(helper.make_node("If", ["cond"], ["y"], then_branch=_branch("t", then_n),
                                  else_branch=_branch("e", else_n)))  # fmt: skip
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    model = helper.make_model(helper.make_graph(nodes, "g", inputs, [y]), opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / f"if_{then_n}_{else_n}_{cond}.onnx"
    onnx.save(model, str(path))
    return path


def _gl315(path: Path) -> list[str]:
    from graphlsp.lint.config import Settings
    from graphlsp.lint.runner import lint_binary

    return sorted(x.message.split("'")[1] for x in lint_binary(str(path), Settings()) if x.code == "GL315")


def test_one_branch_wrong_with_the_condition_unknown_is_no_finding(tmp_path: Path) -> None:
    assert _gl315(_model(tmp_path, 2, 3, None)) == []
    assert _gl315(_model(tmp_path, 3, 2, None)) == []


def test_every_branch_wrong_is_a_finding_on_each(tmp_path: Path) -> None:
    assert _gl315(_model(tmp_path, 2, 4, None)) == ["e", "t"]


def test_the_branch_taken_is_judged_alone(tmp_path: Path) -> None:
    assert _gl315(_model(tmp_path, 2, 3, True)) == ["t"]
    assert _gl315(_model(tmp_path, 2, 3, False)) == []
