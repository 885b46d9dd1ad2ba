"""Input contracts: what the model's nodes require of the sizes of its graph inputs' dims.

Each node's rule may have assumed relations it could not prove (`ShapeRefiner.conditions`). A relation over one
input dim symbol is solved (`conditions.solve`) and, unless it holds at every size, becomes GL320 shape-condition on
the node ("Concat holds only when 2*floor((height + 31)/32) = floor((height + 15)/16): height % 32 must be 0 or
17-31"). When only one size satisfies it, the graph input that declares the dim gets GL321 fixed-dynamic-dim,
naming the node. A relation over several symbols is stated as its equation, with sizes at which it fails (a
witness found among common sizes; without one it is not reported). A symbol
that one input uses twice (`[?, 3, ?, ?]`) is read as "unknown" by exporters, not as a contract, and is skipped.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from itertools import product

from graphlsp.frozen import Frozen
from graphlsp.graph.core import Graph, Model, Node, Value
from graphlsp.graph.findings import Finding
from graphlsp.infer import dims as d
from graphlsp.infer import witnesses
from graphlsp.infer.branches import branch_conditions
from graphlsp.infer.conditions import Condition, Solution, reduced, solve
from graphlsp.infer.declared import attentions, judge, stated_relations, value_at, with_relations
from graphlsp.infer.refiner import ShapeRefiner

SHAPE_CONDITION = "GL320"
FIXED_DYNAMIC_DIM = "GL321"


class DimContract:
    """What the nodes require of one input dim symbol: each requiring node with its condition and solution."""

    __slots__ = ("symbol", "places", "requirements")

    symbol: str
    places: list[tuple[Value, int]]  # (graph input, dim index) declaring the symbol
    requirements: list[tuple[Node, Condition, Solution | None]]

    def __init__(
        self,
        symbol: str,
        places: list[tuple[Value, int]],
        requirements: list[tuple[Node, Condition, Solution | None]] | None = None,
    ) -> None:
        self.symbol = symbol
        self.places = places
        self.requirements = [] if requirements is None else requirements

    def __repr__(self) -> str:
        return f"DimContract(symbol={self.symbol!r}, places={self.places!r}, requirements={self.requirements!r})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not DimContract:
            return NotImplemented
        return (self.symbol, self.places, self.requirements) == (other.symbol, other.places, other.requirements)


def input_symbols(model: Model) -> dict[str, list[tuple[Value, int]]]:
    """Each dim_param of the main graph's inputs (not initializers), with where it is declared; symbols used twice
    in one input's shape are left out."""
    out: dict[str, list[tuple[Value, int]]] = {}
    skip: set[str] = set()
    graph = model.graph
    if graph is None:
        return out
    for value in graph.inputs:
        ty = value.type
        if value.is_initializer or ty is None or ty.kind != "tensor" or ty.dims is None:
            continue
        names = [x for x in ty.dims if isinstance(x, str)]
        skip |= {x for x in names if names.count(x) > 1}
        for i, x in enumerate(ty.dims):
            if isinstance(x, str):
                out.setdefault(x, []).append((value, i))
    return {k: v for k, v in out.items() if k not in skip}


def _input_symbols(refiner: ShapeRefiner) -> dict[str, list[tuple[Value, int]]]:
    """`input_symbols` of the refiner's model, kept while the graph's inputs are the same values: an edit that
    keeps the graph changes nodes, never the inputs' declared types, and the editor asks at every edit."""
    graph = refiner.model.graph
    inputs = tuple(graph.inputs) if graph is not None else ()
    memo = refiner.symbols_memo
    if memo is None or memo[0] != inputs:
        memo = refiner.symbols_memo = (inputs, input_symbols(refiner.model))
    return memo[1]


@lru_cache(maxsize=4096)
def _solved(cond: Condition, name: str) -> Solution | None:
    return solve(cond, name)


_GRID = (1, 2, 3, 4, 5, 6, 7, 8, 16, 32, 64, 128, 224, 256, 512, 640, 1024, 2048, 4096, 8192)


_holds = witnesses.holds


@lru_cache(maxsize=4096)
def witness(cond: Condition, names: tuple[str, ...]) -> tuple[tuple[str, int], ...] | None:
    """Sizes of the symbols (at most 3) at which `cond` fails with both sides at least 1, found on a grid of
    common sizes; None when none there fails (the condition is then not reported)."""
    if len(names) > 3:
        return None
    for values in product(_GRID if len(names) <= 2 else _GRID[:12], repeat=len(names)):
        if _holds(cond, dict(zip(names, values, strict=True))) is False:
            return tuple(zip(names, values, strict=True))
    return None


