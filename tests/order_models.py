"""Models whose nodes read a value before the node producing it, and onnxruntime as the oracle of what that means:
it sorts the main graph's nodes and runs the model, refuses a cycle ("the graph is not acyclic") and an unsorted
subgraph or function body. Both front ends' tests (tests/syntax/test_order.py, tests/binary/test_order.py) judge
GL203 against what onnxruntime does with each model."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h

from tests.conftest import missing


def _vi(name: str, elem: int = T.FLOAT, shape: list[int] | None = None) -> Any:
    return h.make_tensor_value_info(name, elem, [2] if shape is None else shape)


def _model(nodes: list[Any], inputs: list[Any], functions: list[Any] | None = None) -> onnx.ModelProto:
    graph = h.make_graph(nodes, "g", inputs, [_vi("y")])
    imports = [h.make_opsetid("", 17)] + ([h.make_opsetid("local", 1)] if functions else [])
    return h.make_model(graph, opset_imports=imports, ir_version=8, functions=functions or [])


def _branch(name: str, nodes: list[Any], out: str) -> Any:
    return h.make_graph(nodes, name, [], [_vi(out)])


def _if(then_nodes: list[Any], then_out: str, else_nodes: list[Any] | None = None, out: str = "y") -> Any:
    els = else_nodes or [h.make_node("Abs", ["x"], ["e_out"])]
    return h.make_node("If", ["c"], [out], then_branch=_branch("th", then_nodes, then_out),
                       else_branch=_branch("el", els, "e_out"))  # fmt: skip


X, C, N = _vi("x"), _vi("c", T.BOOL, []), _vi("n", T.INT64, [])
_LOOP_INPUTS = [_vi("i", T.INT64, []), _vi("cond_in", T.BOOL, []), _vi("acc_in")]
_LOOP_OUTPUTS = [_vi("cond_out", T.BOOL, []), _vi("acc_out")]


def _loop(body_nodes: list[Any]) -> Any:
    body = h.make_graph([h.make_node("Identity", ["cond_in"], ["cond_out"]), *body_nodes], "body", _LOOP_INPUTS,
                        _LOOP_OUTPUTS)  # fmt: skip
    return h.make_node("Loop", ["n", "", "x"], ["y"], body=body)


def cases() -> dict[str, onnx.ModelProto]:
    """Each model by name; `x` is float[2], `c` a bool and `n` an int64 (a trip count)."""
    neg_t = [h.make_node("Neg", ["t"], ["t_out"])]
    relu_t = h.make_node("Relu", ["x"], ["t"])
    unsorted = [h.make_node("Neg", ["u"], ["o"]), h.make_node("Relu", ["x"], ["u"])]  # reads u, then makes it
    inner_reads_u = _if([h.make_node("Neg", ["u"], ["p"])], "p", out="inner")
    cycle = [h.make_node("Add", ["x", "b"], ["a"]), h.make_node("Neg", ["a"], ["b"]), h.make_node("Relu", ["b"], ["y"])]
    loop_reads_t = _loop([h.make_node("Add", ["acc_in", "t"], ["acc_out"])])
    loop_unsorted = _loop([h.make_node("Add", ["acc_in", "q"], ["acc_out"]), h.make_node("Relu", ["x"], ["q"])])
    body = [h.make_node("Neg", ["u"], ["b"]), h.make_node("Relu", ["a"], ["u"])]
    local = h.make_function("local", "F", ["a"], ["b"], body, [h.make_opsetid("", 17)])
    return {
        "main graph out of order": _model([h.make_node("Neg", ["t"], ["y"]), relu_t], [X]),
        "a branch reads a later node": _model([_if(neg_t, "t_out"), relu_t], [C, X]),
        "a loop body reads a later node": _model([loop_reads_t, relu_t], [X, N]),
        "a nested branch reads a later node": _model(
            [_if([_if(neg_t, "t_out", out="inner")], "inner"), relu_t], [C, X]
        ),
        "a cycle": _model(cycle, [X]),
        "a branch reads its own If's output": _model([_if([h.make_node("Abs", ["y"], ["o"])], "o")], [C, X]),
        "a cycle through a branch": _model([_if(neg_t, "t_out"), h.make_node("Neg", ["y"], ["t"])], [C, X]),
        "a branch out of order": _model([_if(unsorted, "o")], [C, X]),
        "a loop body out of order": _model([loop_unsorted], [X, N]),
        "a nested branch reads a later node of its branch": _model(
            [_if([inner_reads_u, unsorted[1]], "inner")], [C, X]
        ),
        "a called function out of order": _model([h.make_node("F", ["x"], ["y"], domain="local")], [X], [local]),
        "an undefined name": _model([h.make_node("Relu", ["nope"], ["y"])], [X]),
    }


FEEDS = {"x": np.array([1.0, -2.0], np.float32), "c": np.array(True), "n": np.array(3, np.int64)}


def onnxruntime_says(model: onnx.ModelProto, feeds: dict[str, Any] | None = None) -> str:
    """Empty when onnxruntime loads the model and runs it (on `feeds`, default `FEEDS`), else its error message."""
    try:
        import onnxruntime as ort
    except ImportError:
        missing("onnxruntime is not installed (the test extra): it is these tests' oracle")
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    try:
        sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
        sess.run(None, {i.name: (feeds or FEEDS)[i.name] for i in sess.get_inputs()})
    except Exception as e:  # noqa: BLE001 - onnxruntime's refusal is the answer
        return str(e)
    return ""


def outcome(diagnostics: list[Any]) -> str:
    """What graphlsp says of a model, in the oracle's terms: "runs" (no error), else the error's kind."""
    errors = [d for d in diagnostics if d.severity == "error"]
    if not errors:
        return "runs"
    return " + ".join(sorted({_kind(d) for d in errors}))


def _kind(d: Any) -> str:
    if d.code == "GL203":
        return "cycle" if d.message.startswith("cycle:") else "unsorted"
    return "undefined" if d.code == "GL201" else d.code


def expected(refusal: str) -> str:
    """onnxruntime's answer in the same terms: "runs", or what its error message names."""
    if not refusal:
        return "runs"
    if "not acyclic" in refusal:
        return "cycle"
    if "must be topologically sorted" in refusal or "expected to have type but instead is null" in refusal:
        return "unsorted"  # onnx's shape inference of the If/Loop or of the function, run by onnxruntime
    if "is not a graph input, initializer, or output of a previous node" in refusal:
        return "undefined"
    return refusal


