"""graphlsp's language server (pygls 2): document sync, diagnostics (push or pull), hover, definition,
references, document highlight and symbols, on ONNX text and on read-only text views of binary models.

Thin by design: it keeps one `Analysis` per open document, applies each incremental change to it in order on a
single worker thread (off the event loop), and translates positions and results. A document's newer version
supersedes older work: diagnostics are only computed and sent for the latest version.

No edit is ever lost: a queued job is never cancelled (a cancelled request only stops waiting for it), and the
document's text is kept apart from its analysis, so that a crash of the analysis costs the analysis (reported as an
internal-error diagnostic on line 1, and tried again at the next edit), never the text. Positions count lines as
LSP does (`\r\n`, `\n` and a lone `\r`).

A `.onnx` document (its `file:` URI, or the same path under the `graphlsp-view:` scheme) is a view: the server
reads the file and renders it as ONNX text (`graphlsp.view`), whatever text the client sent, once per version of
the file on disk. The client gets the same text from the `graphlsp.renderView` command; edits to a view are
refused (window/showMessage), and when the file changes (workspace/didChangeWatchedFiles, a re-open, a
renderView) the view is rendered again and the client told (`graphlsp/viewChanged`) to fetch it.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import json
import logging
import os
import sys
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.protocol import default_converter

from graphlsp import __version__, query
from graphlsp.analysis import Analysis, warm_up
from graphlsp.graph.core import Node
from graphlsp.lint.config import ConfigError, Settings, from_editor, load_settings
from graphlsp.lint.diagnostics import collect_analysis, collect_deployment
from graphlsp.lint.runner import finalize
from graphlsp.lsp import convert, opdocs, views
from graphlsp.lsp import graphs as graph_request
from graphlsp.lsp.protocol import ChunkedStdin, ErrorReply, GraphLspProtocol, RawJSON
from graphlsp.syntax.positions import LineIndex
from graphlsp.view import BinaryView, render

log = logging.getLogger("graphlsp.lsp")
_SESSION = uuid.uuid4().hex[:8]  # result ids of another server process never match this one's
_REPORTS = itertools.count(1)
_CONVERTER = default_converter()
T = TypeVar("T")


# Tests only (tests/lsp): with GRAPHLSP_TEST_CRASH_MARKER set, analysing a text that holds the marker raises, as a
# bug in the analysis would. Unset, nothing is checked.
_CRASH_MARKER = os.environ.get("GRAPHLSP_TEST_CRASH_MARKER", "")


def _crash_if_marked(text: str) -> None:
    if _CRASH_MARKER and _CRASH_MARKER in text:
        raise RuntimeError("injected by GRAPHLSP_TEST_CRASH_MARKER")


@dataclass
class DocState:
    """One open document. `text` is always the client's text, whatever became of its analysis: when the analysis
    fails (`analysis` None, `crash` the error), edits still go to the text, and each one analyses it afresh."""

    uri: str
    version: int = 0
    text: str = ""
    analysis: Analysis | None = None
    crash: str = ""  # why the analysis of the text failed (the exception, without its traceback and frames)
    last: asyncio.Future[Any] | None = None  # the most recent job touching this document
    published: int = -1
    converted: convert.DiagnosticCache = field(default_factory=convert.DiagnosticCache)
    reported: list[str] | None = None  # the diagnostics of the last pull answer, and its result id
    report_id: str = ""
    crs: int = 0  # how many \r the text holds
    own_lines: convert.LspLines | None = None  # kept while the text holds a \r or has no analysis
    # a view of a binary model: `view` is what the document shows (its analysis is `analysis`), `text` the
    # client's copy (the same text unless the client edited it, which is refused), `path` the model's file
    view: BinaryView | None = None
    path: str = ""
    refused: bool = False  # the client was told that its edit is not applied (until its text is the view again)
    library: Any = None  # an op library document (*.onnxop): its analysis (graphlsp/lsp/opdocs.py)

    @property
    def lines(self) -> LineIndex:
        """The text's lines as LSP counts them: the syntax's own index (in step with the analysis, no extra cost)
        unless the text holds a \r, which only LSP takes for a line end."""
        if self.own_lines is None:
            if self.analysis is not None:
                return self.analysis.doc.lines
            self.own_lines = convert.LspLines(self.text)
        return self.own_lines

    def open(self, text: str, cap: int) -> None:
        """The whole text, new (didOpen, or a change without a range)."""
        self.text, self.crs, self.own_lines = text, text.count("\r"), None
        self._analyse(cap)
        if self.crs or self.analysis is None:
            self.own_lines = convert.LspLines(text)

    def edit(self, start: int, end: int, new: str, cap: int) -> None:
        """text[start:end] replaced by `new`: the analysis follows the edit, or, failing, starts again."""
        old = self.text
        start = max(0, min(start, len(old)))
        end = max(start, min(end, len(old)))
        self.crs += new.count("\r") - old.count("\r", start, end)
        a = self.analysis
        if a is not None:
            try:
                a.apply_edit(start, end, new)
                _crash_if_marked(a.doc.text)
                self.text = a.doc.text
            except Exception:
                log.exception("the analysis failed on an edit of %s: analysing the text again", self.uri)
                a = None
        if a is None:
            self.text = old[:start] + new + old[end:]
            self._analyse(cap)
        if not self.crs and self.analysis is not None:
            self.own_lines = None
        elif self.own_lines is not None and self.own_lines.text is old:
            self.own_lines.replace(start, end, new, self.text)
        else:
            self.own_lines = convert.LspLines(self.text)

    def show(self, view: BinaryView) -> None:
        """A view document shows this rendering of its model."""
        self.view, self.analysis, self.crash, self.own_lines = view, view.analysis, "", None
        if self.text == view.text:
            self.refused = False

    def apply_to_client_text(self, changes: list[lsp.TextDocumentContentChangeEvent], enc: str) -> None:
        """A view's client text after the client's changes (the view itself does not change)."""
        text = self.text
        lines: convert.LspLines | None = None
        for change in changes:
            if isinstance(change, lsp.TextDocumentContentChangePartial):
                lines = lines if lines is not None else convert.LspLines(text)
                start = convert.offset(lines, change.range.start, enc)
                end = max(start, convert.offset(lines, change.range.end, enc))
                new = text[:start] + change.text + text[end:]
                lines.replace(start, end, change.text, new)
                text = new
            else:
                text, lines = change.text, None
        self.text = text
        if self.view is not None and text == self.view.text:
            self.refused = False

    def _analyse(self, cap: int) -> None:
        self.analysis, self.crash = None, ""
        try:
            _crash_if_marked(self.text)
            self.analysis = Analysis(self.text, cap)
        except Exception as e:
            log.exception("the analysis of %s failed", self.uri)
            self.crash = f"{type(e).__name__}: {e}"


class GraphLspServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("graphlsp", __version__, protocol_cls=GraphLspProtocol)
        self.protocol: GraphLspProtocol
        self.docs: dict[str, DocState] = {}
        self.options: dict[str, Any] = {}  # the editor's settings (initializationOptions, workspace/configuration)
        self._settings: dict[str, Settings] = {}  # per document; emptied when any setting changes
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="graphlsp-analysis")
        self.views: dict[str, BinaryView] = {}  # path -> its latest rendering (touched on the worker thread only)
        self.loop: asyncio.AbstractEventLoop | None = None  # the one messages are sent from (set at initialize)
        self._config_errors_shown: set[str] = set()  # each shown once, until a setting changes

    @property
    def encoding(self) -> str:
        return convert.encoding_of(self.workspace.position_encoding)

    @property
    def pull_client(self) -> bool:
        caps = getattr(self.protocol, "client_capabilities", None)
        td = getattr(caps, "text_document", None)
        return getattr(td, "diagnostic", None) is not None

    def submit(self, state: DocState, fn: Callable[[], T]) -> asyncio.Future[T]:
        """Run fn on the analysis thread after every job already queued for the document.

        A queued job always runs: what is awaited is a shield around it, so cancelling a request ($/cancelRequest)
        that waits for it cancels the wait, never the job (an edit would be lost, and `last` done too early)."""
        fut: asyncio.Future[T] = asyncio.get_running_loop().run_in_executor(self.worker, fn)
        state.last = fut
        return asyncio.shield(fut)

    async def current(self, uri: str) -> DocState | None:
        """The document once every queued change has been applied."""
        state = self.docs.get(uri)
        if state is None:
            return None
        while state.last is not None and not state.last.done():
            try:
                await asyncio.shield(state.last)
            except asyncio.CancelledError:
                if state.last.cancelled():  # never, as submit's jobs are never cancelled; do not spin
                    break
                raise
            except Exception:
                log.exception("analysis job failed")
        return state

    async def current_heavy(self, uri: str) -> DocState | None:
        """`current`, for a request that takes long on a big file (symbols, semantic tokens, code actions): it
        lets the requests that waited for the same job (a hover, a completion, a pull of the diagnostics) be
        answered first, as the loop answers one request at a time.

        The requests a job wakes are resumed in the order they began waiting, each in a turn of the loop, and
        their answers go out a turn later; those that begin waiting on a job done already (a wait of a shield)
        resume within two turns. So this one steps aside for three turns, and again after any job queued
        meanwhile."""
        while True:
            state = await self.current(uri)
            if state is None:
                return None
            last = state.last
            for _ in range(3):
                await asyncio.sleep(0)
            if state is self.docs.get(uri) and state.last is last:
                return state

    def on_worker(self, fn: Callable[[], T]) -> asyncio.Future[T]:
        """fn on the analysis thread, after every job queued (for no document in particular)."""
        return asyncio.get_running_loop().run_in_executor(self.worker, fn)

    def view_of(self, path: str, cap: int) -> BinaryView:
        """The model's view, rendered again when the file changed since (or the fold size cap did). On the
        worker thread. Raises OSError."""
        view = self.views.pop(path, None)
        sizes = self.settings_for(Path(path).as_uri()).sizes  # `dims`: the sizes to check the model at
        if view is None or not view.current() or view.analysis.fold_size_cap != cap or view.analysis.sizes != sizes:
            view = render(path, cap, sizes)
        self.views[path] = view  # the most recently used last
        shown = {s.path for s in list(self.docs.values()) if s.view is not None}
        spare = [p for p in self.views if p not in shown and p != path]
        for p in spare[: max(0, len(spare) - 2)]:  # a few rendered for no open document (renderView before didOpen)
            del self.views[p]
        return view

    def view_or_error(self, path: str, cap: int) -> BinaryView:
        try:
            return self.view_of(path, cap)
        except OSError as e:
            log.warning("cannot read %s: %s", path, e)
            return views.unreadable(path, e, cap)

    def cap_of(self, path: str) -> int:
        return self.settings_for(Path(path).as_uri()).fold_size_cap

    async def refresh_view(self, path: str) -> BinaryView:
        """The model's current view; the open documents showing an older one show this one, and their clients
        are told to fetch its text."""
        cap = self.cap_of(path)
        view = await self.on_worker(lambda: self.view_or_error(path, cap))
        for state in [s for s in list(self.docs.values()) if s.path == path]:
            if state.view is view:
                continue
            await self.submit(state, lambda st=state: st.show(view))  # type: ignore[misc]
            self.view_shown(state)
            await _publish_if_latest(self, state, state.version)
        if self.pull_client and _refresh_support(self, "diagnostics"):
            self.workspace_diagnostic_refresh(None)
        return view

    def view_shown(self, state: DocState) -> None:
        """After a view document's view changed: a client that holds another text is told to fetch the view."""
        if state.view is not None and state.text != state.view.text:
            self.protocol.notify(views.VIEW_CHANGED, {"uri": state.uri, "path": state.path})

    def settings_for(self, uri: str) -> Settings:
        """`[tool.graphlsp]` of the file's project, with the editor's settings on top."""
        found = self._settings.get(uri)
        if found is not None:
            return found
        path = views.fs_path(uri) or "."
        try:
            found = from_editor(load_settings(path if os.path.exists(path) else "."), self.options)
        except Exception as e:  # the file's diagnostics go on, with the defaults; the user is told why
            if isinstance(e, ConfigError):
                message = f"graphlsp: configuration error, default settings in use: {e}"
            else:
                log.exception("reading the settings failed")
                message = f"graphlsp: reading the settings failed ({type(e).__name__}: {e}); default settings in use"
            self._show_config_error(message)
            found = Settings()
        self._settings[uri] = found
        return found

    def forget_settings(self) -> None:
        self._settings.clear()
        self._config_errors_shown.clear()

    def _show_config_error(self, message: str) -> None:
        """window/showMessage, once per message; from the event loop's thread (settings are also read on the
        analysis worker's)."""
        log.warning("%s", message)
        if message in self._config_errors_shown or self.loop is None or self.loop.is_closed():
            return
        self._config_errors_shown.add(message)
        params = lsp.ShowMessageParams(type=lsp.MessageType.Error, message=message)
        self.loop.call_soon_threadsafe(self.window_show_message, params)

    def compute_diagnostics(self, state: DocState) -> list[str]:
        """The document's diagnostics, each as the JSON text of an LSP Diagnostic; a failure inside graphlsp is
        one error on line 1."""
        if opdocs.is_library(state.uri):
            return opdocs.diagnostics(self, state)
        a = state.analysis
        crash = state.crash or "the document has no analysis"
        if state.view is not None:
            try:
                return self.view_diagnostics(state)
            except Exception as e:
                log.exception("the diagnostics of %s failed", state.uri)
                crash = f"{type(e).__name__}: {e}"
        elif a is not None:
            try:
                settings = self.settings_for(state.uri)
                if settings.fold_size_cap != a.fold_size_cap or settings.sizes != a.sizes:
                    # a setting changed (the cap, the input sizes `dims`): evaluate again under the new one
                    a = state.analysis = Analysis(a.doc, settings.fold_size_cap, sizes=settings.sizes)
                path = views.fs_path(state.uri) or state.uri
                diags = collect_analysis(a, path)
                if a.doc.model.graph is not None:
                    diags = sorted(diags + collect_deployment(a, path, settings, incremental=True),
                                   key=lambda d: (d.start, d.code))
                diags = finalize(diags, a.doc.text, path, settings)
                return state.converted.convert(state.lines, a.doc.text, diags, state.uri, self.encoding,
                                               _CONVERTER.unstructure)  # fmt: skip
            except Exception as e:
                log.exception("the diagnostics of %s failed", state.uri)
                crash = f"{type(e).__name__}: {e}"
        return [json.dumps(_CONVERTER.unstructure(convert.internal_error(state.lines, crash, self.encoding)))]

    def view_diagnostics(self, state: DocState) -> list[str]:
        """`graphlsp check` on the binary model, each finding on the view's line for its node."""
        settings = self.settings_for(state.uri)
        view = state.view
        assert view is not None
        if settings.fold_size_cap != view.analysis.fold_size_cap or settings.sizes != view.analysis.sizes:
            # a setting changed (the cap, the sizes `dims`): render under the new one
            view = self.view_or_error(state.path, settings.fold_size_cap)
            state.show(view)
        found = views.diagnostics(view, state.path)
        if view.analysis.doc.model.graph is not None:
            found += collect_deployment(view.analysis, state.path, settings, incremental=True)
        diags = finalize(found, "", state.path, settings)
        return state.converted.convert(state.lines, view.text, diags, state.uri, self.encoding, _CONVERTER.unstructure)

    def publish(self, state: DocState, version: int, payload: list[str]) -> None:
        """publishDiagnostics from the diagnostics' JSON text (pygls would convert and serialize each again)."""
        params = f'{{"uri":{json.dumps(state.uri)},"version":{version},"diagnostics":[{",".join(payload)}]}}'
        self.protocol.notify_json(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, RawJSON(params))


