"""Offsets <-> (line, column), with columns in code points, UTF-16 or UTF-8 code units (LSP's encodings).

Offsets are indices into the Python string (code points). Lines are 0-based here; the CLI adds 1.
The index updates in place after an edit, so an incremental reparse does not rescan the whole file.
"""

from __future__ import annotations

from bisect import bisect_right

ENCODINGS = ("utf-32", "utf-16", "utf-8")  # utf-32 means code points


def _units(s: str, encoding: str) -> int:
    if encoding == "utf-32" or s.isascii():
        return len(s)
    if encoding == "utf-16":
        return len(s.encode("utf-16-le")) // 2
    return len(s.encode("utf-8"))


def _line_starts(text: str, base: int = 0) -> list[int]:
    starts = []
    i = text.find("\n")
    while i >= 0:
        starts.append(base + i + 1)
        i = text.find("\n", i + 1)
    return starts


class LineIndex:
    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0, *_line_starts(text)]

    def line_of(self, offset: int) -> int:
        return bisect_right(self.starts, offset) - 1

    def line_start(self, line: int) -> int:
        return self.starts[line]

    def line_end(self, line: int) -> int:
        """Offset of the line's newline (or end of text)."""
        if line + 1 < len(self.starts):
            return self.starts[line + 1] - 1
        return len(self.text)

    def position(self, offset: int, encoding: str = "utf-32") -> tuple[int, int]:
        offset = max(0, min(offset, len(self.text)))
        line = bisect_right(self.starts, offset) - 1
        start = self.starts[line]
        if encoding == "utf-32":  # code points: no need to look at the characters
            return line, offset - start
        return line, _units(self.text[start:offset], encoding)

    def offset(self, line: int, column: int, encoding: str = "utf-32") -> int:
        """The offset of an LSP position; positions past a line's end clamp to it, past the file to its end."""
        if line < 0:
            return 0
        if line >= len(self.starts):
            return len(self.text)
        start = self.starts[line]
        end = self.line_end(line)
        segment = self.text[start:end]
        if encoding == "utf-32" or segment.isascii():
            return start + max(0, min(column, len(segment)))
        units = 0
        for i, ch in enumerate(segment):
            if units >= column:
                return start + i
            units += (2 if ord(ch) > 0xFFFF else 1) if encoding == "utf-16" else len(ch.encode("utf-8"))
        return end

    def replace(self, start: int, end: int, new: str, new_text: str) -> None:
        """Update the index for text[start:end] replaced by `new`; new_text is the whole text afterwards."""
        delta = len(new) - (end - start)
        first = bisect_right(self.starts, start)  # line starts <= start stay
        last = bisect_right(self.starts, end)  # line starts in (start, end] are removed
        tail = self.starts[last:]
        if delta:
            tail = [s + delta for s in tail]
        self.starts[first:] = _line_starts(new, start) + tail
        self.text = new_text
