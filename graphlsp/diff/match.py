"""Which node of the old graph is which node of the new one: names first, then structure.

A matching is built per graph pair in passes, each only over the nodes still unmatched:

1. the same unique name and the same structure (the usual case: an edited or re-saved model);
2. the same structure alone, unique on both sides: a structural hash of the node and everything upstream of it
   (op, domain, attributes, initializer types and shapes, graph inputs by position; names left out), then one of
   the node and everything downstream, then each alone. This is what survives renames (an exporter renumbering
   `/Constant_12`, a module renamed);
3. propagation from the matched pairs, as graph-matching tools do: the producers at the same input slot, and the
   consumers at the same slot of the same output with the same op, when that pairs them one to one (several
   alike: by downstream structure, then in file order);
4. the same unique name with another structure (a changed node keeps its name), then propagation again.

Initializers pair by name, then by the slot of a matched node that reads them (a renamed weight). Graph inputs
pair by name, then by position. What is left is removed (old) or added (new).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import numpy as np

from graphlsp.graph.core import Attr, Graph, Node, Value
from graphlsp.graph.tensor import Tensor, TensorError

DIGEST_CAP = 1 << 16  # bytes: a tensor attribute this small takes part in structure by its data


class GraphMatch:
    """The pairs of one graph pair: nodes (old -> new, and how each was matched), initializers and inputs."""

    __slots__ = ("old", "new", "nodes", "how", "initializers", "inputs")

    def __init__(self, old: Graph, new: Graph) -> None:
        self.old = old
        self.new = new
        self.nodes: dict[Node, Node] = {}
        self.how: dict[Node, str] = {}  # old node -> "name" or "structure"
        self.initializers: dict[str, str] = {}  # old name -> new name
        self.inputs: dict[str, str] = {}  # graph inputs, old name -> new name

    def reverse(self) -> dict[Node, Node]:
        return {b: a for a, b in self.nodes.items()}


def attr_key(node: Node, attr: Attr) -> Any:
    """An attribute's value as a hashable key: tensors by type, shape and (small ones) data, subgraphs by their
    ops and attributes."""
    v = attr.value
    if attr.kind in ("graph", "graphs"):
        return ("graphs", tuple(graph_digest(g) for g in node.subgraphs.get(attr.name, [])))
    return value_key(v)


def value_key(v: Any) -> Any:
    if isinstance(v, Tensor):
        return tensor_key(v)
    if isinstance(v, list | tuple):
        return tuple(value_key(x) for x in v)
    if isinstance(v, float):
        return ("f", repr(v))
    return v


def tensor_key(t: Tensor) -> tuple[Any, ...]:
    if t.nbytes > DIGEST_CAP:
        return ("tensor", t.dtype, t.shape)
    try:
        arr = np.ascontiguousarray(np.asarray(t.numpy()))
        data = hashlib.blake2b(arr.tobytes() if arr.dtype != object else repr(arr.tolist()).encode(),
                               digest_size=8).hexdigest()  # fmt: skip
    except (TensorError, ValueError, TypeError):
        data = "?"
    return ("tensor", t.dtype, t.shape, data)


def graph_digest(g: Graph) -> int:
    return hash(tuple(local_key(n) for n in g.nodes))


def local_key(node: Node) -> tuple[Any, ...]:
    """What a node is, its neighbours aside: op, domain, overload, attributes, number of outputs."""
    attrs = tuple(sorted((name, attr_key(node, a)) for name, a in node.attributes.items()))
    return (node.domain, node.op_type, node.overload, attrs, len(node.outputs))


def _source(v: Value | None, g: Graph, positions: dict[str, int], up: dict[Node, int]) -> Any:
    """An input as structure: the producer's hash and output slot, an initializer's type and shape, a graph input's
    position, an outer value's name."""
    if v is None:
        return None
    if v.producer is not None and v.producer.graph is g:
        return (up.get(v.producer, 0), v.output_index)
    if v.is_initializer and v.tensor is not None and v.kind != "input":
        return ("init", v.tensor.dtype, v.tensor.shape)
    if v.graph is g and v.name in positions:
        return ("in", positions[v.name])
    return ("outer", v.name)


def _hashes(g: Graph) -> tuple[dict[Node, int], dict[Node, int], dict[Node, tuple[Any, ...]]]:
    """Per node: the upstream hash, the downstream hash and the local key."""
    order = g.topological_order()
    positions = {v.name: i for i, v in enumerate(g.inputs)}
    outputs = {v.name: i for i, v in enumerate(g.outputs)}
    local = {n: local_key(n) for n in order}
    up: dict[Node, int] = {}
    for n in order:
        up[n] = hash((local[n], tuple(_source(v, g, positions, up) for v in n.inputs)))
    down: dict[Node, int] = {}
    for n in reversed(order):
        uses = []
        for j, v in enumerate(n.outputs):
            if v is None:
                continue
            for c, slot in v.consumers:
                top = g.top_node(c)
                if top is not None and top is not n:
                    uses.append((j, down.get(top, 0), slot if top is c else -1))
            if v.name in outputs:
                uses.append((j, -1, outputs[v.name]))
        down[n] = hash((local[n], tuple(sorted(uses))))
    return up, down, local


