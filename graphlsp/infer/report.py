"""Every value's inferred type, in file order: what `graphlsp shapes` prints and the editor's hovers show."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from graphlsp.graph.core import Model
from graphlsp.infer import dims as d
from graphlsp.infer.refiner import ShapeRefiner
from graphlsp.infer.types import TensorType, ValueType, elem_name, type_str


@dataclass(slots=True)
class ValueShape:
    name: str
    type: ValueType
    line: int | None  # 1-based; None in a model without text
    col: int | None
    node: str | None = None  # the producing node's name, in a model without text
    graph: str = ""  # the path of the graph the value is in (`main`, `main/If_0.then_branch`)
    kind: str = ""  # the value's: "input", "initializer", "node" (Value.kind)

    def to_json(self) -> dict[str, object]:
        ty = self.type
        dtype = None
        shape: list[object] | None = None
        if isinstance(ty, TensorType):
            dtype = elem_name(ty.elem) if ty.elem is not None else None
            shape = None if ty.shape is None else [d.to_json(x) for x in ty.shape]
        out: dict[str, object] = {"name": self.name, "graph": self.graph, "dtype": dtype, "shape": shape,
                                  "type": type_str(ty), "line": self.line, "col": self.col}  # fmt: skip
        if self.node is not None:
            out["node"] = self.node
        if self.kind:
            out["kind"] = self.kind
        return out


def value_shapes(model: Model, refiner: ShapeRefiner,
                 position: Callable[[int], tuple[int, int]] | None = None) -> list[ValueShape]:  # fmt: skip
    """Every value of the model's graphs (function bodies aside): in text order when `position` turns offsets
    into (line, col), 0-based; else (a binary) inputs, initializers and node outputs in graph order."""
    out: list[ValueShape] = []
    seen = set()
    for graph in model.graphs():
        if graph.kind == "function":
            continue
        for value in graph.values.values():
            if value in seen:
                continue
            seen.add(value)
            if position is None:
                p = value.producer
                out.append(ValueShape(value.name, refiner.type_of(value), None, None,
                                      (p.name or f"{p.op_type}_{p.index}") if p is not None else None,
                                      graph.path, value.kind))  # fmt: skip
                continue
            if value.span is None:
                continue
            line, col = position(value.span[0])
            out.append(ValueShape(value.name, refiner.type_of(value), line + 1, col + 1, graph=graph.path,
                                  kind=value.kind))  # fmt: skip
    if position is not None:
        out.sort(key=lambda v: (v.line or 0, v.col or 0))
    return out
