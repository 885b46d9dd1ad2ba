"""Conditions on input dims: what a shape rule needs of the sizes a model is fed, proved, never tried.

A shape rule that compares two dims it cannot prove equal or different (a Concat's upsampled branch
`2*floor((height + 31)/32)` against its skip branch `floor((height + 15)/16)`, a traced Reshape target `1` against
`batch`) goes on under the assumption that they agree; the assumption is a `Condition` on the model's input dims.
Here a condition over one symbol is solved exactly: its two sides' difference `g(s)` is shown periodic or linear
symbolically (`g(s + L) - g(s)` is a constant for L the lcm of the floor divisors in it), so its values over one
period decide every size, and the solutions are a set of residues modulo a period plus finitely many values. A
condition over several symbols is kept as its equation. Symbols are dims, at least 1 (the shape engine's
assumption).
"""

from __future__ import annotations

from math import gcd

from graphlsp.frozen import Frozen
from graphlsp.infer import dims as d
from graphlsp.infer.dims import Atom, Dim, Expr

MAX_PERIOD = 4096  # a condition whose period is longer is not solved (it is kept as its equation)
MAX_SPAN = 1 << 16  # sizes checked one by one below a min/max's turning point, at most
BIG = 1 << 40  # sizes beyond this are not considered when locating a min/max's turning point


class Condition(Frozen):
    """`a == b`; with `broadcast`, `a == b or a == 1 or b == 1` (numpy broadcasting of one dim pair); with
    `at_most`, `a <= b` (indices a Range makes, below the dim they index). With `others`, a disjunction: this
    relation or any of theirs (an op library's `require B == 1 or S == 1 or P == 0`)."""

    __slots__ = ("a", "b", "broadcast", "at_most", "others")

    a: Dim
    b: Dim
    broadcast: bool
    at_most: bool
    others: tuple[Condition, ...]

    def __init__(
        self,
        a: Dim,
        b: Dim,
        broadcast: bool = False,
        at_most: bool = False,
        others: tuple[Condition, ...] = (),
    ) -> None:
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "b", b)
        object.__setattr__(self, "broadcast", broadcast)
        object.__setattr__(self, "at_most", at_most)
        object.__setattr__(self, "others", others)

    def __repr__(self) -> str:
        return (f"Condition(a={self.a!r}, b={self.b!r}, broadcast={self.broadcast!r}, at_most={self.at_most!r}, "
                f"others={self.others!r})")  # fmt: skip

    def _key(self) -> tuple[object, ...]:
        return (self.a, self.b, self.broadcast, self.at_most, self.others)

    def __eq__(self, other: object) -> bool:
        if type(other) is not Condition:
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def alternatives(self) -> tuple[Condition, ...]:
        """The relations of a disjunction, each without `others` (a plain condition: itself alone)."""
        if not self.others:
            return (self,)
        return (Condition(self.a, self.b, self.broadcast, self.at_most), *self.others)

    def symbols(self) -> set[str]:
        out: set[str] = set()
        for x in (self.a, self.b):
            if isinstance(x, Expr):
                out |= x.symbols()
        for c in self.others:
            out |= c.symbols()
        return out

    def equation(self) -> str:
        if self.others:
            return " or ".join(c.equation() for c in self.alternatives())
        if self.at_most:
            return f"{d.to_str(self.a)} <= {d.to_str(self.b)}"
        eq = f"{d.to_str(self.a)} = {d.to_str(self.b)}"
        if not self.broadcast:
            return eq
        return f"{d.to_str(self.a)} and {d.to_str(self.b)} broadcast (equal, or one of them 1)"


