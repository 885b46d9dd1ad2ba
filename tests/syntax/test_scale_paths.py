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
  [] u1 = Relu (t6)
  [ "a, b" ]u2=Relu(u1)
  ["/b.0/Relu"] u3, u4 = com.acme.Split2 (u2)  # a labelled run, as exporters write every node
  [l4] u5 = Add (u3, u4)
  [l5]
  u6 = Relu (u5)
  [l6] u7 = Relu (u6) <alpha: float = 1.0>
  [l7] u8 = Relu # a comment inside
    (u7)
  [c1] k1 = Constant <value: tensor = int64[1] {0}> ()
  [c2] k2 = Constant <value: tensor = float {-1.5}> ()
  k3 = Constant <value: tensor = int64[] {}> ()
  k4 = Constant <value : tensor=int64[2,3]{1,2,3,4,5,6}>()
  c5 = Cast <to: int = 7, perm: ints = [0, -2], f: float = 1e-5, s: string = "a"> (t1)
  c6 = com.acme.T <a = [1, 2], b = 3, c = 2.> (t1)
  c7 = Cast <to: int = 1.5, q: wat = 1, r: ints = [1.5]> (t1)
  c8 = Constant <value: tensor = int64[1.5] {0}> ()
  c10 = Constant <value: tensor = int64[16] {1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16}> ()
  c11 = Constant <value: tensor = int4 {-9}> ()
  c13 = Constant <value: tensor = uint8[2] {1}> ()
  c14 = Constant <v = -0, w: float = 99999999999999999999999999999999999999999999999> ()
  c15 = Relu <alpha: float = - 1> (t1)
  c16 = Relu <float: int = 1, int64: float = 2> (t1)
  c17 = Foo <x: ints = [1, "a"]> (t1)
  c18 = Foo <t: tensor = bool {1, 0}, u: tensor = float16[2, 1] {1e400, -0.5}, v: tensor = string[1] {1}> (t1)
  c19 = Foo <t: tensor = float {inf}, g: int = 9223372036854775808> (t1)
  c20 = Foo <t: tensor = seq(float) {1}> (t1)
  [d1] c21 = Cast <to: int = 1.5, q: wat = 1, r: ints = [1.5]> (t1)
  c22 = Foo <t: tensor = bool {1, 0}, u: tensor = float16[2, 1] {1e400, -0.5}, v: tensor = string[1] {1}> (c21)
  [d3] c23 = Foo <x: ints = [1, "a"]> (t1)
  [d4] k5 = Constant <value: tensor = int64[1] {0}> ()
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


@pytest.mark.parametrize("name", ["MIXED", "chain", "gpt_L24", *sorted(example_texts())])
def test_runs_of_simple_nodes_build_the_tree_the_grammar_builds(name: str, monkeypatch: pytest.MonkeyPatch,
                                                                gpt_l24_text: str) -> None:  # fmt: skip
    text = {"MIXED": MIXED, "gpt_L24": gpt_l24_text}.get(name) or (chain(300) if name == "chain" else
                                                                   example_texts()[name])  # fmt: skip
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


def test_a_run_of_labelled_statements_is_one_token() -> None:
    from graphlsp.syntax.grammar import _Position, get_parser

    parser = get_parser()
    text = '[a] y = Relu (x)\n  ["/b/Relu_1"] z = Relu (y)\n[] w = Neg (z)\n[d] v = Cast (w) <to = 1>\n'
    parser.lexer.window = (text, 0, len(text))
    first = next(parser.lexer.lex(None, _Position([parser.start_states["node_seq"]])))
    assert first.type == "SIMPLE_NODE" and [n.label.value if n.label else None for n in first.nodes] == [
        "a", "/b/Relu_1", None]  # fmt: skip
    assert all(n.has_label for n in first.nodes) and first.end_pos == text.index("\n[d]")


def test_a_run_of_statements_with_attributes_is_one_token() -> None:
    from graphlsp.syntax.grammar import _Position, get_parser

    parser = get_parser()
    text = ('[c] k = Constant <value: tensor = int64[1] {0}> ()\n[t] y = Transpose <perm: ints = [0, 2, 1]> (x)\n'
            'z = Cast <to: int = 1.5> (y)\nw = Constant <value: tensor = int64[16] {1,2,3,4,5,6,7,8,9,0,1,2,3,4,5,6}> ()')
    parser.builder.problems = []
    parser.lexer.window = (text, 0, len(text))
    first = next(parser.lexer.lex(None, _Position([parser.start_states["node_seq"]])))
    assert first.type == "SIMPLE_NODE" and [n.op.op_type for n in first.nodes] == ["Constant", "Transpose", "Cast"]
    assert [a.name.value for n in first.nodes for a in n.attributes] == ["value", "perm", "to"]
    assert [m for m, _, _ in parser.builder.problems] == ["the attribute is declared INT but the value is FLOAT"]


def test_a_weight_in_a_statement_s_attributes_is_left_to_the_grammar(monkeypatch: pytest.MonkeyPatch) -> None:
    """16 numbers or more are NUMBERS, one token: the simple form never reads them number by number (a 10 MB
    weight on one line took the lexer 5 s and 800 MB before it gave up on the form)."""
    built = []
    build = lexer.WindowLexer._build_attributes
    monkeypatch.setattr(lexer.WindowLexer, "_build_attributes", lambda self, *a: built.append(1) or build(self, *a))
    doc = SyntaxDocument(one_line(20_000))
    node = next(p.value for p in doc.pieces if p.kind == "node" and p.value.op.op_type == "Constant")
    assert isinstance(node.attributes[0].value.data.values, t.Numbers) and not built
