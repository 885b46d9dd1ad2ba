"""Shape algebra: merge and relax (TensorFlow's InferenceContext contracts), broadcasting, and symbol unification.

merge(a, b) combines two views of the same shape and keeps the more precise information; it fails when they
contradict. relax(a, b) is the most precise shape both are instances of. When a merge equates two different
symbols, the equality goes into a `Unifier` (a union-find with deterministic representatives); broadcasting
never equates symbols. Every relation a merge or a broadcast assumes without proof (two dims that must agree, or
broadcast) is noted in the unifier as a `Condition` on the input dims, for the refiner to give to the node.
"""

from __future__ import annotations

from graphlsp.infer import dims as d
from graphlsp.infer.conditions import Condition
from graphlsp.infer.dims import Dim, Expr
from graphlsp.infer.types import Shape


class MergeError(ValueError):
    """The two shapes contradict; `index` is the first dim that does (-1 for the rank)."""

    def __init__(self, message: str, index: int = -1) -> None:
        super().__init__(message)
        self.index = index


class Unifier:
    """Equalities between symbols learned from merges. Representatives are chosen by `rank` (lower wins; the
    graph inputs' symbols are ranked first), then by name, so the result does not depend on visiting order."""

    def __init__(self, rank: dict[str, int] | None = None) -> None:
        self.parent: dict[Expr, Expr] = {}
        self.rank = rank or {}
        self.unions = 0  # how many equalities were learned (the refiner tracks which node learned them)
        self.conditions: list[Condition] = []  # relations assumed without proof, newest last (see the refiner)
        self.domains: list[Condition] = []  # relations within which the shapes found are exact (see the refiner)

    def copy(self) -> Unifier:
        other = Unifier(self.rank)
        other.parent = dict(self.parent)
        other.unions = self.unions
        other.conditions = list(self.conditions)
        other.domains = list(self.domains)
        return other

    def find(self, x: Expr) -> Expr:
        root = x
        while root in self.parent:
            root = self.parent[root]
        while x in self.parent and self.parent[x] is not root:
            self.parent[x], x = root, self.parent[x]
        return root

    def _order(self, x: Expr) -> tuple[int, str]:
        names = x.symbols()
        best = min((self.rank.get(n, 1 << 30) for n in names), default=1 << 30)
        return best, x.key

    def union(self, a: Expr, b: Expr) -> Expr:
        ra, rb = self.find(a), self.find(b)
        if ra is rb:
            return ra
        if self._order(rb) < self._order(ra):
            ra, rb = rb, ra
        self.parent[rb] = ra
        self.unions += 1
        return ra

    def require(self, a: Dim, b: Dim, broadcast: bool = False, at_most: bool = False) -> None:
        """Note that the shapes hold only when a == b (with `broadcast`: when a and b broadcast; with `at_most`:
        when a <= b)."""
        if a is not None and b is not None:
            self.conditions.append(Condition(a, b, broadcast, at_most))

    def exact_within(self, a: Dim, b: Dim) -> None:
        """Note that the shapes found are exact only when a <= b (a failure nowhere: no condition)."""
        if a is not None and b is not None:
            self.domains.append(Condition(a, b, at_most=True))

    def require_any(self, alternatives: list[Condition]) -> None:
        """Note that the shapes hold only when one of the relations does (an op library's `require A or B`)."""
        if len(alternatives) == 1:
            self.conditions.append(alternatives[0])
        elif alternatives:
            first, *rest = alternatives
            self.conditions.append(Condition(first.a, first.b, first.broadcast, first.at_most, tuple(rest)))

    def canonical(self, x: Dim) -> Dim:
        return self.find(x) if isinstance(x, Expr) else x


def merge_dim(a: Dim, b: Dim, unifier: Unifier | None = None) -> Dim:
    if a is None:
        return b
    if b is None:
        return a
    same = d.equal(a, b)
    if same:
        return a
    if same is False:
        raise MergeError(f"{d.to_str(a)} != {d.to_str(b)}")
    # Unknown relation: one side is a known int, or two different expressions.
    if unifier is not None:
        unifier.require(a, b)
    if isinstance(a, int):
        return a
    if isinstance(b, int):
        return b
    assert isinstance(a, Expr) and isinstance(b, Expr)
    if unifier is not None:
        return unifier.union(a, b)
    return a


