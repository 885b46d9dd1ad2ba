"""Kernels from `onnx.reference`: one node evaluated by onnx's own reference implementation.

Ops of the default domain with a registered kernel run through their `OpRun` class directly (about 10 us a
call). Everything else (ai.onnx.ml, schema function bodies, context-dependent functions, model-local functions,
ops with subgraphs that read outer values) runs as a one-node model in a `ReferenceEvaluator` (about 0.25 ms).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import onnx
from onnx import TypeProto, helper

from graphlsp.binary.external import has_external
from graphlsp.runner import budget


class ExternalDataRefused(ValueError):
    """A node handed to onnx.reference still refers to external data."""


_ORT_FREE = {"log": lambda *args: None, "verbose": 0, "new_ops": None, "existing_functions": {}}


@cache
def _op_class(op_type: str, version: int) -> Any:
    """The registered OpRun class of a default-domain op at a version; None when onnx has none."""
    from onnx.reference.op_run import OpRunExpand
    from onnx.reference.ops import load_op

    try:
        cls = load_op("", op_type, version)
    except Exception:
        return None
    if not isinstance(cls, type) or issubclass(cls, OpRunExpand):
        return None
    return cls


def value_type(value: Any) -> TypeProto:
    """A TypeProto for a runtime value (tensor, sequence of tensors, empty optional as an untyped value)."""
    if isinstance(value, np.ndarray):
        try:
            elem = helper.np_dtype_to_tensor_dtype(value.dtype)
        except Exception:
            elem = onnx.TensorProto.STRING if value.dtype == object else onnx.TensorProto.UNDEFINED
        return helper.make_tensor_type_proto(elem, list(value.shape))
    if isinstance(value, list):
        first = next((x for x in value if isinstance(x, np.ndarray)), None)
        inner = value_type(first) if first is not None else helper.make_tensor_type_proto(onnx.TensorProto.FLOAT, None)
        if first is not None:
            inner = helper.make_tensor_type_proto(inner.tensor_type.elem_type, None)
        return helper.make_sequence_type_proto(inner)
    return TypeProto()


def run_node(
    node: onnx.NodeProto, inputs: list[Any], version: int, opsets: dict[str, int],
    outer: dict[str, Any] | None = None, functions: list[onnx.FunctionProto] | None = None,
    limits: budget.Budget | None = None,
) -> list[Any]:  # fmt: skip
    """Evaluate one node. `inputs` are in the node's input order (None for an empty slot); `outer` holds the
    outer-scope values its subgraphs read; `functions` the model-local functions it may call. A tensor with
    external data anywhere in them is refused (ExternalDataRefused): onnx would load it relative to the working
    directory; callers embed the data they resolved (`binary.write`'s `embed`). With `limits`, the evaluation
    and every body it runs are charged to that budget (BudgetExceeded when over)."""
    if has_external(node) or any(has_external(f) for f in functions or ()):
        raise ExternalDataRefused(f"node '{node.name or node.op_type}' holds a tensor with external data")
    with budget.active(limits):
        return _run_node(node, inputs, version, opsets, outer, functions)


def _run_node(
    node: onnx.NodeProto, inputs: list[Any], version: int, opsets: dict[str, int],
    outer: dict[str, Any] | None, functions: list[onnx.FunctionProto] | None,
) -> list[Any]:  # fmt: skip
    if not outer and not functions and node.domain in ("", "ai.onnx") and not _has_subgraph(node):
        cls = _op_class(node.op_type, version)
        if cls is not None:
            params = dict(_ORT_FREE, opsets=opsets, evaluator_cls=_evaluator())
            op = cls(node, params)
            if not op.need_context():
                return list(op.run(*inputs))
    return _run_model(node, inputs, opsets, outer or {}, functions or [])


def _has_subgraph(node: onnx.NodeProto) -> bool:
    return any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute)


@cache
def _evaluator() -> Any:
    """onnx's ReferenceEvaluator charging the active Budget (`runner.budget`) for each node it runs (its `_log`
    hook is called once per node and once per output built) and each body or function body it enters. Subgraph
    and function evaluators are made of the same class (onnx passes `evaluator_cls=self.__class__`), so nested
    bodies are charged too."""
    from onnx.reference import ReferenceEvaluator

    class Budgeted(ReferenceEvaluator):  # type: ignore[misc]
        def _log(self, level: int, pattern: str, *args: Any) -> None:
            b = budget.current()
            if b is not None:
                if level == 1:
                    b.node()
                elif level == 2 and pattern.startswith(" + ") and len(args) == 2:
                    b.built(args[1])

        def run(self, *args: Any, **kwargs: Any) -> Any:
            b = budget.current()
            if b is not None:
                b.body()
            return super().run(*args, **kwargs)

    return Budgeted


def _run_model(
    node: onnx.NodeProto, inputs: list[Any], opsets: dict[str, int], outer: dict[str, Any],
    functions: list[onnx.FunctionProto],
) -> list[Any]:  # fmt: skip
    feeds: dict[str, Any] = {}
    for name, value in zip(node.input, inputs, strict=False):
        if name:
            feeds[name] = value
    feeds.update(outer)
    graph_inputs = [helper.make_value_info(name, value_type(value)) for name, value in feeds.items()]
    outputs = [helper.make_value_info(name, TypeProto()) for name in node.output if name]
    imports = dict(opsets)
    domain = "" if node.domain == "ai.onnx" else node.domain
    imports.setdefault(domain, 1)
    graph = helper.make_graph([node], "runner", graph_inputs, outputs)
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid(d, v) for d, v in imports.items()], ir_version=10,
        functions=functions,
    )  # fmt: skip
    session = _evaluator()(model)
    results = session.run(None, feeds)
    out: list[Any] = []
    it = iter(results)
    for name in node.output:
        out.append(next(it) if name else None)
    return out
