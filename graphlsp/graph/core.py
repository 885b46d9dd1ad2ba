"""The core graph IR: Model, Function, Graph, Node and Value, built by a front end (text or binary).

Modeled on onnx-ir's core classes and TensorFlow's Graph: a Graph owns its nodes in file order (a node's `index`
is its id) and its values by name; a Value knows its producer (a node, or the graph itself for inputs and
initializers) and its consumers, so the edges of the graph are the (producer, value, consumer) triples. A
subgraph (an If/Loop/Scan body) has a `parent` graph whose values it may read (outer scope); a function body
has none and sees only its inputs.

The IR knows nothing of file formats. Nodes hold their attributes as plain typed values (`Attr`), values their
declared types as `TypeSpec`, initializers a lazy `Tensor`. Each element carries an origin that its front end
supplies, as rust-analyzer's semantic model keeps a source map to syntax: the text front end's origins give
ranges in the current text (they move with their statement after an edit), the binary front end's give none,
and a finding there is located by its node (graph path, index, name).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from graphlsp.graph import digraph
from graphlsp.graph.tensor import Tensor

if TYPE_CHECKING:
    from graphlsp.graph.ops import SchemaRef

Span = tuple[int, int]
FunctionKey = tuple[str, str, str]  # (domain, name, overload)
Dims = tuple[int | str | None, ...]  # int: a value, str: a dim_param, None: unknown


@dataclass(frozen=True, slots=True)
class TypeSpec:
    """A declared type. kind: tensor, sparse_tensor, seq, map, optional, opaque.

    `elem` is onnx's element type number (tensor, sparse_tensor, map key; 0 when the name is not one);
    `dims` is None for unknown rank, () for a scalar; `arg` is the element type of seq/optional and the value
    type of map; `opaque` is (domain, name).
    """

    kind: str
    elem: int | None = None
    dims: Dims | None = None
    arg: TypeSpec | None = None
    opaque: tuple[str, str] | None = None


@dataclass(frozen=True, slots=True)
class Ref:
    """An attribute reference (`@name`) inside a function body, bound by each call."""

    name: str


@dataclass(slots=True, eq=False)
class Attr:
    """One attribute. `kind` is onnx's attribute type name (int, floats, tensor, graph, type_proto, ...), "ref"
    for a reference, None when the value has no valid type. `value` is int, float, str, list, Tensor, TypeSpec,
    Ref, or the name of the node's subgraph attribute for graphs (the Graphs are in `Node.subgraphs`)."""

    name: str
    kind: str | None
    value: Any
    origin: Any = None  # front end's: where the attribute is written (text: piece and syntax element)


class NodeOrigin:
    """Where a node comes from. This base has no text positions (a binary model's node); the text front end's
    subclass answers each range. `anchor` is what the range moves with (a statement), `quiet` says the node's
    statement had a syntax error (the error speaks for it; no other finding should)."""

    __slots__ = ()
    anchor: Any = None
    quiet = False

    def span(self) -> Span | None:
        return None

    def op_span(self) -> Span | None:
        """The op name (without domain and overload)."""
        return None

    def domain_span(self) -> Span | None:
        """The domain prefix of the op name."""
        return None

    def label_span(self) -> Span | None:
        return None

    def input_span(self, i: int) -> Span | None:
        return None

    def output_span(self, i: int) -> Span | None:
        return None

    def attr_span(self, name: str) -> Span | None:
        return None


class NameOrigin:
    """Where a value, graph or function is defined (its name). The base has no text position."""

    __slots__ = ()
    anchor: Any = None
    quiet = False

    def span(self) -> Span | None:
        return None


NO_NODE_ORIGIN = NodeOrigin()
NO_ORIGIN = NameOrigin()


@dataclass(slots=True, eq=False)
class ValueInfo:
    """A declared type for a name: a graph input or output, or a value_info entry."""

    name: str
    type: TypeSpec | None
    origin: NameOrigin = NO_ORIGIN


