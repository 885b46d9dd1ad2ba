"""Walks over one Graph built on its order: a path along data edges (for naming the nodes of a cycle) and the
worklist that revisits nodes in topological order after an edit.

The order itself (Kahn's topological order, Tarjan's components) lives in `graph.digraph`, over index lists,
and `Graph.topological_order` / `Graph.components` call it; this module sits above `graph.core`.
"""

from __future__ import annotations

import heapq
from collections import deque

from graphlsp.graph.core import Graph, Node


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
