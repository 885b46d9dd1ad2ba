"""Diagnostics of every kind of open document, pushed (textDocument/publishDiagnostics) or pulled
(textDocument/diagnostic): a model's (the text's findings, its deployment checks), a binary model's view (what
`graphlsp check` says of the binary, on the view's lines), an op library's (`graphlsp check` on the `.onnxop` file).

Only the latest version's diagnostics are sent. Each is the JSON text of an LSP Diagnostic, kept per document
(`convert.DiagnosticCache`) so that an edit converts only what it changed; a failure inside graphlsp is one
internal-error diagnostic on line 1.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.protocol import default_converter

from graphlsp.analysis import Analysis
from graphlsp.lint import suppress
from graphlsp.lint.config import Settings
from graphlsp.lint.diagnostics import collect_analysis, collect_deployment
from graphlsp.lint.rules import rule
from graphlsp.lint.runner import finalize, lint_library
from graphlsp.lsp import convert, views
from graphlsp.lsp.protocol import RawJSON
from graphlsp.lsp.workspace import DocState, GraphLspServer, OpState, guard, is_library, library_path, refresh_support
from graphlsp.view import BinaryView

log = logging.getLogger("graphlsp.lsp")
_SESSION = uuid.uuid4().hex[:8]  # result ids of another server process never match this one's
_REPORTS = itertools.count(1)
_CONVERTER = default_converter()


def compute_diagnostics(ls: GraphLspServer, state: DocState) -> list[str]:
    """The document's diagnostics, each as the JSON text of an LSP Diagnostic; a failure inside graphlsp is
    one error on line 1. On the worker thread."""
    if is_library(state.uri):
        return library_diagnostics(ls, state)
    a = state.analysis
    crash = state.crash or "the document has no analysis"
    if state.view is not None:
        try:
            return view_diagnostics(ls, state)
        except Exception as e:
            log.exception("the diagnostics of %s failed", state.uri)
            crash = f"{type(e).__name__}: {e}"
    elif a is not None:
        try:
            settings = ls.settings_for(state.uri)
            if settings.fold_size_cap != a.fold_size_cap or settings.sizes != a.sizes:
                # a setting changed (the cap, the input sizes `dims`): evaluate again under the new one
                a = state.analysis = Analysis(a.doc, settings.fold_size_cap, sizes=settings.sizes)
            if not a.doc.problems:  # a half-typed text names inputs and dims that are coming
                ls.show_size_problems(a.model, settings)
            path = views.fs_path(state.uri) or state.uri
            if suppress.find(a.doc.text) != (False, []):
                return text_diagnostics(ls, state, a, settings, path)
            return _text_payload(ls, state, a, path, settings)
        except Exception as e:
            log.exception("the diagnostics of %s failed", state.uri)
            crash = f"{type(e).__name__}: {e}"
    return _internal_error(ls, state, crash)


def text_diagnostics(ls: GraphLspServer, state: DocState, a: Analysis, settings: Settings, path: str) -> list[str]:
    """A text document's diagnostics as `graphlsp check` collects them (Diagnostic objects, settings and
    suppressions applied); `compute_diagnostics` takes a shorter way to the same JSON when no suppression is
    written."""
    diags = collect_analysis(a, path)
    if a.doc.has_graph:
        diags = sorted(diags + collect_deployment(a, path, settings, incremental=True), key=lambda d: (d.start, d.code))
    diags = finalize(diags, a.doc.text, path, settings)
    return state.converted.convert(state.lines, a.doc.text, diags, state.uri, ls.encoding, _CONVERTER.unstructure)


def _text_payload(ls: GraphLspServer, state: DocState, a: Analysis, path: str, settings: Settings) -> list[str]:
    """`text_diagnostics`' JSON for a text without suppressions: the fold hints (most of a big model's
    diagnostics) from what the last computation made of them (`convert.KeptHints`), the rest made anew."""
    enc = ls.encoding
    rows = _rows(a, path, settings, hints=False)
    payload = state.converted.convert_rows(state.lines, a.doc.text, rows, state.uri, enc, _CONVERTER.unstructure)
    items = [(r[0], r[2], j) for r, j in zip(rows, payload, strict=True)]
    if a.doc.has_graph:
        items += _hint_items(state, a, path, settings, enc)
    items.sort(key=lambda x: (x[0], x[1]))  # stable: the order `_rows` gives them all (no hint ties with another)
    return [j for _, _, j in items]


def _hint_items(state: DocState, a: Analysis, path: str, settings: Settings, enc: str) -> list[tuple[int, str, str]]:
    """(start, code, JSON) of each fold hint the settings keep. A hint kept from the last computation is reused when
    it is the same hint (`FoldPlan.fold_hints` keeps the ones an edit did not move) and its node is still on the
    same statement, which was not parsed again (see `KeptHints`); the others are made."""
    plan = a.fold_plan()
    hints = plan.fold_hints()
    kept = state.kept_hints
    if kept.plan is not plan or kept.enc != enc or state.crs:
        kept.drop()
        kept.plan, kept.enc = plan, enc
    entries, replaced = kept.entries, kept.replaced
    made: dict[Any, tuple[object, Any, int, str, str]] = {}
    severity: dict[str, str | None] = {}
    size = len(a.doc.text)
    items: list[tuple[int, str, str]] = []
    redo: list[tuple[tuple[Any, str, str], convert.Row]] = []
    for hint in hints:
        node, code, message = hint
        if code not in severity:
            severity[code] = settings.severity_of(code, "hint") if settings.enabled(code, path) else None
        final = severity[code]
        if final is None:
            continue
        entry = entries.get(node)
        if entry is not None and entry[0] is hint:
            statement: Any = entry[1]
            if getattr(node.origin, "piece", None) is statement and id(statement) not in replaced and entry[3] == final:
                items.append((entry[1].origin + entry[2], code, entry[4]))
                made[node] = entry
                continue
        start, end = node.op_span or (-1, -1)
        if start < 0:  # as `_rows`: no text position, the file's start
            start = end = 0
        start = min(start, size)
        redo.append((hint, (start, min(max(start, end), size), code, final, message, [])))
    if redo:
        made_json = state.converted_hints.convert_rows(state.lines, a.doc.text, [r for _, r in redo], state.uri, enc,
                                                       _CONVERTER.unstructure)  # fmt: skip
        for (hint, row), j in zip(redo, made_json, strict=True):
            statement = getattr(hint[0].origin, "piece", None)
            if statement is not None and not state.crs:
                made[hint[0]] = (hint, statement, row[0] - statement.origin, row[3], j)
            items.append((row[0], row[2], j))
    kept.entries = made
    kept.replaced = set()  # every entry was checked against the text as it is now
    return items


def _rows(a: Analysis, path: str, settings: Settings, hints: bool = True) -> list[convert.Row]:
    """`text_diagnostics`' diagnostics, in its order, as rows, for a text without suppressions: no Diagnostic
    object per finding (a big model has a fold hint on every few nodes, and an edit rarely changes one).
    `hints`: with the fold plan's hints (else only its GL403 errors)."""
    doc = a.doc
    size = len(doc.text)
    has_graph = doc.has_graph
    found = [(p.start, p.end, p.code, p.message, "", p.related) for p in doc.problems]
    # without a graph: only that it is missing
    found += [r for r in a.finding_rows(hints) if has_graph or r[2] == "GL101"]
    if has_graph:
        for d in collect_deployment(a, path, settings, incremental=True):
            related = [(r["message"], r["start"], r["end"]) for r in d.related if "start" in r]
            found.append((d.start, d.end, d.code, d.message, d.severity, related))
    rows: list[convert.Row] = []
    enabled: dict[str, bool] = {}
    severity_of: dict[tuple[str, str], str] = {}
    for start, end, code, message, severity, related in found:  # finalize's settings
        on = enabled.get(code)
        if on is None:
            on = enabled[code] = settings.enabled(code, path)
        if not on:
            continue
        final = severity_of.get((code, severity))
        if final is None:
            final = severity_of[code, severity] = settings.severity_of(code, severity or rule(code).severity)
        if start < 0:  # as lint.diagnostics does: no text position, the file's start; a position past the end, its end
            start = end = 0
        start = min(start, size)
        rows.append((start, min(max(start, end), size), code, final, message, related))
    rows.sort(key=lambda r: (r[0], r[2]))  # stable: one sort of all, as sorting the analysis' and then merging
    return rows