@dataclass(slots=True, eq=False)
class Value:
    """A named value. kind: "input", "initializer", "node" (a node output) or "undefined" (used, never defined).

    A graph input with a default (an initializer of the same name) is an input with is_initializer; `tensor` is
    an initializer's data. `duplicate_of` is set on a second definition of a name (the graph's `values` keeps the
    first one).
    """

    name: str
    graph: Graph
    kind: str
    producer: Node | None = None
    output_index: int = -1
    origin: NameOrigin = NO_ORIGIN
    type: TypeSpec | None = None
    is_initializer: bool = False
    tensor: Tensor | None = None
    consumers: list[tuple[Node, int]] = field(default_factory=list)  # (node, input slot), subgraph nodes included
    graph_outputs: list[Graph] = field(default_factory=list)  # graphs that list this value as an output
    duplicate_of: Value | None = None

    @property
    def span(self) -> Span | None:
        """Where the value is defined in the text, or None (undefined, or a binary model)."""
        return self.origin.span()

    @property
    def is_used(self) -> bool:
        return bool(self.consumers or self.graph_outputs)

    def __repr__(self) -> str:
        return f"Value({self.name!r}, {self.kind})"


@dataclass(slots=True, eq=False)
class Node:
    """One operator call. `inputs`/`outputs` hold None for empty slots; `index` is the position in the graph.

    `name` is the node's name (None when it has none, "" when it is set to the empty string)."""

    graph: Graph
    index: int
    origin: NodeOrigin
    domain: str  # normalized: "" for the default domain, whether written `Relu` or `ai.onnx.Relu`
    op_type: str
    overload: str = ""
    name: str | None = None
    attributes: dict[str, Attr] = field(default_factory=dict)
    version: int | None = None  # the opset version imported for the domain, None when it is not imported
    schema: SchemaRef | None = None
    function: Function | None = None  # the model-local function it calls, looked up before schemas
    inputs: list[Value | None] = field(default_factory=list)
    outputs: list[Value | None] = field(default_factory=list)
    implicit: dict[str, Value] = field(default_factory=dict)  # outer-scope values read by its subgraphs
    subgraphs: dict[str, list[Graph]] = field(default_factory=dict)  # attribute name -> graph(s)
    generation: int = 0  # bumped by a front end that replaces the node's attributes in place (an edit)

    @property
    def label(self) -> str | None:
        return self.name

    @property
    def implicit_inputs(self) -> list[Value]:
        return list(self.implicit.values())

    @property
    def span(self) -> Span | None:
        return self.origin.span()

    @property
    def op_span(self) -> Span | None:
        """The op name (without domain and overload)."""
        return self.origin.op_span()

    @property
    def label_span(self) -> Span | None:
        return self.origin.label_span()

    def input_span(self, i: int) -> Span | None:
        return self.origin.input_span(i)

    def output_span(self, i: int) -> Span | None:
        return self.origin.output_span(i)

    @property
    def path(self) -> str:
        """Where the node is, front end aside: `main/If_3.then_branch/...` graph names and attributes."""
        return self.graph.path

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
    """A main graph, a subgraph (attribute value) or a function body.

    `output_infos` holds the outputs as declared (name, type, where), one per entry of `outputs`; `value_infos`
    the declared types of other values; `origin` is where the graph's name is written (the front end's).
    """

    __slots__ = (
        "name", "kind", "parent", "owner", "attribute", "origin", "inputs", "outputs", "output_infos",
        "initializers", "value_infos", "nodes", "values", "undefined", "_order",
    )  # fmt: skip

    def __init__(
        self, name: str, kind: str, origin: Any = None, parent: Graph | None = None, owner: Node | None = None,
        attribute: str | None = None,
    ) -> None:  # fmt: skip
        self.name = name
        self.kind = kind  # "model", "subgraph" or "function"
        self.parent = parent
        self.owner = owner  # the node whose attribute holds this subgraph
        self.attribute = attribute
        self.origin = origin
        self.inputs: list[Value] = []
        self.outputs: list[Value] = []
        self.output_infos: list[ValueInfo] = []
        self.initializers: dict[str, Value] = {}
        self.value_infos: dict[str, ValueInfo] = {}
        self.nodes: list[Node] = []
        self.values: dict[str, Value] = {}  # every value defined in this graph (first definition of a name)
        self.undefined: dict[str, Value] = {}  # names read here that nothing defines
        self._order: list[Node] | None = None

    @property
    def path(self) -> str:
        """The graph's place: its name, or `outer/node.attribute` for a subgraph."""
        if self.owner is None or self.parent is None:
            return self.name
        owner = self.owner
        who = owner.name or f"{owner.op_type}_{owner.index}"
        return f"{self.parent.path}/{who}.{self.attribute}"

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

    def outer_defined(self, name: str) -> Value | None:
        """A value of an enclosing graph defined before the node holding this subgraph: the one a definition of
        `name` here would shadow (as onnx's checker sees it)."""
        g = self
        while g.parent is not None and g.owner is not None:
            holder = g.owner
            g = g.parent
            v = g.values.get(name)
            if v is not None and (v.producer is None or v.producer.index < holder.index):
                return v
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
    def predecessor_indices(self) -> list[list[int]]:
        """For each node, the indices of the nodes of this graph it reads from, directly or inside one of its
        subgraphs (an outer-scope read makes the If/Loop/Scan node depend on the value); repeats kept."""
        out: list[list[int]] = []
        for node in self.nodes:
            preds = []
            for v in node.inputs:
                if v is not None and v.producer is not None and v.graph is self:
                    preds.append(v.producer.index)
            for v in node.implicit.values():
                if v.producer is not None and v.graph is self:
                    preds.append(v.producer.index)
            out.append(preds)
        return out

    def topological_order(self) -> list[Node]:
        """Kahn's order, stable by file order (file order when it is already topological).

        Nodes on a cycle, or downstream of one, cannot be placed: they come last, in file order.
        """
        if self._order is None:
            nodes = self.nodes
            self._order = [nodes[i] for i in digraph.topological_indices(self.predecessor_indices())]
        return self._order

    def components(self) -> list[int]:
        """A strongly connected component id per node index: two nodes share one when each depends on the other."""
        return digraph.strongly_connected(digraph.successors_of(self.predecessor_indices()))

    def cyclic_nodes(self) -> list[Node]:
        """The nodes that lie on a cycle, in file order."""
        comp = self.components()
        sizes: dict[int, int] = {}
        for c in comp:
            sizes[c] = sizes.get(c, 0) + 1
        return [n for n in self.nodes if sizes[comp[n.index]] > 1 or n in n.predecessors()]


