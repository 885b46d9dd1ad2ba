"""The core graph IR: Model, Function, Graph, Node and Value, built from a SyntaxDocument by `build.py`.

Modeled on onnx-ir's core classes and TensorFlow's Graph: a Graph owns its nodes in file order (a node's `index`
is its id) and its values by name; a Value knows its producer (a node, or the graph itself for inputs and
initializers) and its consumers, so the edges of the graph are the (producer, value, consumer) triples. A
subgraph (an If/Loop/Scan body) has a `parent` graph whose values it may read (outer scope); a function body
has none and sees only its inputs.

Every node and value keeps the syntax element it came from and the `Piece` that holds it, so a range is always
`piece.origin + element.start` in the current text. The IR is a read-only snapshot: rebuild it after an edit.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from graphlsp.syntax import tree as t
from graphlsp.syntax.document import Piece

if TYPE_CHECKING:
    from onnx.defs import OpSchema

Span = tuple[int, int]
FunctionKey = tuple[str, str, str]  # (domain, name, overload)


def span(piece: Piece, element: t.Name | t.OpRef | t.Node | t.ValueInfo) -> Span:
    """The absolute range of a syntax element held by `piece`."""
    return piece.origin + element.start, piece.origin + element.end


@dataclass(slots=True, eq=False)
class Value:
    """A named value. kind: "input", "initializer", "node" (a node output) or "undefined" (used, never defined).

    A graph input with a default (`float[2] x = {1, 2}` in the input list) is an input with is_initializer.
    `duplicate_of` is set on a second definition of a name (the graph's `values` keeps the first one).
    """

    name: str
    graph: Graph
    kind: str
    producer: Node | None = None
    output_index: int = -1
    piece: Piece | None = None
    name_el: t.Name | None = None  # the defining name in the text
    type: t.TypeRef | None = None
    is_initializer: bool = False
    consumers: list[tuple[Node, int]] = field(default_factory=list)  # (node, input slot), subgraph nodes included
    graph_outputs: list[Graph] = field(default_factory=list)  # graphs that list this value as an output
    duplicate_of: Value | None = None

    @property
    def span(self) -> Span | None:
        """Where the value is defined, or None for an undefined value."""
        if self.piece is None or self.name_el is None:
            return None
        return span(self.piece, self.name_el)

    @property
    def is_used(self) -> bool:
        return bool(self.consumers or self.graph_outputs)

    def __repr__(self) -> str:
        return f"Value({self.name!r}, {self.kind})"


@dataclass(slots=True, eq=False)
class Node:
    """One operator call. `inputs`/`outputs` hold None for empty slots; `index` is the position in the graph."""

    graph: Graph
    index: int
    syntax: t.Node
    piece: Piece
    domain: str  # normalized: "" for the default domain, whether written `Relu` or `ai.onnx.Relu`
    op_type: str
    overload: str = ""
    version: int | None = None  # the opset version imported for the domain, None when it is not imported
    schema: OpSchema | None = None
    function: Function | None = None  # the model-local function it calls, looked up before schemas
    inputs: list[Value | None] = field(default_factory=list)
    outputs: list[Value | None] = field(default_factory=list)
    implicit: dict[str, Value] = field(default_factory=dict)  # outer-scope values read by its subgraphs
    subgraphs: dict[str, list[Graph]] = field(default_factory=dict)  # attribute name -> graph(s)

    @property
    def label(self) -> str | None:
        return self.syntax.label.value if self.syntax.label is not None else None

    @property
    def attributes(self) -> list[t.Attribute]:
        return self.syntax.attributes

    @property
    def implicit_inputs(self) -> list[Value]:
        return list(self.implicit.values())

    @property
    def span(self) -> Span:
        return span(self.piece, self.syntax)

    @property
    def op_span(self) -> Span:
        """The op name (without domain and overload)."""
        start = self.piece.origin + self.syntax.op.op_start
        return start, start + len(self.syntax.op.op_type)

    @property
    def label_span(self) -> Span | None:
        return span(self.piece, self.syntax.label) if self.syntax.label is not None else None

    def input_span(self, i: int) -> Span | None:
        el = self.syntax.inputs[i]
        return span(self.piece, el) if el is not None else None

    def output_span(self, i: int) -> Span | None:
        el = self.syntax.outputs[i]
        return span(self.piece, el) if el is not None else None

    @property
    def qualified_op(self) -> str:
        name = f"{self.domain}.{self.op_type}" if self.domain else self.op_type
        return f"{name}:{self.overload}" if self.overload else name

    def predecessors(self) -> list[Node]:
        """The nodes of this graph whose outputs this node (or its subgraphs) reads, without repeats."""
        seen: dict[int, Node] = {}
        for v in (*self.inputs, *self.implicit.values()):
            if v is not None and v.producer is not None and v.graph is self.graph:
                seen.setdefault(v.producer.index, v.producer)
        return list(seen.values())

    def successors(self) -> list[Node]:
        """The nodes of this graph that read an output of this node (directly or in their subgraphs)."""
        seen: dict[int, Node] = {}
        for v in self.outputs:
            if v is None:
                continue
            for c, _ in v.consumers:
                top = self.graph.top_node(c)
                if top is not None:
                    seen.setdefault(top.index, top)
        return list(seen.values())

    def __repr__(self) -> str:
        return f"Node({self.index}, {self.qualified_op}, {[v.name if v else None for v in self.outputs]})"


class Graph:
    """A main graph, a subgraph (attribute value) or a function body."""

    __slots__ = (
        "name", "kind", "parent", "owner", "attribute", "piece", "syntax", "inputs", "outputs", "initializers",
        "value_infos", "nodes", "values", "undefined", "_order",
    )  # fmt: skip

    def __init__(
        self, name: str, kind: str, piece: Piece | None, syntax: t.GraphSig | t.FunctionSig | None,
        parent: Graph | None = None, owner: Node | None = None, attribute: str | None = None,
    ) -> None:  # fmt: skip
        self.name = name
        self.kind = kind  # "model", "subgraph" or "function"
        self.parent = parent
        self.owner = owner  # the node whose attribute holds this subgraph
        self.attribute = attribute
        self.piece = piece  # the piece holding the signature (the owner's piece for a subgraph)
        self.syntax = syntax
        self.inputs: list[Value] = []
        self.outputs: list[Value] = []
        self.initializers: dict[str, Value] = {}
        self.value_infos: dict[str, t.ValueInfo] = {}
        self.nodes: list[Node] = []
        self.values: dict[str, Value] = {}  # every value defined in this graph (first definition of a name)
        self.undefined: dict[str, Value] = {}  # names read here that nothing defines
        self._order: list[Node] | None = None

    def __repr__(self) -> str:
        return f"Graph({self.name!r}, {self.kind}, {len(self.nodes)} nodes)"

    # ---- lookups
    def lookup(self, name: str) -> Value | None:
        """The value a name refers to here: this graph's, else the enclosing graphs' (outer scope)."""
        g: Graph | None = self
        while g is not None:
            v = g.values.get(name)
            if v is not None:
                return v
            g = g.parent
        return None

    def producer(self, name: str) -> Node | None:
        v = self.lookup(name)
        return v.producer if v is not None else None

    def consumers(self, name: str) -> list[Node]:
        v = self.lookup(name)
        return [n for n, _ in v.consumers] if v is not None else []

    def is_outer(self, value: Value) -> bool:
        """Whether `value` comes from an enclosing graph (outer scope) rather than this one."""
        return value.graph is not self and value.kind != "undefined"

    def top_node(self, node: Node) -> Node | None:
        """The node of this graph that is `node` or holds it in a (nested) subgraph; None if it is elsewhere."""
        n: Node | None = node
        while n is not None and n.graph is not self:
            n = n.graph.owner
        return n

    # ---- traversal
    def subgraphs(self) -> Iterator[Graph]:
        """Every graph nested in this one's nodes, depth first, in file order."""
        for node in self.nodes:
            for graphs in node.subgraphs.values():
                for g in graphs:
                    yield g
                    yield from g.subgraphs()

    def all_nodes(self) -> Iterator[Node]:
        """This graph's nodes and, after each, the nodes of its subgraphs."""
        for node in self.nodes:
            yield node
            for graphs in node.subgraphs.values():
                for g in graphs:
                    yield from g.all_nodes()

    # ---- order
    def topological_order(self) -> list[Node]:
        """Kahn's order, stable by file order (file order when it is already topological).

        Nodes on a cycle, or downstream of one, cannot be placed: they come last, in file order.
        """
        if self._order is None:
            from graphlsp.graph.order import topological_order

            self._order = topological_order(self)
        return self._order

    def cyclic_nodes(self) -> list[Node]:
        """The nodes that lie on a cycle, in file order."""
        from graphlsp.graph.order import strongly_connected

        comp = strongly_connected(self)
        sizes: dict[int, int] = {}
        for c in comp:
            sizes[c] = sizes.get(c, 0) + 1
        return [n for n in self.nodes if sizes[comp[n.index]] > 1 or n in n.predecessors()]


@dataclass(slots=True, eq=False)
class Function:
    """A model-local function: header (domain, overload, opset_import), attributes and body."""

    domain: str
    name: str
    overload: str
    opset_imports: dict[str, int]
    attributes: list[t.FuncAttr]
    piece: Piece
    syntax: t.FunctionSig
    body: Graph | None = None

    @property
    def key(self) -> FunctionKey:
        return self.domain, self.name, self.overload

    @property
    def name_span(self) -> Span:
        return span(self.piece, self.syntax.name)


@dataclass(slots=True, eq=False)
class Model:
    """The model: opset imports (domain -> version, "" for ai.onnx), the main graph and the local functions."""

    opset_imports: dict[str, int]
    ir_version: int | None = None
    graph: Graph | None = None
    functions: dict[FunctionKey, Function] = field(default_factory=dict)

    def graphs(self) -> Iterator[Graph]:
        """The main graph, the function bodies, and every subgraph of those."""
        tops = [self.graph] + [f.body for f in self.functions.values()]
        for g in tops:
            if g is not None:
                yield g
                yield from g.subgraphs()
