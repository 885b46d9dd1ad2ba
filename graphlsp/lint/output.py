"""Output formats for `graphlsp check`: text, json, sarif (2.1.0) and github (workflow commands)."""

from __future__ import annotations

import json
from collections.abc import Iterable

from graphlsp import __version__
from graphlsp.lint.diagnostics import Diagnostic
from graphlsp.lint.rules import RULES

_COLOURS = {"error": "\033[31m", "warning": "\033[33m", "info": "\033[36m", "hint": "\033[36m"}
_BOLD, _DIM, _RESET = "\033[1m", "\033[2m", "\033[0m"


def format_text(diagnostics: Iterable[Diagnostic]) -> str:
    """`path:line:col: CODE message`, one per line."""
    return "".join(f"{d.file}:{d.line}:{d.col}: {d.code} {d.message}\n" for d in diagnostics)


def format_full(diagnostics: Iterable[Diagnostic], sources: dict[str, str], colour: bool = False) -> str:
    """Each diagnostic with its source line and a caret underline (ruff's full output)."""
    out = []
    for d in diagnostics:
        head = f"{d.file}:{d.line}:{d.col}: {d.code} {d.message}"
        if colour:
            code = f"{_COLOURS.get(d.severity, '')}{d.code}{_RESET}"
            head = f"{_BOLD}{d.file}:{d.line}:{d.col}:{_RESET} {code} {d.message}"
        out.append(head)
        lines = sources.get(d.file, "").splitlines()
        if 1 <= d.line <= len(lines):
            src = lines[d.line - 1].expandtabs(1)
            width = max(1, (d.end_col - d.col) if d.end_line == d.line else len(src) - d.col + 1)
            gutter = " " * len(str(d.line))
            caret = " " * (d.col - 1) + "^" * width
            if colour:
                caret = _COLOURS.get(d.severity, "") + caret + _RESET
            out += [f"{gutter} |", f"{d.line} | {src}", f"{gutter} | {caret}", ""]
    return "\n".join(out) + ("\n" if out else "")


def format_json(diagnostics: Iterable[Diagnostic]) -> str:
    return json.dumps([d.to_json() for d in diagnostics], indent=2) + "\n"


_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note", "hint": "note"}


def format_sarif(diagnostics: Iterable[Diagnostic]) -> str:
    """SARIF 2.1.0, with the rules described from the rule docs."""
    from graphlsp.lint.docs import DOCS

    codes = sorted(RULES)
    index = {c: i for i, c in enumerate(codes)}
    rules = []
    for code in codes:
        r, doc = RULES[code], DOCS.get(code)
        entry: dict[str, object] = {
            "id": code,
            "name": "".join(w.capitalize() for w in r.name.split("-")),
            "shortDescription": {"text": r.summary or r.name},
            "defaultConfiguration": {"level": _SARIF_LEVEL.get(r.severity, "error")},
            "properties": {"tags": [r.name]},
        }
        if doc is not None:
            entry["fullDescription"] = {"text": doc.why}
            entry["help"] = {"text": f"{doc.why}\n\nFix: {doc.fix}"}
        rules.append(entry)
    results = []
    for d in diagnostics:
        results.append({
            "ruleId": d.code,
            "ruleIndex": index.get(d.code, 0),
            "level": _SARIF_LEVEL.get(d.severity, "error"),
            "message": {"text": d.message},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": d.file.replace("\\", "/")},
                "region": {"startLine": d.line, "startColumn": d.col, "endLine": d.end_line, "endColumn": d.end_col},
            }}],
        })  # fmt: skip
    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "graphlsp", "version": __version__, "rules": rules,
                                "informationUri": "https://github.com/graphlsp/graphlsp"}},
            "results": results,
        }],
    }  # fmt: skip
    return json.dumps(log, indent=2) + "\n"


def _escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


_GITHUB_LEVEL = {"error": "error", "warning": "warning", "info": "notice", "hint": "notice"}


def format_github(diagnostics: Iterable[Diagnostic]) -> str:
    """GitHub Actions workflow commands: `::error file=...,line=...,endLine=...,title=CODE::message`."""
    out = []
    for d in diagnostics:
        props = (f"file={_escape_property(d.file)},line={d.line},col={d.col},endLine={d.end_line},"
                 f"endColumn={d.end_col},title={_escape_property(d.code)}")  # fmt: skip
        out.append(f"::{_GITHUB_LEVEL.get(d.severity, 'error')} {props}::{_escape_data(d.code + ' ' + d.message)}\n")
    return "".join(out)


def summary(diagnostics: list[Diagnostic], files: int) -> str:
    counts: dict[str, int] = {}
    for d in diagnostics:
        counts[d.severity] = counts.get(d.severity, 0) + 1
    if not diagnostics:
        return f"All checks passed ({files} file{'s' if files != 1 else ''})."
    order = ["error", "warning", "info", "hint"]
    parts = [f"{counts[s]} {s}{'s' if counts[s] != 1 else ''}" for s in order if s in counts]
    return f"Found {', '.join(parts)} in {files} file{'s' if files != 1 else ''}."
