"""The parse table kept as plain data (grammar.py): a text that parses imports no lark, the kept table parses every
text as lark's own loop does (same tree, same problems), and a damaged or missing table is made again."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from graphlsp.files import keep
from graphlsp.syntax import grammar
from graphlsp.syntax.grammar import Parser, get_parser
from tests.conftest import example_texts

ROOT = Path(__file__).resolve().parents[2]

# what the examples leave out: empty slots, empty and quoted labels, attributes after the inputs, overloads and
# domains, every kind of attribute value, types in types, value infos, functions with attributes and defaults
TEXTS = {
    **example_texts(),
    "shapes.onnxtxt": """<ir_version: 8, opset_import: ["" : 18, "com.x" : 1], producer_name: "t",
  metadata_props: ["a": "b"]>
g (float[N, "M+1", ?] x, int64[] i, seq(float[2]) s, map(int64, float) m, float[2] w = {1.0, -2e3},
   sparse_tensor(float[2, 2]) sp, opaque(com.x, thing) q, opaque() q2, seq(seq(int64)) ss)
    => (float[] y, optional(seq(float)) o) <float[N] v, float z = {inf}> {
  [] a, , b = com.x.Op:ov <f: float = -1.5, s: string = "q\\"", t: tensor = int64[2] n {1, 2},
     l: ints = [1, -2], g: graph = h () => (float k) { k = Constant <value_float: float = -Inf> () }> (x, , w)
  ["lab"] y = Relu (a) <axis: int = 1>
  [q] v = Identity <n: int = 1.5, u: wat = 1> (x)
  p = Cast <to = 1, r = @ref, tp: type_proto = float[3]> (i)
  c = Constant <value: tensor = float[16] {1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16}> ()
  e = Constant <value: tensor = float[2] w2 = ["location": "w.bin", "offset": "0"]> ()
}
<domain: "com.x", opset_import: ["" : 18]>
F <alpha: float = 0.5, beta, gamma: int> (float X, Y) => (Z) <float[2] W> {
  Z = Add (X, Y)
}
""",
}


def _both(text: str, start: int, end: int, symbol: str) -> tuple[Any, Any]:
    """(value, problems) of text[start:end] by the kept table's loop and by lark's own loop; a rejected text is
    None by ours and lark's exception's name by lark's."""
    parser = get_parser()
    ours = parser.try_parse(text, start, end, symbol, {}), list(parser.builder.problems)
    parser.builder.problems = []  # as Parser.parse does before it runs lark's loop
    parser.lark.parser.lexer.window = (text, start, end)
    try:
        theirs = parser.lark.parse(text, start=symbol), list(parser.builder.problems)
    except Exception as e:
        theirs = type(e).__name__, []
    return ours, theirs


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_the_kept_table_parses_as_lark_does(name: str) -> None:
    text = TEXTS[name]
    spans = [(0, len(text), "model")]
    for line in text.splitlines():  # each node statement alone, as an edit reparses it
        if "=" in line and not line.rstrip().endswith("{"):
            at = text.index(line)
            spans.append((at, at + len(line), "node_seq"))
    parsed = 0
    for start, end, symbol in spans:
        ours, theirs = _both(text, start, end, symbol)
        if ours[0] is None:
            assert theirs[0] in ("UnexpectedToken", "UnexpectedCharacters")
        else:
            assert ours == theirs
            parsed += 1
    assert parsed > len(spans) // 3  # the comparison is of trees, not only of rejections


_PARSE = """
import sys
from graphlsp.syntax.document import SyntaxDocument
doc = SyntaxDocument(open(sys.argv[1], encoding="utf-8").read())
print(len(doc.pieces), len(doc.problems), "lark" in sys.modules)
"""


def _run(path: Path, cache: Path) -> list[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    out = subprocess.run([sys.executable, "-c", _PARSE, str(path)], cwd=ROOT, env=env, capture_output=True, text=True,
                         check=True).stdout  # fmt: skip
    return out.split()


def test_a_text_that_parses_imports_no_lark_once_the_table_is_kept(tmp_path: Path) -> None:
    model, broken = ROOT / "examples" / "attention.onnxtxt", ROOT / "examples" / "broken.onnxtxt"
    first = _run(model, tmp_path)
    assert first[-1] == "True"  # no table kept yet: made from lark's analysis, then kept
    assert list((tmp_path / "graphlsp").glob("onnxtxt-table-*.marshal"))
    again = _run(model, tmp_path)
    assert again == [*first[:-1], "False"]  # the same document, without lark
    errors = _run(broken, tmp_path)
    assert int(errors[1]) > 0 and errors[-1] == "True"  # a syntax error is described by lark's loop


def test_a_damaged_table_is_made_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "table.marshal")
    monkeypatch.setattr(grammar, "table_file", lambda text: path)
    text = TEXTS["attention.onnxtxt"]
    expected = get_parser().try_parse(text, 0, len(text), "model")
    for damaged in ({"format": grammar.TABLE_FORMAT, "actions": {0: {"x": "y"}}, "rules": []},
                    {"format": grammar.TABLE_FORMAT}, {"format": -1}):  # fmt: skip
        keep(path, damaged)
        assert Parser().try_parse(text, 0, len(text), "model") == expected
    Path(path).write_bytes(b"not marshal")
    assert Parser().try_parse(text, 0, len(text), "model") == expected
