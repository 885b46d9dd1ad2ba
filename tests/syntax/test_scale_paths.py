"""The fast paths that keep cost linear in the input: a run of simple statements is one token whose nodes the lexer
builds (the same tree as the grammar builds token by token), and a long list of numbers is converted to values
once per command, however many layers look at it."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

import graphlsp.syntax.lexer as lexer
import graphlsp.syntax.semantics as sem
import graphlsp.syntax.tree as t
from bench.scale import chain, literal, one_line
from graphlsp.cli import main
from graphlsp.syntax.document import SyntaxDocument
from tests.conftest import example_texts
from tests.syntax.docdump import dump

H = '<ir_version: 10, opset_import: ["" : 21, "com.acme" : 1]>\n'
MIXED = H + """g (float[N] x, float[N] "a b") => (float[N] y, float[N] z) {
  t1 = Relu (x)
  t2, t3 = com.acme.Split2 ("a b")   # a comment between simple statements
  "q r"=Abs(t1)
  t4 = Add (t1, "q r")
  e = Identity ()
  [label] t5 = Neg (t4)
  t6 = Relu (t5)
  t7 = Cast <to = 1> (t6)
  t8 = Relu (t7)
  y = Sigmoid (t8)\tz = Relu (t8)
}
sub (float[N] a) => (float[N] b) {
  b = Relu (a)
  c = Relu (b)
}
"""


def _token_by_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lexer, "SIMPLE_NODE", re.compile(r"(?!)"))  # never matches: the grammar reads every node


@pytest.mark.parametrize("name", ["MIXED", "chain", *sorted(example_texts())])
def test_runs_of_simple_nodes_build_the_tree_the_grammar_builds(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = MIXED if name == "MIXED" else chain(300) if name == "chain" else example_texts()[name]
    fast = SyntaxDocument(text)
    if name == "chain":
        assert len(fast.node_pieces()) == 300
    with monkeypatch.context() as m:
        _token_by_token(m)
        slow = SyntaxDocument(text)
    assert dump(fast) == dump(slow)


def test_an_edit_inside_a_run_reparses_its_statement_alone() -> None:
    doc = SyntaxDocument(chain(50))
    piece = doc.node_pieces()[20]
    report = doc.apply_edit(piece.abs_start, piece.abs_start + 3, "x21b")
    assert report.mode == "incremental" and report.pieces == 1
    assert dump(doc) == dump(SyntaxDocument(doc.text))


@pytest.fixture()
def conversions(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times a list of numbers (tree.Numbers) is converted to values."""
    count = [0]
    numbers_array, numbers_iter = sem.numbers_array, t.Numbers.__iter__

    def counted_array(*a: object, **k: object) -> object:
        count[0] += 1
        return numbers_array(*a, **k)  # type: ignore[arg-type]

    def counted_iter(self: t.Numbers) -> Iterator[t.Literal]:
        count[0] += 1
        return numbers_iter(self)

    monkeypatch.setattr(sem, "numbers_array", counted_array)
    monkeypatch.setattr(t.Numbers, "__iter__", counted_iter)
    return count


@pytest.mark.parametrize("case", ["literal", "line"])
@pytest.mark.parametrize("command", ["check", "shapes", "fold"])
def test_a_long_literal_is_converted_once(case: str, command: str, conversions: list[int], tmp_path: object,
                                          capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    from pathlib import Path

    folder = Path(str(tmp_path))
    path = folder / "m.onnxtxt"
    path.write_text(literal(50_000) if case == "literal" else one_line(50_000))
    args = {"check": ["check", "--no-cache", "--quiet", str(path)], "shapes": ["shapes", str(path)],
            "fold": ["fold", str(path), "-o", str(folder / "out.onnxtxt")]}[command]  # fmt: skip
    assert main(args) <= 1
    assert conversions[0] == 1