server = GraphLspServer()


@server.feature(lsp.INITIALIZE)
async def initialize(ls: GraphLspServer, params: lsp.InitializeParams) -> None:
    ls.loop = asyncio.get_running_loop()
    if isinstance(params.initialization_options, dict):
        ls.options = dict(params.initialization_options.get("graphlsp", params.initialization_options))
    try:  # the once-per-process costs, paid before the client sends its first document
        await asyncio.get_running_loop().run_in_executor(ls.worker, warm_up)
    except Exception:
        log.exception("warm-up failed")


async def _fetch_configuration(ls: GraphLspServer) -> None:
    caps = getattr(ls.protocol, "client_capabilities", None)
    if not getattr(getattr(caps, "workspace", None), "configuration", False):
        return
    try:
        result = await ls.workspace_configuration_async(
            lsp.ConfigurationParams(items=[lsp.ConfigurationItem(section="graphlsp")])
        )
    except Exception:
        log.exception("workspace/configuration failed")
        return
    if result and isinstance(result[0], dict):
        ls.options = {**ls.options, **result[0]}
        ls.forget_settings()


@server.feature(lsp.INITIALIZED)
async def initialized(ls: GraphLspServer, params: lsp.InitializedParams) -> None:
    await _fetch_configuration(ls)


@server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def configuration_changed(ls: GraphLspServer, params: lsp.DidChangeConfigurationParams) -> None:
    settings = params.settings
    if isinstance(settings, dict) and isinstance(settings.get("graphlsp"), dict):
        ls.options = {**ls.options, **settings["graphlsp"]}
        ls.forget_settings()
    else:
        await _fetch_configuration(ls)
    for state in list(ls.docs.values()):
        await _publish_if_latest(ls, state, state.version)
    workspace = getattr(getattr(ls.protocol, "client_capabilities", None), "workspace", None)
    if ls.pull_client and getattr(getattr(workspace, "diagnostics", None), "refresh_support", False):
        ls.workspace_diagnostic_refresh(None)
    if getattr(getattr(workspace, "inlay_hint", None), "refresh_support", False):
        ls.workspace_inlay_hint_refresh(None)  # hints depend on the settings: have the editor ask again


