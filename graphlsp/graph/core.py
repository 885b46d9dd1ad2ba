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
from typing import TYPE_CHECKING, Any

from graphlsp.frozen import Frozen
from graphlsp.graph import digraph
from graphlsp.graph.tensor import Tensor

if TYPE_CHECKING:
    from graphlsp.graph.ops import SchemaRef

Span = tuple[int, int]
FunctionKey = tuple[str, str, str]  # (domain, name, overload)
Dims = tuple[int | str | None, ...]  # int: a value, str: a dim_param, None: unknown


class TypeSpec(Frozen):
    """A declared type. kind: tensor, sparse_tensor, seq, map, optional, opaque.

    `elem` is onnx's element type number (tensor, sparse_tensor, map key; 0 when the name is not one);
    `dims` is None for unknown rank, () for a scalar; `arg` is the element type of seq/optional and the value
    type of map; `opaque` is (domain, name).
    """

    __slots__ = ("kind", "elem", "dims", "arg", "opaque")

    kind: str
    elem: int | None
    dims: Dims | None
    arg: TypeSpec | None
    opaque: tuple[str, str] | None

    def __init__(
        self,
        kind: str,
        elem: int | None = None,
        dims: Dims | None = None,
        arg: TypeSpec | None = None,
        opaque: tuple[str, str] | None = None,
    ) -> None:
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "elem", elem)
        object.__setattr__(self, "dims", dims)
        object.__setattr__(self, "arg", arg)
        object.__setattr__(self, "opaque", opaque)

    def __repr__(self) -> str:
        return (
            f"TypeSpec(kind={self.kind!r}, elem={self.elem!r}, dims={self.dims!r}, arg={self.arg!r}, "
            f"opaque={self.opaque!r})"
        )

    def __eq__(self, other: object) -> bool:
        if type(other) is not TypeSpec:
            return NotImplemented
        mine = (self.kind, self.elem, self.dims, self.arg, self.opaque)
        theirs = (other.kind, other.elem, other.dims, other.arg, other.opaque)
        return mine == theirs

    def __hash__(self) -> int:
        return hash((self.kind, self.elem, self.dims, self.arg, self.opaque))


class Ref(Frozen):
    """An attribute reference (`@name`) inside a function body, bound by each call."""

    __slots__ = ("name",)

    name: str

    def __init__(
        self,
        name: str,
    ) -> None:
        object.__setattr__(self, "name", name)

    def __repr__(self) -> str:
        return f"Ref(name={self.name!r})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not Ref:
            return NotImplemented
        return (self.name,) == (other.name,)

    def __hash__(self) -> int:
        return hash((self.name,))


class Attr:
    """One attribute. `kind` is onnx's attribute type name (int, floats, tensor, graph, type_proto, ...), "ref"
    for a reference, None when the value has no valid type. `value` is int, float, str, list, Tensor, TypeSpec,
    Ref, or the name of the node's subgraph attribute for graphs (the Graphs are in `Node.subgraphs`)."""

    __slots__ = ("name", "kind", "value", "origin")

    name: str
    kind: str | None
    value: Any
    origin: Any  # front end's: where the attribute is written (text: piece and syntax element)

    def __init__(
        self,
        name: str,
        kind: str | None,
        value: Any,
        origin: Any = None,
    ) -> None:
        self.name = name
        self.kind = kind
        self.value = value
        self.origin = origin

    def __repr__(self) -> str:
        return f"Attr(name={self.name!r}, kind={self.kind!r}, value={self.value!r}, origin={self.origin!r})"


class NodeOrigin:
    """Where a node comes from. This base has no text positions (a binary model's node); the text front end's
    subclass answers each range. `anchor` is what the range moves with (a statement), `quiet` says the node's
    statement had a syntax error (the error speaks for it; no other finding should)."""

    __slots__ = ()
    anchor: Any = None
    quiet = False
    metadata: tuple[tuple[str, str], ...] = ()  # what the exporter wrote on the node (`ExportedNode`)

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


