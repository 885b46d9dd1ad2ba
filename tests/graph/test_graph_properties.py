"""Properties over random graphs: order findings, topological order, producer/consumer index, cycles."""

from __future__ import annotations

from dataclasses import dataclass

from graph_helpers import HEADER, build
from hypothesis import given, settings
from hypothesis import strategies as st


@dataclass
class RandomGraph:
    n_inputs: int
    reads: list[list[str]]  # reads[i]: the names node i reads (node i defines v{i})
    order: list[int]  # the file order: order[k] is the node written k-th

    def outputs(self) -> list[str]:
        read = {name for names in self.reads for name in names}
        return [f"v{i}" for i in range(len(self.reads)) if f"v{i}" not in read]

    def render(self) -> tuple[str, dict[tuple[int, int], int]]:
        """The text, and the offset of every read: (node, slot) -> offset."""
        ins = ", ".join(f"float x{i}" for i in range(self.n_inputs))
        outs = ", ".join(f"float {name}" for name in self.outputs()) or "float v0"
        text = HEADER + f"g ({ins}) => ({outs})\n{{\n"
        where: dict[tuple[int, int], int] = {}
        for i in self.order:
            text += f"  v{i} = Sum ("
            for j, name in enumerate(self.reads[i]):
                if j:
                    text += ", "
                where[(i, j)] = len(text)
                text += name
            text += ")\n"
        return text + "}\n", where


@st.composite
def dags(draw: st.DrawFn, max_nodes: int = 14) -> RandomGraph:
    n_inputs = draw(st.integers(1, 3))
    n = draw(st.integers(1, max_nodes))
    reads = []
    for i in range(n):
        pool = [f"x{k}" for k in range(n_inputs)] + [f"v{k}" for k in range(i)]
        reads.append(draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3)))
    order = draw(st.permutations(range(n)))
    return RandomGraph(n_inputs, reads, list(order))


def _index(name: str) -> int:
    return int(name[1:])


@settings(max_examples=60, deadline=None)
@given(dags())
def test_order_findings_index_and_topological_order(rg: RandomGraph) -> None:
    text, where = rg.render()
    doc, model, findings = build(text)
    g = model.graph
    assert g is not None and not doc.problems
    position = {node_id: k for k, node_id in enumerate(rg.order)}
    # GL203 use-before-definition exactly where a read precedes its producer in the file; never a cycle (a DAG)
    expected = sorted(
        (where[(i, j)], name)
        for i, names in enumerate(rg.reads)
        for j, name in enumerate(names)
        if name.startswith("v") and position[_index(name)] > position[i]
    )
    assert sorted((f.start, text[f.start : f.end]) for f in findings) == expected
    assert all(f.kind == "use-before-definition" for f in findings)
    # producer and consumer index
    node_of = {f"v{i}": g.nodes[position[i]] for i in range(len(rg.reads))}
    for i, names in enumerate(rg.reads):
        node = node_of[f"v{i}"]
        assert g.values[f"v{i}"].producer is node
        for j, name in enumerate(names):
            value = g.values[name]
            assert node.inputs[j] is value and (node, j) in value.consumers
    for value in g.values.values():
        assert len(value.consumers) == sum(names.count(value.name) for names in rg.reads)
    # topological order: a permutation that respects every edge, and the stable one (smallest file index first)
    order = g.topological_order()
    assert sorted(n.index for n in order) == list(range(len(g.nodes)))
    placed_at = {n.index: k for k, n in enumerate(order)}
    for node in g.nodes:
        for pred in node.predecessors():
            assert placed_at[pred.index] < placed_at[node.index]
    placed: set[int] = set()
    for node in order:
        ready = [n.index for n in g.nodes if n.index not in placed and all(p.index in placed for p in n.predecessors())]
        assert node.index == min(ready)
        placed.add(node.index)
    if rg.order == sorted(rg.order):
        assert findings == [] and order == g.nodes
    assert g.cyclic_nodes() == []


@settings(max_examples=60, deadline=None)
@given(dags(), st.data())
def test_a_back_edge_makes_a_cycle(rg: RandomGraph, data: st.DataObject) -> None:
    n = len(rg.reads)
    rg.order = list(range(n))  # file order = creation order: the only out-of-order read is the one we add
    # node i reads v{j} where j is i or a descendant of i: a cycle through every node on a path i -> j
    i = data.draw(st.integers(0, n - 1))
    succ: dict[int, set[int]] = {k: {m for m in range(n) if f"v{k}" in rg.reads[m]} for k in range(n)}
    reach = {i}
    stack = [i]
    while stack:
        for m in succ[stack.pop()]:
            if m not in reach:
                reach.add(m)
                stack.append(m)
    j = data.draw(st.sampled_from(sorted(reach)))
    rg.reads[i] = rg.reads[i] + [f"v{j}"]
    text, where = rg.render()
    doc, model, findings = build(text)
    g = model.graph
    assert g is not None
    (f,) = findings
    assert f.kind == "cycle" and f.code == "GL203"
    assert (f.start, text[f.start : f.end]) == (where[(i, len(rg.reads[i]) - 1)], f"v{j}")
    # the nodes on the cycle: reachable from i and reaching j
    back: set[int] = set()
    for k in reach:
        seen, stack = {k}, [k]
        while stack:
            for m in succ[stack.pop()]:
                if m not in seen:
                    seen.add(m)
                    stack.append(m)
        if j in seen:
            back.add(k)
    assert {n.index for n in g.cyclic_nodes()} == back
    # the related locations walk the cycle, starting at the reading node and ending at v{j}
    assert text[f.related[0][1] : f.related[0][2]] == f"v{i}"
    assert text[f.related[-1][1] : f.related[-1][2]] == f"v{j}"
    # every node still appears once in the topological order
    assert sorted(x.index for x in g.topological_order()) == list(range(n))


@settings(max_examples=40, deadline=None)
@given(dags(), st.data())
def test_an_unknown_name_is_reported_where_it_is_read(rg: RandomGraph, data: st.DataObject) -> None:
    rg.order = sorted(rg.order)
    i = data.draw(st.integers(0, len(rg.reads) - 1))
    j = data.draw(st.integers(0, len(rg.reads[i]) - 1))
    old = rg.reads[i][j]
    rg.reads[i][j] = "nowhere"
    text, where = rg.render()
    doc, model, findings = build(text)
    got = {(f.kind, f.start, text[f.start : f.end]) for f in findings}
    assert ("undefined-value", where[(i, j)], "nowhere") in got
    allowed = {("undefined-value", where[(i, j)], "nowhere")}
    g = model.graph
    assert g is not None
    if old.startswith("v") and not g.values[old].consumers and not g.values[old].graph_outputs:
        span = g.values[old].span
        assert span is not None
        allowed.add(("unused-value", span[0], old))
    # outputs() lists only values nobody reads: a value whose last reader we renamed is neither read nor output
    assert got == allowed