def contracts(refiner: ShapeRefiner, symbols: dict[str, list[tuple[Value, int]]] | None = None
              ) -> dict[str, DimContract]:  # fmt: skip
    """The contract of every input dim symbol that some node constrains (`symbols`: the model's `input_symbols`,
    when the caller has them)."""
    if symbols is None:
        symbols = input_symbols(refiner.model)
    out: dict[str, DimContract] = {}
    cases = branch_conditions(refiner)
    for node, conds in [*refiner.conditions.items(), *cases.items()] if cases else refiner.conditions.items():
        if node not in refiner.contexts:
            continue
        for cond in map(reduced, conds):
            names = cond.symbols()
            if not names or not names <= symbols.keys():
                continue
            sol = _solved(cond, next(iter(names))) if len(names) == 1 else None
            if sol is not None and sol.holds_always():
                continue
            key = "+".join(sorted(names))
            contract = out.setdefault(key, DimContract(key, [p for n in sorted(names) for p in symbols[n]]))
            contract.requirements.append((node, cond, sol))
    return out


def declaration_findings(refiner: ShapeRefiner, symbols: dict[str, list[tuple[Value, int]]] | None = None
                         ) -> list[Finding]:  # fmt: skip
    """GL315 on a declared dim (value info, graph output) that is another expression of the input dims than the one
    inference finds and differs from it at sizes where every node's own conditions hold (shown by those sizes). A
    warning: runtimes check declared dims only where they are numbers, so the model still runs."""
    if not refiner.declared_conditions:
        return []
    if symbols is None:
        symbols = input_symbols(refiner.model)
    relations = _stated_relations(refiner)  # total = past + sequence, for every caller
    requirements = [(c, c.symbols()) for c in dict.fromkeys(
        _related(c, relations) for conds in refiner.conditions.values() for c in map(reduced, conds))]
    verdicts: dict[tuple[d.Dim, d.Dim], tuple[tuple[str, int], ...] | None] = {}  # a pair is judged once
    out: list[Finding] = []
    for value, (info, pairs) in refiner.declared_conditions.items():
        for i, ours, theirs in pairs:
            if (ours, theirs) in verdicts:
                found = verdicts[ours, theirs]
            else:
                a, b = with_relations(ours, relations), with_relations(theirs, relations)
                names = Condition(a, b).symbols()
                found = None
                if names and names <= symbols.keys():
                    found = judge(a, b, tuple(c for c, cs in requirements if cs and cs <= names))
                verdicts[ours, theirs] = found
            if found is None:
                continue
            sizes = dict(found)
            sizes.update({n: v for n, x in relations.items() if (v := value_at(x, sizes)) is not None})
            at = ", ".join(f"{n}={v}" for n, v in sizes.items())
            producer = value.producer
            op = producer.qualified_op if producer is not None else "inference"
            span = info.origin.span()
            start, end = span if span is not None else (-1, -1)
            out.append(Finding(
                "GL315", f"'{value.name}' is declared with dim {i} = {d.to_str(theirs)}, but {op} gives "
                f"{d.to_str(ours)}: at {at} that is {value_at(theirs, sizes)}, not {value_at(ours, sizes)}", start, end,
                "warning", node=producer, detail=f"output {value.name}"))  # fmt: skip
            break
    return out


def _stated_relations(refiner: ShapeRefiner) -> dict[str, d.Dim]:
    """`stated_relations` of the refiner's model, its attention nodes kept for the refiner's life (its graph's
    structure is fixed; the editor asks at every edit)."""
    nodes = refiner.kept.get("contracts.attentions")
    if nodes is None:
        nodes = refiner.kept["contracts.attentions"] = attentions(refiner.model)
    return stated_relations(refiner.model, refiner.values, nodes)


def _related(cond: Condition, relations: dict[str, d.Dim]) -> Condition:
    if not relations:
        return cond
    return Condition(with_relations(cond.a, relations), with_relations(cond.b, relations), cond.broadcast,
                     cond.at_most, tuple(_related(c, relations) for c in cond.others))  # fmt: skip