class Solution(Frozen):
    """The sizes s >= 1 of one symbol that satisfy a condition: those s >= `start` with `s % period in residues`,
    and the finitely many `values`. period 0 means no periodic part."""

    __slots__ = ("period", "residues", "values", "start")

    period: int
    residues: frozenset[int]
    values: frozenset[int]
    start: int

    def __init__(
        self,
        period: int,
        residues: frozenset[int],
        values: frozenset[int],
        start: int = 1,
    ) -> None:
        object.__setattr__(self, "period", period)
        object.__setattr__(self, "residues", residues)
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "start", start)

    def __repr__(self) -> str:
        return (
            f"Solution(period={self.period!r}, residues={self.residues!r}, values={self.values!r}, "
            f"start={self.start!r})"
        )

    def __eq__(self, other: object) -> bool:
        if type(other) is not Solution:
            return NotImplemented
        mine = (self.period, self.residues, self.values, self.start)
        theirs = (other.period, other.residues, other.values, other.start)
        return mine == theirs

    def __hash__(self) -> int:
        return hash((self.period, self.residues, self.values, self.start))

    def holds_always(self) -> bool:
        if not self.period or len(self.residues) != self.period:
            return False
        return all(v in self.values for v in range(1, self.start))

    def never(self) -> bool:
        return not (self.period and self.residues) and not self.values

    def contains(self, s: int) -> bool:
        return (self.period >= 1 and s >= self.start and s % self.period in self.residues) or s in self.values

    def counterexample(self) -> int | None:
        """A size at which the condition fails (None when it always holds): the least one from one period on,
        as a size people feed (height 48, not 1), else the least. One exists among the first start + 2 * period +
        len(values) + 2 sizes from wherever the search starts, so the search is that long at most."""
        if self.holds_always():
            return None
        window = self.start + 2 * self.period + len(self.values) + 2
        for lo in ((self.period, 1) if self.period > 1 else (1,)):
            found = next((s for s in range(lo, lo + window) if not self.contains(s)), None)
            if found is not None:
                return found
        return None

    def union(self, other: Solution) -> Solution | None:
        a, b = self, other
        if a.period and b.period:
            first = max(a.start, b.start)
            if first > MAX_SPAN:
                return None
            low = frozenset(s for s in range(min(a.start, b.start), first) if a.contains(s) or b.contains(s))
            p = a.period * b.period // gcd(a.period, b.period)
            if p > MAX_PERIOD:
                return None
            res = frozenset(r for r in range(p) if r % a.period in a.residues or r % b.period in b.residues)
            out = Solution(p, res, frozenset(), first)
            values = low | a.values | b.values
        else:
            if not a.period:
                a, b = b, a
            out = Solution(a.period, a.residues, frozenset(), a.start)
            values = a.values | b.values
        return _simplest(Solution(out.period, out.residues, frozenset(v for v in values if not out.contains(v)),
                                  out.start))

    def intersection(self, other: Solution) -> Solution | None:
        """The sizes both allow (None when the result's period or its start would be too large to list)."""
        a, b = self, other
        if a.period and b.period:
            first = max(a.start, b.start)
            p = a.period * b.period // gcd(a.period, b.period)
            if first > MAX_SPAN or p > MAX_PERIOD:
                return None
            res = frozenset(r for r in range(p) if r % a.period in a.residues and r % b.period in b.residues)
            out = Solution(p, res, frozenset(), first)
            candidates = set(range(1, first)) | a.values | b.values
        else:
            out = Solution(0, frozenset(), frozenset())
            candidates = set(a.values) | set(b.values)
        values = frozenset(v for v in candidates if a.contains(v) and b.contains(v) and not out.contains(v))
        return _simplest(Solution(out.period, out.residues, values, out.start))

    def describe(self, name: str) -> str:
        """`height must be a multiple of 32`, `batch must be 1`, `sequence_length must be at most 128`."""
        parts: list[str] = []
        values, start = set(self.values), self.start
        if self.period == 1 and self.residues == frozenset({0}):
            while start - 1 in values:  # every size from `start` on, and the run just below it: one range
                start -= 1
                values.discard(start)
        if self.period:
            at = f" (from {start})" if start > 1 else ""
            if self.residues == frozenset({0}):
                parts.append(f"{name} must be a multiple of {self.period}{at}" if self.period > 1 else
                             f"{name} must be at least {start}")
            else:
                parts.append(f"{name} % {self.period} must be {_ranges(sorted(self.residues))}{at}")
        if values:
            vs = sorted(values)
            if vs[0] == 1 and vs[-1] == len(vs) > 2:  # 1, 2, ..., n
                parts.append(f"{name} must be at most {vs[-1]}")
            else:
                parts.append(f"{name} must be {_ranges(vs)}")
        if not parts:
            return f"no size of {name} satisfies it"
        return ", or ".join(parts)


def _ranges(xs: list[int]) -> str:
    runs: list[tuple[int, int]] = []
    for x in xs:
        if runs and runs[-1][1] == x - 1:
            runs[-1] = (runs[-1][0], x)
        else:
            runs.append((x, x))
    return " or ".join(str(a) if a == b else f"{a} or {b}" if b == a + 1 else f"{a}-{b}" for a, b in runs)


