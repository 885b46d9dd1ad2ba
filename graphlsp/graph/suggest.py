"""Suggestions ("did you mean") over many names (the values of a big graph), fast enough to run while a person types.

A typo is usually one edit away (a substituted, inserted, deleted or swapped character). Such names are found
exactly: a name one edit away at position p starts with `name[:p]` and ends with the rest after the edit, so
for each p it lies in a range of the sorted names (shared prefix) and in a range of the sorted reversals
(shared suffix); the smaller range is scanned. Failing that, difflib looks at the names around `name` in both
orders.
"""

from __future__ import annotations

import difflib
from bisect import bisect_left
from collections.abc import Iterable

from graphlsp.graph.ops import closest

_TOP = "\U0010ffff"


def _range(names: list[str], prefix: str) -> tuple[int, int]:
    return bisect_left(names, prefix), bisect_left(names, prefix + _TOP)


class Suggester:
    SMALL = 500  # up to this many names, difflib over all of them is fast enough
    WINDOW = 32  # fallback: names taken on each side of `name` in each order

    def __init__(self, names: Iterable[str]) -> None:
        self.names = sorted(set(names))
        self.small = len(self.names) <= self.SMALL
        self.members = set(self.names)
        self.reversed = [] if self.small else sorted(x[::-1] for x in self.names)
        self.lower: dict[str, str] = {} if self.small else {x.lower(): x for x in reversed(self.names)}

    def closest(self, name: str) -> str | None:
        if self.small:
            return closest(name, self.names)
        same_case = self.lower.get(name.lower())
        if same_case is not None and same_case != name:
            return same_case
        near = self.one_edit(name)
        if near:
            return max(near, key=lambda c: (difflib.SequenceMatcher(None, name, c).ratio(), c))
        pool = set(self._around(self.names, name)) | {x[::-1] for x in self._around(self.reversed, name[::-1])}
        return closest(name, sorted(pool))

    def one_edit(self, name: str) -> list[str]:
        """Every known name one substitution, insertion, deletion or transposition away from `name`."""
        n = len(name)
        found: set[str] = set()
        for p in range(n + 1):
            if p < n:
                for variant in (name[:p] + name[p + 1 :], name[:p] + name[p + 1 : p + 2] + name[p] + name[p + 2 :]):
                    if variant != name and variant in self.members:
                        found.add(variant)  # deletion, transposition
            prefix = name[:p]
            for suffix, length in ((name[p + 1 :], n), (name[p:], n + 1)):  # substitution, insertion
                if p == n and length == n:
                    continue
                found.update(self._between(prefix, suffix, length))
        found.discard(name)
        return sorted(found)

    def _between(self, prefix: str, suffix: str, length: int) -> list[str]:
        """Known names of that length that start with `prefix` and end with `suffix` (scanning the smaller side)."""
        lo, hi = _range(self.names, prefix)
        rlo, rhi = _range(self.reversed, suffix[::-1])
        if hi - lo <= rhi - rlo:
            return [c for c in self.names[lo:hi] if len(c) == length and c.endswith(suffix)]
        return [c[::-1] for c in self.reversed[rlo:rhi] if len(c) == length and c.endswith(prefix[::-1])]

    def _around(self, names: list[str], key: str) -> list[str]:
        at = bisect_left(names, key)
        return names[max(0, at - self.WINDOW) : at + self.WINDOW]
