"""Every value's inferred type, in file order: what `graphlsp shapes` prints and the editor's hovers show."""

from __future__ import annotations

from dataclasses import dataclass

from graphlsp.graph.core import Model
from graphlsp.infer import dims as d
from graphlsp.infer.refiner import ShapeRefiner
from graphlsp.infer.types import TensorType, ValueType, elem_name, type_str
from graphlsp.syntax.document import SyntaxDocument


@dataclass(slots=True)
class ValueShape:
    name: str
    type: ValueType
    line: int  # 1-based
    col: int

    def to_json(self) -> dict[str, object]:
        ty = self.type
        dtype = None
        shape: list[object] | None = None
        if isinstance(ty, TensorType):
            dtype = elem_name(ty.elem) if ty.elem is not None else None
            shape = None if ty.shape is None else [d.to_json(x) for x in ty.shape]
        return {"name": self.name, "dtype": dtype, "shape": shape, "type": type_str(ty), "line": self.line,
                "col": self.col}  # fmt: skip


def value_shapes(model: Model, doc: SyntaxDocument, refiner: ShapeRefiner) -> list[ValueShape]:
    out: list[ValueShape] = []
    seen = set()
    for graph in model.graphs():
        if graph.kind == "function":
            continue
        for value in graph.values.values():
            if value in seen or value.span is None:
                continue
            seen.add(value)
            line, col = doc.lines.position(value.span[0])
            out.append(ValueShape(value.name, refiner.type_of(value), line + 1, col + 1))
    out.sort(key=lambda v: (v.line, v.col))
    return out