def _simplest(sol: Solution) -> Solution:
    """The same set with the shortest period (residues {0, 16} mod 32 are {0} mod 16)."""
    p = sol.period
    if p and not sol.residues:
        return Solution(0, frozenset(), sol.values)
    if p <= 1:
        return sol
    for q in sorted(x for x in range(1, p) if p % x == 0):
        lifted = frozenset(r for r in range(p) if r % q in {x % q for x in sol.residues})
        if lifted == sol.residues:
            res = frozenset(r % q for r in sol.residues)
            out = Solution(q, res, frozenset(), sol.start)
            return Solution(q, res, frozenset(v for v in sol.values if not out.contains(v)), sol.start)
    return sol


def _walk(x: Dim, atoms: list[Atom]) -> None:
    """Every atom of x, arguments before the atom that holds them."""
    if not isinstance(x, Expr):
        return
    for mono, _ in x.poly:
        for atom in mono:
            for arg in atom.args:
                _walk(arg, atoms)
            atoms.append(atom)


def replace_atom(x: Dim, target: Atom, choice: Dim) -> Dim:
    """x with the atom `target` (wherever it occurs, also inside floors, mins and maxes) replaced by `choice`,
    rebuilt canonically: a min/max by one of its arguments here, a symbol by what a relation says it is in
    infer/declared.py."""
    if not isinstance(x, Expr):
        return x
    out: Dim = 0
    for mono, coeff in x.poly:
        term: Dim = coeff
        for atom in mono:
            if atom is target:
                v = choice
            elif atom.kind == "sym":
                v = d.symbol_of(atom)
            else:
                a, b = (replace_atom(arg, target, choice) for arg in atom.args)
                v = d.floordiv(a, b) if atom.kind == "floor" else d.minimum(a, b) if atom.kind == "min" \
                    else d.maximum(a, b)  # fmt: skip
            term = d.mul(term, v)
        out = d.add(out, term)
    return out


def _direction(x: Dim) -> int:
    """1 if x never decreases as its symbol grows, -1 if it never increases, 0 if that is not shown."""
    if isinstance(x, int):
        return 1
    if x is None:
        return 0
    signs = set()
    for mono, coeff in x.poly:
        if not mono:
            continue
        if len(mono) != 1:
            return 0
        inner = _atom_direction(mono[0])
        if inner == 0:
            return 0
        signs.add(inner * (1 if coeff > 0 else -1))
    return signs.pop() if len(signs) == 1 else (1 if not signs else 0)


def _atom_direction(atom: Atom) -> int:
    if atom.kind == "sym":
        return 1
    if atom.kind == "floor":
        return _direction(atom.args[0])
    a, b = (_direction(arg) for arg in atom.args)
    return a if a == b else 0


def _at(x: Dim, s: Expr, v: int) -> int | None:
    if len(s.poly) == 1 and len(s.poly[0][0]) == 1 and s.poly[0][0][0].kind == "sym" and s.poly[0][1] == 1:
        return d.value_at(x, {s.poly[0][0][0].name: v})  # integers: no expression rebuilt per size
    got = d.replace(x, s, v)
    return got if isinstance(got, int) else None


def _crossing(diff: Dim, s: Expr, lo: int, hi: int | None) -> int | None:
    """For a monotone `diff`, the least size in [lo, hi] where its sign differs from its sign at lo (hi + 1 or
    None when it never does); -1 when not shown."""
    way = _direction(diff)
    first = _at(diff, s, lo)
    if way == 0 or first is None:
        return -1
    top = hi if hi is not None else BIG

    def flipped(v: int) -> bool | None:
        got = _at(diff, s, v)
        return None if got is None else (got > 0) != (first > 0)

    at_top = flipped(top)
    if at_top is None:
        return -1  # past int64 somewhere: not shown
    if not at_top:
        return None if hi is None else hi + 1
    a, b = lo, top  # flipped(b), not flipped(a)
    while b - a > 1:
        m = (a + b) // 2
        got = flipped(m)
        if got is None:
            return -1
        if got:
            b = m
        else:
            a = m
    return b


