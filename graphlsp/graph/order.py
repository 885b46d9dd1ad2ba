"""Walks over one Graph built on its order: a path along data edges (for naming the nodes of a cycle), what a
read of a value before its producer means (`order_problem`, one wording for both front ends) and the worklist
that revisits nodes in topological order after an edit.

The order itself (Kahn's topological order, Tarjan's components) lives in `graph.digraph`, over index lists,
and `Graph.topological_order` / `Graph.components` call it; this module sits above `graph.core`.
"""

from __future__ import annotations

import heapq
from collections import deque

from graphlsp.frozen import Frozen
from graphlsp.graph.core import Graph, Node, Value


def data_path(graph: Graph, start: Node, goal: Node) -> list[Node] | None:
    """The shortest chain of nodes start -> ... -> goal along data edges (breadth first), or None."""
    if start is goal:
        return [start]
    came: dict[int, Node | None] = {start.index: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for nxt in node.successors():
            if nxt.index in came:
                continue
            came[nxt.index] = node
            if nxt is goal:
                path = [nxt]
                prev = came[nxt.index]
                while prev is not None:
                    path.append(prev)
                    prev = came[prev.index]
                return path[::-1]
            queue.append(nxt)
    return None


class OrderProblem(Frozen):
    """What a read of `value` by `holder` (or by a subgraph of it) before `value`'s producer is.

    `cycle`: the nodes of the cycle from the holder to the producer (empty: the read is only out of order)."""

    __slots__ = ("message", "severity", "cycle")

    message: str
    severity: str
    cycle: list[Node]

    def __init__(
        self,
        message: str,
        severity: str,
        cycle: list[Node],
    ) -> None:
        object.__setattr__(self, "message", message)
        object.__setattr__(self, "severity", severity)
        object.__setattr__(self, "cycle", cycle)

    def __repr__(self) -> str:
        return f"OrderProblem(message={self.message!r}, severity={self.severity!r}, cycle={self.cycle!r})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not OrderProblem:
            return NotImplemented
        return (self.message, self.severity, self.cycle) == (other.message, other.severity, other.cycle)

    def __hash__(self) -> int:
        return hash((self.message, self.severity, self.cycle))


def order_problem(graph: Graph, holder: Node, value: Value, components: list[int]) -> OrderProblem:
    """The read of `value` (produced in `graph` at or after `holder`) by `holder`; `components`: the graph's.

    onnxruntime sorts the main graph's nodes when it loads a model and runs it (onnx's checker refuses it); it does
    not sort a subgraph's or a function's (the op's shape inference, onnx's, reads them in order and fails), and a
    cycle it refuses anywhere ("the graph is not acyclic")."""
    name = value.name
    producer = value.producer
    assert producer is not None
    if producer is holder or components[producer.index] == components[holder.index]:
        path = data_path(graph, holder, producer) or [holder]
        if producer is holder:
            message = f"cycle: '{name}' is an output of the node that reads it"
        else:
            chain = [link(a, b) for a, b in zip(path, path[1:], strict=False)] + [name]
            message = f"cycle: '{name}' is computed from this node's own output (" + " -> ".join(chain) + ")"
        return OrderProblem(message, "error", path)
    move = f"move the node that reads '{name}' after the one that produces it"
    if graph.kind == "model":
        return OrderProblem(f"'{name}' is used before it is defined: onnx.checker rejects nodes out of topological "
                            f"order; onnxruntime sorts them ({move})", "warning", [])  # fmt: skip
    whose = "a function's" if graph.kind == "function" else "a subgraph's"
    return OrderProblem(f"'{name}' is used before it is defined: {whose} nodes must be in topological order "
                        f"(onnxruntime sorts only the main graph's); {move}", "error", [])  # fmt: skip


def link(a: Node, b: Node) -> str:
    """The name of a value `a` produces that `b` (or a subgraph of it) reads."""
    for v in a.outputs:
        if v is not None and any(b.graph.top_node(c) is b for c, _ in v.consumers):
            return v.name
    return "?"


class Worklist:
    """The graph's top-level nodes to visit again after an edit, popped in topological order, each once: a node
    inside a subgraph stands for its top-level owner. `rank` maps nodes to their topological index (built on
    first use and kept by the caller while the graph's structure holds)."""

    def __init__(self, graph: Graph, rank: dict[Node, int]) -> None:
        if not rank:
            rank.update((n, i) for i, n in enumerate(graph.topological_order()))
        self.graph = graph
        self.rank = rank
        self.queued: set[Node] = set()
        self._heap: list[tuple[int, int, Node]] = []

    def push(self, node: Node) -> None:
        top = self.graph.top_node(node)
        if top is not None and top not in self.queued:
            self.queued.add(top)
            heapq.heappush(self._heap, (self.rank.get(top, len(self.rank)), id(top), top))

    def pop(self) -> Node | None:
        return heapq.heappop(self._heap)[2] if self._heap else None