@dataclass(slots=True, eq=False)
class FuncAttr:
    """A function attribute: a name, and a default value when the declaration gives one."""

    name: str
    kind: str | None = None
    default: Any = None
    has_default: bool = False


@dataclass(slots=True, eq=False)
class Function:
    """A model-local function: header (domain, overload, opset_import), attributes and body."""

    domain: str
    name: str
    overload: str
    opset_imports: dict[str, int]
    attributes: list[FuncAttr]
    origin: NameOrigin = NO_ORIGIN  # where its name is written
    body: Graph | None = None

    @property
    def key(self) -> FunctionKey:
        return self.domain, self.name, self.overload

    @property
    def name_span(self) -> Span | None:
        return self.origin.span()


class SourceMap:
    """What a front end tells the layers above about positions: this base (a binary model) knows none.

    `anchor` turns an absolute range into one that moves with the text's statements; `resolve` turns it back;
    `line_of` is a 0-based line number of an offset."""

    text = False

    def anchor(self, span: Span) -> tuple[Any, int, int]:
        return (None, span[0], span[1])

    def resolve(self, anchored: tuple[Any, int, int]) -> Span:
        o = anchored[0].origin if anchored[0] is not None else 0
        return anchored[1] + o, anchored[2] + o

    def line_of(self, offset: int) -> int | None:
        return None


@dataclass(slots=True, eq=False)
class Model:
    """The model: opset imports (domain -> version, "" for ai.onnx), the main graph and the local functions."""

    opset_imports: dict[str, int]
    ir_version: int | None = None
    graph: Graph | None = None
    functions: dict[FunctionKey, Function] = field(default_factory=dict)
    source: SourceMap = field(default_factory=SourceMap)
    producer: str = ""

    def graphs(self) -> Iterator[Graph]:
        """The main graph, the function bodies, and every subgraph of those."""
        tops = [self.graph] + [f.body for f in self.functions.values()]
        for g in tops:
            if g is not None:
                yield g
                yield from g.subgraphs()