def condition_findings(refiner: ShapeRefiner) -> list[Finding]:
    """GL320 on each node whose rule holds only at some sizes of the input dims, with a witness; GL321 on the input
    a node pins instead; GL315 on symbolic declarations that contradict inference."""
    symbols = _input_symbols(refiner)  # read once for both
    return declaration_findings(refiner, symbols) + size_findings(refiner, symbols)


class _Claim:
    """One condition to report: its node, condition and solution, the witness, and the later nodes whose
    conditions it implies."""

    __slots__ = ("node", "cond", "sol", "symbol", "places", "sizes", "later")

    def __init__(self, node: Node, cond: Condition, sol: Solution | None, symbol: str,
                 places: list[tuple[Value, int]], sizes: dict[str, int]) -> None:  # fmt: skip
        self.node, self.cond, self.sol, self.symbol, self.places, self.sizes = node, cond, sol, symbol, places, sizes
        self.later: list[Node] = []


def _graph_chain(node: Node) -> set[int]:
    """The graphs a node is in, its own and the ones around it (by identity)."""
    out: set[int] = set()
    graph: Graph | None = node.graph
    while graph is not None:
        out.add(id(graph))
        owner = graph.owner if graph.kind == "subgraph" else None
        graph = owner.graph if owner is not None else None
    return out


def _node_order(refiner: ShapeRefiner) -> dict[Node, int]:
    """Nodes in the order a runtime may run them: each graph topologically, a node's subgraphs after it. Kept for
    the refiner's life (its graph's structure is fixed: an edit that changes it makes a new refiner), as the editor
    asks at every edit (10 ms on a model of 10k nodes)."""
    kept = refiner.kept.get("contracts.order")
    if kept is None:
        kept = refiner.kept["contracts.order"] = _walk_order(refiner)
    order: dict[Node, int] = kept
    return order


def _walk_order(refiner: ShapeRefiner) -> dict[Node, int]:
    out: dict[Node, int] = {}

    def walk(graph: Graph) -> None:
        for node in graph.topological_order():
            out[node] = len(out)
            for graphs in node.subgraphs.values():
                for g in graphs:
                    walk(g)

    if refiner.model.graph is not None:
        walk(refiner.model.graph)
    return out


def size_findings(refiner: ShapeRefiner, symbols: dict[str, list[tuple[Value, int]]]) -> list[Finding]:
    """Every condition with a witness (`witnesses.search`): sizes at which its node fails and every node before it
    (in its graph or a graph around it) runs. A condition the earlier ones imply is listed on the first that
    covers it; one without a witness is not reported. GL320 is information (a fact of the model's contract: a
    position table, a stride, a patch grid), GL321 a warning (the input declares dynamic a dim that one size
    fits)."""
    found = contracts(refiner, symbols)
    if not found:
        return []
    order = _node_order(refiner)
    domains: list[tuple[Node, Condition, Solution | None, DimContract | None]] = [
        (node, c, None, None) for node, conds in refiner.domains.items() if node in refiner.contexts
        for c in map(reduced, conds) if (names := c.symbols()) and names <= symbols.keys() and not (
            len(names) == 1 and (sol := _solved(c, next(iter(names)))) is not None and sol.holds_always())]  # fmt: skip
    reqs = sorted([*((node, cond, sol, c) for c in found.values() for node, cond, sol in c.requirements), *domains],
                  key=lambda r: order.get(r[0], len(order)))  # fmt: skip
    # sizes every caller's feeds satisfy (total = past + sequence): the conditions are searched with them applied
    relations = _stated_relations(refiner)
    related = {cond: _stated(cond, relations) for _, cond, _, _ in reqs}
    base = witnesses.base_sizes(related.values())
    entries = [(node, related[cond], _graph_chain(node)) for node, cond, _, _ in reqs]
    claims: list[_Claim] = []
    searched: dict[int, Condition] = {}  # a claim's condition as searched
    uncovered: list[tuple[int, Condition, dict[str, int]]] = []
    for i, (node, cond, sol, contract) in enumerate(reqs):
        if contract is None:  # a domain: witnesses stay within it; never reported
            continue
        _, mine, chain = entries[i]
        known = sol if mine is cond else None  # a related symbol replaced: the solution is no longer of `mine`
        earlier = list(dict.fromkeys(_before(entries, i)))
        sizes = None if mine in earlier else witnesses.search(mine, known, earlier, base)
        if sizes is not None:
            sizes.update({n: v for n, x in relations.items()
                          if n not in sizes and (v := value_at(x, sizes)) is not None})  # fmt: skip
            claims.append(_Claim(node, cond, sol, contract.symbol, contract.places, sizes))
            searched[id(claims[-1])] = mine
            continue
        fails = witnesses.failing(mine, known)
        if fails is not None:
            uncovered.append((i, mine, fails))
    position = {id(c): order.get(c.node, len(order)) for c in claims}
    for i, mine, fails in uncovered:
        node = reqs[i][0]
        at = order.get(node, len(order))
        # the nearest claim that fails there too: the closest before it first (the later a claim, the closer its
        # condition to this one), then those after it (a node another order of the graph may run first)
        before = [c for c in claims if position[id(c)] <= at]
        nearest = [*reversed(before), *(c for c in claims if position[id(c)] > at)]
        cover = next((c for c in nearest if c.node is not node
                      and witnesses.covers(searched[id(c)], mine, fails, base)), None)  # fmt: skip
        if cover is not None and node not in cover.later:
            cover.later.append(node)
    out: list[Finding] = []
    pinned: set[str] = set()
    for claim in claims:
        out.append(_finding(claim, pinned))
    return out