def _guard(default: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A failure inside one feature is logged and answered with `default`; the server keeps going."""

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        # functools.wraps keeps the signature: pygls looks at it to decide whether to pass the server.
        if asyncio.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def run_async(*args: Any) -> Any:
                try:
                    return await fn(*args)
                except Exception:
                    log.exception("%s failed", fn.__name__)
                    return default

            return run_async

        @functools.wraps(fn)
        def run(*args: Any) -> Any:
            try:
                return fn(*args)
            except Exception:
                log.exception("%s failed", fn.__name__)
                return default

        return run

    return wrap


async def _publish_if_latest(ls: GraphLspServer, state: DocState, version: int) -> None:
    if ls.pull_client or state.version != version:
        return
    payload = await ls.submit(state, lambda: ls.compute_diagnostics(state))
    if state.version == version:  # still the newest: never send stale results
        state.published = version
        ls.publish(state, version, payload)


def _refresh_support(ls: GraphLspServer, kind: str) -> bool:
    """Whether the client takes workspace/<kind>/refresh (diagnostics, inlayHint, semanticTokens)."""
    workspace = getattr(getattr(ls.protocol, "client_capabilities", None), "workspace", None)
    attr = {"diagnostics": "diagnostics", "inlayHint": "inlay_hint", "semanticTokens": "semantic_tokens"}[kind]
    return bool(getattr(getattr(workspace, attr, None), "refresh_support", False))


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
@_guard(None)
async def did_open(ls: GraphLspServer, params: lsp.DidOpenTextDocumentParams) -> None:
    doc = params.text_document
    if opdocs.is_library(doc.uri):
        state = ls.docs[doc.uri] = DocState(doc.uri, doc.version, doc.text)
        return await opdocs.opened(ls, state)
    path = views.view_path(doc.uri)
    state = ls.docs[doc.uri] = DocState(doc.uri, doc.version, doc.text, path=path or "")
    ls._settings.pop(doc.uri, None)  # the project's config may have changed since
    if path is not None:  # a binary model: the server's rendering, not the client's text
        ls._settings.pop(Path(path).as_uri(), None)
        cap = ls.settings_for(doc.uri).fold_size_cap
        await ls.submit(state, lambda: state.show(ls.view_or_error(path, cap)))
        ls.view_shown(state)
    else:
        await ls.submit(state, lambda: state.open(doc.text, ls.settings_for(doc.uri).fold_size_cap))
    await _publish_if_latest(ls, state, doc.version)


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
@_guard(None)
async def did_change(ls: GraphLspServer, params: lsp.DidChangeTextDocumentParams) -> None:
    state = ls.docs.get(params.text_document.uri)
    if state is None:
        return
    if opdocs.is_library(state.uri):
        return await opdocs.changed(ls, state, params)
    version = params.text_document.version
    state.version = version
    changes = list(params.content_changes)
    enc = ls.encoding
    if state.view is not None:
        await _view_changed_by_client(ls, state, changes, version)
        return

    def apply() -> None:
        cap = ls.settings_for(state.uri).fold_size_cap
        for change in changes:
            if isinstance(change, lsp.TextDocumentContentChangePartial):
                lines = state.lines
                start = convert.offset(lines, change.range.start, enc)
                end = convert.offset(lines, change.range.end, enc)
                state.edit(start, end, change.text, cap)
            else:
                state.open(change.text, cap)

    await ls.submit(state, apply)
    await _publish_if_latest(ls, state, version)


async def _view_changed_by_client(ls: GraphLspServer, state: DocState, changes: list[Any], version: int) -> None:
    """A change to a view's text: the client catching up with a new rendering (its text is the view again), or
    an edit, which is refused: the document stays the view, and the user is told so (once until the client's
    text is the view again). An edit made after the file changed on disk is checked against the new rendering."""
    enc = ls.encoding
    was_refused = state.refused

    def apply() -> bool:
        state.apply_to_client_text(changes, enc)
        view = state.view
        if view is not None and state.text != view.text and not view.current():
            state.show(ls.view_or_error(state.path, view.analysis.fold_size_cap))
            return True
        return False

    if await ls.submit(state, apply):
        ls.view_shown(state)
    if state.view is not None and state.text != state.view.text and not was_refused:
        state.refused = True
        ls.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Warning, message=(
            f"graphlsp: {Path(state.path).name} is a read-only view of a binary ONNX model: edits are not applied. "
            "To edit the model, save it as ONNX text (graphlsp.saveViewAsText) and open that.")))  # fmt: skip
    await _publish_if_latest(ls, state, version)


@server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
@_guard(None)
async def watched_files_changed(ls: GraphLspServer, params: lsp.DidChangeWatchedFilesParams) -> None:
    """A model on disk changed: its open views are rendered again (and their clients told to fetch them)."""
    paths: list[str] = []
    for change in params.changes:
        path = views.fs_path(change.uri)
        if path is None or path in paths:
            continue
        if any(s.path == path for s in list(ls.docs.values())):
            paths.append(path)
        else:  # no open view: forget a rendering kept for one
            await ls.on_worker(functools.partial(ls.views.pop, path, None))
    for path in paths:
        await ls.refresh_view(path)


@server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
@_guard(None)
def did_close(ls: GraphLspServer, params: lsp.DidCloseTextDocumentParams) -> None:
    state = ls.docs.pop(params.text_document.uri, None)
    if state is not None and opdocs.is_library(state.uri):
        opdocs.closed(ls, state)
    if state is not None and not ls.pull_client:
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=state.uri, diagnostics=[]))


@server.feature(
    lsp.TEXT_DOCUMENT_DIAGNOSTIC,
    lsp.DiagnosticOptions(identifier="graphlsp", inter_file_dependencies=False, workspace_diagnostics=False),
)
@_guard(lsp.RelatedFullDocumentDiagnosticReport(items=[]))
async def pull_diagnostics(
    ls: GraphLspServer, params: lsp.DocumentDiagnosticParams
) -> lsp.DocumentDiagnosticReport | RawJSON:
    state = await ls.current(params.text_document.uri)
    if state is None:
        return lsp.RelatedFullDocumentDiagnosticReport(items=[])
    payload = await ls.submit(state, lambda: ls.compute_diagnostics(state))
    if payload != state.reported:  # the cache hands back the same str objects: a compare of pointers mostly
        state.reported = payload
        state.report_id = f"{_SESSION}-{state.version}-{next(_REPORTS)}"
    if params.previous_result_id == state.report_id:
        return lsp.RelatedUnchangedDocumentDiagnosticReport(result_id=state.report_id)
    return RawJSON(f'{{"kind":"full","resultId":"{state.report_id}","items":[{",".join(payload)}]}}')


@server.feature(lsp.TEXT_DOCUMENT_HOVER)
@_guard(None)
async def hover(ls: GraphLspServer, params: lsp.HoverParams) -> lsp.Hover | None:
    if opdocs.is_library(params.text_document.uri):
        return await opdocs.hover(ls, params)
    state = await ls.current(params.text_document.uri)
    if state is None or state.analysis is None:
        return None
    a, enc = state.analysis, ls.encoding
    offset = convert.offset(state.lines, params.position, enc)
    found = query.hover(a, offset)
    if found is None:
        return None
    text, (start, end) = found
    text += _kernel_lines(ls, state.uri, a, offset)
    return lsp.Hover(
        contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=text),
        range=convert.span_range(state.lines, start, end, enc),
    )


def _kernel_lines(ls: GraphLspServer, uri: str, a: Analysis, offset: int) -> str:
    """On a node's op: whether each target (`targets`) has a kernel for the node's types."""
    hit = query.hit_at(a, offset)
    if hit is None or hit.kind != "op" or hit.node is None:
        return ""
    settings = ls.settings_for(uri)
    if not settings.targets:
        return ""
    from graphlsp.lint.deployment import hover_lines

    try:
        lines = hover_lines(a.model, a.refiner, hit.node, settings.targets)
    except Exception:  # the hover stands without them
        log.exception("kernel lines of a hover failed")
        return ""
    return "\n" + "\n".join(lines) if lines else ""


@server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
@_guard(None)
async def definition(ls: GraphLspServer, params: lsp.DefinitionParams) -> lsp.Location | None:
    if opdocs.is_library(params.text_document.uri):
        return await opdocs.definition(ls, params)
    state = await ls.current(params.text_document.uri)
    if state is None or state.analysis is None:
        return None
    a, enc = state.analysis, ls.encoding
    span = query.definition(a, convert.offset(state.lines, params.position, enc))
    if span is None:  # an op an op library declares: its .onnxop file
        return opdocs.declaration_location(ls, a, convert.offset(state.lines, params.position, enc))
    return lsp.Location(uri=state.uri, range=convert.span_range(state.lines, *span, enc))


@server.feature(lsp.TEXT_DOCUMENT_REFERENCES)
@_guard([])
async def references(ls: GraphLspServer, params: lsp.ReferenceParams) -> list[lsp.Location]:
    state = await ls.current(params.text_document.uri)
    if state is None or state.analysis is None:
        return []
    a, enc = state.analysis, ls.encoding
    at = convert.offset(state.lines, params.position, enc)
    spans = query.references(a, at, params.context.include_declaration)
    return [lsp.Location(uri=state.uri, range=convert.span_range(state.lines, s, e, enc)) for s, e in spans]


@server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT)
@_guard([])
async def highlight(ls: GraphLspServer, params: lsp.DocumentHighlightParams) -> list[lsp.DocumentHighlight]:
    state = await ls.current(params.text_document.uri)
    if state is None or state.analysis is None:
        return []
    a, enc = state.analysis, ls.encoding
    at = convert.offset(state.lines, params.position, enc)
    return [
        lsp.DocumentHighlight(range=convert.span_range(state.lines, s, e, enc))
        for s, e in query.references(a, at, True)
    ]


_SYMBOL_KIND = {"graph": lsp.SymbolKind.Module, "function": lsp.SymbolKind.Function, "node": lsp.SymbolKind.Event,
                "subgraph": lsp.SymbolKind.Namespace}  # fmt: skip


def _node_symbol(n: Node) -> query.Symbol | None:
    """A node as the outline shows it (query.document_symbols' way), its subgraphs and their nodes below it."""
    if n.span is None or n.op_span is None:
        return None
    outs = ", ".join(v.name for v in n.outputs if v is not None)
    sym = query.Symbol(n.label or outs or n.op_type, "node", n.span, n.op_span, n.op_type)
    sym.children = _subgraph_symbols(n)
    return sym


def _subgraph_symbols(n: Node) -> list[query.Symbol]:
    from graphlsp.syntax.lower import text_graph

    out = []
    for attr, graphs in n.subgraphs.items():
        for g in graphs:
            tg = text_graph(g)
            if tg is None:
                continue
            o = tg.piece.origin
            last = g.nodes[-1].span if g.nodes else None
            end = last[1] if last is not None else o + tg.sig.end
            name = (o + tg.sig.name.start, o + tg.sig.name.end)
            sym = query.Symbol(g.name, "subgraph", (o + tg.sig.start, end), name, attr)
            sym.children = [c for c in map(_node_symbol, g.nodes) if c is not None]
            out.append(sym)
    return out


def _outline(a: Analysis) -> list[query.Symbol]:
    """The document's symbols: graphs and functions with their nodes (query.document_symbols), and below a node
    with subgraphs (If, Loop, Scan) each subgraph with its nodes, at any depth."""
    top = query.document_symbols(a)
    with_subgraphs: dict[tuple[int, int], Node] = {}
    for g in [a.model.graph, *(f.body for f in a.model.functions.values())]:
        for n in g.nodes if g is not None else []:
            if n.subgraphs and n.span is not None:
                with_subgraphs[n.span] = n
    if with_subgraphs:
        for s in top:
            for c in s.children:
                owner = with_subgraphs.get(c.span)
                if owner is not None:
                    c.children = _subgraph_symbols(owner)
    return top


def _symbols_json(state: DocState, enc: str) -> str:
    """The document's symbols as the JSON text of LSP DocumentSymbols (tens of thousands of nodes on a big model:
    built as plain dicts, not as lsprotocol objects pygls would convert again)."""
    a = state.analysis
    assert a is not None
    pos = convert.Positions(state.lines, a.doc.text, enc)

    def one(s: query.Symbol) -> dict[str, Any]:
        d: dict[str, Any] = {"name": s.name, "kind": _SYMBOL_KIND.get(s.kind, lsp.SymbolKind.Object).value,
                             "range": pos.range(*s.span), "selectionRange": pos.range(*s.selection)}  # fmt: skip
        if s.detail:
            d["detail"] = s.detail
        if s.children:
            d["children"] = [one(c) for c in s.children]
        return d

    return json.dumps([one(s) for s in _outline(a)], ensure_ascii=False)


def _cached(state: DocState, key: str, make: Callable[[], T]) -> T:
    """A result kept with the analysis until the next edit (editors ask for symbols several times per edit, and
    for code actions at every move of the cursor)."""
    a = state.analysis
    assert a is not None
    if key not in a.cache:
        a.cache[key] = make()
    return a.cache[key]  # type: ignore[return-value]


@server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
@_guard([])
async def document_symbols(ls: GraphLspServer, params: lsp.DocumentSymbolParams) -> list[lsp.DocumentSymbol] | RawJSON:
    if opdocs.is_library(params.text_document.uri):
        return await opdocs.document_symbols(ls, params)
    state = await ls.current_heavy(params.text_document.uri)
    if state is None or state.analysis is None:
        return []
    enc = ls.encoding
    return RawJSON(_cached(state, f"lsp.symbols.{enc}", lambda: _symbols_json(state, enc)))


def serve(tcp: str | None = None) -> None:
    if tcp:
        host, _, port = tcp.rpartition(":")
        server.start_tcp(host or "127.0.0.1", int(port))
    else:
        server.start_io(stdin=ChunkedStdin(sys.stdin.buffer))  # type: ignore[arg-type]


@server.feature(lsp.TEXT_DOCUMENT_INLAY_HINT)
@_guard([])
async def inlay_hints(ls: GraphLspServer, params: lsp.InlayHintParams) -> list[lsp.InlayHint]:
    state = await ls.current(params.text_document.uri)
    if state is None or state.analysis is None or not ls.settings_for(state.uri).inlay_hints:
        return []
    a, enc = state.analysis, ls.encoding
    lines = state.lines
    start = convert.offset(lines, params.range.start, enc)
    end = convert.offset(lines, params.range.end, enc)
    return [
        lsp.InlayHint(position=convert.position(lines, h.offset, enc), label=h.label, kind=lsp.InlayHintKind.Type)
        for h in query.inlay_hints(a, start, end)
    ]


@server.feature(lsp.TEXT_DOCUMENT_FOLDING_RANGE)
@_guard([])
async def folding(ls: GraphLspServer, params: lsp.FoldingRangeParams) -> list[lsp.FoldingRange]:
    state = await ls.current(params.text_document.uri)
    if state is None or state.analysis is None:
        return []
    ranges = query.folding_ranges(state.analysis)
    if state.own_lines is not None:  # the query's lines end at \n only: the LSP lines of the same text
        ours, lines = state.analysis.doc.lines, state.own_lines
        ranges = [(lines.line_of(ours.line_start(s)), lines.line_of(ours.line_end(e))) for s, e in ranges]
    return [lsp.FoldingRange(start_line=s, end_line=e) for s, e in ranges if e > s]


SEMANTIC_LEGEND = lsp.SemanticTokensLegend(token_types=query.TOKEN_TYPES, token_modifiers=[])


_TOKEN_TYPE = {kind: i for i, kind in enumerate(query.TOKEN_TYPES)}


@server.feature(lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, SEMANTIC_LEGEND)
@_guard(lsp.SemanticTokens(data=[]))
async def semantic_tokens(ls: GraphLspServer, params: lsp.SemanticTokensParams) -> lsp.SemanticTokens | RawJSON:
    state = await ls.current_heavy(params.text_document.uri)
    if state is None or state.analysis is None:
        return lsp.SemanticTokens(data=[])
    a, enc = state.analysis, ls.encoding

    def make() -> str:
        data = convert.Positions(state.lines, a.doc.text, enc).tokens(query.semantic_tokens(a), _TOKEN_TYPE)
        return f'{{"data":[{",".join(map(str, data))}]}}'

    return RawJSON(_cached(state, f"lsp.tokens.{enc}", make))


@server.feature(lsp.TEXT_DOCUMENT_RENAME)
@_guard(None)
async def rename(ls: GraphLspServer, params: lsp.RenameParams) -> lsp.WorkspaceEdit | ErrorReply | None:
    state = await ls.current(params.text_document.uri)
    if state is None or state.analysis is None:
        return None
    if state.view is not None:
        return ErrorReply(lsp.LSPErrorCodes.RequestFailed, _READ_ONLY.format(name=Path(state.path).name))
    a, enc = state.analysis, ls.encoding
    result = query.rename(a, convert.offset(state.lines, params.position, enc), params.new_name)
    if isinstance(result, str):  # LSP: a rename that cannot be done is an error with the reason, which editors show
        return ErrorReply(lsp.LSPErrorCodes.RequestFailed, result)
    edits = [lsp.TextEdit(range=convert.span_range(state.lines, s, e, enc), new_text=txt) for s, e, txt in result]
    return lsp.WorkspaceEdit(changes={state.uri: edits})


_COMPLETION_KIND = {
    "op": lsp.CompletionItemKind.Function,
    "attribute": lsp.CompletionItemKind.Property,
    "value": lsp.CompletionItemKind.Variable,
    "type": lsp.CompletionItemKind.TypeParameter,
}


@server.feature(lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=["<", "(", ",", "="]))
@_guard(None)
async def completion(ls: GraphLspServer, params: lsp.CompletionParams) -> lsp.CompletionList | None:
    if opdocs.is_library(params.text_document.uri):
        return await opdocs.completion(ls, params)
    state = await ls.current(params.text_document.uri)
    if state is None or state.analysis is None or state.view is not None:  # nothing is typed into a view
        return None
    a, enc = state.analysis, ls.encoding
    items = query.completions(a, convert.offset(state.lines, params.position, enc))
    return lsp.CompletionList(
        is_incomplete=False,
        items=[lsp.CompletionItem(label=c.label, kind=_COMPLETION_KIND.get(c.kind), detail=c.detail) for c in items],
    )


@server.feature(lsp.WORKSPACE_SYMBOL)
@_guard([])
async def workspace_symbols(ls: GraphLspServer, params: lsp.WorkspaceSymbolParams) -> list[lsp.SymbolInformation]:
    out = []
    for uri in list(ls.docs):
        state = await ls.current(uri)
        if state is None or state.analysis is None:
            continue
        a, enc, wanted = state.analysis, ls.encoding, params.query.lower()
        todo: list[tuple[query.Symbol, str | None]] = [(s, None) for s in _outline(a)]
        while todo:
            s, container = todo.pop()
            if wanted in s.name.lower():
                out.append(lsp.SymbolInformation(
                    name=s.name, kind=_SYMBOL_KIND.get(s.kind, lsp.SymbolKind.Object),
                    location=lsp.Location(uri=uri, range=convert.span_range(state.lines, *s.selection, enc)),
                    container_name=container,
                ))  # fmt: skip
            todo.extend((c, s.name) for c in reversed(s.children))
    return out


FOLD_ALL = lsp.CodeActionKind.Source + ".foldConstants"  # "fold all constants" for the whole file
_READ_ONLY = (
    "{name} is a read-only view of a binary ONNX model: save it as ONNX text (graphlsp.saveViewAsText) to edit it"
)


@server.feature(
    lsp.TEXT_DOCUMENT_CODE_ACTION,
    lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix, lsp.CodeActionKind.Source, FOLD_ALL]),
)
@_guard([])
async def code_actions(ls: GraphLspServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction] | RawJSON:
    from graphlsp.lint.fixes import fixes_for, fold_all

    state = await ls.current_heavy(params.text_document.uri)
    if state is None or state.analysis is None:
        return []
    a, enc = state.analysis, ls.encoding
    lines = state.lines
    only = params.context.only

    def wanted(kind: str) -> bool:
        return not only or any(kind == k or kind.startswith(k + ".") for k in only)

    if state.view is not None:  # no edits to a view: its source actions write new files beside the model
        return [x for x in _view_actions(state.path) if x.kind is not None and wanted(x.kind)]

    def workspace_edit(edits: list[tuple[int, int, str]]) -> lsp.WorkspaceEdit:
        text_edits = [lsp.TextEdit(range=convert.span_range(lines, s, e, enc), new_text=t) for s, e, t in edits]
        return lsp.WorkspaceEdit(changes={state.uri: text_edits})

    lo = convert.offset(lines, params.range.start, enc)
    hi = convert.offset(lines, params.range.end, enc)
    actions = []
    titles = set()
    if wanted(lsp.CodeActionKind.QuickFix):
        from graphlsp.lint.diagnostics import deployment_findings

        settings = ls.settings_for(state.uri)
        path = views.fs_path(state.uri) or state.uri
        deployment = deployment_findings(a, path, settings, incremental=True) if a.doc.model.graph is not None else []
        for f in [*a.findings(), *deployment]:
            if f.end < lo or f.start > hi:
                continue
            diag = next((d for d in params.context.diagnostics if d.code == f.code), None)
            for fix in fixes_for(a, f, settings.targets):
                if fix.title in titles:
                    continue
                titles.add(fix.title)
                actions.append(lsp.CodeAction(
                    title=fix.title, kind=lsp.CodeActionKind.QuickFix, diagnostics=[diag] if diag else None,
                    edit=workspace_edit(fix.edits), is_preferred=fix.safe,
                ))  # fmt: skip
    payload = [json.dumps(_CONVERTER.unstructure(x), ensure_ascii=False) for x in actions]
    if wanted(FOLD_ALL):

        def make() -> tuple[str, str] | None:  # (title, the action's JSON): thousands of edits on a big model
            every = fold_all(a)
            if every is None:
                return None
            pos = convert.Positions(lines, a.doc.text, enc)
            edits = [{"range": pos.range(s, e), "newText": t} for s, e, t in every.edits]
            action = {"title": every.title, "kind": FOLD_ALL, "edit": {"changes": {state.uri: edits}}}
            return every.title, json.dumps(action, ensure_ascii=False)

        found = _cached(state, f"lsp.fold_all.{enc}", make)  # editors ask at every move of the cursor
        if found is not None and found[0] not in titles:
            payload.append(found[1])
    return RawJSON(f"[{','.join(payload)}]")


