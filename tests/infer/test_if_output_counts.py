"""An If whose branches return different numbers of outputs (a fuzz finding: inside a mangled function, with a
known condition, inference looked up the dead branch's outputs past its end: IndexError, GL399). onnxruntime
refuses such a model on load, whichever branch the condition picks: graphlsp says GL317."""

from __future__ import annotations

import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from graphlsp.lint.config import Settings
from graphlsp.lint.runner import lint_binary


def _model(cond: bool | None, then_outputs: int, else_outputs: int, in_function: bool) -> onnx.ModelProto:
    def branch(name: str, n: int) -> onnx.GraphProto:
        nodes = [h.make_node("Constant", [], [f"{name}{i}"], value=h.make_tensor("v", T.FLOAT, [1], [1.0]))
                 for i in range(n)]  # fmt: skip
        return h.make_graph(nodes, name, [], [h.make_tensor_value_info(f"{name}{i}", T.FLOAT, [1]) for i in range(n)])

    nodes = []
    inputs = []
    if cond is None:
        inputs = [h.make_tensor_value_info("c", T.BOOL, [])]
    else:
        nodes.append(h.make_node("Constant", [], ["c"], value=h.make_tensor("c", T.BOOL, [], [cond])))
    nodes.append(h.make_node("If", ["c"], ["y"], then_branch=branch("t", then_outputs),
                             else_branch=branch("e", else_outputs)))  # fmt: skip
    functions = []
    if in_function:
        functions = [h.make_function("local", "F", ["c"] if cond is None else [], ["y"], nodes,
                                     [h.make_opsetid("", 18)])]  # fmt: skip
        nodes = [h.make_node("F", ["c"] if cond is None else [], ["y"], domain="local")]
    g = h.make_graph(nodes, "g", inputs, [h.make_tensor_value_info("y", T.FLOAT, [1])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 18), h.make_opsetid("local", 1)], functions=functions)
    m.ir_version = 8
    return m


@pytest.mark.parametrize("in_function", [False, True])
@pytest.mark.parametrize("cond", [True, False, None])
@pytest.mark.parametrize(("then_n", "else_n"), [(1, 0), (0, 1), (1, 2)])
def test_branches_with_different_output_counts(tmp_path, cond, then_n, else_n, in_function) -> None:  # type: ignore[no-untyped-def]
    m = _model(cond, then_n, else_n, in_function)
    path = tmp_path / "m.onnx"
    onnx.save(m, path)
    with pytest.raises(Exception, match="different number of outputs|outputs"):
        ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    codes = [d.code for d in lint_binary(str(path), Settings())]
    assert "GL399" not in codes, codes
    assert "GL317" in codes, codes