def _internal_error(ls: GraphLspServer, state: DocState, crash: str) -> list[str]:
    return [json.dumps(_CONVERTER.unstructure(convert.internal_error(state.lines, crash, ls.encoding)))]


def view_diagnostics(ls: GraphLspServer, state: DocState) -> list[str]:
    """`graphlsp check` on the binary model, each finding on the view's line for its node."""
    settings = ls.settings_for(state.uri)
    view = state.view
    assert view is not None
    if settings.fold_size_cap != view.analysis.fold_size_cap or settings.sizes != view.analysis.sizes:
        # a setting changed (the cap, the sizes `dims`): render under the new one
        view = ls.view_or_error(state.path, settings.fold_size_cap)
        state.show(view)
    ls.show_size_problems(view.analysis.model, settings)
    found = views.diagnostics(view, state.path, ls.sources_for(state.uri) if view.origins else None)
    if view.analysis.doc.model.graph is not None:
        found += collect_deployment(view.analysis, state.path, settings, incremental=True)
    diags = finalize(found, "", state.path, settings)
    return state.converted.convert(state.lines, view.text, diags, state.uri, ls.encoding, _CONVERTER.unstructure)


def library_diagnostics(ls: GraphLspServer, state: DocState) -> list[str]:
    """An op library's diagnostics as `graphlsp check` reports them (GL601 syntax, GL602 declaration errors,
    GL603 warnings), of the analysis graphlsp/lsp/opdocs.py keeps."""
    ops = state.library
    doc = ops.doc if isinstance(ops, OpState) else None
    if doc is not None and doc.text == state.text:
        try:
            path = library_path(state.uri) or state.uri
            diags = lint_library(doc.text, path, ls.settings_for(state.uri), doc)
            return state.converted.convert(state.lines, doc.text, diags, state.uri, ls.encoding,
                                           _CONVERTER.unstructure)  # fmt: skip
        except Exception as e:
            log.exception("the diagnostics of %s failed", state.uri)
            state.crash = f"{type(e).__name__}: {e}"
    return _internal_error(ls, state, state.crash or "the document has no analysis")