def unsorted_model() -> onnx.ModelProto:
    """Every node after the ones that read it: Reshape -> Transpose -> MatMul -> Slice -> If -> Concat, reversed."""
    branch = [h.make_graph([h.make_node(op, ["u"], [out])], name, [], [h.make_tensor_value_info(out, T.FLOAT, None)])
              for op, out, name in (("Neg", "o1", "th"), ("Abs", "o2", "el"))]  # fmt: skip
    nodes = [
        h.make_node("Concat", ["z", "b2"], ["y"], axis=1),
        h.make_node("If", ["c"], ["b2"], then_branch=branch[0], else_branch=branch[1]),
        h.make_node("Slice", ["z", "start", "end", "axes"], ["u"]),
        h.make_node("MatMul", ["t", "w"], ["z"]),
        h.make_node("Transpose", ["r"], ["t"], perm=[1, 0]),
        h.make_node("Reshape", ["x", "shape"], ["r"]),
    ]
    inits = [h.make_tensor("shape", T.INT64, [2], [4, 6]), h.make_tensor("w", T.FLOAT, [4, 5], [1.0] * 20),
             h.make_tensor("start", T.INT64, [1], [1]), h.make_tensor("end", T.INT64, [1], [3]),
             h.make_tensor("axes", T.INT64, [1], [1])]  # fmt: skip
    inputs = [h.make_tensor_value_info("x", T.FLOAT, [2, 12]), h.make_tensor_value_info("c", T.BOOL, [])]
    outputs = [h.make_tensor_value_info(n, T.FLOAT, None) for n in ("y", "b2", "u", "z", "t", "r")]
    graph = h.make_graph(nodes, "g", inputs, outputs, inits)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


UNSORTED_FEEDS = {"x": np.arange(24, dtype=np.float32).reshape(2, 12), "c": FEEDS["c"]}


def run_shapes(model: onnx.ModelProto) -> dict[str, str]:
    """The outputs' types and shapes as onnxruntime computes them (in graphlsp's notation)."""
    import onnxruntime as ort

    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    outs = sess.run(None, UNSORTED_FEEDS)
    return {o.name: f"float[{', '.join(map(str, v.shape))}]" for o, v in zip(sess.get_outputs(), outs, strict=True)}