class _Matcher:
    def __init__(self, old: Graph, new: Graph) -> None:
        self.m = GraphMatch(old, new)
        self.back: dict[Node, Node] = {}
        self.up_a, self.down_a, self.local_a = _hashes(old)
        self.up_b, self.down_b, self.local_b = _hashes(new)
        self.todo: list[tuple[Node, Node]] = []

    def pair(self, a: Node, b: Node, how: str) -> None:
        self.m.nodes[a] = b
        self.m.how[a] = "name" if a.name and a.name == b.name else how
        self.back[b] = a
        self.todo.append((a, b))

    def free(self, nodes: Iterable[Node], side: dict[Node, Node]) -> list[Node]:
        return [n for n in nodes if n not in side]

    def by_key(self, key_a: Any, key_b: Any, how: str) -> None:
        """Pair the unmatched nodes whose key is unique on both sides and the same."""
        left: dict[Any, list[Node]] = defaultdict(list)
        for n in self.free(self.m.old.nodes, self.m.nodes):
            left[key_a(n)].append(n)
        right: dict[Any, list[Node]] = defaultdict(list)
        for n in self.free(self.m.new.nodes, self.back):
            right[key_b(n)].append(n)
        for k, xs in left.items():
            ys = right.get(k)
            if ys is not None and len(xs) == 1 and len(ys) == 1:
                self.pair(xs[0], ys[0], how)

    def names(self, same_structure: bool) -> None:
        def named(nodes: list[Node]) -> dict[str, Node]:
            count: dict[str, int] = defaultdict(int)
            for n in nodes:
                if n.name:
                    count[n.name] += 1
            return {n.name: n for n in nodes if n.name and count[n.name] == 1}

        left = named(self.m.old.nodes)
        right = named(self.m.new.nodes)
        for name, a in left.items():
            b = right.get(name)
            if b is None or a in self.m.nodes or b in self.back:
                continue
            if same_structure and self.up_a[a] != self.up_b[b]:
                continue
            if not same_structure and a.op_type != b.op_type:
                continue
            self.pair(a, b, "name")

    def propagate(self) -> None:
        while self.todo:
            a, b = self.todo.pop()
            for va, vb in zip(a.inputs, b.inputs, strict=False):
                pa = va.producer if va is not None else None
                pb = vb.producer if vb is not None else None
                if (pa is not None and pb is not None and pa.graph is self.m.old and pb.graph is self.m.new
                        and pa not in self.m.nodes and pb not in self.back and va is not None and vb is not None
                        and va.output_index == vb.output_index and pa.op_type == pb.op_type):
                    self.pair(pa, pb, "structure")
            for va, vb in zip(a.outputs, b.outputs, strict=False):
                if va is None or vb is None:
                    continue
                self.consumers(va, vb)

    def consumers(self, va: Value, vb: Value) -> None:
        left: dict[Any, list[Node]] = defaultdict(list)
        for c, slot in va.consumers:
            if c.graph is self.m.old and c not in self.m.nodes:
                left[(slot, self.local_a[c][:3])].append(c)
        if not left:
            return
        right: dict[Any, list[Node]] = defaultdict(list)
        for c, slot in vb.consumers:
            if c.graph is self.m.new and c not in self.back:
                right[(slot, self.local_b[c][:3])].append(c)
        for k, xs in left.items():
            ys = right.get(k)
            if not ys:
                continue
            xs = list(dict.fromkeys(xs))
            ys = list(dict.fromkeys(ys))
            if len(xs) == 1 and len(ys) == 1:
                self.pair(xs[0], ys[0], "structure")
                continue
            # several alike: the ones whose downstream is the same, then the rest in file order when as many
            downs: dict[int, list[Node]] = defaultdict(list)
            for y in ys:
                downs[self.down_b[y]].append(y)
            rest_x = []
            for x in xs:
                same = downs.get(self.down_a[x])
                if same is not None and len(same) == 1 and same[0] not in self.back:
                    self.pair(x, same[0], "structure")
                else:
                    rest_x.append(x)
            rest_y = [y for y in ys if y not in self.back]
            if len(rest_x) == len(rest_y):
                for x, y in zip(sorted(rest_x, key=lambda n: n.index), sorted(rest_y, key=lambda n: n.index),
                                strict=True):  # fmt: skip
                    if x not in self.m.nodes and y not in self.back:
                        self.pair(x, y, "structure")

    def run(self) -> GraphMatch:
        self.names(same_structure=True)
        ua, ub, da, db = self.up_a, self.up_b, self.down_a, self.down_b
        self.by_key(lambda n: (ua[n], da[n]), lambda n: (ub[n], db[n]), "structure")
        self.by_key(lambda n: ua[n], lambda n: ub[n], "structure")
        self.by_key(lambda n: da[n], lambda n: db[n], "structure")
        self.propagate()
        self.names(same_structure=False)
        self.propagate()
        self.m.inputs = _pair_inputs(self.m.old, self.m.new)
        self.m.initializers = self.initializers()
        return self.m

    def initializers(self) -> dict[str, str]:
        old, new = self.m.old.initializers, self.m.new.initializers
        out = {name: name for name in old if name in new}
        taken = set(out.values())
        for a, b in self.m.nodes.items():
            for va, vb in zip(a.inputs, b.inputs, strict=False):
                if (va is not None and vb is not None and va.name in old and vb.name in new and va.name not in out
                        and vb.name not in taken and old[va.name] is va and new[vb.name] is vb):
                    out[va.name] = vb.name
                    taken.add(vb.name)
        return out


def _pair_inputs(old: Graph, new: Graph) -> dict[str, str]:
    names_b = {v.name for v in new.inputs}
    out = {v.name: v.name for v in old.inputs if v.name in names_b}
    rest_a = [v.name for v in old.inputs if v.name not in out]
    rest_b = [v.name for v in new.inputs if v.name not in out.values()]
    if len(rest_a) == len(rest_b):
        out.update(zip(rest_a, rest_b, strict=True))
    return out


def match_graph(old: Graph, new: Graph) -> GraphMatch:
    """The pairs of nodes, initializers and inputs of two graphs."""
    return _Matcher(old, new).run()
