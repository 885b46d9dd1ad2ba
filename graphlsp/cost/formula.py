"""Counts as formulas in the input dims: sizes of values, sums without a term cap, evaluation at bound sizes.

A count is a `Dim` of `infer/dims.py` (an int, a canonical expression, or None when unknown), so a node's FLOPs
simplify exactly as shapes do. A model's total adds hundreds of such formulas: `Total` keeps the sum as a
polynomial without the term cap of `dims` (a ResNet's total has a term per feature-map scale), and renders the
same way. `evaluate` gives the number at bound sizes (`--dim`), or None while a symbol is unbound.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction

from graphlsp.infer import dims as d
from graphlsp.infer.dims import Dim, Expr
from graphlsp.infer.types import Shape, TensorType, ValueType

# bits per element of onnx's element types; 0: no fixed size (strings); int4, uint4, float4e2m1 are packed
BITS = {
    1: 32, 2: 8, 3: 8, 4: 16, 5: 16, 6: 32, 7: 64, 8: 0, 9: 8, 10: 16, 11: 64, 12: 32, 13: 64, 14: 64, 15: 128,
    16: 16, 17: 8, 18: 8, 19: 8, 20: 8, 21: 4, 22: 4, 23: 4, 24: 8, 25: 2, 26: 2, 27: 6, 28: 6,
}  # fmt: skip


def numel(shape: Shape) -> Dim:
    """The number of elements of a shape (1 for a scalar), None when the rank or a dim is unknown."""
    return None if shape is None else d.product(shape)


def bytes_of(elem: int | None, count: Dim) -> Dim:
    """Bytes of `count` elements of type `elem`, sub-byte types packed (`ceil(count*bits/8)`)."""
    bits = BITS.get(elem) if elem is not None else None
    if not bits or count is None:
        return None
    if bits % 8 == 0:
        return d.mul(count, bits // 8)
    return d.ceildiv(d.mul(count, bits), 8)


def value_bytes(ty: ValueType) -> Dim:
    """A tensor value's size in bytes; None for a value that is not a tensor or whose size is not known."""
    if not isinstance(ty, TensorType) or ty.sparse:
        return None
    return bytes_of(ty.elem, numel(ty.shape))


def add_all(xs: Iterable[Dim]) -> Dim:
    out: Dim = 0
    for x in xs:
        out = d.add(out, x)
    return out


# ---- evaluation
def evaluate(x: Dim, env: Mapping[str, int]) -> int | None:
    """x at the sizes in `env` (symbol name -> size); None when x is unknown or a symbol is not in env."""
    if x is None or isinstance(x, int):
        return x
    return _poly_value(x.poly, env)


def _poly_value(poly: tuple[tuple[tuple[d.Atom, ...], int], ...], env: Mapping[str, int]) -> int | None:
    total = 0
    for mono, coeff in poly:
        term = coeff
        for atom in mono:
            v = _atom_value(atom, env)
            if v is None:
                return None
            term *= v
        total += term
    return total


def _atom_value(atom: d.Atom, env: Mapping[str, int]) -> int | None:
    if atom.kind == "sym":
        return env.get(atom.name)
    args = [evaluate(a, env) for a in atom.args]
    if any(a is None for a in args):
        return None
    a, b = args
    assert a is not None and b is not None
    if atom.kind == "floor":
        return a // b
    return min(a, b) if atom.kind == "min" else max(a, b)


def symbols_of(x: Dim) -> set[str]:
    return x.symbols() if isinstance(x, Expr) else set()


def to_json(x: Dim) -> int | str | None:
    return d.to_json(x) if isinstance(x, Expr) else x


def show(x: Dim) -> str:
    return "?" if x is None else str(x)


# ---- sums without a term cap
class Total:
    """A sum of formulas: a polynomial over the atoms of `dims`, without its term cap, plus the number of parts
    that were unknown (a total with unknown parts is a lower bound, and says so)."""

    __slots__ = ("poly", "unknown")

    def __init__(self) -> None:
        self.poly: dict[tuple[d.Atom, ...], int] = {}
        self.unknown = 0

    def add(self, x: Dim, times: int = 1) -> None:
        if x is None:
            self.unknown += times
        elif isinstance(x, int):
            if x:
                self.poly[()] = self.poly.get((), 0) + x * times
        else:
            for mono, c in x.poly:
                self.poly[mono] = self.poly.get(mono, 0) + c * times

    def merge(self, other: Total) -> None:
        for mono, c in other.poly.items():
            self.poly[mono] = self.poly.get(mono, 0) + c
        self.unknown += other.unknown

    def _items(self) -> list[tuple[tuple[d.Atom, ...], int]]:
        items = [(m, c) for m, c in self.poly.items() if c]
        items.sort(key=lambda mc: (not mc[0], "*".join(a.key for a in mc[0])))
        return items

    def value(self, env: Mapping[str, int]) -> int | None:
        return _poly_value(tuple(self._items()), env)

    def dim(self) -> Dim:
        """The sum as a `Dim` (None past the term cap of `dims`)."""
        out: Dim = 0
        for mono, c in self._items():
            term: Dim = c
            for atom in mono:
                term = d.mul(term, d.symbol_of(atom) if atom.kind == "sym" else _atom_dim(atom))
            out = d.add(out, term)
        return out

    def symbols(self) -> set[str]:
        out: set[str] = set()
        for mono in self.poly:
            for atom in mono:
                out |= _atom_symbols(atom)
        return out

    def __str__(self) -> str:
        items = self._items()
        if not items:
            return "0"
        parts: list[str] = []
        for mono, c in items:
            body = "*".join(a.key for a in mono) if mono else str(abs(c))
            if mono and abs(c) != 1:
                body = f"{abs(c)}*{body}"
            parts.append((body if c > 0 else f"-{body}") if not parts else (f" + {body}" if c > 0 else f" - {body}"))
        return "".join(parts)


