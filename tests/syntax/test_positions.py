"""LineIndex: offsets <-> LSP positions in code points, UTF-16 and UTF-8, and in-place updates."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from graphlsp.syntax.positions import LineIndex


def test_positions_in_each_encoding() -> None:
    text = 'a = Relu (x)\n"é😀" = Abs (a)\n'
    idx = LineIndex(text)
    off = text.index("= Abs")
    assert idx.position(off) == (1, 5)  # code points: ", é, 😀, ", space
    assert idx.position(off, "utf-16") == (1, 6)  # 😀 is two UTF-16 units
    assert idx.position(off, "utf-8") == (1, 9)  # é is 2 bytes, 😀 is 4
    for enc in ("utf-32", "utf-16", "utf-8"):
        line, col = idx.position(off, enc)
        assert idx.offset(line, col, enc) == off


def test_offsets_clamp_out_of_range() -> None:
    idx = LineIndex("ab\ncd")
    assert idx.offset(0, 99) == 2
    assert idx.offset(99, 0) == 5
    assert idx.offset(-1, 0) == 0
    assert idx.position(99) == (1, 2)


@given(st.text(alphabet="ab\n😀", max_size=30), st.data())
def test_replace_equals_rebuild(text: str, data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    new = data.draw(st.text(alphabet="xy\n", max_size=5))
    idx = LineIndex(text)
    new_text = text[:start] + new + text[end:]
    idx.replace(start, end, new, new_text)
    assert idx.starts == LineIndex(new_text).starts