def _solve_range(g: Dim, s: Expr, lo: int, hi: int | None, depth: int = 0, ge: bool = False) -> Solution | None:
    """The sizes in [lo, hi] (hi None: unbounded) where g is 0 (with `ge`: where g >= 0)."""
    atoms: list[Atom] = []
    _walk(g, atoms)
    minmax = next((a for a in atoms if a.kind in ("min", "max")), None)
    if minmax is not None:
        if depth > 8:
            return None
        x, y = minmax.args
        t = _crossing(d.sub(x, y), s, lo, hi)
        if t == -1:
            return None
        # where x - y <= 0 min is x and max is y; the sign at lo holds up to t - 1
        first = _at(d.sub(x, y), s, lo)
        assert first is not None
        low_choice = (x if first <= 0 else y) if minmax.kind == "min" else (y if first <= 0 else x)
        high_choice = y if low_choice is x else x
        if t is None or (hi is not None and t > hi):
            return _solve_range(replace_atom(g, minmax, low_choice), s, lo, hi, depth + 1, ge)
        below = _solve_range(replace_atom(g, minmax, low_choice), s, lo, t - 1, depth + 1, ge)
        above = _solve_range(replace_atom(g, minmax, high_choice), s, t, hi, depth + 1, ge)
        if below is None or above is None:
            return None
        return below.union(above)
    if hi is not None:
        if hi - lo > MAX_SPAN:
            return None
        values = set()
        for v in range(lo, hi + 1):
            got = _at(g, s, v)
            if got is None:
                return None
            if got == 0 or (ge and got > 0):
                values.add(v)
        return Solution(0, frozenset(), frozenset(values))
    return _solve_periodic(g, s, lo, ge)


