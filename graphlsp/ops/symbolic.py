"""Arithmetic on symbolic dims that the tensor families need beyond `infer.dims`: lower bounds, min and max,
"surely different", and exact division of polynomials (`24*N / 4` is `6*N`; a division that may leave a
remainder is unknown).

Two assumptions about symbolic dims are made, both only to simplify or to compare: a dim is never negative, and
a dim_param is at least 1 (so `24*N` elements never fit `25*N`, and `x[1:]` on a dim `N` has `N - 1` elements).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graphlsp.infer import dims as d
from graphlsp.infer.dims import Dim, Expr

Bounds = d.Bounds


def _bounds(x: Dim) -> Bounds:
    """Provable bounds of x, taking dims to be >= 0 and dim_params to be >= 1."""
    return d.bounds(x, 1)


def _lower(x: Dim) -> int | None:
    return _bounds(x)[0]


def at_least(x: Dim, bound: int) -> bool:
    low = _lower(x)
    return low is not None and low >= bound


def dim_min(a: Dim, b: Dim) -> Dim:
    return _extreme(a, b, smaller=True)


def dim_max(a: Dim, b: Dim) -> Dim:
    return _extreme(a, b, smaller=False)


def _extreme(a: Dim, b: Dim, smaller: bool) -> Dim:
    """The smaller (or larger) of two dims: one of them when the difference has a known sign, else an Expr."""
    if a is None or b is None:
        return None
    if isinstance(a, int) and isinstance(b, int):
        return min(a, b) if smaller else max(a, b)
    over, under = (b, a) if smaller else (a, b)  # a is the answer when over - under >= 0
    if at_least(d.sub(over, under), 0):
        return a
    if at_least(d.sub(under, over), 0):
        return b
    return d.minimum(a, b) if smaller else d.maximum(a, b)


def differ(a: Dim, b: Dim) -> bool:
    """True only when a and b are surely different (dim_params taken to be >= 1)."""
    if a is None or b is None:
        return False
    if d.equal(a, b) is False:
        return True
    diff = d.sub(a, b)
    return at_least(diff, 1) or at_least(d.neg(diff), 1)


def _atom_dim(atom: Any) -> Dim:
    if atom.kind == "sym":
        return d.symbol(atom.name)
    if atom.kind == "floor":
        return d.floordiv(atom.args[0], atom.args[1])
    fn = d.minimum if atom.kind == "min" else d.maximum
    return fn(atom.args[0], atom.args[1])


def _term(mono: Sequence[Any], coeff: int) -> Dim:
    return d.mul(coeff, d.product(_atom_dim(a) for a in mono))


def _mono_order(mono: tuple[Any, ...]) -> tuple[int, tuple[str, ...]]:
    return len(mono), tuple(a.key for a in mono)


def _lead(x: Expr) -> tuple[tuple[Any, ...], int]:
    return max(x.poly, key=lambda mc: _mono_order(mc[0]))


def _mono_div(m1: tuple[Any, ...], m2: tuple[Any, ...]) -> list[Any] | None:
    rest = list(m1)
    for atom in m2:
        if atom not in rest:
            return None
        rest.remove(atom)
    return rest


def _poly_div(a: Dim, b: Expr) -> Dim:
    """a / b when b divides a exactly as a polynomial (checked by multiplying back), else None."""
    q: Dim = 0
    r = a
    for _ in range(32):
        if r == 0:
            break
        if r is None:
            return None
        lm, lc = _lead(r) if isinstance(r, Expr) else ((), r)
        bm, bc = _lead(b)
        rest = _mono_div(lm, bm)
        if rest is None or lc % bc:
            return None
        t = _term(rest, lc // bc)
        q = d.add(q, t)
        r = d.sub(r, d.mul(t, b))
    return q if r == 0 and d.equal(d.mul(q, b), a) else None


def exact_div(a: Dim, b: Dim) -> Dim:
    """a / b when the division is exact (for ints, or as polynomials); None otherwise."""
    if a is None or b is None or b == 0:
        return None
    if isinstance(a, int) and isinstance(b, int):
        return a // b if a % b == 0 else None
    if isinstance(b, int):
        if b < 0:
            a, b = d.neg(a), -b
        q = d.floordiv(a, b)
        return q if d.equal(d.mul(q, b), a) else None
    return _poly_div(a, b)


def div_valid(a: Dim, b: int) -> Dim:
    """a / b for a positive int b that a valid model divides a by: exact, or floor(a / b)."""
    q = exact_div(a, b)
    return q if q is not None else d.floordiv(a, b)
