"""Witnesses of size conditions: sizes a caller can feed at which a node fails, and every node before it runs.

A condition (`conditions.Condition`) is reported only with a witness: sizes of the input dim symbols at which it
fails while every condition of the nodes before it holds, so that a runtime reaches the node and fails there.
Conditions of earlier nodes fix the sizes of symbols the condition does not read (a base assignment: for each
symbol the first common size at which every condition over it alone holds). A condition with no such witness is
implied by the earlier ones (a YOLO's later Concat, the second layer's GroupQueryAttention): it is not said again.
Sizes are tried, never proved, here: the proofs are `conditions.solve`'s; the witness is one point of it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import lru_cache
from itertools import product

from graphlsp.infer.conditions import Condition, Solution
from graphlsp.infer.declared import value_at

GRID = (1, 2, 3, 4, 5, 6, 7, 8, 16, 32, 64, 128, 224, 256, 512, 640, 1024, 2048, 4096, 8192)
SWEEP = tuple(range(1, 257)) + (320, 384, 448, 512, 640, 768, 1024, 2048, 4096, 8192)
OTHER_SIZES = (8, 16, 32, 64, 128, 224, 320, 640)  # sizes tried for the symbols a condition does not read
MAX_SYMBOLS = 3  # a condition over more symbols is not searched (it is not reported)

Sizes = dict[str, int]


def satisfied(cond: Condition, a: int, b: int) -> bool:
    return a <= b if cond.at_most else a == b or (cond.broadcast and 1 in (a, b))


def holds(cond: Condition, sizes: Sizes) -> bool | None:
    """The condition at those sizes: None where a side is unknown or below 1 (degenerate), else whether it holds.
    A disjunction holds when one of its relations does; there a constant side may be 0 (`P == 0`)."""
    if cond.others:
        got = [_holds_one(c, sizes, True) for c in cond.alternatives()]
        return True if True in got else None if None in got else False
    return _holds_one(cond, sizes, False)


def _holds_one(cond: Condition, sizes: Sizes, constants_free: bool) -> bool | None:
    a, b = value_at(cond.a, sizes), value_at(cond.b, sizes)  # evaluated, not rebuilt symbol by symbol
    if a is None or b is None:
        return None
    if any(x < 1 and not (constants_free and isinstance(side, int)) for x, side in ((a, cond.a), (b, cond.b))):
        return None
    return satisfied(cond, a, b)


def base_sizes(conds: Iterable[Condition]) -> Sizes:
    """A size for each symbol the conditions read: the first common size at which every condition over that symbol
    alone holds (not degenerate), else the first at which none fails."""
    alone: dict[str, list[Condition]] = {}
    names: set[str] = set()
    for c in conds:
        syms = c.symbols()
        names |= syms
        if len(syms) == 1:
            alone.setdefault(next(iter(syms)), []).append(c)
    out: Sizes = {}
    for name in sorted(names):
        mine = alone.get(name, [])
        pick = next((v for v in SWEEP if all(holds(c, {name: v}) is True for c in mine)), None)
        if pick is None:
            pick = next((v for v in SWEEP if all(holds(c, {name: v}) is not False for c in mine)), 1)
        out[name] = pick
    return out


def _candidates(cond: Condition, names: list[str], sol: Solution | None) -> Iterator[tuple[int, ...]]:
    """Sizes of the condition's symbols to try, the likeliest witnesses first: for one symbol, the sizes next to
    where its solutions end (`at most 128`: 129; `at least 65`: 64), then every size of the sweep."""
    if len(names) == 1:
        first: list[int] = []
        if sol is not None:
            if not sol.period and sol.values:
                first.append(max(sol.values) + 1)
            if sol.period and sol.start > 1:
                first.append(sol.start - 1)
            fails = sol.counterexample()
            if fails is not None:
                first.append(fails)
        seen: set[int] = set()
        for v in (*first, *SWEEP):
            if v not in seen:
                seen.add(v)
                yield (v,)
        return
    yield from product(GRID if len(names) <= 2 else GRID[:12], repeat=len(names))


def search(cond: Condition, sol: Solution | None, earlier: list[Condition], base: Sizes) -> Sizes | None:
    """Sizes at which `cond` fails and every earlier condition holds (not merely is degenerate there): the
    condition's symbols, then those of the earlier conditions, from `base` or a common size for all of them (a
    width that only a product with the height reads, 1 in `base`, makes that product degenerate); None when there
    are none among the sizes tried."""
    names = sorted(cond.symbols())
    if not names or len(names) > MAX_SYMBOLS:
        return None
    needed = set().union(*(_symbols(c) for c in earlier)) - set(names) if earlier else set()
    others = {k: v for k, v in base.items() if k in needed}
    variants = [others] + [{k: v for k in others} for v in OTHER_SIZES] if others else [others]
    # an earlier condition over none of the condition's symbols holds at a variant or not, whatever the candidate;
    # one over a single symbol of the condition is a set of sizes, read once
    mine = set(names)
    apart = [c for c in earlier if not _symbols(c) & mine]
    single = [c for c in earlier if len(_symbols(c)) == 1 and _symbols(c) <= mine]
    joint = [c for c in earlier if _symbols(c) & mine and not (len(_symbols(c)) == 1 and _symbols(c) <= mine)]
    allowed: dict[str, frozenset[int]] = {}
    for c in single:
        (name,) = _symbols(c)
        allowed[name] = allowed[name] & _true_sizes(c, name) if name in allowed else _true_sizes(c, name)
    usable = [rest for rest in variants if all(_holds_at(c, rest) is True for c in apart)]
    if not usable:
        return None
    for values in _candidates(cond, names, sol):
        sizes = dict(zip(names, values, strict=True))
        if not all(_allowed(single, allowed, n, v) for n, v in sizes.items()):
            continue
        if _holds_at(cond, sizes) is not False:
            continue
        for rest in usable:
            full = {**sizes, **rest}
            if all(_holds_at(c, full) is True for c in joint):
                return full
    return None


_UNIVERSE = frozenset(SWEEP) | frozenset(GRID)


def _allowed(single: list[Condition], allowed: dict[str, frozenset[int]], name: str, v: int) -> bool:
    if name not in allowed:
        return True
    if v in _UNIVERSE:
        return v in allowed[name]
    return all(holds(c, {name: v}) is True for c in single if _symbols(c) == {name})


@lru_cache(maxsize=1 << 12)
def _symbols(cond: Condition) -> frozenset[str]:
    return frozenset(cond.symbols())


@lru_cache(maxsize=1 << 12)
def _true_sizes(cond: Condition, name: str) -> frozenset[int]:
    """The common sizes of `name` at which the condition (over that symbol alone) holds."""
    return frozenset(v for v in _UNIVERSE if holds(cond, {name: v}) is True)


def _holds_at(cond: Condition, sizes: Sizes) -> bool | None:
    syms = _symbols(cond)
    return _holds_cached(cond, tuple(sorted((k, v) for k, v in sizes.items() if k in syms)))


@lru_cache(maxsize=1 << 16)
def _holds_cached(cond: Condition, sizes: tuple[tuple[str, int], ...]) -> bool | None:
    return holds(cond, dict(sizes))


def failing(cond: Condition, sol: Solution | None) -> Sizes | None:
    """Any sizes at which `cond` fails, earlier conditions aside."""
    return search(cond, sol, [], {})


def covers(earlier: Condition, cond: Condition, fails: Sizes, base: Sizes) -> bool:
    """Whether the earlier condition fails where `cond` does (at `fails`, the other symbols from `base` or a common
    size): the earlier node is where a runtime stops."""
    rest = {k: v for k, v in base.items() if k in earlier.symbols() and k not in fails}
    variants = [rest] + [{k: v for k in rest} for v in OTHER_SIZES] if rest else [rest]
    return any(holds(earlier, {**fails, **r}) is False for r in variants)


def describe(sizes: Sizes) -> str:
    return ", ".join(f"{k}={v}" for k, v in sizes.items())