async def publish_if_latest(ls: GraphLspServer, state: DocState, version: int) -> None:
    """A push client is sent the document's diagnostics, when `version` is still the latest once they are done."""
    if ls.pull_client or state.version != version:
        return
    payload = await ls.submit(state, lambda: compute_diagnostics(ls, state))
    if state.version == version:  # still the newest: never send stale results
        state.published = version
        ls.publish(state, version, payload)
    await publish_on_python(ls, state)


async def publish_on_python(ls: GraphLspServer, state: DocState) -> None:
    """`serve --source-diagnostics`: a view's findings that a Python line made, published on that Python file
    too (a file no longer named is sent the other models' only, or an empty list)."""
    if not ls.source_diagnostics or state.view is None:
        return
    by_file = await ls.submit(state, lambda: _python_payload(ls, state))
    before = ls.python_published.get(state.path, {})
    ls.python_published[state.path] = by_file
    publish_python_files(ls, set(before) | set(by_file))


def _python_payload(ls: GraphLspServer, state: DocState) -> dict[str, list[str]]:
    """Each Python file's diagnostics (LSP JSON) from the view's findings. On the worker thread."""
    view = state.view
    assert view is not None
    settings = ls.settings_for(state.uri)
    diags = finalize(views.diagnostics(view, state.path, ls.sources_for(state.uri)), "", state.path, settings)
    by_file: dict[str, list[str]] = {}
    name = os.path.basename(state.path)
    for d in diags:
        for r in d.related:
            if r.get("file"):
                where = f"{name}: {d.detail}"
                if d.node_index is not None:
                    where = f"{name}: node {d.node_index}" + (f' "{d.node}"' if d.node else "")
                line = max(0, int(r["line"]) - 1)
                item = lsp.Diagnostic(range=lsp.Range(start=lsp.Position(line=line, character=0),
                                                      end=lsp.Position(line=line + 1, character=0)),
                                      message=f"{d.message} ({where})", severity=convert.SEVERITY.get(d.severity),
                                      code=d.code, source="graphlsp")  # fmt: skip
                by_file.setdefault(r["file"], []).append(json.dumps(_CONVERTER.unstructure(item)))
    return by_file