def _view_actions(path: str) -> list[lsp.CodeAction]:
    text, folded = Path(views.beside(path, ".onnxtxt")).name, Path(views.beside(path, ".folded.onnx")).name
    save = f"Save the model as ONNX text ({text}, with its data)"
    fold = f"Fold constants into a new model ({folded})"
    return [
        lsp.CodeAction(title=save, kind=lsp.CodeActionKind.Source,
                       command=lsp.Command(title=save, command=views.SAVE_AS_TEXT, arguments=[{"path": path}])),
        lsp.CodeAction(title=fold, kind=FOLD_ALL,
                       command=lsp.Command(title=fold, command=views.FOLD_BINARY, arguments=[{"path": path}])),
    ]  # fmt: skip


@server.feature(lsp.TEXT_DOCUMENT_SIGNATURE_HELP, lsp.SignatureHelpOptions(trigger_characters=["(", ","]))
@_guard(None)
async def signature_help(ls: GraphLspServer, params: lsp.SignatureHelpParams) -> lsp.SignatureHelp | None:
    state = await ls.current(params.text_document.uri)
    if state is None or state.analysis is None:
        return None
    a, enc = state.analysis, ls.encoding
    found = query.signature_help(a, convert.offset(state.lines, params.position, enc))
    if found is None:
        return None
    info = lsp.SignatureInformation(
        label=found.label,
        documentation=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=found.doc) if found.doc else None,
        parameters=[lsp.ParameterInformation(label=p) for p in found.params],
    )
    return lsp.SignatureHelp(signatures=[info], active_signature=0, active_parameter=found.active)


