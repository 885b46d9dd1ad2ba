"""The condition solver against brute force: every size it says satisfies a condition does, and every other fails."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from graphlsp.infer import dims as d
from graphlsp.infer.conditions import Condition, reduced, solve

H = d.symbol("height")
N = 400  # sizes checked one by one


def holds(cond: Condition, name: str, v: int) -> bool | None:
    """The condition at one size, by evaluation; None where a side is below 1 (degenerate: nothing claimed)."""
    s = d.symbol(name)
    a, b = d.replace(cond.a, s, v), d.replace(cond.b, s, v)
    assert isinstance(a, int) and isinstance(b, int)
    if a < 1 or b < 1:
        return None
    if cond.at_most:
        return a <= b
    return a == b or (cond.broadcast and 1 in (a, b))


def agrees(cond: Condition, name: str = "height") -> None:
    sol = solve(cond, name)
    assert sol is not None
    for v in range(1, N):
        truth = holds(cond, name, v)
        if truth is not None:
            assert sol.contains(v) == truth, (cond.equation(), v, sol)
    cex = sol.counterexample()
    if cex is not None:
        assert holds(cond, name, cex) is False


def up(x: d.Dim, stride: int) -> d.Dim:
    """A stride-s conv with padding (k=3, p=1): floor((x - 1)/s) + 1."""
    return d.add(d.floordiv(d.sub(x, 1), stride), 1)


def test_fpn_concat_is_periodic_in_32() -> None:
    p5 = H
    for _ in range(5):
        p5 = up(p5, 2)
    p4 = H
    for _ in range(4):
        p4 = up(p4, 2)
    cond = Condition(d.mul(p5, 2), p4)
    sol = solve(cond, "height")
    assert sol is not None and sol.period == 32
    assert sol.contains(64) and sol.contains(96) and not sol.contains(48) and not sol.contains(80)
    assert sol.describe("height") == "height % 32 must be 0 or 17-31"
    agrees(cond)


def test_position_table_bounds_the_length() -> None:
    cond = Condition(H, d.minimum(128, H), broadcast=True)
    sol = solve(cond, "height")
    assert sol is not None and sol.describe("height") == "height must be at most 128"
    assert sol.counterexample() == 129
    agrees(cond)


def test_traced_reshape_pins_one_size() -> None:
    w = d.symbol("width")
    cond = reduced(Condition(d.mul(d.mul(6, H), w), d.mul(6, w)))
    assert cond.symbols() == {"height"}
    sol = solve(cond, "height")
    assert sol is not None and sol.period == 0 and sol.values == frozenset({1})
    assert sol.describe("height") == "height must be 1"


def test_never_and_always() -> None:
    never = solve(Condition(H, d.mul(2, H)), "height")
    assert never is not None and never.never() and never.counterexample() == 1
    always = solve(Condition(d.mul(2, d.floordiv(H, 2)), d.sub(H, d.mod(H, 2))), "height")
    assert always is not None and always.holds_always()


def test_degenerate_sizes_are_not_claimed() -> None:
    x = d.sub(d.floordiv(H, 20), 1)  # below 1 under 40: there the model is degenerate
    sol = solve(Condition(x, d.maximum(0, x), broadcast=True), "height")
    assert sol is not None and sol.holds_always()


def test_other_symbols_are_not_solved() -> None:
    assert solve(Condition(H, d.symbol("width")), "height") is None
    assert solve(Condition(d.mul(H, H), 16), "height") is None  # not periodic, not linear: not claimed


STRIDES = st.sampled_from([1, 2, 3, 4, 8, 16])


@st.composite
def exprs(draw: st.DrawFn, depth: int = 2) -> d.Dim:
    x: d.Dim = H
    for _ in range(draw(st.integers(0, depth))):
        kind = draw(st.sampled_from(["conv", "scale", "shift", "min"]))
        if kind == "conv":
            x = up(x, draw(STRIDES))
        elif kind == "scale":
            x = d.mul(x, draw(st.integers(1, 4)))
        elif kind == "shift":
            x = d.add(x, draw(st.integers(-3, 3)))
        else:
            x = d.minimum(x, draw(st.integers(1, 300)))
    return x


def test_indices_below_a_table() -> None:
    cond = Condition(d.add(H, 3), 64, at_most=True)  # Range(3, height + 3) gathers from 64 rows
    sol = solve(cond, "height")
    assert sol is not None and sol.describe("height") == "height must be at most 61"
    agrees(cond)
    grows = solve(Condition(64, d.mul(2, H), at_most=True), "height")
    assert grows is not None and grows.describe("height") == "height must be at least 32"


@settings(max_examples=200, deadline=None)
@given(exprs(), exprs(), st.sampled_from(["eq", "broadcast", "at_most"]))
def test_solver_matches_brute_force(a: d.Dim, b: d.Dim, kind: str) -> None:
    cond = Condition(a, b, kind == "broadcast", kind == "at_most")
    sol = solve(cond, "height")
    if sol is None:
        return  # not proved: nothing is claimed
    for v in range(1, N):
        truth = holds(cond, "height", v)
        if truth is not None:
            assert sol.contains(v) == truth, (cond.equation(), v, sol)


def test_huge_sizes_stay_cheap() -> None:
    """A solution at a size near 2**62 (a mutated model's dims): its description and a failing size are found
    without listing the sizes below it (a fuzzed model made that a MemoryError)."""
    cond = Condition(d.mul(H, 1 << 20), 1 << 61)  # height = 2**41
    sol = solve(cond, "height")
    assert sol is not None and sol.values == frozenset({1 << 41})
    assert sol.describe("height") == f"height must be {1 << 41}" and sol.counterexample() == 1
    falls = solve(Condition(d.mul(H, 2), 1 << 62, at_most=True), "height")
    assert falls is None  # 2**61 sizes: not listed, not claimed


def test_a_disjunction_holds_where_one_of_its_relations_does() -> None:
    """`S == 1 or 2*floor(S/2) == S or S <= 5` (an op library's `require ... or ...`): the union of the three, by
    evaluation; a relation with a side 0 (`P == 0`) holds at no size of a dim."""
    from graphlsp.infer.witnesses import holds as holds_at

    s = d.symbol("S")
    cond = Condition(s, 1, others=(Condition(d.mul(2, d.floordiv(s, 2)), s), Condition(s, 5, at_most=True),
                                   Condition(s, 0)))  # fmt: skip
    sol = solve(cond, "S")
    assert sol is not None
    for v in range(1, N):
        assert sol.contains(v) == (v == 1 or v % 2 == 0 or v <= 5) == holds_at(cond, {"S": v}), v
    assert sol.counterexample() == 7 and "or" in cond.equation()
    assert reduced(cond) == cond  # no common factor divided out of one alternative (`P == 0` is not `1 == 0`)


def test_a_kernel_within_a_strided_input() -> None:
    """wav2vec2's second conv: kernel 3 within floor(sequence/5) - 1 (below 1 under 10, where the kernel does not
    fit either: a constant at most a side below 1 fails there, nothing degenerate)."""
    x = d.sub(d.floordiv(H, 5), 1)
    sol = solve(Condition(3, x, at_most=True), "height")
    assert sol is not None and sol.describe("height") == "height must be at least 20"
    assert not any(sol.contains(v) for v in range(1, 20)) and all(sol.contains(v) for v in range(20, N))
