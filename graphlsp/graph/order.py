"""Order algorithms on one Graph: topological order (Kahn, stable by file order), strongly connected
components (Tarjan, iterative) and a path along data edges, for naming the nodes of a cycle.

An edge goes from the producer of a value to each node of the same graph that reads it, directly or inside one
of its subgraphs (an outer-scope read makes the If/Loop/Scan node depend on the value).
"""

from __future__ import annotations

import heapq
from collections import deque

from graphlsp.graph.core import Graph, Node


def predecessor_indices(graph: Graph) -> list[list[int]]:
    """For each node, the indices of the nodes it reads from (one entry per read, repeats kept)."""
    out: list[list[int]] = []
    for node in graph.nodes:
        preds = []
        for v in node.inputs:
            if v is not None and v.producer is not None and v.graph is graph:
                preds.append(v.producer.index)
        for v in node.implicit.values():
            if v.producer is not None and v.graph is graph:
                preds.append(v.producer.index)
        out.append(preds)
    return out


def topological_order(graph: Graph) -> list[Node]:
    nodes = graph.nodes
    preds = predecessor_indices(graph)
    if all(p < i for i, ps in enumerate(preds) for p in ps):
        return list(nodes)  # already in order: the common case, no heap needed
    indegree = [len(ps) for ps in preds]
    succ: list[list[int]] = [[] for _ in nodes]
    for i, ps in enumerate(preds):
        for p in ps:
            succ[p].append(i)
    ready = [i for i, d in enumerate(indegree) if d == 0]
    heapq.heapify(ready)
    order: list[Node] = []
    placed = [False] * len(nodes)
    while ready:
        i = heapq.heappop(ready)
        order.append(nodes[i])
        placed[i] = True
        for j in succ[i]:
            indegree[j] -= 1
            if indegree[j] == 0:
                heapq.heappush(ready, j)
    order.extend(n for n in nodes if not placed[n.index])
    return order


def strongly_connected(graph: Graph) -> list[int]:
    """A component id per node index; two nodes share an id when each depends on the other."""
    n = len(graph.nodes)
    succ: list[list[int]] = [[] for _ in range(n)]
    for i, ps in enumerate(predecessor_indices(graph)):
        for p in ps:
            succ[p].append(i)
    index = [-1] * n
    low = [0] * n
    on_stack = [False] * n
    comp = [-1] * n
    stack: list[int] = []
    counter = 0
    ncomp = 0
    for root in range(n):
        if index[root] != -1:
            continue
        work = [(root, 0)]
        while work:
            v, k = work.pop()
            if k == 0:
                index[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on_stack[v] = True
            else:
                w = succ[v][k - 1]
                low[v] = min(low[v], low[w])
            descended = False
            while k < len(succ[v]):
                w = succ[v][k]
                k += 1
                if index[w] == -1:
                    work.append((v, k))
                    work.append((w, 0))
                    descended = True
                    break
                if on_stack[w]:
                    low[v] = min(low[v], index[w])
            if descended:
                continue
            if low[v] == index[v]:
                while True:
                    w = stack.pop()
                    on_stack[w] = False
                    comp[w] = ncomp
                    if w == v:
                        break
                ncomp += 1
    return comp


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