def _before(entries: list[tuple[Node, Condition, set[int]]], i: int) -> Iterator[Condition]:
    """The conditions of the nodes a runtime may run before entry i's: in its graph or a graph around it, and not
    after it (what it computes does not reach them). An order of the graph other than the file's may run an
    independent node first (onnxruntime does), so a later node that does not depend on it counts too, unless its
    condition is the same (the first in the file states it)."""
    node, mine, chain = entries[i]
    down: set[Node] | None = None
    for j, (n, c, _) in enumerate(entries):
        if n is node or id(n.graph) not in chain:
            continue
        if j > i:
            if c == mine:
                continue
            if down is None:
                down = _downstream(node)
            if n in down:
                continue
        yield c


def _downstream(node: Node) -> set[Node]:
    """The nodes that read what `node` computes, directly or through others; for a node in a subgraph, those after
    the nodes that own its graph too (a node in a subgraph counts with the nodes owning it)."""
    out: set[Node] = set()
    todo: list[Node] = []
    cur: Node | None = node
    while cur is not None:
        todo.append(cur)
        cur = cur.graph.owner if cur.graph.kind == "subgraph" else None
    while todo:
        n = todo.pop()
        for v in n.outputs:
            for consumer, _ in v.consumers if v is not None else ():
                reader: Node | None = consumer
                while reader is not None and reader not in out:
                    out.add(reader)
                    todo.append(reader)
                    reader = reader.graph.owner if reader.graph.kind == "subgraph" else None
    return out


def _stated(cond: Condition, relations: dict[str, d.Dim]) -> Condition:
    """The condition with the related symbols replaced by what the model states they are (every alternative of a
    disjunction)."""
    if not relations or not cond.symbols() & relations.keys():
        return cond
    first, *rest = (Condition(with_relations(c.a, relations), with_relations(c.b, relations), c.broadcast,
                              c.at_most) for c in cond.alternatives())  # fmt: skip
    return Condition(first.a, first.b, first.broadcast, first.at_most, tuple(rest))


def _finding(claim: _Claim, pinned: set[str]) -> Finding:
    node, cond, sol, name = claim.node, claim.cond, claim.sol, claim.symbol
    op = node.qualified_op
    at = witnesses.describe(claim.sizes)
    also = ""
    if claim.later:
        names = [f"'{n.name}'" if n.name else n.qualified_op for n in claim.later]
        more = f" and {len(names) - 3} more" if len(names) > 3 else ""
        also = f"; it holds for {len(names)} later node(s) too: {', '.join(names[:3])}{more}"
    related = [(f"{n.qualified_op} needs the same", *(n.op_span or (-1, -1))) for n in claim.later]
    if sol is not None and sol.period == 0 and len(sol.values) == 1 and name not in pinned:
        pinned.add(name)
        (v,) = sol.values
        value, i = claim.places[0]
        where = f" '{node.name}'" if node.name else ""
        others = [f"'{p.name}' dim {j}" for p, j in claim.places[1:]]
        declared = f" (and {', '.join(others)})" if others else ""
        vspan = value.span
        vs, ve = vspan if vspan is not None else (-1, -1)
        related = [(f"{op} fixes it", *(node.op_span or (-1, -1))), *related]
        return Finding(FIXED_DYNAMIC_DIM, f"dim {i} of input '{value.name}'{declared} is declared dynamic ('{name}'), "
                       f"but {op}{where} fixes it to {v}: {cond.equation()} (it fails at {at}){also}", vs, ve,
                       "warning", related=related, detail=f"input {value.name}", value=value.name,
                       cause=node)  # fmt: skip
    span = node.op_span
    start, end = span if span is not None else (-1, -1)
    if sol is None:
        message = f"{op} needs {cond.equation()} (it fails at {at}){also}"
    elif sol.never():
        message = f"{op} needs {cond.equation()}, which holds at no size of {name} (it fails at {at}){also}"
    else:
        message = f"{op} needs {cond.equation()}: {sol.describe(name)} (it fails at {at}){also}"
    return Finding(SHAPE_CONDITION, message, start, end, "info", related=related, node=node)