def _atom_dim(atom: d.Atom) -> Dim:
    a, b = atom.args
    if atom.kind == "floor":
        return d.floordiv(a, b)
    return d.minimum(a, b) if atom.kind == "min" else d.maximum(a, b)


def _atom_symbols(atom: d.Atom) -> set[str]:
    if atom.kind == "sym":
        return {atom.name}
    out: set[str] = set()
    for a in atom.args:
        out |= symbols_of(a)
    return out


# ---- polynomials as plain dicts (monomial -> coefficient), for sums updated in place (the live bytes)
Poly = dict[tuple[d.Atom, ...], int]


def poly(x: int | Expr) -> Poly:
    if isinstance(x, int):
        return {(): x} if x else {}
    return dict(x.poly)


_ATOM_BOUNDS: dict[d.Atom, d.Bounds] = {}


def mono_bounds(mono: tuple[d.Atom, ...]) -> d.Bounds:
    """Bounds of a monomial, every symbol a dim (>= 0); the constant monomial is 1."""
    lo: int | None = 1
    hi: int | None = 1
    for atom in mono:
        b = _ATOM_BOUNDS.get(atom)
        if b is None:
            b = _ATOM_BOUNDS[atom] = (0, None) if atom.kind == "sym" else d.bounds(_atom_dim(atom))
        a_lo, a_hi = b
        if a_lo is None or a_lo < 0:
            return None, None
        lo = None if lo is None else lo * a_lo
        hi = None if hi is None or a_hi is None else hi * a_hi
    return lo, hi


# ---- a difference proved non-negative through the floors: floor(E/d) <= E/d
SymPoly = dict[tuple[str, ...], Fraction]  # monomials of symbol names (sorted) -> rational coefficient


def nonnegative(poly: dict[tuple[d.Atom, ...], int]) -> bool:
    """Whether a polynomial is >= 0 for every value of its symbols (each a dim, >= 0), proved by bounding each
    negative term from above (a floor by its quotient, `floor(E/d) <= E/d`, when the floor is >= 0) and each
    positive term with a floor from below by 0, then finding every coefficient of what is left >= 0. Sufficient,
    not necessary: False is "not proved"."""
    out: SymPoly = {}
    for mono, c in poly.items():
        if not c:
            continue
        if all(a.kind == "sym" for a in mono):
            key = tuple(sorted(a.name for a in mono))
            out[key] = out.get(key, Fraction(0)) + c
            continue
        lo, _ = mono_bounds(mono)
        if lo is None or lo < 0:
            return False
        if c > 0:
            continue  # at least 0
        upper = _upper_mono(mono)
        if upper is None:
            return False
        for key, v in upper.items():
            out[key] = out.get(key, Fraction(0)) + c * v
    return all(v >= 0 for v in out.values())


def _upper_mono(mono: tuple[d.Atom, ...]) -> SymPoly | None:
    """An upper bound of a product of non-negative atoms as a polynomial in the symbols, or None."""
    acc: SymPoly = {(): Fraction(1)}
    for atom in mono:
        if atom.kind == "sym":
            part: SymPoly | None = {(atom.name,): Fraction(1)}
        elif atom.kind == "floor":
            inner, den = atom.args
            part = _upper_dim(inner)
            if part is not None:
                assert isinstance(den, int)
                part = {k: v / den for k, v in part.items()}
        else:
            return None
        if part is None or len(acc) * len(part) > 64:
            return None
        nxt: SymPoly = {}
        for ka, va in acc.items():
            for kb, vb in part.items():
                key = tuple(sorted(ka + kb))
                nxt[key] = nxt.get(key, Fraction(0)) + va * vb
        acc = nxt
    return acc


def _upper_dim(x: Dim) -> SymPoly | None:
    """An upper bound of x (a floor's numerator) as a polynomial in the symbols: its negative terms must be
    symbols alone (kept exactly), its positive terms are bounded from above."""
    if x is None:
        return None
    if isinstance(x, int):
        return {(): Fraction(x)}
    out: SymPoly = {}
    for mono, c in x.poly:
        if all(a.kind == "sym" for a in mono):
            key = tuple(sorted(a.name for a in mono))
            out[key] = out.get(key, Fraction(0)) + c
            continue
        lo, _ = mono_bounds(mono)
        if c < 0 or lo is None or lo < 0:
            return None
        upper = _upper_mono(mono)
        if upper is None:
            return None
        for key, v in upper.items():
            out[key] = out.get(key, Fraction(0)) + c * v
    return out


def at_least(a: Dim, b: Dim) -> bool:
    """Whether a >= b is proved for every value of the symbols (each a dim: >= 0)."""
    diff = d.sub(a, b)
    if diff is None:
        return False
    lo, _ = d.bounds(diff)
    return lo is not None and lo >= 0


def human(n: int | None, unit: str = "") -> str:
    """1234567 -> `1.23 M`; bytes in binary units (`MiB`)."""
    if n is None:
        return "?"
    if unit == "B":
        for k, name in ((1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
            if abs(n) >= k:
                return f"{n / k:.2f} {name}"
        return f"{n} B"
    for k, name in ((10**15, "P"), (10**12, "T"), (10**9, "G"), (10**6, "M"), (10**3, "k")):
        if abs(n) >= k:
            return f"{n / k:.2f} {name}{unit}"
    return f"{n}{unit and ' ' + unit}"