@server.feature(lsp.TEXT_DOCUMENT_FORMATTING)
@_guard(None)
async def formatting(ls: GraphLspServer, params: lsp.DocumentFormattingParams) -> list[lsp.TextEdit] | None:
    from graphlsp.syntax.format import format_text

    state = await ls.current(params.text_document.uri)
    if state is None or state.analysis is None or state.view is not None:  # a view is never edited
        return None
    a, enc = state.analysis, ls.encoding
    new = await ls.submit(state, lambda: format_text(a.doc.text))
    if new is None or new == a.doc.text:
        return [] if new is not None else None
    return [lsp.TextEdit(range=convert.span_range(state.lines, 0, len(a.doc.text), enc), new_text=new)]


# ---- commands: binary models (graphlsp/lsp/views.py)


def _no_target(command: str) -> ErrorReply:
    return ErrorReply(lsp.ErrorCodes.InvalidParams, f"{command} takes one argument: {{\"uri\": ...}} or "
                      "{\"path\": ...} of a .onnx file")  # fmt: skip


@server.feature(graph_request.GRAPH)
async def graph(ls: GraphLspServer, params: Any) -> RawJSON | ErrorReply:
    """`graphlsp/graph` {uri, format?}: the document's graph for the picture (graphlsp/lsp/graphs.py)."""
    try:
        return await graph_request.graph(ls, params)
    except asyncio.CancelledError:
        raise
    except Exception as e:
        log.exception("%s failed", graph_request.GRAPH)
        return ErrorReply(lsp.LSPErrorCodes.RequestFailed, f"the graph failed: {type(e).__name__}: {e}")