def publish_python_files(ls: GraphLspServer, files: set[str]) -> None:
    """Each Python file's diagnostics: those of every model that published on it (`python_published`)."""
    for file in sorted(files):
        items = [item for found in ls.python_published.values() for item in found.get(file, [])]
        params = f'{{"uri":{json.dumps(Path(file).as_uri())},"diagnostics":[{",".join(items)}]}}'
        ls.protocol.notify_json(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, RawJSON(params))


async def apply_and_publish(ls: GraphLspServer, state: DocState, version: int, change: Callable[[], None]) -> None:
    """`change` applied to the document on the worker, then `publish_if_latest` in the same job: one hop between
    the threads for an edit, not two."""

    def job() -> list[str] | None:
        change()
        if ls.pull_client or state.version != version:
            return None
        return compute_diagnostics(ls, state)

    payload = await ls.submit(state, job)
    if payload is not None and state.version == version:  # still the newest: never send stale results
        state.published = version
        ls.publish(state, version, payload)
        await publish_on_python(ls, state)


async def refresh_view(ls: GraphLspServer, path: str) -> BinaryView:
    """The model's current view; the open documents showing an older one show this one, their clients are told
    to fetch its text, and its diagnostics are sent again (or a pull client asked to pull them)."""
    cap = ls.cap_of(path)
    view = await ls.on_worker(lambda: ls.view_or_error(path, cap))
    for state in [s for s in list(ls.docs.values()) if s.path == path]:
        if state.view is view:
            continue
        await ls.submit(state, lambda st=state: st.show(view))  # type: ignore[misc]
        ls.view_shown(state)
        await publish_if_latest(ls, state, state.version)
    if ls.pull_client and refresh_support(ls, "diagnostics"):
        ls.workspace_diagnostic_refresh(None)
    return view


@guard(lsp.RelatedFullDocumentDiagnosticReport(items=[]))
async def pull_diagnostics(
    ls: GraphLspServer, params: lsp.DocumentDiagnosticParams
) -> lsp.DocumentDiagnosticReport | RawJSON:
    state = await ls.current(params.text_document.uri)
    if state is None:
        return lsp.RelatedFullDocumentDiagnosticReport(items=[])
    payload = await ls.submit(state, lambda: compute_diagnostics(ls, state))
    if payload != state.reported:  # the cache hands back the same str objects: a compare of pointers mostly
        state.reported = payload
        state.report_id = f"{_SESSION}-{state.version}-{next(_REPORTS)}"
    await publish_on_python(ls, state)  # (pushed: the Python files are not the client's to pull from graphlsp)
    if params.previous_result_id == state.report_id:
        return lsp.RelatedUnchangedDocumentDiagnosticReport(result_id=state.report_id)
    return RawJSON(f'{{"kind":"full","resultId":"{state.report_id}","items":[{",".join(payload)}]}}')