class DimRequirement(Frozen):
    """One dim of a graph input and what one node requires of it."""

    __slots__ = ("input", "dim", "symbol", "requirement", "node", "also")

    input: str
    dim: int
    symbol: str
    requirement: str  # `height % 32 must be 0 or 17-31`, or an equation over several dims
    node: Node
    also: tuple[Node, ...]  # further nodes whose conditions on the dim `requirement` states with the node's

    def __init__(
        self,
        input: str,
        dim: int,
        symbol: str,
        requirement: str,
        node: Node,
        also: tuple[Node, ...] = (),
    ) -> None:
        object.__setattr__(self, "input", input)
        object.__setattr__(self, "dim", dim)
        object.__setattr__(self, "symbol", symbol)
        object.__setattr__(self, "requirement", requirement)
        object.__setattr__(self, "node", node)
        object.__setattr__(self, "also", also)

    def __repr__(self) -> str:
        return (
            f"DimRequirement(input={self.input!r}, dim={self.dim!r}, symbol={self.symbol!r}, "
            f"requirement={self.requirement!r}, node={self.node!r}, also={self.also!r})"
        )

    def __eq__(self, other: object) -> bool:
        if type(other) is not DimRequirement:
            return NotImplemented
        mine = (self.input, self.dim, self.symbol, self.requirement, self.node, self.also)
        theirs = (other.input, other.dim, other.symbol, other.requirement, other.node, other.also)
        return mine == theirs

    def __hash__(self) -> int:
        return hash((self.input, self.dim, self.symbol, self.requirement, self.node, self.also))


def input_requirements(refiner: ShapeRefiner) -> list[DimRequirement]:
    """What the nodes require of each graph input dim (for hovers and `graphlsp shapes`), in input order."""
    out: list[DimRequirement] = []
    for contract in contracts(refiner).values():
        stated: list[tuple[str, Node, tuple[Node, ...]]] = []
        joint: tuple[Solution, Node, tuple[Node, ...]] | None = None  # the conditions on one dim: their intersection
        for node, cond, sol in contract.requirements:
            names = sorted(cond.symbols())
            if sol is not None:
                both = joint[0].intersection(sol) if joint is not None else sol
                if both is not None and joint is not None:
                    joint = (both, joint[1], (*joint[2], node))
                elif joint is None:
                    joint = (sol, node, ())
                else:
                    stated.append((sol.describe(contract.symbol), node, ()))
            elif len(names) > 1 and witness(cond, tuple(names)) is not None:
                stated.append((cond.equation(), node, ()))
        if joint is not None:
            stated.insert(0, (joint[0].describe(contract.symbol), joint[1], joint[2]))
        for text, node, also in stated:
            for value, i in contract.places:
                dm = value.type.dims[i] if value.type is not None and value.type.dims is not None else None
                if isinstance(dm, str):
                    out.append(DimRequirement(value.name, i, dm, text, node,
                                              tuple(n for n in dict.fromkeys(also) if n is not node)))  # fmt: skip
    order = {v.name: k for k, v in enumerate(refiner.model.graph.inputs)} if refiner.model.graph else {}
    out.sort(key=lambda r: (order.get(r.input, 0), r.dim))
    firsts: dict[tuple[str, int, str], DimRequirement] = {}  # one a later node repeats (each layer's attention) once
    for r in out:
        key = (r.input, r.dim, r.requirement)
        first = firsts.get(key)
        if first is None:
            firsts[key] = r
        elif r.node is not first.node and r.node not in first.also:
            firsts[key] = DimRequirement(first.input, first.dim, first.symbol, first.requirement, first.node,
                                         (*first.also, r.node, *(n for n in r.also if n not in first.also)))
    return list(firsts.values())
