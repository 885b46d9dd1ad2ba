"""Order algorithms on a directed graph given as integer adjacency lists (node i -> the nodes it reads from or
feeds): topological order (Kahn, stable by index) and strongly connected components (Tarjan, iterative).

They know nothing of the IR: `Graph` builds the lists from its nodes (`Graph.predecessor_indices`) and calls them,
so the IR's classes and the algorithms do not import each other.
"""

from __future__ import annotations

import heapq


def successors_of(preds: list[list[int]]) -> list[list[int]]:
    """The reverse adjacency: for each node, the nodes that read from it (one entry per read)."""
    succ: list[list[int]] = [[] for _ in preds]
    for i, ps in enumerate(preds):
        for p in ps:
            succ[p].append(i)
    return succ


def topological_indices(preds: list[list[int]]) -> list[int]:
    """Kahn's order, stable by index: the ready node of lowest index comes first. Nodes on a cycle, or downstream
    of one, cannot be placed: they come last, by index."""
    n = len(preds)
    if all(p < i for i, ps in enumerate(preds) for p in ps):
        return list(range(n))  # already in order: the common case, no heap needed
    indegree = [len(ps) for ps in preds]
    succ = successors_of(preds)
    ready = [i for i, d in enumerate(indegree) if d == 0]
    heapq.heapify(ready)
    order: list[int] = []
    placed = [False] * n
    while ready:
        i = heapq.heappop(ready)
        order.append(i)
        placed[i] = True
        for j in succ[i]:
            indegree[j] -= 1
            if indegree[j] == 0:
                heapq.heappush(ready, j)
    order.extend(i for i in range(n) if not placed[i])
    return order


def strongly_connected(succ: list[list[int]]) -> list[int]:
    """A component id per node; two nodes share an id when each reaches the other."""
    n = len(succ)
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