@server.command(views.RENDER)
async def render_view(ls: GraphLspServer, *args: Any) -> RawJSON | ErrorReply:
    """{uri} or {path} of a .onnx file -> {path, uri, text, error}: the read-only view the server serves for
    the file (a client opens a document with this text; the server renders it again when the file changed)."""
    path, _ = views.command_target(args)
    if path is None:
        return _no_target(views.RENDER)
    view = await ls.refresh_view(path)
    answer = {"path": path, "uri": Path(path).as_uri(), "text": view.text, "error": view.error or None}
    return RawJSON(json.dumps(answer, ensure_ascii=False))


async def _may_write(ls: GraphLspServer, target: str, opts: dict[str, Any]) -> bool:
    """Whether to write `target`: yes when it does not exist or `overwrite` is true; else the user is asked."""
    if not os.path.exists(target) or opts.get("overwrite") is True:
        return True
    if opts.get("overwrite") is False:
        return False
    answer = await ls.window_show_message_request_async(lsp.ShowMessageRequestParams(
        type=lsp.MessageType.Warning, message=f"graphlsp: {target} exists. Overwrite it?",
        actions=[lsp.MessageActionItem(title="Overwrite"), lsp.MessageActionItem(title="Cancel")]))  # fmt: skip
    return answer is not None and answer.title == "Overwrite"


