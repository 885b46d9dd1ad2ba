"""Dimensions: a known int, a symbolic expression (`Expr`), or unknown (None).

An `Expr` is a canonical integer polynomial over atoms. An atom is a symbol (a dim_param such as `batch`), or
`floor(E / d)` with d a positive int, or `min`/`max` of two expressions. Canonical means equal expressions have
equal keys, and expressions are interned, so `2*N+10` and `2*(N+5)` are the same object. Ceil-division and
modulo are rewritten through floor (`ceil(E/d) = floor((E + d - 1)/d)`, `E % d = E - d*floor(E/d)`), and floors of
floors fold: `floor((floor(E/a) + c)/b) = floor((E + a*c)/(a*b))`, so five stacked stride-2 convolutions on H
give one floor, `floor((H + 31)/32)`. Equality is three-valued: True, False or None (unknown); nothing is
ever guessed. Expressions past a size cap become unknown.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

MAX_TERMS = 24
MAX_KEY = 240


class Atom:
    """A symbol or an operation the polynomial cannot absorb. Interned; compare by identity."""

    __slots__ = ("kind", "name", "args", "key")

    def __init__(self, kind: str, name: str, args: tuple[Dim, ...], key: str) -> None:
        self.kind = kind  # "sym", "floor", "min", "max"
        self.name = name
        self.args = args
        self.key = key


# A polynomial: ((monomial, coefficient), ...) sorted by monomial key; a monomial is a sorted tuple of atoms.
Mono = tuple[Atom, ...]
Poly = tuple[tuple[Mono, int], ...]


class Expr:
    """A canonical, interned polynomial with at least one non-constant term. Build with the functions below."""

    __slots__ = ("poly", "key", "__weakref__")

    def __init__(self, poly: Poly, key: str) -> None:
        self.poly = poly
        self.key = key

    def __repr__(self) -> str:
        return f"Expr({self.key})"

    def __str__(self) -> str:
        return self.key

    def symbols(self) -> set[str]:
        out: set[str] = set()
        for mono, _ in self.poly:
            for atom in mono:
                _atom_symbols(atom, out)
        return out


Dim = int | Expr | None

_ATOMS: dict[str, Atom] = {}
_EXPRS: dict[str, Expr] = {}


def _atom_symbols(atom: Atom, out: set[str]) -> None:
    if atom.kind == "sym":
        out.add(atom.name)
    for a in atom.args:
        if isinstance(a, Expr):
            out |= a.symbols()


def _mono_key(mono: Mono) -> str:
    return "*".join(a.key for a in mono)


def _atom(kind: str, name: str, args: tuple[Dim, ...], key: str) -> Atom:
    atom = _ATOMS.get(key)
    if atom is None:
        atom = _ATOMS[key] = Atom(kind, name, args, key)
    return atom


def _poly_of(d: int | Expr) -> dict[Mono, int]:
    if isinstance(d, int):
        return {(): d} if d else {}
    return dict(d.poly)


def _render(poly: Poly) -> str:
    parts: list[str] = []
    for mono, coeff in poly:
        if not mono:
            body = str(abs(coeff))
        else:
            body = _mono_key(mono)
            if abs(coeff) != 1:
                body = f"{abs(coeff)}*{body}"
        if not parts:
            parts.append(body if coeff > 0 else f"-{body}")
        else:
            parts.append(f" + {body}" if coeff > 0 else f" - {body}")
    return "".join(parts)


def _make(poly: dict[Mono, int]) -> Dim:
    """The canonical Dim for a polynomial: an int when constant, an interned Expr otherwise, None past the cap."""
    items = [(m, c) for m, c in poly.items() if c]
    if not items:
        return 0
    if len(items) == 1 and not items[0][0]:
        return items[0][1]
    if len(items) > MAX_TERMS:
        return None
    # non-constant terms by monomial key, the constant last: `2*N + 10`
    items.sort(key=lambda mc: (not mc[0], _mono_key(mc[0])))
    frozen: Poly = tuple(items)
    key = _render(frozen)
    if len(key) > MAX_KEY:
        return None
    expr = _EXPRS.get(key)
    if expr is None:
        expr = _EXPRS[key] = Expr(frozen, key)
    return expr


def symbol(name: str) -> Expr:
    """A dim_param as a symbol; a name that is an arithmetic expression (`M+1`, `2*N`) becomes that expression."""
    expr = _EXPRS.get(name)
    if expr is not None:
        return expr
    parsed = _parse(name)
    if isinstance(parsed, Expr):
        return parsed
    key = name if name.isidentifier() else f'"{name}"'
    atom = _atom("sym", name, (), key)
    result = _make({(atom,): 1})
    assert isinstance(result, Expr)
    return result


def _parse(text: str) -> Dim:
    """`M+1`, `2*(N+5)`, `N//2` as expressions over symbols; anything else (or a bare name) is not parsed."""
    if text.isidentifier():
        return None
    try:
        tree = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError):
        return None

    def walk(node: ast.AST) -> Dim:
        if isinstance(node, ast.Name):
            return symbol(node.id)
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return neg(walk(node.operand))
        if isinstance(node, ast.BinOp):
            a, b = walk(node.left), walk(node.right)
            if isinstance(node.op, ast.Add):
                return add(a, b)
            if isinstance(node.op, ast.Sub):
                return sub(a, b)
            if isinstance(node.op, ast.Mult):
                return mul(a, b)
            if isinstance(node.op, ast.FloorDiv) and isinstance(b, int):
                return floordiv(a, b)
            if isinstance(node.op, ast.Mod) and isinstance(b, int):
                return mod(a, b)
        raise ValueError(text)

    try:
        return walk(tree)
    except (ValueError, RecursionError):
        return None


# ---- arithmetic (None in, None out)
def add(a: Dim, b: Dim) -> Dim:
    if a is None or b is None:
        return None
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    poly = _poly_of(a)
    for m, c in _poly_of(b).items():
        poly[m] = poly.get(m, 0) + c
    return _make(poly)


def neg(a: Dim) -> Dim:
    if a is None:
        return None
    if isinstance(a, int):
        return -a
    return _make({m: -c for m, c in a.poly})


def sub(a: Dim, b: Dim) -> Dim:
    return add(a, neg(b))


def mul(a: Dim, b: Dim) -> Dim:
    if a is None or b is None:
        return None
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    if a == 0 or b == 0:
        return 0
    pa, pb = _poly_of(a), _poly_of(b)
    if len(pa) * len(pb) > MAX_TERMS * 2:
        return None
    poly: dict[Mono, int] = {}
    for ma, ca in pa.items():
        for mb, cb in pb.items():
            m = tuple(sorted(ma + mb, key=lambda at: at.key))
            poly[m] = poly.get(m, 0) + ca * cb
    return _make(poly)


def floordiv(a: Dim, d: Dim) -> Dim:
    """floor(a / d) for a positive int d (anything else: unknown)."""
    if a is None or not isinstance(d, int) or d <= 0:
        if isinstance(a, int) and isinstance(d, int) and d < 0:
            return a // d
        return None
    if isinstance(a, int):
        return a // d
    if d == 1:
        return a
    poly = dict(a.poly)
    const = poly.pop((), 0)
    if all(c % d == 0 for c in poly.values()):
        # floor((d*k*X + c) / d) = k*X + floor(c / d)
        return add(_make({m: c // d for m, c in poly.items()}), const // d)
    if len(poly) == 1:
        (mono, coeff), = poly.items()
        if coeff == 1 and len(mono) == 1 and mono[0].kind == "floor":
            inner, e = mono[0].args
            if isinstance(e, int):
                # floor((floor(E/e) + c) / d) = floor((E + e*c) / (e*d))
                return floordiv(add(inner, e * const), e * d)
    # keep 0 <= constant < d inside the floor: floor((X + c)/d) = floor((X + c % d)/d) + c // d
    inner_poly = dict(poly)
    if const % d:
        inner_poly[()] = const % d
    inner = _make(inner_poly)
    if inner is None:
        return None
    shown = f"({inner})" if isinstance(inner, Expr) and len(inner.poly) > 1 else str(inner)
    key = f"floor({shown}/{d})"
    atom = _atom("floor", "", (inner, d), key)
    return add(_make({(atom,): 1}), const // d)


def ceildiv(a: Dim, d: Dim) -> Dim:
    """ceil(a / d) = floor((a + d - 1) / d) for a positive int d, so it folds with other floors."""
    if isinstance(d, int) and d > 0:
        return floordiv(add(a, d - 1), d)
    return neg(floordiv(neg(a), d))


def mod(a: Dim, d: Dim) -> Dim:
    if isinstance(a, int) and isinstance(d, int) and d != 0:
        return a % d
    return sub(a, mul(d, floordiv(a, d)))


def _minmax(kind: str, a: Dim, b: Dim) -> Dim:
    if a is None or b is None:
        return None
    if isinstance(a, int) and isinstance(b, int):
        return min(a, b) if kind == "min" else max(a, b)
    diff = sub(a, b)
    if isinstance(diff, int):  # a = b + diff
        return (b if diff >= 0 else a) if kind == "min" else (a if diff >= 0 else b)
    x, y = sorted((a, b), key=lambda v: str(v))
    atom = _atom(kind, "", (x, y), f"{kind}({x}, {y})")
    return _make({(atom,): 1})


def minimum(a: Dim, b: Dim) -> Dim:
    return _minmax("min", a, b)


def maximum(a: Dim, b: Dim) -> Dim:
    return _minmax("max", a, b)


def product(dims: Iterable[Dim]) -> Dim:
    out: Dim = 1
    for d in dims:
        out = mul(out, d)
    return out


# ---- comparison
def equal(a: Dim, b: Dim) -> bool | None:
    """True if a and b are the same dimension, False if they differ, None if that is not known."""
    if a is None or b is None:
        return None
    if a is b:
        return True
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    diff = sub(a, b)
    if isinstance(diff, int):
        return diff == 0
    return None


def is_known(d: Dim) -> bool:
    return isinstance(d, int)


def to_str(d: Dim) -> str:
    return "?" if d is None else str(d)


def to_json(d: Dim) -> int | str | None:
    """A dim in the `shapes` JSON: int, symbol or expression text, or null."""
    if d is None or isinstance(d, int):
        return d
    return d.key
