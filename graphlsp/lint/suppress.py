"""Suppressions: `# noqa: GL301` (or a rule name) on a line, `# noqa` for every rule on it, and
`# graphlsp: noqa` anywhere for the whole file. A suppression that suppresses nothing is reported (GL501)."""

from __future__ import annotations

import re

from graphlsp.lint.diagnostics import Diagnostic
from graphlsp.lint.rules import rule
from graphlsp.syntax.positions import LineIndex, count_line_ends, line_start_at

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z0-9_,\s-]+))?", re.IGNORECASE)
_FILE = re.compile(r"#\s*graphlsp:\s*noqa\b", re.IGNORECASE)
UNUSED = "GL501"


class Noqa:
    """One `# noqa` comment: its line, the codes it names, and where it is written (offsets)."""

    __slots__ = ("line", "codes", "start", "end")

    line: int  # 1-based
    codes: list[str]  # empty: every rule
    start: int
    end: int

    def __init__(
        self,
        line: int,
        codes: list[str],
        start: int,
        end: int,
    ) -> None:
        self.line = line
        self.codes = codes
        self.start = start
        self.end = end

    def __repr__(self) -> str:
        return f"Noqa(line={self.line!r}, codes={self.codes!r}, start={self.start!r}, end={self.end!r})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not Noqa:
            return NotImplemented
        return (self.line, self.codes, self.start, self.end) == (other.line, other.codes, other.start, other.end)


def find(text: str) -> tuple[bool, list[Noqa]]:
    # Every suppression starts at a `#`: look only there (str.find is a memchr, the regexes are not).
    whole_file = False
    found = []
    i = text.find("#")
    while i >= 0:
        if not whole_file and _FILE.match(text, i):
            whole_file = True
        m = _NOQA.match(text, i)
        i = text.find("#", i + 1)
        if m is None:
            continue
        # only in comments: a `#` inside a quoted name is not a comment
        line_start = line_start_at(text, m.start())
        if text.count('"', line_start, m.start()) % 2:
            continue
        codes = [c for c in re.split(r"[\s,]+", m.group("codes") or "") if c]
        found.append(Noqa(count_line_ends(text, 0, m.start()) + 1, codes, m.start(), m.end()))
    return whole_file, found


def _covers(noqa: Noqa, d: Diagnostic) -> bool:
    return not noqa.codes or d.code in noqa.codes or d.name in noqa.codes


def apply(diagnostics: list[Diagnostic], text: str, path: str) -> list[Diagnostic]:
    """Drop suppressed diagnostics; add one GL501 per unused suppression."""
    whole_file, noqas = find(text)
    if whole_file:
        return []
    if not noqas:
        return diagnostics
    by_line: dict[int, list[Noqa]] = {}
    for n in noqas:
        by_line.setdefault(n.line, []).append(n)
    used: set[int] = set()
    kept = []
    for d in diagnostics:
        hit = next((n for n in by_line.get(d.line or 0, []) if _covers(n, d)), None)
        if hit is None or d.code.startswith("GL1"):  # a syntax error is never silenced
            kept.append(d)
        else:
            used.add(id(hit))
    lines = LineIndex(text) if noqas else None
    for n in noqas:
        if id(n) in used or lines is None:
            continue
        line, col = lines.position(n.start)
        end_line, end_col = lines.position(n.end)
        r = rule(UNUSED)
        what = ", ".join(n.codes) if n.codes else "anything"
        kept.append(Diagnostic(path, line + 1, col + 1, end_line + 1, end_col + 1, r.severity, UNUSED, r.name,
                               f"unused suppression: nothing on this line reports {what}", n.start, n.end))  # fmt: skip
    kept.sort(key=lambda d: (d.start, d.code))
    return kept