class ExportedNode(NodeOrigin):
    """A binary model's node that says where it comes from: its metadata_props (key, value) in order, and its
    doc_string as the pair ("doc_string", text) after them (torch's exporters write the Python source there;
    `graphlsp.provenance` reads it)."""

    __slots__ = ("metadata",)

    def __init__(self, metadata: tuple[tuple[str, str], ...]) -> None:
        self.metadata = metadata


NO_NODE_ORIGIN = NodeOrigin()
NO_ORIGIN = NameOrigin()


class ValueInfo:
    """A declared type for a name: a graph input or output, or a value_info entry."""

    __slots__ = ("name", "type", "origin")

    name: str
    type: TypeSpec | None
    origin: NameOrigin

    def __init__(
        self,
        name: str,
        type: TypeSpec | None,
        origin: NameOrigin = NO_ORIGIN,
    ) -> None:
        self.name = name
        self.type = type
        self.origin = origin

    def __repr__(self) -> str:
        return f"ValueInfo(name={self.name!r}, type={self.type!r}, origin={self.origin!r})"


class Value:
    """A named value. kind: "input", "initializer", "node" (a node output) or "undefined" (used, never defined).

    A graph input with a default (an initializer of the same name) is an input with is_initializer; `tensor` is
    an initializer's data. `duplicate_of` is set on a second definition of a name (the graph's `values` keeps the
    first one).
    """

    __slots__ = ("name", "graph", "kind", "producer", "output_index", "origin", "type", "is_initializer", "tensor",
                 "consumers", "graph_outputs", "duplicate_of")

    name: str
    graph: Graph
    kind: str
    producer: Node | None
    output_index: int
    origin: NameOrigin
    type: TypeSpec | None
    is_initializer: bool
    tensor: Tensor | None
    consumers: list[tuple[Node, int]]  # (node, input slot), subgraph nodes included
    graph_outputs: list[Graph]  # graphs that list this value as an output
    duplicate_of: Value | None

    def __init__(
        self,
        name: str,
        graph: Graph,
        kind: str,
        producer: Node | None = None,
        output_index: int = -1,
        origin: NameOrigin = NO_ORIGIN,
        type: TypeSpec | None = None,
        is_initializer: bool = False,
        tensor: Tensor | None = None,
        consumers: list[tuple[Node, int]] | None = None,
        graph_outputs: list[Graph] | None = None,
        duplicate_of: Value | None = None,
    ) -> None:
        self.name = name
        self.graph = graph
        self.kind = kind
        self.producer = producer
        self.output_index = output_index
        self.origin = origin
        self.type = type
        self.is_initializer = is_initializer
        self.tensor = tensor
        self.consumers = [] if consumers is None else consumers
        self.graph_outputs = [] if graph_outputs is None else graph_outputs
        self.duplicate_of = duplicate_of

    @property
    def span(self) -> Span | None:
        """Where the value is defined in the text, or None (undefined, or a binary model)."""
        return self.origin.span()

    @property
    def is_used(self) -> bool:
        return bool(self.consumers or self.graph_outputs)

    def __repr__(self) -> str:
        return f"Value({self.name!r}, {self.kind})"


class Node:
    """One operator call. `inputs`/`outputs` hold None for empty slots; `index` is the position in the graph.

    `name` is the node's name (None when it has none, "" when it is set to the empty string)."""

    __slots__ = ("graph", "index", "origin", "domain", "op_type", "overload", "name", "attributes", "version", "schema",
                 "function", "inputs", "outputs", "implicit", "subgraphs", "generation")

    graph: Graph
    index: int
    origin: NodeOrigin
    domain: str  # normalized: "" for the default domain, whether written `Relu` or `ai.onnx.Relu`
    op_type: str
    overload: str
    name: str | None
    attributes: dict[str, Attr]
    version: int | None  # the opset version imported for the domain, None when it is not imported
    schema: SchemaRef | None
    function: Function | None  # the model-local function it calls, looked up before schemas
    inputs: list[Value | None]
    outputs: list[Value | None]
    implicit: dict[str, Value]  # outer-scope values read by its subgraphs
    subgraphs: dict[str, list[Graph]]  # attribute name -> graph(s)
    generation: int  # bumped by a front end that replaces the node's attributes in place (an edit)

    def __init__(
        self,
        graph: Graph,
        index: int,
        origin: NodeOrigin,
        domain: str,
        op_type: str,
        overload: str = "",
        name: str | None = None,
        attributes: dict[str, Attr] | None = None,
        version: int | None = None,
        schema: SchemaRef | None = None,
        function: Function | None = None,
        inputs: list[Value | None] | None = None,
        outputs: list[Value | None] | None = None,
        implicit: dict[str, Value] | None = None,
        subgraphs: dict[str, list[Graph]] | None = None,
        generation: int = 0,
    ) -> None:
        self.graph = graph
        self.index = index
        self.origin = origin
        self.domain = domain
        self.op_type = op_type
        self.overload = overload
        self.name = name
        self.attributes = {} if attributes is None else attributes
        self.version = version
        self.schema = schema
        self.function = function
        self.inputs = [] if inputs is None else inputs
        self.outputs = [] if outputs is None else outputs
        self.implicit = {} if implicit is None else implicit
        self.subgraphs = {} if subgraphs is None else subgraphs
        self.generation = generation

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


