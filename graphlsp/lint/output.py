"""Output formats for `graphlsp check`: text, json, sarif (2.1.0) and github (workflow commands).

Text, concise and github output say one cause once: findings of one file with the same code and the same message
shape (names and numbers aside) are one group, shown as its first finding and a note of how many more and where.
JSON and SARIF list every finding.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from urllib.parse import quote

from graphlsp import __version__
from graphlsp.lint.diagnostics import EXCERPT, Diagnostic
from graphlsp.lint.rules import RULES

_COLOURS = {"error": "\033[31m", "warning": "\033[33m", "info": "\033[36m", "hint": "\033[36m"}
_BOLD, _DIM, _RESET = "\033[1m", "\033[2m", "\033[0m"


def _clip(s: str, limit: int) -> str:
    """One line of at most about `limit` characters: control characters shown escaped, a cut marked with `…`."""
    s = s.replace("\r", "\\r").replace("\n", "\\n")
    return s if len(s) <= limit else s[: limit - 1] + "…"


NAME_LIMIT = 100  # characters of a node or graph name in a head line


def located(d: Diagnostic) -> str:
    """Where a finding without a line is: `node 45 "name" (Op)` (`in graph/path` for a subgraph's node), or
    the detail of a graph-level one (`graph 'main' initializer 'w'`). Empty when nothing is known."""
    if d.node_index is not None:
        out = f"node {d.node_index}"
        if d.node:
            out += f' "{_clip(d.node, NAME_LIMIT)}"'
        if d.op:
            out += f" ({_clip(d.op, NAME_LIMIT)})"
        if d.graph and "/" in d.graph:  # a subgraph (main/If_0.then_branch): the main graph goes unsaid
            out += f" in {_clip(d.graph, NAME_LIMIT * 2)}"
        return out
    if d.detail:
        return _clip(d.detail, NAME_LIMIT * 2)
    if d.graph:
        return f"graph '{_clip(d.graph, NAME_LIMIT)}'"
    return ""


def _where(d: Diagnostic) -> str:
    """`path:line:col` for text, `path: node 45 "name" (Op)` for a binary model's finding."""
    if d.line is not None:
        return f"{d.file}:{d.line}:{d.col}"
    place = located(d)
    return f"{d.file}: {place}" if place else d.file


GROUP_AT = 3  # this many findings alike in one file are shown as one
_SHOWN_PLACES = 3
# a group whose findings share one message has a better word for them than "more like it"
_GROUP_NOUNS = {"GL107": "tensors read from it"}
_SHAPE = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`|\d+")


class Group:
    """Findings of one cause: the first shown in full, the rest counted and located."""

    __slots__ = ("first", "rest")

    def __init__(self, first: Diagnostic) -> None:
        self.first = first
        self.rest: list[Diagnostic] = []

    def _same_message(self) -> bool:
        return all(d.message == self.first.message for d in self.rest)

    def where(self) -> str:
        d = self.first
        if self.rest and d.code in _GROUP_NOUNS and self._same_message():
            return d.file  # a file-level cause (a missing data file): no one tensor stands for it
        return _where(d)

    def note(self) -> str:
        """`and 41 more like it: 5:3, 7:9, …`; empty for a single finding."""
        if not self.rest:
            return ""
        noun = _GROUP_NOUNS.get(self.first.code) if self._same_message() else None
        if noun:
            members = [self.first, *self.rest]
            places = [_place(d) for d in members[:_SHOWN_PLACES]]
            more = ", …" if len(members) > _SHOWN_PLACES else ""
            return f"{len(members)} {noun}: {', '.join(places)}{more}"
        return f"and {len(self.rest)} more like it: {self._places()}"

    def _places(self) -> str:
        """Each place of the rest once, in order, with what tells its findings apart where that is not the place
        alone (another output or dim of one node, or of the headline's node: `here`)."""
        own = _place(self.first)
        at: dict[str, list[Diagnostic]] = {}
        for d in self.rest:
            at.setdefault(_place(d), []).append(d)
        shown = []
        for place, xs in at.items():
            if place == own:
                named = [x for x in dict.fromkeys(_difference(d, self.first) for d in xs) if x]
                shown.append(f"{', '.join(named)} here" if named else "again here")
                continue
            # several at one place: each told from another of them
            if len(xs) == 1:
                shown.append(place)
                continue
            named = [x for x in dict.fromkeys(_difference(d, xs[1 if k == 0 else 0]) for k, d in enumerate(xs)) if x]
            shown.append(f"{place}: {', '.join(named)}" if named else place)
        sep = "; " if any(": " in x or x.endswith(" here") for x in shown[:_SHOWN_PLACES]) else ", "
        return sep.join(shown[:_SHOWN_PLACES]) + (f"{sep.strip()} …" if len(shown) > _SHOWN_PLACES else "")


_WORD = re.compile(r"[A-Za-z_][\w.]*")


def _difference(d: Diagnostic, first: Diagnostic) -> str:
    """What tells a finding apart from the headline's at one place: its output (the detail), else the first name
    its message has where the headline's has another (`width` where it says `height`)."""
    if d.detail and d.node_index is not None and d.detail != first.detail:
        return d.detail
    for mine, theirs in zip(_WORD.findall(d.message), _WORD.findall(first.message), strict=False):
        if mine != theirs:
            return mine
    return ""


def _place(d: Diagnostic) -> str:
    if d.line is not None:
        return f"{d.line}:{d.col}"
    return located(d) or "the model"


def group(diagnostics: Iterable[Diagnostic]) -> list[Group]:
    """Findings in their order, those of one file, code and message shape together when GROUP_AT or more."""
    items = [(d, (d.file, d.code, _SHAPE.sub("_", d.message))) for d in diagnostics]
    keyed: dict[tuple[str, str, str], list[Diagnostic]] = {}
    for d, key in items:
        keyed.setdefault(key, []).append(d)
    out: list[Group] = []
    for d, key in items:
        members = keyed[key]
        if len(members) < GROUP_AT:
            out.append(Group(d))
        elif members[0] is d:
            g = Group(d)
            g.rest = members[1:]
            out.append(g)
    return out


def _headline(g: Group) -> str:
    d, note = g.first, g.note()
    return f"{g.where()}: {d.severity}: {d.code} {d.message}" + (f" ({note})" if note else "")


def format_text(diagnostics: Iterable[Diagnostic]) -> str:
    """`path:line:col: severity: CODE message` (binaries: `path: node 45 "name" (Op): error: CODE message`), one
    line per cause (findings alike grouped)."""
    return "".join(_headline(g) + "\n" for g in group(diagnostics))


def window(src: str, col: int, width: int, limit: int = EXCERPT) -> tuple[str, int, int]:
    """At most about `limit` characters of a source line around a 1-based column, cuts marked with `…`;
    returns the shown text and the column and width of the underline in it."""
    if len(src) <= limit:
        return src, col, width
    start = max(0, min(col - 1 - limit // 4, len(src) - limit))
    end = start + limit
    shown = src[start:end]
    at = col - start
    if start > 0:
        shown = "…" + shown
        at += 1
    if end < len(src):
        shown += "…"
    return shown, at, max(1, min(width, end - (col - 1)))


def _lines(text: str) -> list[str]:
    """The lines as the line index counts them (`\\n`, `\\r\\n` and a lone `\\r` end a line)."""
    from graphlsp.syntax.positions import split_lines  # a text's diagnostics only: a binary's need no lines

    return split_lines(text)


def _op_span(excerpt: str, op: str | None) -> tuple[int, int] | None:
    """Where the op name is in a node's excerpt (`y = Conv <...> (x, w)`): 1-based column and width."""
    if not op:
        return None
    name = op.split(":")[0]
    m = re.search(r"=\s*(" + re.escape(name) + r")(?![\w.])", excerpt)
    if m is None:
        return None
    bare = name.rsplit(".", 1)[-1]
    return m.end(1) - len(bare) + 1, len(bare)


def format_full(diagnostics: Iterable[Diagnostic], sources: dict[str, str], colour: bool = False) -> str:
    """Each diagnostic with its source line and a caret underline (ruff's full output); a binary model's
    finding with its node as one line of ONNX text. No line echoes more than about EXCERPT characters."""
    out = []
    split: dict[str, list[str]] = {}
    for g in group(diagnostics):
        d, note = g.first, g.note()
        tint = _COLOURS.get(d.severity, "")
        where = g.where()
        if colour:
            out.append(f"{_BOLD}{where}:{_RESET} {tint}{d.severity}{_RESET}: {_BOLD}{d.code}{_RESET} {d.message}")
        else:
            out.append(f"{where}: {d.severity}: {d.code} {d.message}")
        tail = [f"  = {_clip(note, EXCERPT * 2)}", ""] if note else [""]
        if d.line is None:  # a binary model: the node, then what part of it
            if g.rest and where == d.file:  # a file-level group: no node stands for it
                out += tail
                continue
            snippet = []
            if d.excerpt:
                shown = _clip(d.excerpt, EXCERPT)
                snippet += ["  |", f"  | {shown}"]
                span = _op_span(shown, d.op)
                if span is not None:
                    caret = " " * (span[0] - 1) + "^" * span[1]
                    snippet.append(f"  | {tint}{caret}{_RESET}" if colour else f"  | {caret}")
            if d.detail and d.node_index is not None:
                snippet.append(f"  = {_clip(d.detail, EXCERPT)}")
            snippet += [f"  = {_clip(line, EXCERPT * 2)}" for line in python_lines(d)]
            out += [*snippet, *tail] if snippet or note else []
            continue
        lines = split.get(d.file)
        if lines is None:
            lines = split[d.file] = _lines(sources.get(d.file, ""))
        if 1 <= d.line <= len(lines) and (d.line < len(lines) or lines[-1]):
            src = lines[d.line - 1]
            col = d.col or 1
            end_col = d.end_col or col
            width = max(1, (end_col - col) if d.end_line == d.line else len(src) - col + 1)
            src, col, width = window(src, col, width)
            src = src.expandtabs(1)  # (a tab is one column) after the cut: never a copy of a long line per finding
            gutter = " " * len(str(d.line))
            caret = " " * (col - 1) + "^" * width
            if colour:
                caret = tint + caret + _RESET
            out += [f"{gutter} |", f"{d.line} | {src}", f"{gutter} | {caret}", *tail]
        elif note:
            out += tail
    return "\n".join(out) + ("\n" if out else "")


def python_lines(d: Diagnostic) -> list[str]:
    """`made by `model.py:12` `code`` at `src/model.py:12`: the Python lines a binary model's finding was made by
    (its related information with a `file`, graphlsp.provenance)."""
    out = []
    for r in d.related:
        if "origin" not in r:
            continue
        where = _shown_path(r["file"]) if r.get("file") else r["origin"]
        out.append(f"{r['message']} at {where}:{r['line']}")
    return out


def _shown_path(path: str) -> str:
    """A path relative to the working directory when it lies under it, else as it is."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def _in_repository(path: str) -> str | None:
    """The path relative to the working directory (the repository a CI job checks), None when outside it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return None
    return None if rel == ".." or rel.startswith(".." + os.sep) else rel.replace(os.sep, "/")


def format_json(diagnostics: Iterable[Diagnostic]) -> str:
    import json  # for the output formats that need it: 1 ms of a check's start otherwise

    return json.dumps([d.to_json() for d in diagnostics], indent=2) + "\n"


_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note", "hint": "note"}


def _uri(path: str) -> str:
    """A file's URI relative to the working directory (the run's %SRCROOT%), with forward slashes."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive (Windows): no relative path exists
        from pathlib import Path

        return Path(path).resolve().as_uri()
    return quote(rel.replace(os.sep, "/").replace("\\", "/"))


def _logical(d: Diagnostic) -> list[dict[str, object]]:
    """SARIF logical locations: the node (`graph/name`, a member of its graph), or the graph for a
    graph-level finding."""
    if d.graph is None:
        return []
    if d.node_index is not None:
        op_type = (d.op or "node").split(":")[0].rsplit(".", 1)[-1]
        who = d.node or f"{op_type}_{d.node_index}"  # an unnamed node as graph paths name it
        props: dict[str, object] = {"nodeIndex": d.node_index}
        if d.op:
            props["op"] = d.op
        return [{"name": who, "fullyQualifiedName": f"{d.graph}/{who}", "kind": "member", "properties": props}]
    return [{"name": d.graph, "fullyQualifiedName": d.graph, "kind": "function"}]


def _sarif_related(i: int, r: dict[str, object]) -> dict[str, object]:
    path = str(r["file"])
    rel = _in_repository(path)
    if rel is not None:
        artifact: dict[str, object] = {"uri": quote(rel), "uriBaseId": "%SRCROOT%"}
    else:
        from pathlib import Path

        artifact = {"uri": Path(path).as_uri()}
    return {"id": i, "message": {"text": r["message"]},
            "physicalLocation": {"artifactLocation": artifact, "region": {"startLine": r["line"]}}}  # fmt: skip


def format_sarif(diagnostics: Iterable[Diagnostic]) -> str:
    """SARIF 2.1.0, with the rules described from the rule docs. Artifact URIs are relative to %SRCROOT% (the
    working directory); a binary model's finding has no region but a logical location (its node)."""
    import json

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
    uris: dict[str, str] = {}
    for d in diagnostics:
        uri = uris.get(d.file)
        if uri is None:
            uri = uris[d.file] = _uri(d.file)
        physical: dict[str, object] = {"artifactLocation": {"uri": uri, "uriBaseId": "%SRCROOT%"}}
        if d.line is not None:
            physical["region"] = {"startLine": d.line, "startColumn": d.col, "endLine": d.end_line,
                                  "endColumn": d.end_col}  # fmt: skip
        location: dict[str, object] = {"physicalLocation": physical}
        logical = _logical(d)
        if logical:
            location["logicalLocations"] = logical
        result: dict[str, object] = {
            "ruleId": d.code,
            "ruleIndex": index.get(d.code, 0),
            "level": _SARIF_LEVEL.get(d.severity, "error"),
            "message": {"text": d.message},
            "locations": [location],
        }
        if d.detail:
            result["properties"] = {"detail": d.detail}
        python = [r for r in d.related if r.get("file")]
        if python:  # the Python lines that made the node (graphlsp.provenance)
            result["relatedLocations"] = [_sarif_related(i, r) for i, r in enumerate(python)]
        results.append(result)
    from pathlib import Path

    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "graphlsp", "version": __version__, "rules": rules,
                                "informationUri": "https://github.com/graphlsp/graphlsp"}},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": Path.cwd().as_uri().rstrip("/") + "/"}},
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
    """GitHub Actions workflow commands: `::error file=...,line=...,endLine=...,title=CODE::message`; a binary
    model's finding is file-level, its node in the title: `::error file=m.onnx,title=CODE node 45 "n" (Op)::...`."""
    out = []
    for g in group(diagnostics):
        d, note = g.first, g.note()
        level = _GITHUB_LEVEL.get(d.severity, "error")
        if d.line is None:
            place = located(d) if g.where() != d.file else ""
            title = f"{d.code} {place}" if place else d.code
            message = d.message
            if d.detail and d.node_index is not None:
                message += f" ({d.detail})"
            if note:
                message += f" ({note})"
            props = f"file={_escape_property(d.file)},title={_escape_property(title)}"
            out.append(f"::{level} {props}::{_escape_data(message)}\n")
            for r in d.related:  # the Python line that made the node, when the repository has the file
                rel = _in_repository(r["file"]) if r.get("file") else None
                if rel is not None:
                    where = f"{d.code} ({_shown_path(d.file)}: {place or 'the model'})"
                    props = f"file={_escape_property(rel)},line={r['line']},title={_escape_property(where)}"
                    out.append(f"::{level} {props}::{_escape_data(message)}\n")
            continue
        props = (f"file={_escape_property(d.file)},line={d.line},col={d.col},endLine={d.end_line},"
                 f"endColumn={d.end_col},title={_escape_property(d.code)}")  # fmt: skip
        message = f"{d.code} {d.message}" + (f" ({note})" if note else "")
        out.append(f"::{level} {props}::{_escape_data(message)}\n")
    return "".join(out)


def summary(diagnostics: list[Diagnostic], files: int) -> str:
    """`Found 3 errors, 1 warning in 2 files.`, or `All checks passed (2 files).`"""
    counts: dict[str, int] = {}
    for g in group(diagnostics):
        d = g.first
        # a file-level cause (52 tensors of one missing data file) is shown as one finding and counted as one
        n = 1 if g.rest and g.where() == d.file else 1 + len(g.rest)
        counts[d.severity] = counts.get(d.severity, 0) + n
    if not diagnostics:
        return f"All checks passed ({files} file{'s' if files != 1 else ''})."
    order = ["error", "warning", "info", "hint"]
    parts = [f"{counts[s]} {s}{'s' if counts[s] != 1 else ''}" for s in order if s in counts]
    return f"Found {', '.join(parts)} in {files} file{'s' if files != 1 else ''}."
