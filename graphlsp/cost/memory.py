"""The peak of live activations over the order the nodes run in.

The order is the graph's topological order (file order when the file is in order: what onnxruntime runs
without graph optimizations). An activation is a graph input or a node output (not an initializer, not a Constant
node's value: those are weights). It lives from the step of its producer (step 0 for a graph input) to the step
of its last reader (a node of a subgraph reads for the node that holds it); a graph output lives to the last
step; an output nobody reads lives at its producer's step only. At each step the live bytes are a formula; the
peak is the largest of them. Steps whose bytes are provably at most another's (every symbol a dim, >= 0) drop
out; what remains is one formula, or a max of formulas, each with the node where it is reached. A value of unknown
size (a string, a sequence, an unknown shape) is left out and counted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from graphlsp.cost.formula import Total, mono_bounds, nonnegative, poly, value_bytes
from graphlsp.graph.core import Graph, Node, Value
from graphlsp.infer.dims import Atom, Dim
from graphlsp.infer.refiner import ShapeRefiner

MAX_CANDIDATES = 64  # more incomparable step formulas than this: the peak is not kept as a formula


class Peak:
    """The peak: `candidates` [(live bytes, node where reached)], one when it is one formula; `unsized`: the
    activations left out (size unknown); `why` when no formula is kept."""

    __slots__ = ("candidates", "unsized", "why")

    def __init__(self, candidates: list[tuple[Total, Node | None]] | None = None, unsized: int = 0,
                 why: str = "") -> None:  # fmt: skip
        self.candidates = candidates or []
        self.unsized = unsized
        self.why = why

    def value(self, env: Mapping[str, int]) -> tuple[int | None, Node | None]:
        """The peak at bound sizes and its node (the first candidate reaching it)."""
        best: tuple[int | None, Node | None] = (None, None)
        for x, node in self.candidates:
            v = x.value(env)
            if v is None:
                return None, None
            if best[0] is None or v > best[0]:
                best = (v, node)
        return best

    def symbols(self) -> set[str]:
        out: set[str] = set()
        for x, _ in self.candidates:
            out |= x.symbols()
        return out


def activations(graph: Graph, order: list[Node]) -> list[tuple[Value, int, int]]:
    """(value, first step, last step) of every activation of the graph, in the liveness rule above."""
    step = {n: i for i, n in enumerate(order)}
    last = len(order) - 1
    out: list[tuple[Value, int, int]] = []
    seen: set[Value] = set()

    def span(v: Value, start: int) -> None:
        if v in seen:
            return
        seen.add(v)
        end = start
        for reader, _ in v.consumers:
            top = graph.top_node(reader)
            if top is not None and top in step:
                end = max(end, step[top])
        if v.graph_outputs and graph in v.graph_outputs:
            end = last
        out.append((v, start, end))

    for v in graph.inputs:
        if not v.is_initializer and v.duplicate_of is None:
            span(v, 0)
    for n in order:
        if n.op_type == "Constant" and not n.domain:
            continue
        for out_value in n.outputs:
            if out_value is not None and out_value.producer is n:
                span(out_value, step[n])
    return out


def replay(order: list[Node], lives: list[tuple[Value, int, int]], size: Callable[[Value], Dim]) -> Peak:
    """The live bytes at each step, and the steps that may be the peak."""
    if not order:  # no node: the inputs are all there is
        sizes = [size(v) for v, _, _ in lives]
        total = Total()
        for x in sizes:
            if x is not None:
                total.add(x)
        return Peak([(total, None)], sum(x is None for x in sizes))
    # the live bytes as a vector over the monomials met so far: sums and comparisons without dicts
    index: dict[tuple[Atom, ...], int] = {}
    monos: list[tuple[Atom, ...]] = []
    vectors: dict[Dim, list[tuple[int, int]]] = {}
    starts: list[list[list[tuple[int, int]]]] = [[] for _ in order]
    ends: list[list[list[tuple[int, int]]]] = [[] for _ in order]
    unsized = 0
    for v, s, e in lives:
        b = size(v)
        if b is None:
            unsized += 1
            continue
        vec = vectors.get(b)
        if vec is None:
            vec = vectors[b] = []
            for mono, c in poly(b).items():
                i = index.get(mono)
                if i is None:
                    i = index[mono] = len(monos)
                    monos.append(mono)
                vec.append((i, c))
        starts[s].append(vec)
        ends[e].append(vec)
    bounds = [mono_bounds(m) for m in monos]
    floored = [any(atom.kind != "sym" for atom in m) for m in monos]
    live = [0] * len(monos)
    candidates: list[tuple[list[int], Node]] = []
    for step, node in enumerate(order):
        for vec in starts[step]:
            for i, c in vec:
                live[i] += c
        # a step that starts nothing holds less than the step before it
        if starts[step] and not any(_at_least(held, live, bounds, monos, floored) for held, _ in reversed(candidates)):
            candidates = [(held, n) for held, n in candidates if not _at_least(live, held, bounds, monos, floored)]
            candidates.append((list(live), node))
            if len(candidates) > MAX_CANDIDATES:
                return Peak([], unsized, f"more than {MAX_CANDIDATES} steps may be the peak")
        for vec in ends[step]:
            for i, c in vec:
                live[i] -= c
    out: list[tuple[Total, Node | None]] = []
    for vector, n in candidates:
        total = Total()
        total.poly = {monos[i]: c for i, c in enumerate(vector) if c}
        out.append((total, n))
    return Peak(out, unsized)


def _at_least(a: list[int], b: list[int], bounds: list[tuple[int | None, int | None]],
              monos: list[tuple[Atom, ...]], floored: list[bool]) -> bool:  # fmt: skip
    """a >= b for every value of the symbols: term by term (each monomial within its bounds), else through the
    floors (`formula.nonnegative`: `32*H*W - 32*floor(H/2)*floor(W/2)` is at least 0)."""
    if _termwise(a, b, bounds):
        return True
    # over symbols alone the term-by-term answer is the whole answer: only floors leave more to prove
    if not any(x != y and floored[i] for i, (x, y) in enumerate(zip(a, b, strict=True))):
        return False
    return nonnegative({monos[i]: x - y for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y})


def _termwise(a: list[int], b: list[int], bounds: list[tuple[int | None, int | None]]) -> bool:
    low = 0
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        c = x - y
        if not c:
            continue
        lo, hi = bounds[i]
        if c > 0:
            if lo is None:
                return False
            low += c * lo
        else:
            if hi is None:
                return False
            low += c * hi
    return low >= 0


def peak_memory(graph: Graph, refiner: ShapeRefiner, size: Callable[[Value], Dim] | None = None) -> Peak:
    order = graph.topological_order()
    return replay(order, activations(graph, order), size or (lambda v: value_bytes(refiner.type_of(v))))
