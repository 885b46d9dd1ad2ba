"""Declared against inferred: at which input sizes a declared dim expression (value_info, a graph output) is not the
one inference finds, while every node's own conditions hold, decided symbolically.

A pair (inferred `a`, declared `b`) is a condition `a = b` on the input dims. The nodes' requirements that share its
symbols are relations the model runs under (its Concats hold only at `4*floor((h + 31)/32) = floor((h + 7)/8)`);
each one whose side is a single floor or symbol is used as a rewrite of that atom in the difference `b - a`, so a
declaration that agrees with inference wherever the model runs at all reduces to 0 and is judged without a size.
What remains over one symbol is solved by the condition solver (`conditions.solve`: periodic in the symbol, one
period decides) and intersected with the related requirements' solutions, whose sets are again periodic: the least
size inside them where the pair differs is the witness, found over one common period of integer membership tests,
never by substituting sizes into expressions. Over several symbols, the difference is evaluated (integers, no
rebuilding of expressions) at the first sizes of each symbol that its own requirements admit; a declaration that
differs nowhere there is not reported. A pair is judged once per model, however many values carry it.

A witness is one a caller can feed: symbols the model states as sums of others (`stated_relations`: an attention's
total length is the past plus the new tokens) are replaced by those sums before the judgement. The findings about a
binary's `value_info` entries, an exporter's annotations, are said once per model (`grouped_annotations`).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from itertools import product
from math import gcd
from typing import Any

from graphlsp.graph.core import Model, Node, Value
from graphlsp.graph.findings import Finding
from graphlsp.infer import dims as d
from graphlsp.infer.conditions import Condition, Solution, replace_atom, solve
from graphlsp.infer.dims import Atom, Dim, Expr, value_at

MAX_SYMBOLS = 3
MAX_WINDOW = 1 << 16  # membership tests for one symbol's witness, at most
FIRST = 6  # admissible sizes tried per symbol when the difference spans several symbols, then one from each of
LARGE = (64, 256, 1024, 4096)

Witness = tuple[tuple[str, int], ...]


def _lone_atom(x: Dim) -> Atom | None:
    """The atom x is (coefficient 1, no other term), if it is one."""
    if isinstance(x, Expr) and len(x.poly) == 1:
        mono, coeff = x.poly[0]
        if coeff == 1 and len(mono) == 1:
            return mono[0]
    return None


def _rewritten(g: Dim, relations: tuple[Condition, ...]) -> Dim:
    """g with each plain equality among `relations` applied as a rewrite of its lone-atom side."""
    for rel in relations:
        if rel.broadcast or rel.at_most or rel.others or not isinstance(g, Expr):
            continue
        for side, other in ((rel.b, rel.a), (rel.a, rel.b)):
            atom = _lone_atom(side)
            if atom is not None and not _mentions(other, atom):
                g = replace_atom(g, atom, other)
                break
    return g


def _mentions(x: Dim, atom: Atom) -> bool:
    if not isinstance(x, Expr):
        return False
    return any(a is atom or any(_mentions(arg, atom) for arg in a.args) for mono, _ in x.poly for a in mono)


def _holds(cond: Condition, sizes: dict[str, int]) -> bool | None:
    """The condition at those sizes (None where a side is unknown or below 1: nothing is claimed there); a
    disjunction holds where one of its relations does."""
    if cond.others:
        got = [_holds(c, sizes) for c in cond.alternatives()]
        return True if True in got else None if None in got else False
    a, b = value_at(cond.a, sizes), value_at(cond.b, sizes)
    if a is None or b is None or a < 1 or b < 1:
        return None
    return a <= b if cond.at_most else a == b or (cond.broadcast and 1 in (a, b))


def _window(sols: list[Solution]) -> int:
    """A length past which membership in every solution (and in their complements) repeats: the largest start or
    finite value, plus one common period."""
    period = 1
    top = 1
    for s in sols:
        if s.period:
            period = period * s.period // gcd(period, s.period)
        top = max(top, s.start, max(s.values, default=0))
    return top + period + 1


def _admissible(sols: list[Solution]) -> list[int]:
    """The first FIRST sizes (from 1) in every solution, then the first one from each of LARGE on (a declaration
    may part from inference only past a table's length)."""
    out: list[int] = []
    marks = iter(LARGE)
    lo: int | None = 1
    while lo is not None:
        for s in range(lo, min(lo + _window(sols) + FIRST, MAX_WINDOW)):
            if all(sol.contains(s) for sol in sols):
                out.append(s)
                if lo > 1 or len(out) == FIRST:
                    break
        lo = next(marks, None)
    return sorted(set(out))


@lru_cache(maxsize=4096)
def _solve(cond: Condition, name: str) -> Solution | None:
    """`conditions.solve`, once per condition: the requirements recur across the pairs of a model."""
    return solve(cond, name)


@lru_cache(maxsize=4096)
def judge(ours: Dim, theirs: Dim, related: tuple[Condition, ...]) -> Witness | None:
    """Sizes at which `theirs` (declared) differs from `ours` (inferred), both at least 1, while every condition of
    `related` holds; None when there are none (or that is not proved)."""
    cond = Condition(ours, theirs)
    names = tuple(sorted(cond.symbols()))
    if not names or len(names) > MAX_SYMBOLS:
        return None
    if _rewritten(d.sub(theirs, ours), related) == 0:
        return None  # equal wherever the nodes' requirements hold
    if len(names) == 1:
        return _one(cond, names[0], related)
    return _several(cond, names, related)


def _one(cond: Condition, name: str, related: tuple[Condition, ...]) -> Witness | None:
    declared = _solve(cond, name)
    if declared is None or declared.holds_always():
        return None
    sols = [declared]
    for rel in related:
        sol = _solve(rel, name)
        if sol is None:
            return None  # a requirement not solved: its sizes are not known, so no witness is proved
        sols.append(sol)
    for s in range(1, min(_window(sols), MAX_WINDOW)):
        if not declared.contains(s) and all(sol.contains(s) for sol in sols[1:]):
            sizes = {name: s}
            if _holds(cond, sizes) is False:
                return ((name, s),)
    return None


def _several(cond: Condition, names: tuple[str, ...], related: tuple[Condition, ...]) -> Witness | None:
    candidates: list[list[int]] = []
    for name in names:
        own = [rel for rel in related if rel.symbols() == {name}]
        sols = [sol for rel in own if (sol := _solve(rel, name)) is not None]
        if len(sols) != len(own):
            return None
        candidates.append(_admissible(sols))
    joint = [rel for rel in related if len(rel.symbols()) > 1]
    for values in product(*candidates):
        sizes = dict(zip(names, values, strict=True))
        if _holds(cond, sizes) is False and all(_holds(rel, sizes) is not False for rel in joint):
            return tuple(sizes.items())
    return None


def attentions(model: Model) -> list[Node]:
    """The main graph's nodes that state relations (`stated_relations`): onnxruntime's GroupQueryAttention."""
    graph = model.graph
    return [node for node in graph.nodes if node.op_type == "GroupQueryAttention" and node.domain == "com.microsoft"
            and len(node.inputs) >= 7] if graph is not None else []  # fmt: skip


def stated_relations(model: Model, values: Mapping[Value, Any], nodes: list[Node] | None = None) -> dict[str, Dim]:
    """Input dim symbols the model states as sums of others, which every caller's sizes satisfy: an attention with
    a KV cache reads `total_sequence_length` as the past plus the new tokens (onnxruntime's GroupQueryAttention takes
    the total as an input, `attention_mask`'s length in the GenAI builder's models: T = P + S, with P the past key's
    dim 2 and S the query's dim 1). `values`: the refiner's inferred values (their `type` and `sv`); `nodes`: the
    model's `attentions`, when the caller keeps them."""
    out: dict[str, Dim] = {}
    for node in attentions(model) if nodes is None else nodes:
        query, past, total = (values.get(v) if v is not None else None for v in (node.inputs[i] for i in (0, 3, 6)))
        s, p = _dim_of(query, 1), _dim_of(past, 2)
        t = total.sv[0] if total is not None and total.sv is not None and len(total.sv) == 1 else None
        atom = _lone_atom(t)
        if s is None or p is None or atom is None or atom.kind != "sym":
            continue
        if atom.name in out or atom.name in s.symbols() | p.symbols():
            continue
        out[atom.name] = d.add(p, s)
    return out


def _dim_of(x: Any, i: int) -> Expr | None:
    shape = getattr(getattr(x, "type", None), "shape", None)
    dim = shape[i] if shape is not None and len(shape) > i else None
    return dim if isinstance(dim, Expr) else None


def with_relations(x: Dim, relations: Mapping[str, Dim]) -> Dim:
    """x with each related symbol replaced by what the model states it is."""
    for name, value in relations.items():
        if isinstance(x, Expr) and name in x.symbols():
            x = d.replace(x, d.symbol(name), value)
    return x


SHOWN = 3  # contradicted annotations named in the one finding


def contradicted_annotations(findings: list[Finding], model: Model) -> list[Finding]:
    """The GL315 findings about the main graph's `value_info` entries (an exporter's annotations, which runtimes
    recompute), not about its outputs (its interface)."""
    graph = model.graph
    if graph is None:
        return []
    outputs = {v.name for v in graph.outputs}
    return [f for f in findings if f.code == "GL315" and f.detail.startswith("output ")
            and (name := f.detail[7:]) in graph.value_infos and name not in outputs]  # fmt: skip


def grouped_annotations(findings: list[Finding], model: Model) -> list[Finding]:
    """`findings` with those about contradicted `value_info` entries said once, on the first: how many values,
    the first few, and the fix (`check --fix` removes the entries)."""
    wrong = contradicted_annotations(findings, model)
    if not wrong:
        return findings
    first = wrong[0]
    names = list(dict.fromkeys(f.detail[7:] for f in wrong))
    others = ", ".join(f"'{n}'" for n in names[1:SHOWN])
    more = f" and {len(names) - SHOWN} more" if len(names) > SHOWN else ""
    also = f"; also {others}{more}" if others else ""
    count = f"{len(names)} value_info entries contradict" if len(names) > 1 else "a value_info entry contradicts"
    them = "them" if len(names) > 1 else "it"
    message = (f"{count} inference (exporter annotations, which runtimes recompute): {first.message}{also}. "
               f"`check --fix` removes {them}")
    one = Finding(first.code, message, first.start, first.end, first.severity, first.related, first.kind,
                  first.node, first.detail, first.value)  # fmt: skip
    drop = set(map(id, wrong))
    return [one if f is first else f for f in findings if f is first or id(f) not in drop]