def merge(a: Shape, b: Shape, unifier: Unifier | None = None) -> Shape:
    """[2,?] merge [?,2] = [2,2]; [2,2] and [1,2] do not merge (MergeError)."""
    if a is None:
        return b
    if b is None:
        return a
    if len(a) != len(b):
        raise MergeError(f"rank {len(a)} != rank {len(b)}")
    out = []
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        try:
            out.append(merge_dim(x, y, unifier))
        except MergeError as e:
            raise MergeError(str(e), i) from None
    return tuple(out)


def relax_dim(a: Dim, b: Dim) -> Dim:
    return a if d.equal(a, b) else None


def relax(a: Shape, b: Shape) -> Shape:
    """[2,?],[?,2] = [?,?]; [2,2],[3,2] = [?,2]; [2,2],[1,2,3] = unknown rank."""
    if a is None or b is None or len(a) != len(b):
        return None
    return tuple(relax_dim(x, y) for x, y in zip(a, b, strict=True))


def broadcast_dim(a: Dim, b: Dim, unifier: Unifier | None = None) -> Dim:
    """Numpy broadcasting of one dim pair; raises MergeError for two different known sizes, neither 1. Where the
    result rests on an unproved relation, the unifier (when given) notes it as a condition."""
    if a == 1:
        return b
    if b == 1:
        return a
    same = d.equal(a, b)
    if same:
        return a
    if isinstance(a, int) and isinstance(b, int):
        raise MergeError(f"{a} and {b} do not broadcast")
    if unifier is not None:
        unifier.require(a, b, broadcast=True)
    # A known size > 1 against a symbol: the symbol must be 1 or equal, so the result is the known size.
    if isinstance(a, int) and a > 1:
        return a
    if isinstance(b, int) and b > 1:
        return b
    if a is None or b is None:
        return None
    for x, y in ((a, b), (b, a)):
        if _one_forces_one(x, y):
            return x
    return None  # two different symbols: never unified by broadcasting


def _one_forces_one(x: Dim, y: Dim) -> bool:
    """Whether x is 1 only where y is 1 too (every symbol a dim, >= 0). Then broadcasting x with y gives x in
    every valid case: x == y gives x, y == 1 gives x, and x == 1 (the only case giving y) gives y == 1 == x.
    `seq` with `min(seq, 128)` (seq = 1 makes it 1), `L` with `max(L, 0)`, `2*floor((H + 31)/32)` (never 1) with
    `floor((H + 15)/16)`."""
    if d.never(x, 1):
        return True
    if not isinstance(x, Expr):
        return False
    forced = [d.replace(y, x, 1)]
    if len(x.poly) <= 2:  # x = s + c for a symbol s: s = 1 - c
        const = sum(c for m, c in x.poly if not m)
        terms = [(m, c) for m, c in x.poly if m]
        if len(terms) == 1 and terms[0][1] == 1 and len(terms[0][0]) == 1 and terms[0][0][0].kind == "sym":
            sym = d.symbol_of(terms[0][0][0])
            forced.append(d.replace(y, sym, 1 - const))
    for v in forced:
        if v == 1:
            return True
        lo, hi = d.bounds(v)
        if lo == 1 and hi == 1:
            return True
    return False


def broadcast(shapes: list[Shape], unifier: Unifier | None = None) -> Shape:
    """Multidirectional broadcasting; raises MergeError (with the dim index from the right) on a conflict."""
    if any(s is None for s in shapes):
        return None
    rank = max((len(s) for s in shapes if s is not None), default=0)
    out: list[Dim] = [1] * rank
    for s in shapes:
        assert s is not None
        offset = rank - len(s)
        for i, x in enumerate(s):
            try:
                out[offset + i] = broadcast_dim(out[offset + i], x, unifier)
            except MergeError as e:
                raise MergeError(str(e), offset + i) from None
    return tuple(out)
