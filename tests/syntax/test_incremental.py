"""Incremental reparse: after any sequence of edits, the document equals a fresh parse of its text."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphlsp.syntax.document import SyntaxDocument
from tests.conftest import example_texts
from tests.syntax.docdump import dump

TEXTS = example_texts()
SNIPPETS = [
    "", " ", "\n", "(", ")", "<", ">", "{", "}", "[", "]", ",", "=", "=>", "\"", "#", "x", "Relu", "1", "-2.5",
    "y = Abs (x)\n", "  z = Add (a, b)\n", "<axis = 1>", "float[N]", "@", ":", ".", "# comment\n",
]  # fmt: skip


@st.composite
def edits(draw: st.DrawFn, text_len: int) -> tuple[int, int, str]:
    start = draw(st.integers(0, text_len))
    end = draw(st.integers(start, min(text_len, start + draw(st.sampled_from([0, 1, 3, 10, 40])))))
    new = draw(st.sampled_from(SNIPPETS) | st.text(alphabet="abxy01 ()=,\n<>{}", max_size=8))
    return start, end, new


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(TEXTS)), st.data())
def test_edits_then_reparse_equal_a_full_parse(name: str, data: st.DataObject) -> None:
    doc = SyntaxDocument(TEXTS[name])
    for _ in range(data.draw(st.integers(1, 4))):
        start, end, new = data.draw(edits(len(doc.text)))
        doc.apply_edit(start, end, new)
        assert dump(doc) == dump(SyntaxDocument(doc.text))


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(TEXTS)), st.data())
def test_editing_inside_one_node_reparses_only_that_node(name: str, data: st.DataObject) -> None:
    doc = SyntaxDocument(TEXTS[name])
    nodes = [p for p in doc.pieces if p.kind == "node" and not p.failed]
    if not nodes:
        return
    piece = data.draw(st.sampled_from(nodes))
    node = piece.value
    # rename the node's first output: a one-node edit that keeps the statement well-formed
    out = next((o for o in node.outputs if o is not None and not o.quoted), None)
    if out is None:
        return
    start, end = piece.origin + out.start, piece.origin + out.end
    same_line = [p for p in doc.pieces if doc.lines.line_of(p.abs_start) == doc.lines.line_of(start) or
                 doc.lines.line_of(p.abs_end) == doc.lines.line_of(start)]  # fmt: skip
    index = doc.pieces.index(piece)
    before_ok = index > 0 and not doc.pieces[index - 1].failed
    report = doc.apply_edit(start, end, out.value + "_renamed")
    if before_ok and all(p.kind == "node" for p in same_line) and not any(p.kind == "error" for p in doc.pieces):
        assert report.mode == "incremental"
        assert report.pieces <= len(same_line) + 1
    assert dump(doc) == dump(SyntaxDocument(doc.text))


def test_large_file_one_node_edit_is_incremental(gpt_l24_text: str) -> None:
    doc = SyntaxDocument(gpt_l24_text)
    piece = [p for p in doc.pieces if p.kind == "node"][1000]
    attr_pos = doc.text.find("(", piece.abs_start)
    report = doc.apply_edit(attr_pos, attr_pos, " ")
    assert report.mode == "incremental" and report.pieces == 1
    # and the following statements moved with the edit
    after = [p for p in doc.pieces if p.kind == "node"][1001]
    assert doc.text[after.abs_start : after.abs_end] == doc.text[after.abs_start : after.abs_end].strip()
    assert dump(doc) == dump(SyntaxDocument(doc.text))
