"""InferenceContext: what one node's shape function sees and writes (TensorFlow's InferenceContext, ONNX's rules).

A context holds the node's input types, the values of its inputs where known (constants and "shape values":
small int tensors whose elements are dims, ONNX's data propagation), its attributes with schema defaults, and its
outputs. Shape functions read inputs, set outputs and report problems through it; they never touch the graph.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from graphlsp.infer import dims as d
from graphlsp.infer import shapes as sh
from graphlsp.infer.dims import Dim
from graphlsp.infer.types import Shape, TensorType, ValueType, elem_name, shape_str

if TYPE_CHECKING:
    from graphlsp.graph.core import Graph, Model, Node, Value
    from graphlsp.infer.conditions import Condition
    from graphlsp.ops.signature import OpSignature

Span = tuple[int, int]
Anchor = tuple[Any, int, int]  # (piece, start, end) local to the piece, so edits above it cannot stale it


class Inferred:
    """What is known about one value: its type, and its contents when small and known."""

    __slots__ = ("type", "sv", "const", "items", "bounds")

    type: ValueType
    sv: tuple[Dim, ...] | None  # a shape value: the elements (flattened) of an int tensor, as dims
    const: np.ndarray | None  # the full value, when known (constants, folded subgraphs)
    items: tuple[ValueType, ...] | None  # a sequence's element types in order, when its length is known
    bounds: tuple[Dim, Dim] | None  # every element of an int tensor lies in [lo, hi] (a Range's indices)

    def __init__(
        self,
        type: ValueType,
        sv: tuple[Dim, ...] | None = None,
        const: np.ndarray | None = None,
        items: tuple[ValueType, ...] | None = None,
        bounds: tuple[Dim, Dim] | None = None,
    ) -> None:
        self.type = type
        self.sv = sv
        self.const = const
        self.items = items
        self.bounds = bounds

    def __repr__(self) -> str:
        return (
            f"Inferred(type={self.type!r}, sv={self.sv!r}, const={self.const!r}, items={self.items!r}, "
            f"bounds={self.bounds!r})"
        )

    def __eq__(self, other: object) -> bool:
        if type(other) is not Inferred:
            return NotImplemented
        mine = (self.type, self.sv, self.const, self.items, self.bounds)
        theirs = (other.type, other.sv, other.const, other.items, other.bounds)
        return mine == theirs

    def same(self, other: Inferred | None) -> bool:
        if other is None or self.type != other.type or self.sv != other.sv or self.items != other.items:
            return False
        if self.bounds != other.bounds:
            return False
        a, b = self.const, other.const
        if a is None or b is None:
            return a is b
        return a.dtype == b.dtype and a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))


class ShapeProblem:
    """A problem a shape function found at a node, anchored in the text (None: at the node's op name)."""

    __slots__ = ("code", "message", "span", "related", "severity", "detail")

    code: str
    message: str
    span: Anchor | None  # None: the node's op name
    related: list[tuple[str, Anchor]]
    severity: str
    detail: str  # the part of the node it is about (`input 1`, `attribute axis`), for models without text

    def __init__(
        self,
        code: str,
        message: str,
        span: Anchor | None,
        related: list[tuple[str, Anchor]] | None = None,
        severity: str = "error",
        detail: str = "",
    ) -> None:
        self.code = code
        self.message = message
        self.span = span
        self.related = [] if related is None else related
        self.severity = severity
        self.detail = detail

    def __repr__(self) -> str:
        return (
            f"ShapeProblem(code={self.code!r}, message={self.message!r}, span={self.span!r}, "
            f"related={self.related!r}, severity={self.severity!r}, detail={self.detail!r})"
        )

    def __eq__(self, other: object) -> bool:
        if type(other) is not ShapeProblem:
            return NotImplemented
        mine = (self.code, self.message, self.span, self.related, self.severity, self.detail)
        theirs = (other.code, other.message, other.span, other.related, other.severity, other.detail)
        return mine == theirs


class Refiner(Protocol):
    """What a context, and the shape functions through `ctx.refiner`, may ask of the pass that runs them
    (`infer.refiner.ShapeRefiner`): the model, the dim unifier, what is known of other values, subgraph
    inference, and positions. Declared here so that shape functions see the refiner without importing it."""

    model: Model
    unifier: sh.Unifier
    values: dict[Value, Inferred]
    splits: dict[Node, tuple[Condition, Condition]]
    assumed: dict[Node, bool]

    def request_value(self, value: Value) -> np.ndarray | None: ...

    def line_of_value(self, value: Value) -> int | None: ...

    def anchor(self, span: tuple[int, int]) -> Anchor: ...

    def infer_subgraph(self, graph: Graph, input_types: list[ValueType]) -> list[ValueType]: ...

    def forget_graph(self, graph: Graph) -> None: ...

    def contradicts_declaration(self, value: Value) -> bool: ...

    def withdraw_contradiction(self, value: Value) -> None: ...


# element types whose values numpy holds in no int kind: float, string, bool, float16, double, complex, bfloat16
_NOT_INT = frozenset((1, 8, 9, 10, 11, 14, 15, 16))


def _larger(shape: Shape, limit: int) -> bool:
    """Whether a static shape holds more than `limit` elements."""
    if shape is None:
        return False
    n = 1
    for x in shape:
        if type(x) is not int:
            return False
        n *= x
    return n > limit


class InferenceError(Exception):
    """Raised by a shape function after reporting a problem, to stop inferring this node."""


class InferenceContext:
    __slots__ = ("node", "sig", "version", "inputs", "attrs", "refiner", "outputs", "output_elems", "problems",
                 "withheld")  # fmt: skip

    def __init__(
        self, node: Node, sig: OpSignature | None, version: int | None, inputs: list[Inferred | None],
        attrs: dict[str, Any], refiner: Refiner,
    ) -> None:  # fmt: skip
        self.node = node
        self.sig = sig
        self.version = version or 0
        self.inputs = inputs
        self.attrs = attrs
        self.refiner = refiner
        n_out = len(node.outputs)
        self.outputs: list[Inferred | None] = [None] * n_out
        self.output_elems: list[int | None] = [None] * n_out  # from type constraints, before the shape function
        self.problems: list[ShapeProblem] = []

        self.withheld: tuple[int, ...] = ()  # inputs of a type the op does not take: their values are not read

    # ---- inputs
    @property
    def op(self) -> str:
        return self.node.op_type

    @property
    def n_inputs(self) -> int:
        return len(self.inputs)

    def has_input(self, i: int) -> bool:
        return i < len(self.inputs) and self.inputs[i] is not None

    def input_type(self, i: int) -> ValueType:
        x = self.inputs[i] if i < len(self.inputs) else None
        return x.type if x is not None else None

    def input_shape(self, i: int) -> Shape:
        ty = self.input_type(i)
        return ty.shape if isinstance(ty, TensorType) else None

    def input_rank(self, i: int) -> int | None:
        s = self.input_shape(i)
        return None if s is None else len(s)

    def input_elem(self, i: int) -> int | None:
        ty = self.input_type(i)
        return ty.elem if isinstance(ty, TensorType) else None

    def input_const(self, i: int) -> np.ndarray | None:
        """The input's value when it is known (a constant, or computed by the runner when it can be)."""
        x = self.inputs[i] if i < len(self.inputs) else None
        if x is None:
            return None
        if x.const is None:
            value = self.node.inputs[i]
            if value is not None and i not in self.withheld:
                x.const = self.refiner.request_value(value)
        return x.const

    def input_shape_value(self, i: int) -> tuple[Dim, ...] | None:
        """The elements of an int input as dims, even when only some are known (e.g. Shape of [batch, 16])."""
        x = self.inputs[i] if i < len(self.inputs) else None
        if x is None:
            return None
        if x.sv is not None:
            return x.sv
        ty = x.type
        if x.const is None and type(ty) is TensorType and (ty.elem in _NOT_INT or _larger(ty.shape, 64)):
            return None  # its value could not be a shape value: not computed for nothing (an activation's)
        const = self.input_const(i)
        if const is not None and const.dtype.kind in "iu" and const.size <= 64:
            return tuple(int(v) for v in const.reshape(-1))
        return None

    def input_name(self, i: int) -> str:
        v = self.node.inputs[i] if i < len(self.node.inputs) else None
        return v.name if v is not None else f"input {i}"

    def describe_input(self, i: int) -> str:
        """`H is [N, 128] (line 4)`: the input's name, shape and where it is defined."""
        v = self.node.inputs[i] if i < len(self.node.inputs) else None
        text = f"{self.input_name(i)} is {shape_str(self.input_shape(i))}"
        if v is not None:
            line = self.refiner.line_of_value(v)
            if line is not None:
                text += f" (line {line})"
        return text

    def input_span(self, i: int) -> Span | None:
        return self.node.input_span(i)

    # ---- attributes
    def attr(self, name: str, default: Any = None) -> Any:
        if name in self.attrs and self.attrs[name] is not None:
            return self.attrs[name]
        if self.sig is not None:
            spec = self.sig.attrs.get(name)
            if spec is not None and spec.default is not None:
                return spec.default
        return default

    def has_attr(self, name: str) -> bool:
        return self.attrs.get(name) is not None

    def attr_span(self, name: str) -> Span | None:
        return self.node.origin.attr_span(name)

    # ---- outputs
    @property
    def n_outputs(self) -> int:
        return len(self.outputs)

    def has_output(self, i: int) -> bool:
        return i < len(self.node.outputs) and self.node.outputs[i] is not None

    def set_output(self, i: int, shape: Shape, elem: int | None = -1, sv: tuple[Dim, ...] | None = None) -> None:
        """Set output i to a tensor; elem -1 (the default) means the type the op's constraints give it."""
        if i >= len(self.outputs):
            return
        if elem == -1:
            elem = self.output_elems[i]
        self.outputs[i] = Inferred(TensorType(elem, shape), sv)

    def set_output_type(self, i: int, ty: ValueType) -> None:
        if i < len(self.outputs):
            self.outputs[i] = Inferred(ty)

    def set_output_value(self, i: int, sv: tuple[Dim, ...] | None = None, const: np.ndarray | None = None) -> None:
        x = self.outputs[i] if i < len(self.outputs) else None
        if x is not None:
            x.sv = sv
            x.const = const

    def copy_input(self, src: int = 0, dst: int = 0) -> None:
        """Output dst has input src's shape (and the constraint's element type)."""
        self.set_output(dst, self.input_shape(src))

    # ---- problems
    def error(
        self, code: str, message: str, *, input: int | None = None, attr: str | None = None,
        related: list[tuple[str, Span | None]] | None = None, severity: str = "error",
    ) -> None:  # fmt: skip
        span: Span | None = None
        detail = ""
        if input is not None:
            span = self.input_span(input)
            detail = f"input {input} ({self.input_name(input)})"
        elif attr is not None:
            span = self.attr_span(attr)
            detail = f"attribute {attr}"
        anchor = self.refiner.anchor
        rel = [(m, anchor(s)) for m, s in (related or []) if s is not None]
        at = anchor(span) if span is not None else None
        self.problems.append(ShapeProblem(code, f"{self.op}: {message}", at, rel, severity, detail))

    def fail(self, code: str, message: str, **kw: Any) -> InferenceError:
        """Report and return an exception to raise: `raise ctx.fail(...)`."""
        self.error(code, message, **kw)
        return InferenceError(message)

    def related_input(self, i: int) -> tuple[str, Span | None]:
        """Where input i is defined, for related information."""
        v = self.node.inputs[i] if i < len(self.node.inputs) else None
        return (f"{self.input_name(i)} is defined here", v.span if v is not None else None)

    # ---- common contracts
    def axis(self, axis: int, rank: int | None, name: str = "axis", allow_end: bool = False) -> int | None:
        """Normalize a possibly negative axis against a rank; report GL309 when it is out of range."""
        if rank is None:
            return None
        hi = rank + 1 if allow_end else rank
        if not -hi <= axis < hi:
            raise self.fail("GL309", f"{name} {axis} is out of range for rank {rank} (allowed {-hi}..{hi - 1})",
                            attr=name if name in self.attrs else None)  # fmt: skip
        return axis + hi if axis < 0 else axis

    def broadcast(self, indices: list[int] | None = None) -> Shape:
        """Multidirectional broadcast of the given inputs (all present inputs by default); GL301 on conflict."""
        idx = [i for i in (indices if indices is not None else range(self.n_inputs)) if self.has_input(i)]
        shapes = [self.input_shape(i) for i in idx]
        try:
            return sh.broadcast(shapes, self.refiner.unifier)
        except sh.MergeError:
            desc = ", ".join(self.describe_input(i) for i in idx)
            related = [self.related_input(i) for i in idx]
            raise self.fail("GL301", f"shapes do not broadcast: {desc}", related=related) from None

    def merge_shapes(self, a: Shape, b: Shape, what: str) -> Shape:
        try:
            return sh.merge(a, b, self.refiner.unifier)
        except sh.MergeError as e:
            raise self.fail("GL317", f"{what}: {shape_str(a)} and {shape_str(b)} differ ({e})") from None

    def elem_str(self, i: int) -> str:
        return elem_name(self.input_elem(i))

    def dim_eq(self, a: Dim, b: Dim) -> bool | None:
        return d.equal(self.refiner.unifier.canonical(a), self.refiner.unifier.canonical(b))

    def infer_graph(self, graph: Graph, input_types: list[ValueType]) -> list[ValueType]:
        """Infer a subgraph (If/Loop/Scan body) with the given input types; returns its output types."""
        return self.refiner.infer_subgraph(graph, input_types)
