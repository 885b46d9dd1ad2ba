"""Diagnostics from every layer of one file, in people's coordinates (1-based lines and columns)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graphlsp.lint.rules import rule

if TYPE_CHECKING:
    from graphlsp.analysis import Analysis, ModelAnalysis
    from graphlsp.graph.core import Node
    from graphlsp.graph.findings import Finding
    from graphlsp.lint.config import Settings
    from graphlsp.oplib.query import OpDocument
    from graphlsp.syntax.document import SyntaxDocument


_FIELDS = ("file", "line", "col", "end_line", "end_col", "severity", "code", "name", "message", "start", "end",
           "related", "graph", "node", "node_index", "op", "detail", "excerpt")  # fmt: skip


class Diagnostic:
    """One finding in people's coordinates. A binary model has no lines: line and col are None there, and the
    finding is located by `graph` (its path), `node` (name), `node_index` and `op`, with `excerpt` the node in
    one line of ONNX text; `detail` names the part of the node (`input 1 (x)`, `attribute axis`).

    (A plain class, as the other classes a check creates: a dataclass compiles its methods at every start-up.)"""

    __slots__ = _FIELDS

    file: str
    line: int | None
    col: int | None
    end_line: int | None
    end_col: int | None
    severity: str
    code: str
    name: str
    message: str
    start: int  # offsets into the text, for editors and fixes
    end: int
    related: list[dict[str, Any]]
    graph: str | None
    node: str | None
    node_index: int | None
    op: str | None
    detail: str
    excerpt: str

    def __init__(
        self, file: str, line: int | None, col: int | None, end_line: int | None, end_col: int | None, severity: str,
        code: str, name: str, message: str, start: int = 0, end: int = 0, related: list[dict[str, Any]] | None = None,
        graph: str | None = None, node: str | None = None, node_index: int | None = None, op: str | None = None,
        detail: str = "", excerpt: str = "",
    ) -> None:  # fmt: skip
        self.file, self.line, self.col, self.end_line, self.end_col = file, line, col, end_line, end_col
        self.severity, self.code, self.name, self.message = severity, code, name, message
        self.start, self.end, self.related = start, end, [] if related is None else related
        self.graph, self.node, self.node_index, self.op = graph, node, node_index, op
        self.detail, self.excerpt = detail, excerpt

    def __repr__(self) -> str:
        return f"Diagnostic({', '.join(f'{n}={getattr(self, n)!r}' for n in _FIELDS)})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not Diagnostic:
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in _FIELDS)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass was

    def to_json(self) -> dict[str, Any]:
        d = {n: getattr(self, n) for n in _FIELDS if n not in ("start", "end", "excerpt", "related", "detail")}
        if self.detail:  # in the dataclass's field order: `detail` after `op`
            d["detail"] = self.detail
        related = [{k: v for k, v in r.items() if k not in ("start", "end")} for r in self.related]
        if related:
            d = {**{k: v for k, v in d.items() if k in _FIELDS[:11]}, "related": related,
                 **{k: v for k, v in d.items() if k not in _FIELDS[:11]}}  # fmt: skip
        return d


FIELDS = _FIELDS  # in the constructor's order
_MESSAGE: Any = Diagnostic.__dict__["message"]  # the slots _Deferred's properties read and write
_EXCERPT: Any = Diagnostic.__dict__["excerpt"]


class _Deferred(Diagnostic):
    """A binary model's diagnostic whose message and excerpt are made when first read: the command line shows
    hints only when asked (a fold hint's message previews values), and only the text output shows excerpts."""

    __slots__ = ("_finding", "_node")  # (the constructor's message and excerpt, through the setters, clear them)

    _finding: Finding | None
    _node: Node | None

    @classmethod
    def of(cls, path: str, severity: str, name: str, f: Finding, node: Node) -> _Deferred:
        """The diagnostic of a finding on a node."""
        d = cls(path, None, None, None, None, severity, f.code, name, "", detail=f.detail)
        d._finding, d._node = f, node
        return d

    @property
    def message(self) -> str:
        f = self._finding
        if f is not None:
            _MESSAGE.__set__(self, f.message)
            self._finding = None
        text: str = _MESSAGE.__get__(self, Diagnostic)
        return text

    @message.setter
    def message(self, value: str) -> None:
        _MESSAGE.__set__(self, value)
        self._finding = None

    @property
    def excerpt(self) -> str:
        node = self._node
        if node is not None:
            from graphlsp.syntax.printer import node_line

            _EXCERPT.__set__(self, node_line(node, EXCERPT))
            self._node = None
        text: str = _EXCERPT.__get__(self, Diagnostic)
        return text

    @excerpt.setter
    def excerpt(self, value: str) -> None:
        _EXCERPT.__set__(self, value)
        self._node = None

    def __eq__(self, other: object) -> bool:  # as a Diagnostic's, with a Diagnostic too: by the fields
        if not isinstance(other, Diagnostic):
            return NotImplemented
        return all(getattr(self, k) == getattr(other, k) for k in FIELDS)

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:  # pickled (for the process pool) and copied as a Diagnostic
        return Diagnostic, tuple(getattr(self, k) for k in FIELDS)


def _make(
    doc: SyntaxDocument, path: str, code: str, message: str, start: int, end: int, severity: str | None,
    related: list[tuple[str, int, int]], node: Node | None = None,
) -> Diagnostic:  # fmt: skip
    r = rule(code)
    if start < 0:  # a finding with no text position (a node read from a schema's function body)
        start = end = 0
    size = len(doc.text)  # a statement recovery closed may end past a truncated file
    start, end = min(start, size), min(max(start, end), size)
    line, col = doc.lines.position(start)
    end_line, end_col = doc.lines.position(max(start, end))
    rel = []
    for msg, s, e in related:
        rl, rc = doc.lines.position(s)
        rel.append({"message": msg, "line": rl + 1, "col": rc + 1, "start": s, "end": e})
    d = Diagnostic(
        path, line + 1, col + 1, end_line + 1, end_col + 1, severity or r.severity, code, r.name, message,
        start, max(start, end), rel,
    )  # fmt: skip
    if node is not None:
        _locate(d, node)
    return d


def _locate(d: Diagnostic, node: Node) -> None:
    d.graph = node.graph.path
    d.node = node.name
    d.node_index = node.index
    d.op = node.qualified_op


DEPLOYMENT = ("GL701", "GL702", "GL703")


def deployment_findings(analysis: Analysis | ModelAnalysis, path: str, settings: Settings,
                        incremental: bool = False) -> list[Finding]:  # fmt: skip
    """The GL7xx findings for the settings' targets; nothing (and no kernel table read) when they are all off.
    `incremental`: the editor's analysis, kept across edits (only what an edit changed is looked up again)."""
    if not settings.targets or not any(settings.enabled(c, path) for c in DEPLOYMENT):
        return []
    from graphlsp.lint.deployment import deployment_findings as check
    from graphlsp.runtime.kernels import TargetError

    try:
        return check(analysis.model, analysis.refiner, settings.targets, incremental)
    except TargetError:  # a target no table describes (the settings said so already)
        return []


def collect_deployment(analysis: Analysis, path: str, settings: Settings,
                       incremental: bool = False) -> list[Diagnostic]:  # fmt: skip
    """GL7xx diagnostics of a text document."""
    doc = analysis.doc
    return [_make(doc, path, f.code, f.message, f.start, f.end, f.severity, list(f.related), f.node)
            for f in deployment_findings(analysis, path, settings, incremental)]  # fmt: skip


def collect_binary(analysis: ModelAnalysis, path: str, settings: Settings | None = None) -> list[Diagnostic]:
    """Diagnostics of a model without text, located by node (GL7xx too, given the settings). A diagnostic on a
    node makes its message and excerpt when they are first read."""
    out: list[Diagnostic] = []
    extra = deployment_findings(analysis, path, settings) if settings is not None else []
    sources = None
    for f in [*analysis.findings(), *extra]:
        r = rule(f.code)
        if f.node is not None:
            d: Diagnostic = _Deferred.of(path, f.severity or r.severity, r.name, f, f.node)
            _locate(d, f.node)
            if f.node.origin.metadata:  # the exporter says which Python line made the node
                if sources is None:
                    sources = python_sources(settings)
                d.related = python_related(f.node, sources)
        else:
            d = Diagnostic(path, None, None, None, None, f.severity or r.severity, f.code, r.name, f.message,
                           detail=f.detail)  # fmt: skip
            if analysis.model.graph is not None:
                d.graph = analysis.model.graph.path
            if f.cause is not None and f.cause.origin.metadata:
                if sources is None:
                    sources = python_sources(settings)
                d.related = python_related(f.cause, sources)
        out.append(d)
    return out


def python_sources(settings: Settings | None, roots: list[str] | None = None) -> Any:
    """Where a node's Python files are looked for (`graphlsp.provenance.locate.Sources`): the workspace (`roots`,
    else the settings' folder, else the working directory) and the settings' `path-map`."""
    import os

    from graphlsp.provenance.locate import Sources

    root = settings.root if settings is not None else None
    return Sources(roots or [root or os.getcwd()], settings.path_map if settings is not None else {})


def python_related(node: Node, sources: Any) -> list[dict[str, Any]]:
    """A binary node's related information: the Python line that made it (graphlsp.provenance)."""
    from graphlsp.provenance.describe import related

    return related(node, sources)


EXCERPT = 200  # characters: the most of a source line or node any output echoes


def collect_analysis(analysis: Analysis, path: str = "<text>") -> list[Diagnostic]:
    """Diagnostics of an up-to-date Analysis (the editor keeps one per open document)."""
    doc = analysis.doc
    out = [_make(doc, path, p.code, p.message, p.start, p.end, None, p.related) for p in doc.problems]
    for f in analysis.findings():
        if doc.model.graph is not None or f.code == "GL101":  # without a graph: only that it is missing
            out.append(_make(doc, path, f.code, f.message, f.start, f.end, f.severity, list(f.related), f.node))
    out.sort(key=lambda d: (d.start, d.code))
    return out


def collect_library(doc: OpDocument, path: str) -> list[Diagnostic]:
    """The problems of an op library file (`*.onnxop`): GL601 syntax errors, GL602 declaration errors, GL603
    warnings, each at its place (the editor and `graphlsp check` report the same)."""
    from graphlsp.oplib.query import problem_code

    out = []
    size = len(doc.text)
    for p in doc.library.problems:
        code = problem_code(p)
        r = rule(code)
        loc = p.loc
        start, end = min(loc.start, size), min(max(loc.start, loc.end), size)
        line, col = max(1, loc.line), max(1, loc.col)
        out.append(Diagnostic(path, line, col, max(line, loc.end_line), max(1, loc.end_col), p.severity, code, r.name,
                              p.message, start, end))  # fmt: skip
    out.sort(key=lambda d: (d.start, d.code))
    return out


def collect(doc: SyntaxDocument, path: str = "<text>") -> list[Diagnostic]:
    """Syntax problems, structural findings of the graph and shape findings, sorted by position."""
    from graphlsp.analysis import Analysis

    return collect_analysis(Analysis(doc), path)