def _solve_periodic(g: Dim, s: Expr, lo: int, ge: bool = False) -> Solution | None:
    """The sizes >= lo where g (floors of the symbol, no min or max) is 0 (with `ge`: >= 0): g(s + L) - g(s) is
    shown constant, so g(r + k*L) = g(r) + k*step decides every size from the values over one period."""
    if isinstance(g, int):
        return Solution(1, frozenset({0}) if g == 0 or (ge and g > 0) else frozenset(), frozenset(), lo)
    dens: list[int] = []
    for atom in _collect(g, []):
        if atom.kind == "floor":
            den = atom.args[1]
            assert isinstance(den, int)
            dens.append(den)
    period = 1
    for x in dens:
        period = period * x // gcd(period, x)
        if period > MAX_PERIOD:
            return None
    step = d.sub(d.replace(g, s, d.add(s, period)), g)
    if not isinstance(step, int):
        return None  # not periodic, not linear (a product of the symbol with itself)
    residues: set[int] = set()
    values: set[int] = set()
    start = lo
    for r in range(lo, lo + period):
        v = _at(g, s, r)
        if v is None:
            return None
        if step == 0:
            if v == 0 or (ge and v > 0):
                residues.add(r % period)
        elif not ge:
            if -v % step == 0 and -v // step >= 0:
                values.add(r + (-v // step) * period)
        elif step < 0:  # g falls: sizes r + k*L with k <= v / -step
            count = v // -step + 1 if v >= 0 else 0
            if len(values) + count > MAX_SPAN:
                return None
            values.update(r + k * period for k in range(count))
        else:  # g grows: every size r + k*L from k >= ceil(-v / step) on
            k0 = max(0, -(v // step)) if v < 0 else 0
            start = max(start, r + k0 * period)
    if ge and step > 0:
        if start > MAX_SPAN:
            return None
        below = frozenset(x for x in range(lo, start) if (got := _at(g, s, x)) is not None and got >= 0)
        return _simplest(Solution(1, frozenset({0}), below, start))
    if step != 0:
        return Solution(0, frozenset(), frozenset(values))
    return _simplest(Solution(period, frozenset(residues), frozenset(), lo))


def _collect(g: Dim, atoms: list[Atom]) -> list[Atom]:
    _walk(g, atoms)
    return atoms


def solve_equal(a: Dim, b: Dim, name: str, lo: int = 1, at_most: bool = False) -> Solution | None:
    """The sizes >= lo of symbol `name` at which a == b (with `at_most`: a <= b), when a and b depend on that symbol
    alone; None when not proved."""
    g = d.sub(b, a)
    if g is None:
        return None
    if isinstance(g, int):
        ok = g == 0 or (at_most and g > 0)
        return Solution(1, frozenset({0}) if ok else frozenset(), frozenset(), lo)
    s = d.symbol(name)
    if g.symbols() != {name} or s.symbols() != {name} or len(s.poly) != 1:
        return None  # another symbol, or a name that reads as an expression (`N+1`)
    return _solve_range(g, s, lo, None, ge=at_most)


def _positive_from(x: Dim, s: Expr) -> int | None:
    """The least size from which x is at least 1 for good (x never decreasing), 1 if that is not shown."""
    if isinstance(x, int):
        return 1 if x >= 1 else None
    if _direction(x) != 1:
        return 1
    t = _crossing(x, s, 1, None)  # whether x > 0 (x >= 1) at 1 holds up to t - 1
    first = _at(x, s, 1)
    if first is None or t == -1:
        return 1
    if first >= 1:
        return 1
    return t


def reduced(cond: Condition) -> Condition:
    """An equality with the symbols and the integer factor common to both sides divided out (symbols are at least
    1, so `6*batch*h*w = 6*h*w` holds exactly when `batch = 1`); a broadcast condition or a disjunction as it
    is."""
    if cond.broadcast or cond.others or cond.at_most or not isinstance(cond.a, Expr) \
            or not isinstance(cond.b, Expr | int):
        return cond
    g = d.sub(cond.a, cond.b)
    if not isinstance(g, Expr):
        return cond
    common: list[Atom] | None = None
    for mono, _ in g.poly:
        syms = [a for a in mono if a.kind == "sym"]
        if common is None:
            common = syms
        else:
            left = list(syms)
            kept = []
            for atom in common:
                if atom in left:
                    left.remove(atom)
                    kept.append(atom)
            common = kept
    k = gcd(*(c for _, c in g.poly))
    if not common and k <= 1:
        return cond
    a: dict[tuple[Atom, ...], int] = {}
    b: dict[tuple[Atom, ...], int] = {}
    for mono, c in g.poly:
        rest = list(mono)
        for sym in common or ():
            rest.remove(sym)
        (a if c > 0 else b)[tuple(rest)] = abs(c) // k
    side_a, side_b = _poly_dim(a), _poly_dim(b)
    return Condition(side_a, side_b) if side_a is not None and side_b is not None else cond


def _poly_dim(poly: dict[tuple[Atom, ...], int]) -> Dim:
    out: Dim = 0
    for mono, c in poly.items():
        term: Dim = c
        for atom in mono:
            term = d.mul(term, d.symbol_of(atom) if atom.kind == "sym" else _atom_dim(atom))
        out = d.add(out, term)
    return out


def _atom_dim(atom: Atom) -> Dim:
    x, y = atom.args
    return d.floordiv(x, y) if atom.kind == "floor" else d.minimum(x, y) if atom.kind == "min" else d.maximum(x, y)


def solve(cond: Condition, name: str) -> Solution | None:
    """The sizes of `name` satisfying `cond` (a condition over that symbol alone), or None when not proved.

    Sizes at which a side is below 1 are taken to satisfy it: there the model is degenerate (an empty or
    negative dim, where runtimes truncate and go on, or fail before this node), and nothing is claimed of them;
    except for a positive constant at most such a side (a kernel within its padded input), which fails there."""
    if cond.others:
        out: Solution | None = None
        for alt in cond.alternatives():
            if not alt.symbols():
                continue  # a relation of constants (the library dropped those it could decide)
            sides = (alt.a, alt.b)
            if not alt.at_most and not alt.broadcast and any(isinstance(x, int) and x < 1 for x in sides):
                one: Solution | None = Solution(0, frozenset(), frozenset())  # a dim (at least 1) is never 0
            else:
                one = solve(alt, name)
            if one is None:
                return None
            out = one if out is None else out.union(one)
            if out is None:
                return None
        return out
    s = d.symbol(name)
    starts = [_positive_from(x, s) for x in (cond.a, cond.b)]
    if any(v is None for v in starts):
        return None
    lo = max(v for v in starts if v is not None)
    if lo > MAX_SPAN:
        return None
    sol = solve_equal(cond.a, cond.b, name, lo, cond.at_most)
    if sol is not None and cond.broadcast:
        for x in (cond.a, cond.b):
            one = solve_equal(x, 1, name, lo)
            sol = sol.union(one) if one is not None else None
            if sol is None:
                return None
    if sol is None or lo == 1 or cond.at_most and isinstance(cond.a, int) and cond.a >= 1:
        return sol  # (a positive constant at most a side below 1: the relation fails there, nothing degenerate)
    return sol.union(Solution(0, frozenset(), frozenset(range(1, lo))))
