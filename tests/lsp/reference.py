"""What the server's answers are checked against, computed without the server's code: `graphlsp check` on the
text the editor holds, with positions as LSP counts them (`\\r\\n`, `\\n` and a lone `\\r` each end a line)."""

from __future__ import annotations

import re
from bisect import bisect_right

from graphlsp.lint.config import Settings
from graphlsp.lint.runner import check_stdin

_LINE_END = re.compile(r"\r\n|\r|\n")
CRASH_MARKER = "# graphlsp-test-crash"  # GRAPHLSP_TEST_CRASH_MARKER in the server's environment: analysis raises
INTERNAL_ERROR = "internal-error"


def line_starts(text: str) -> list[int]:
    return [0, *(m.end() for m in _LINE_END.finditer(text))]


def lsp_position(text: str, offset: int, encoding: str = "utf-16") -> tuple[int, int]:
    starts = line_starts(text)
    line = bisect_right(starts, offset) - 1
    before = text[starts[line] : offset]
    if encoding == "utf-16":
        return line, len(before.encode("utf-16-le")) // 2
    if encoding == "utf-8":
        return line, len(before.encode("utf-8"))
    return line, len(before)


def lsp_offset(text: str, line: int, character: int, encoding: str = "utf-16") -> int:
    """The offset of an LSP position (characters past the line's end clamp to it)."""
    starts = line_starts(text)
    if line >= len(starts):
        return len(text)
    start = starts[line]
    m = _LINE_END.search(text, start)
    end = m.start() if m is not None else len(text)
    units = 0
    for i in range(start, end):
        if units >= character:
            return i
        ch = text[i]
        if encoding == "utf-16":
            units += 2 if ord(ch) > 0xFFFF else 1
        else:
            units += len(ch.encode("utf-8")) if encoding == "utf-8" else 1
    return end


def not_inside_crlf(text: str, offset: int) -> int:
    """An offset an LSP position can name: never between the `\\r` and the `\\n` of a line end."""
    return offset - 1 if 0 < offset < len(text) and text[offset - 1] == "\r" and text[offset] == "\n" else offset


def check(text: str, path: str = "doc.onnxtxt", encoding: str = "utf-16") -> list[tuple[str, int, int]]:
    """`graphlsp check --stdin-filename PATH -` on the text: (code, line, character) of each diagnostic, sorted.
    A text that holds the crash marker is reported by the server as one internal error on line 1."""
    if CRASH_MARKER in text:
        return [(INTERNAL_ERROR, 0, 0)]
    result = check_stdin(text.encode("utf-8"), path, Settings())
    return sorted((d.code, *lsp_position(text, d.start, encoding)) for d in result.diagnostics)


def cr_line_ends(text: str) -> str:
    """The text with lone `\\r` and `\\r\\n` line ends, in turn; a line with a comment keeps its `\\n` (a comment
    runs to the next `\\n` in ONNX text)."""
    out = []
    for i, line in enumerate(text.split("\n")[:-1]):
        out.append(line + ("\n" if "#" in line else "\r" if i % 2 else "\r\n"))
    return "".join(out) + text.split("\n")[-1]
