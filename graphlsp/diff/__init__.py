"""What changed between two models: a semantic diff above the analysis (it compares two of them).

`match.py` pairs the nodes of two graphs (names, then structure), `compare.py` builds the report (header, nodes,
inferred types, initializers, findings, input contracts, kernel coverage), `text.py` and `page.py` show it, and
`load.py` reads a side as `graphlsp check` does. `graphlsp diff` (cli.py) is the way in; see docs/diff.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from graphlsp.diff.compare import Report
    from graphlsp.lint.config import Settings


def diff_files(old: str, new: str, settings: Settings, names: tuple[str, str] | None = None) -> Report:
    """Compare two model files (binary or text); raises load.LoadError when one cannot be read."""
    from graphlsp.diff.compare import compare
    from graphlsp.diff.load import load

    shown = names or (old, new)
    return compare(load(old, settings, shown[0]), load(new, settings, shown[1]), settings)