def _write_text(path: str, text: str) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    os.replace(tmp, path)


@server.command(views.SAVE_AS_TEXT)
async def save_view_as_text(ls: GraphLspServer, *args: Any) -> dict[str, Any] | ErrorReply:
    """{uri|path, overwrite?} -> {path, written}: the model as ONNX text with all its data (`graphlsp convert
    model.onnx model.onnxtxt`), written beside it as `<name>.onnxtxt`."""
    path, opts = views.command_target(args)
    if path is None:
        return _no_target(views.SAVE_AS_TEXT)
    target = views.beside(path, ".onnxtxt")
    if not await _may_write(ls, target, opts):
        return {"path": None, "written": False}
    try:
        text = await ls.on_worker(lambda: views.model_text(path))
        await ls.on_worker(lambda: _write_text(target, text))
    except Exception as e:  # OSError, a model that cannot be read
        log.exception("saveViewAsText %s", path)
        return ErrorReply(lsp.LSPErrorCodes.RequestFailed, f"cannot save {path} as ONNX text: {type(e).__name__}: {e}")
    ls.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Info, message=f"graphlsp: wrote {target}"))
    return {"path": target, "uri": Path(target).as_uri(), "written": True}


@server.command(views.FOLD_BINARY)
async def fold_binary(ls: GraphLspServer, *args: Any) -> dict[str, Any] | ErrorReply:
    """{uri|path, overwrite?} -> {path, written, folded, constants, removed}: the model with its constant
    subgraphs folded (`graphlsp fold model.onnx -o model.folded.onnx`), written beside it when anything folds."""
    path, opts = views.command_target(args)
    if path is None:
        return _no_target(views.FOLD_BINARY)
    target = views.beside(path, ".folded.onnx")
    if not await _may_write(ls, target, opts):
        return {"path": None, "written": False, "folded": 0, "constants": 0, "removed": 0}
    cap = ls.cap_of(path)
    try:
        folded, constants, removed = await ls.on_worker(lambda: views.fold_binary(path, target, cap))
    except Exception as e:
        log.exception("foldBinary %s", path)
        return ErrorReply(lsp.LSPErrorCodes.RequestFailed, f"cannot fold {path}: {type(e).__name__}: {e}")
    if folded:
        message = (f"graphlsp: folded {folded} node{'s' if folded != 1 else ''} into {constants} Constant"
                   f"{'s' if constants != 1 else ''}, removed {removed} more: wrote {target}")  # fmt: skip
    else:
        message = f"graphlsp: {Path(path).name} has no constant subgraph to fold: nothing written"
    ls.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Info, message=message))
    return {"path": target if folded else None, "written": bool(folded), "folded": folded, "constants": constants,
            "removed": removed}  # fmt: skip
