"""A model's cost from its analysis: each node's work and bytes, parameters, totals and the activation peak.

The walk reads the shape engine's results (`ShapeRefiner.type_of`, the contexts' attributes, shape values) and
asks each node's cost rule (`graphlsp/cost/registry.py`). A node with a body costs its body: a model-local
function per call (the body inferred again with the call's types, as the kernel check does), an op with onnx's
function body and no rule of its own through that body, If its larger branch (and says which), Loop and Scan
the trip count times the body when the trip count is a formula, else unknown with the reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from graphlsp.cost import registry
from graphlsp.cost.formula import Total, at_least, bytes_of, value_bytes
from graphlsp.cost.memory import Peak, peak_memory
from graphlsp.cost.movement import free
from graphlsp.cost.registry import Call, Work
from graphlsp.graph.core import Graph, Model, Node, Value
from graphlsp.infer import dims as d
from graphlsp.infer.attrs import attribute_values
from graphlsp.infer.dims import Dim
from graphlsp.infer.refiner import ShapeRefiner, schema_body
from graphlsp.infer.types import TensorType

MAX_DEPTH = 8  # nested bodies (calls, branches, loops) followed; deeper: unknown
UNBOUNDED_TRIPS = 1 << 31  # a Loop's M this large is "loop until the condition says stop" (torch writes INT64_MAX)


class NodeCost:
    """One node's cost: FLOPs and MACs (a body's, times its trips), bytes read (its inputs) and written (its
    outputs), and `note`: how it was counted, or why it is unknown."""

    __slots__ = ("node", "flops", "macs", "read", "written", "note", "body")

    def __init__(self, node: Node, work: Work, read: Dim, written: Dim, body: list[NodeCost] | None = None) -> None:
        self.node = node
        self.flops = work.flops
        self.macs = work.macs
        self.note = work.note
        self.read = read
        self.written = written
        self.body = body or []

    def __repr__(self) -> str:
        return f"NodeCost({self.node.qualified_op}, flops={self.flops}, note={self.note!r})"


class Parameters:
    """Weights stored in the model: initializers and Constant nodes' values, elements and bytes per element
    type (sub-byte types packed)."""

    __slots__ = ("by_type", "count", "bytes")

    def __init__(self) -> None:
        self.by_type: dict[tuple[str, int], list[int]] = {}  # (kind, elem) -> [elements, bytes]
        self.count = 0
        self.bytes = 0

    def add(self, kind: str, elem: int, shape: tuple[int, ...]) -> None:
        n = math.prod(shape)
        size = bytes_of(elem, n)
        b = size if isinstance(size, int) else 0
        row = self.by_type.setdefault((kind, elem), [0, 0])
        row[0] += n
        row[1] += b
        self.count += n
        self.bytes += b

    def merge(self, other: Parameters) -> None:
        for key, (n, b) in other.by_type.items():
            row = self.by_type.setdefault(key, [0, 0])
            row[0] += n
            row[1] += b
        self.count += other.count
        self.bytes += other.bytes

    def of_kind(self, kind: str) -> tuple[int, int]:
        rows = [v for (k, _), v in self.by_type.items() if k == kind]
        return sum(r[0] for r in rows), sum(r[1] for r in rows)


class ModelCost:
    """The cost of a model's main graph: its nodes' costs in run order, totals, parameters and the peak (computed
    when first asked for: the editor's hovers and header need none)."""

    __slots__ = ("nodes", "flops", "macs", "read", "written", "params", "symbols", "_peak", "_peak_of")

    def __init__(self, nodes: list[NodeCost], params: Parameters, peak: Peak | Callable[[], Peak]) -> None:
        self.nodes = nodes
        self.params = params
        self._peak = peak if isinstance(peak, Peak) else None
        self._peak_of = peak if not isinstance(peak, Peak) else None
        self.flops, self.macs, self.read, self.written = Total(), Total(), Total(), Total()
        for n in nodes:
            self.flops.add(n.flops)
            self.macs.add(n.macs)
            self.read.add(n.read)
            self.written.add(n.written)
        # every activation is some node's input or output: the peak's symbols are among these
        self.symbols = sorted(self.flops.symbols() | self.read.symbols() | self.written.symbols())

    @property
    def peak(self) -> Peak:
        if self._peak is None:
            assert self._peak_of is not None
            self._peak = self._peak_of()
        return self._peak

    def unknown(self) -> list[NodeCost]:
        return [n for n in self.nodes if n.flops is None]


def model_cost(model: Model, refiner: ShapeRefiner) -> ModelCost:
    walk = _Walk(refiner)
    graph = model.graph
    nodes = walk.graph(graph) if graph is not None else []
    peak = peak_memory(graph, refiner, walk.size) if graph is not None else Peak()
    return ModelCost(nodes, parameters(model, refiner), peak)


class _Kept:
    """What the editor keeps across edits of one analysis (in its refiner's `kept`): the walk with its caches, and
    each node's cost with what it was computed from."""

    __slots__ = ("walk", "model", "costs", "initializers", "last", "order")

    def __init__(self, refiner: ShapeRefiner, model: Model) -> None:
        self.walk = _Walk(refiner)
        self.model = model
        self.costs: dict[Node, tuple[tuple[Any, ...], NodeCost]] = {}
        self.initializers: Parameters | None = None
        self.last: ModelCost | None = None  # the last answer, patched by the next
        self.order: list[Node] | None = None


def kept_cost(model: Model, refiner: ShapeRefiner) -> ModelCost:
    """`model_cost` across edits: a node whose attributes and inferred inputs and outputs are the ones it was
    costed with keeps its cost (after an edit the refiner infers only the changed cone again, and puts new
    results in place of the old), so an edit costs the nodes it changed; the peak waits until asked for."""
    state = refiner.kept.get(__name__)
    if not isinstance(state, _Kept) or state.model is not model:
        state = refiner.kept[__name__] = _Kept(refiner, model)
    graph = model.graph
    if graph is None:
        return ModelCost([], Parameters(), Peak())
    values = refiner.values
    walk = walk_ = state.walk
    walk.value_sizes.clear()  # by value: a value inferred again may have another size
    order = graph.topological_order()
    last = state.last if state.last is not None and state.order is order else None
    nodes = last.nodes if last is not None else []
    changed: list[tuple[int, NodeCost]] = []
    for i, node in enumerate(order):
        key = (node.generation, node.attributes, *[values.get(v) if v is not None else None
                                                   for v in (*node.inputs, *node.outputs)])  # fmt: skip
        old = state.costs.get(node)
        if old is not None and not node.subgraphs and node.function is None and _same(old[0], key):
            if last is None:
                nodes.append(old[1])
            continue
        n = walk.node(node)
        state.costs[node] = (key, n)
        if last is None:
            nodes.append(n)
        else:
            changed.append((i, n))
    if last is not None:  # the totals of the last answer, less the nodes that changed, plus their new costs
        for i, n in changed:
            before = nodes[i]
            for total, a, b in ((last.flops, before.flops, n.flops), (last.macs, before.macs, n.macs),
                                (last.read, before.read, n.read), (last.written, before.written, n.written)):
                total.add(a, -1)
                total.add(b)
            nodes[i] = n
        cost = last
        cost._peak, cost._peak_of = None, lambda: peak_memory(graph, refiner, walk_.size)
    else:
        cost = ModelCost(nodes, Parameters(), lambda: peak_memory(graph, refiner, walk_.size))
    if state.initializers is None:
        state.initializers = parameters(model, refiner, constants=False)
    cost.params = parameters(model, refiner, initializers=False)
    cost.params.merge(state.initializers)
    state.last, state.order = cost, order
    return cost


def _same(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """The same objects: a tuple compares its items by identity first, and Inferred has no other equality (the
    attributes are the same dict unless an edit replaced it)."""
    return a == b


def parameters(model: Model, refiner: ShapeRefiner, initializers: bool = True, constants: bool = True) -> Parameters:
    """Initializers of every graph and the values of Constant nodes (each stored once in the file)."""
    out = Parameters()
    for graph in model.graphs():
        for value in graph.initializers.values() if initializers else ():
            if value.duplicate_of is None and value.tensor is not None:
                out.add("initializer", value.tensor.dtype, value.tensor.shape)
        for node in graph.nodes if constants else ():
            if node.op_type == "Constant" and not node.domain and node.outputs and node.outputs[0] is not None:
                ty = refiner.type_of(node.outputs[0])
                if isinstance(ty, TensorType) and ty.elem is not None and ty.shape is not None \
                        and all(isinstance(x, int) for x in ty.shape):  # fmt: skip
                    out.add("constant", ty.elem, tuple(x for x in ty.shape if isinstance(x, int)))
    return out


def call_of(node: Node, refiner: ShapeRefiner) -> Call:
    """The node as its cost rule sees it, from the inferred types."""
    shapes, elems, present, values = [], [], [], []
    for v in node.inputs:
        ty = refiner.type_of(v) if v is not None else None
        shapes.append(ty.shape if isinstance(ty, TensorType) else None)
        elems.append(ty.elem if isinstance(ty, TensorType) else None)
        present.append(v is not None)
        values.append(_elements(refiner, v))
    outs = []
    for v in node.outputs:
        ty = refiner.type_of(v) if v is not None else None
        outs.append(ty.shape if isinstance(ty, TensorType) else None)
    ctx = refiner.contexts.get(node)
    attrs = ctx.attrs if ctx is not None else attribute_values(node.attributes)
    return Call(node.op_type, node.domain, shapes, outs, elems, attrs, present, values)


def _elements(refiner: ShapeRefiner, v: Value | None) -> tuple[Dim, ...] | None:
    x = refiner.values.get(v) if v is not None else None
    if x is None:
        return None
    if x.sv is not None:
        return x.sv
    if x.const is not None and x.const.size <= 16 and np.issubdtype(x.const.dtype, np.integer):
        return tuple(int(e) for e in x.const.reshape(-1))
    return None


def _shape(refiner: ShapeRefiner, v: Value | None) -> Any:
    """A slot's shape as a key part (dims are interned: a tuple of them hashes fast)."""
    if v is None:
        return False
    ty = refiner.type_of(v)
    return ty.shape if isinstance(ty, TensorType) else type(ty)


FREE = Work(0, 0, "no arithmetic (data movement)")


def _frozen(x: Any) -> Any:
    """An attribute value as a hashable key part; _Unkeyed for what is not worth keying (tensors, graphs)."""
    if x is None or isinstance(x, (int, float, str, bytes)):
        return x
    if isinstance(x, (list, tuple)) and len(x) <= 64:
        return tuple(_frozen(e) for e in x)
    raise _Unkeyed


class _Unkeyed(Exception):
    pass


class _Walk:
    """Nodes with the same op, attributes and types cost the same: their work and bytes are computed once (the
    layers of a transformer repeat), so the walk costs little next to inference."""

    def __init__(self, refiner: ShapeRefiner) -> None:
        self.refiner = refiner
        self.stack: list[object] = []
        self.works: dict[tuple[Any, ...], Work] = {}
        self.sizes: dict[Any, Dim] = {}  # by type
        self.value_sizes: dict[Value, Dim] = {}
        self.sums: dict[tuple[Dim, ...], Dim] = {}

    def size(self, value: Value) -> Dim:
        got = self.value_sizes.get(value, False)
        if got is not False:
            return got  # type: ignore[return-value]
        ty = self.refiner.type_of(value)
        size = self.sizes.get(ty, False)
        if size is False:
            size = self.sizes[ty] = value_bytes(ty)
        self.value_sizes[value] = size  # type: ignore[assignment]
        return size  # type: ignore[return-value]

    def _bytes(self, values: list[Value | None]) -> Dim:
        sizes = tuple(self.size(v) for v in values if v is not None)
        got = self.sums.get(sizes, False)
        if got is not False:
            return got  # type: ignore[return-value]
        total: Dim = 0
        for size in sizes:
            total = d.add(total, size)
        self.sums[sizes] = total
        return total

    def _rule_work(self, node: Node, rule: registry.Rule) -> Work:
        if rule is free:
            return FREE
        r = self.refiner
        ctx = r.contexts.get(node)
        attrs = ctx.attrs if ctx is not None else attribute_values(node.attributes)
        try:
            key: tuple[Any, ...] | None = (
                node.domain, node.op_type, tuple(sorted((k, _frozen(v)) for k, v in attrs.items())),
                tuple(_shape(r, v) for v in node.inputs), tuple(_shape(r, v) for v in node.outputs),
                tuple(_elements(r, v) for v in node.inputs),
            )  # fmt: skip
        except (_Unkeyed, TypeError):
            key = None
        if key is not None:
            got = self.works.get(key)
            if got is not None:
                return got
        try:
            work = rule(call_of(node, r))
        except (TypeError, ValueError, IndexError, AttributeError, ArithmeticError) as e:
            work = Work(None, None, f"cost rule failed: {type(e).__name__}")  # a malformed node
        if work.flops is None and (not work.note or work.macs is None):
            work = Work(None, None, "a size it needs is not known")
        if key is not None:
            self.works[key] = work
        return work

    def graph(self, graph: Graph) -> list[NodeCost]:
        return [self.node(n) for n in graph.topological_order()]

    def node(self, node: Node) -> NodeCost:
        read, written = self._bytes(node.inputs), self._bytes(node.outputs)
        body: list[NodeCost] = []
        if len(self.stack) >= MAX_DEPTH:
            work = Work(None, None, f"nested more than {MAX_DEPTH} bodies deep: not followed")
        elif node.function is not None:
            work, body = self._function(node)
        elif node.subgraphs:
            work, body = self._control_flow(node)
        else:
            rule = registry.lookup(node.domain, node.op_type)
            if rule is not None:
                work = self._rule_work(node, rule)
            else:
                work, body = self._schema_function(node)
        return NodeCost(node, work, read, written, body)

    # ---- bodies
    def _sum(self, nodes: list[NodeCost], note: str) -> Work:
        flops = Total()
        macs = Total()
        for n in nodes:
            flops.add(n.flops)
            macs.add(n.macs)
        if flops.unknown:
            inside = f"{flops.unknown} node{'s' if flops.unknown != 1 else ''} of unknown cost inside"
            return Work(None, None, f"{note}: {inside}" if note else inside)
        return Work(flops.dim(), macs.dim(), note)

    def _inside(self, key: object, run: Any) -> list[NodeCost]:
        self.stack.append(key)
        try:
            return list(run())
        finally:
            self.stack.pop()

    def _function(self, node: Node) -> tuple[Work, list[NodeCost]]:
        fn = node.function
        assert fn is not None
        if fn.body is None or fn in self.stack:
            return Work(None, None, "a recursive call or a function without a body"), []
        return self._call(node, fn, fn.body, fn.attributes, f"function {fn.name}, per call")

    def _call(self, node: Node, key: object, body: Graph, attrs: list[Any], note: str) -> tuple[Work, list[NodeCost]]:
        r = self.refiner
        ctx = r.contexts.get(node)
        call_attrs = ctx.attrs if ctx is not None else attribute_values(node.attributes)
        types = [r.type_of(v) if v is not None else None for v in node.inputs]

        def run() -> list[NodeCost]:
            r.infer_call(body, attrs, call_attrs, types)
            return self.graph(body)

        inner = self._inside(key, run)
        return self._sum(inner, note), inner

    def _schema_function(self, node: Node) -> tuple[Work, list[NodeCost]]:
        if node.version is not None:
            found = schema_body(node.op_type, node.version, node.domain)
            if found is not None:
                body, attrs = found
                return self._call(node, body, body, attrs, "through onnx's function body of the op")
        return Work(None, None, f"no cost rule for {node.qualified_op}"), []

    def _control_flow(self, node: Node) -> tuple[Work, list[NodeCost]]:
        if node.domain or node.op_type not in ("If", "Loop", "Scan"):
            return Work(None, None, f"no cost rule for {node.qualified_op} (an op with a body)"), []
        if node.op_type == "If":
            return self._if(node)
        body = node.subgraphs.get("body", [None])[0]
        if body is None:
            return Work(None, None, "no body"), []
        inner = self._inside(body, lambda: self.graph(body))
        once = self._sum(inner, "")
        trips, why = self._trips(node)
        if trips is None:
            return Work(None, None, f"unbounded: {why}"), inner
        if once.flops is None:
            return Work(None, None, f"{trips} trips of a body with {once.note}"), inner
        return Work(d.mul(trips, once.flops), d.mul(trips, once.macs), f"{trips} trips x the body{why}"), inner

    def _trips(self, node: Node) -> tuple[Dim, str]:
        """The trip count and a note, or (None, why not)."""
        r = self.refiner
        if node.op_type == "Scan":
            n_scan = r.contexts[node].attrs.get("num_scan_inputs") if node in r.contexts else None
            if not isinstance(n_scan, int) or n_scan < 1 or len(node.inputs) < n_scan:
                return None, "the scan inputs are not known"
            first = node.inputs[len(node.inputs) - n_scan]
            ty = r.type_of(first) if first is not None else None
            axes = r.contexts[node].attrs.get("scan_input_axes") or [0]
            if node.version is not None and node.version < 9:
                axes = [1]  # opset 8: [batch, sequence, ...]
            if not isinstance(ty, TensorType) or ty.shape is None or not ty.shape:
                return None, "the length of the scanned axis is not known"
            axis = axes[0] if axes[0] >= 0 else axes[0] + len(ty.shape)
            length = ty.shape[axis] if 0 <= axis < len(ty.shape) else None
            if length is None:
                return None, "the length of the scanned axis is not known"
            return length, ""
        m = node.inputs[0] if node.inputs else None
        if m is None:
            return None, "no trip count: it runs until its condition is false, which data decides"
        x = r.values.get(m)
        sv = x.sv if x is not None else None
        if sv is None and x is not None and x.const is not None and x.const.size == 1:
            sv = (int(x.const.reshape(-1)[0]),)
        if sv is None or len(sv) != 1 or sv[0] is None:
            return None, "its trip count is computed from data, not a formula in the input dims"
        trips = sv[0]
        if isinstance(trips, int) and trips >= UNBOUNDED_TRIPS:
            return None, f"its trip count is {trips}: the condition, which data decides, ends it"
        early = len(node.inputs) > 1 and node.inputs[1] is not None
        return (max(trips, 0) if isinstance(trips, int) else trips), (" (at most: its condition may end it "
                                                                        "earlier)" if early else "")

    def _if(self, node: Node) -> tuple[Work, list[NodeCost]]:
        r = self.refiner
        branches = []
        for name in ("then_branch", "else_branch"):
            g = node.subgraphs.get(name, [None])[0]
            if g is None:
                continue
            if g.nodes and not any(n in r.contexts for n in g.nodes):
                continue  # a dead branch (its condition is known): not inferred, never run
            inner = self._inside(g, lambda g=g: self.graph(g))
            branches.append((name, self._sum(inner, ""), inner))
        if not branches:
            return Work(None, None, "no branch"), []
        if len(branches) == 1:
            name, work, inner = branches[0]
            known = f"the {name} only (its condition is known)"
            return Work(work.flops, work.macs, f"{known}: {work.note}" if work.flops is None else known), inner
        (na, a, ia), (nb, b, ib) = branches
        if a.flops is None or b.flops is None:
            return Work(None, None, f"a branch of unknown cost: {a.note if a.flops is None else b.note}"), ia + ib
        if at_least(a.flops, b.flops):
            return Work(a.flops, a.macs, f"the larger branch, {na}"), ia
        if at_least(b.flops, a.flops):
            return Work(b.flops, b.macs, f"the larger branch, {nb}"), ib
        return Work(d.maximum(a.flops, b.flops), d.maximum(a.macs, b.macs),
                    "the larger branch (which one depends on the sizes)"), ia + ib  # fmt: skip
