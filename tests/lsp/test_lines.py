"""The server's LSP line index (`\\r\\n`, `\\n` and a lone `\\r` end a line), kept up to date edit by edit, equals
one built afresh and the reference's positions (tests/lsp/reference.py)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from graphlsp.lsp.convert import LspLines, Positions
from tests.lsp.reference import line_starts, lsp_offset, lsp_position

TEXT = st.text(alphabet="a\r\né😀", max_size=40)
EDIT = st.tuples(st.integers(0, 50), st.integers(0, 10), TEXT)


@settings(max_examples=300, deadline=None)
@given(text=TEXT, edits=st.lists(EDIT, max_size=8))
def test_replace_equals_a_fresh_index(text: str, edits: list[tuple[int, int, str]]) -> None:
    lines = LspLines(text)
    for at, length, new in edits:
        start = min(at, len(text))
        end = min(start + length, len(text))
        text = text[:start] + new + text[end:]
        lines.replace(start, end, new, text)
        assert lines.starts == line_starts(text) == LspLines(text).starts
    for offset in range(len(text) + 1):
        for enc in ("utf-16", "utf-8", "utf-32"):
            line, character = lsp_position(text, offset, enc)
            assert lines.position(offset, enc) == (line, character)
            if not (0 < offset < len(text) and text[offset - 1 : offset + 1] == "\r\n"):
                assert lines.offset(line, character, enc) == lsp_offset(text, line, character, enc)
    for line in range(len(lines.starts) + 1):
        assert lines.offset(line, 999, "utf-16") == lsp_offset(text, line, 999, "utf-16")


@settings(max_examples=300, deadline=None)
@given(text=TEXT, spans=st.lists(st.tuples(st.integers(0, 40), st.integers(0, 12)), max_size=10),
       enc=st.sampled_from(["utf-16", "utf-8", "utf-32"]))  # fmt: skip
def test_semantic_tokens_are_cut_at_line_ends_and_delta_encoded(text: str, spans: list[tuple[int, int]],
                                                                 enc: str) -> None:  # fmt: skip
    toks = sorted((min(s, len(text)), min(s + n, len(text)), "variable") for s, n in spans)
    data = Positions(LspLines(text), text, enc).tokens(toks, {"variable": 1})
    want, prev = [], (0, 0)
    starts = line_starts(text)
    for s, e, _ in toks:
        line, col = lsp_position(text, s, enc)
        line_end = lsp_offset(text, line, 10**9, "utf-32")
        length = lsp_position(text, min(e, line_end), enc)[1] - col
        if length > 0:
            want += [line - prev[0], col - prev[1] if line == prev[0] else col, length, 1, 0]
            prev = (line, col)
    assert data == want, (starts, toks)
