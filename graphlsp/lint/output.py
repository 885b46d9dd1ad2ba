"""Output formats for `graphlsp check`: text (path:line:col: CODE message) and json."""

from __future__ import annotations

import json
from collections.abc import Iterable

from graphlsp.lint.diagnostics import Diagnostic


def format_text(diagnostics: Iterable[Diagnostic]) -> str:
    return "".join(f"{d.file}:{d.line}:{d.col}: {d.code} {d.message}\n" for d in diagnostics)


def format_json(diagnostics: Iterable[Diagnostic]) -> str:
    return json.dumps([d.to_json() for d in diagnostics], indent=2) + "\n"


def summary(diagnostics: list[Diagnostic], files: int) -> str:
    counts: dict[str, int] = {}
    for d in diagnostics:
        counts[d.severity] = counts.get(d.severity, 0) + 1
    if not diagnostics:
        return f"All checks passed ({files} file{'s' if files != 1 else ''})."
    parts = [f"{n} {sev}{'s' if n != 1 else ''}" for sev, n in sorted(counts.items(), key=lambda kv: kv[0])]
    return f"Found {', '.join(parts)} in {files} file{'s' if files != 1 else ''}."
