"""Offsets <-> (line, column), with columns in code points, UTF-16 or UTF-8 code units (LSP's encodings).

Offsets are indices into the Python string (code points). Lines are 0-based here; the CLI adds 1.
A line ends where LSP says one does: at `\\n`, at `\\r\\n` (one line end) and at a lone `\\r`; the lexer's comments
end there too, so what an editor shows on a line is what the CLI reports on it.
The index updates in place after an edit, so an incremental reparse does not rescan the whole file.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

ENCODINGS = ("utf-32", "utf-16", "utf-8")  # utf-32 means code points


def _units(s: str, encoding: str) -> int:
    if encoding == "utf-32" or s.isascii():
        return len(s)
    if encoding == "utf-16":
        return len(s.encode("utf-16-le")) // 2
    return len(s.encode("utf-8"))


LINE_END = re.compile(r"\r\n?|\n")


def split_lines(text: str) -> list[str]:
    """The lines of the text without their line ends (`\\n`, `\\r\\n`, a lone `\\r`); n line ends make n + 1 lines."""
    return LINE_END.split(text) if "\r" in text else text.split("\n")


def count_line_ends(text: str, start: int = 0, end: int | None = None) -> int:
    """How many line ends text[start:end] holds (`\\r\\n` is one)."""
    end = len(text) if end is None else end
    n = text.count("\n", start, end)
    crs = text.count("\r", start, end)
    return n + crs - text.count("\r\n", start, end) if crs else n


def line_start_at(text: str, offset: int) -> int:
    """The offset where the line holding `offset` starts (searching back no further than that line)."""
    lf = text.rfind("\n", 0, offset)
    return max(lf, text.rfind("\r", lf + 1, offset)) + 1


def line_end_at(text: str, offset: int) -> tuple[int, int]:
    """The line end at or after `offset` (searching no further than it): (where it starts, where the next line
    starts); (len(text), len(text)) on the last line."""
    lf = text.find("\n", offset)
    stop = len(text) if lf < 0 else lf
    cr = text.find("\r", offset, stop)
    if cr >= 0:
        return cr, cr + 2 if text.startswith("\n", cr + 1) else cr + 1
    return (stop, stop) if lf < 0 else (lf, lf + 1)


def _line_starts(text: str, start: int = 0, stop: int | None = None) -> list[int]:
    """The line starts in (start, stop] (absolute offsets) made by line ends that begin in [start, stop)."""
    stop = len(text) if stop is None else stop
    if text.find("\r", start, stop) < 0:  # the common case: str.find is a memchr, a regex is not
        starts = []
        i = text.find("\n", start, stop)
        while i >= 0:
            starts.append(i + 1)
            i = text.find("\n", i + 1, stop)
        return starts
    return [m.end() for m in LINE_END.finditer(text, start, min(stop + 1, len(text)))]


class LineIndex:
    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0, *_line_starts(text)]

    def line_of(self, offset: int) -> int:
        return bisect_right(self.starts, offset) - 1

    def line_start(self, line: int) -> int:
        return self.starts[line]

    def line_end(self, line: int) -> int:
        """Offset of the line's line end (or end of text)."""
        if line + 1 < len(self.starts):
            nxt = self.starts[line + 1]
            return nxt - 2 if nxt >= 2 and self.text[nxt - 2] == "\r" and self.text[nxt - 1] == "\n" else nxt - 1
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
        # Whether p starts a line depends on text[p - 1] and text[p] only (after `\n`; after `\r` unless `\n`
        # follows): the starts in [start, end] of the old text are found again in [start, start + len(new)] of the
        # new one, the ones after move by delta.
        delta = len(new) - (end - start)
        first = bisect_left(self.starts, max(start, 1))
        last = bisect_right(self.starts, end)
        tail = self.starts[last:]
        if delta:
            tail = [s + delta for s in tail]
        stop = start + len(new)
        found = _line_starts(new_text, max(start - 1, 0), stop)
        if found and found[-1] > stop:
            found.pop()
        self.starts[first:] = found + tail
        self.text = new_text