class FuncAttr:
    """A function attribute: a name, and a default value when the declaration gives one."""

    __slots__ = ("name", "kind", "default", "has_default")

    name: str
    kind: str | None
    default: Any
    has_default: bool

    def __init__(
        self,
        name: str,
        kind: str | None = None,
        default: Any = None,
        has_default: bool = False,
    ) -> None:
        self.name = name
        self.kind = kind
        self.default = default
        self.has_default = has_default

    def __repr__(self) -> str:
        return (
            f"FuncAttr(name={self.name!r}, kind={self.kind!r}, default={self.default!r}, "
            f"has_default={self.has_default!r})"
        )


class Function:
    """A model-local function: header (domain, overload, opset_import), attributes and body."""

    __slots__ = ("domain", "name", "overload", "opset_imports", "attributes", "origin", "body")

    domain: str
    name: str
    overload: str
    opset_imports: dict[str, int]
    attributes: list[FuncAttr]
    origin: NameOrigin  # where its name is written
    body: Graph | None

    def __init__(
        self,
        domain: str,
        name: str,
        overload: str,
        opset_imports: dict[str, int],
        attributes: list[FuncAttr],
        origin: NameOrigin = NO_ORIGIN,
        body: Graph | None = None,
    ) -> None:
        self.domain = domain
        self.name = name
        self.overload = overload
        self.opset_imports = opset_imports
        self.attributes = attributes
        self.origin = origin
        self.body = body

    def __repr__(self) -> str:
        return (
            f"Function(domain={self.domain!r}, name={self.name!r}, overload={self.overload!r}, "
            f"opset_imports={self.opset_imports!r}, attributes={self.attributes!r}, origin={self.origin!r}, "
            f"body={self.body!r})"
        )

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


class Model:
    """The model: opset imports (domain -> version, "" for ai.onnx), the main graph and the local functions."""

    __slots__ = ("opset_imports", "ir_version", "graph", "functions", "source", "producer")

    opset_imports: dict[str, int]
    ir_version: int | None
    graph: Graph | None
    functions: dict[FunctionKey, Function]
    source: SourceMap
    producer: str

    def __init__(
        self,
        opset_imports: dict[str, int],
        ir_version: int | None = None,
        graph: Graph | None = None,
        functions: dict[FunctionKey, Function] | None = None,
        source: SourceMap | None = None,
        producer: str = "",
    ) -> None:
        self.opset_imports = opset_imports
        self.ir_version = ir_version
        self.graph = graph
        self.functions = {} if functions is None else functions
        self.source = SourceMap() if source is None else source
        self.producer = producer

    def __repr__(self) -> str:
        return (
            f"Model(opset_imports={self.opset_imports!r}, ir_version={self.ir_version!r}, graph={self.graph!r}, "
            f"functions={self.functions!r}, source={self.source!r}, producer={self.producer!r})"
        )

    def graphs(self) -> Iterator[Graph]:
        """The main graph, the function bodies, and every subgraph of those."""
        tops = [self.graph] + [f.body for f in self.functions.values()]
        for g in tops:
            if g is not None:
                yield g
                yield from g.subgraphs()
