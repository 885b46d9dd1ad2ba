"""What the language server keeps between messages: one `DocState` per open document, the analysis worker that
applies each document's changes in order, the editor's settings, the rendered views of binary models; and the
helpers every handler module shares (`guard`, `cached`, `refresh_support`).

A document's newer version supersedes older work. No edit is ever lost: a queued job is never cancelled (a cancelled
request only stops waiting for it), and the document's text is kept apart from its analysis, so that a crash of the
analysis costs the analysis (reported as an internal-error diagnostic on line 1, and tried again at the next edit),
never the text. Positions count lines as LSP does (`\r\n`, `\n` and a lone `\r`).

The handlers live in one module per feature family (graphlsp/lsp/server.py wires them); this module imports none of
them.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import json
import logging
import os
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from graphlsp import __version__
from graphlsp.analysis import Analysis
from graphlsp.lint.config import ConfigError, Settings, from_editor, load_settings
from graphlsp.lsp import convert, views
from graphlsp.lsp.protocol import GraphLspProtocol, RawJSON
from graphlsp.oplib import query as oq
from graphlsp.syntax.positions import LineIndex
from graphlsp.view import BinaryView, render

log = logging.getLogger("graphlsp.lsp")
T = TypeVar("T")
COLLECT_DELAY_S = 0.25  # `collect_soon`: after the diagnostics of the edit that let a model go are answered


# Tests only (tests/lsp): with GRAPHLSP_TEST_CRASH_MARKER set, analysing a text that holds the marker raises, as a
# bug in the analysis would. Unset, nothing is checked.
_CRASH_MARKER = os.environ.get("GRAPHLSP_TEST_CRASH_MARKER", "")


def _crash_if_marked(text: str) -> None:
    if _CRASH_MARKER and _CRASH_MARKER in text:
        raise RuntimeError("injected by GRAPHLSP_TEST_CRASH_MARKER")


LIBRARY_SUFFIX = ".onnxop"


def is_library(uri: str) -> bool:
    """Whether the document is an op library (`*.onnxop`), which graphlsp/lsp/opdocs.py serves."""
    return uri.lower().endswith(LIBRARY_SUFFIX)


def library_path(uri: str) -> str | None:
    """The file an op library document stands for (a `file:` URI only)."""
    return views.fs_path(uri) if uri.startswith("file:") else None


@dataclass
class OpState:
    """What the server keeps for an `.onnxop` document (its DocState's `library`; graphlsp/lsp/opdocs.py)."""

    doc: oq.OpDocument | None = None
    pending: set[str] = field(default_factory=set)  # domains whose open models are to be checked again


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
    converted_hints: convert.DiagnosticCache = field(default_factory=convert.DiagnosticCache)  # the fold hints'
    kept_hints: convert.KeptHints = field(default_factory=convert.KeptHints)
    reported: list[str] | None = None  # the diagnostics of the last pull answer, and its result id
    report_id: str = ""
    crs: int = 0  # how many \r the text holds
    own_lines: convert.LspLines | None = None  # kept while the text holds a \r or has no analysis
    # a view of a binary model: `view` is what the document shows (its analysis is `analysis`), `text` the
    # client's copy (the same text unless the client edited it, which is refused), `path` the model's file
    view: BinaryView | None = None
    path: str = ""
    refused: bool = False  # the client was told that its edit is not applied (until its text is the view again)
    library: OpState | None = None  # an op library document (*.onnxop): its analysis (graphlsp/lsp/opdocs.py)
    dropped: bool = False  # an analysis was replaced whole since the server last looked (`GraphLspServer.collect_soon`)

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
        self.kept_hints.drop()
        self.dropped = self.dropped or self.analysis is not None
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
                lines_before = len(a.doc.lines.starts)
                if a.apply_edit(start, end, new).graph == "rebuilt":
                    self.dropped = True
                self.kept_hints.note_edit(lines_before, len(a.doc.lines.starts), a.doc.last_report)
                _crash_if_marked(a.doc.text)
                self.text = a.doc.text
            except Exception:
                log.exception("the analysis failed on an edit of %s: analysing the text again", self.uri)
                a = None
        if a is None:
            self.kept_hints.drop()
            self.dropped = True
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
    """The server's shared state: the open documents, the analysis worker, the settings and the views."""

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
        self._collecting = False  # a full garbage collection is queued (`collect_soon`)
        self._sources: dict[str, Any] = {}  # per document: where its nodes' Python files are (graphlsp.provenance)
        self.source_diagnostics = False  # `serve --source-diagnostics`: findings also on the Python lines
        # `--source-diagnostics`: a model's path -> each Python file's diagnostics (LSP JSON) it published there
        self.python_published: dict[str, dict[str, list[str]]] = {}

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

    def forget_view(self, path: str) -> None:
        """The model's rendering, once no open document shows it: dropped (a closed view's model, its analysis and
        text, 10-15 MB for a small model, stayed for the session). On the worker thread."""
        if any(s.path == path and s.view is not None for s in list(self.docs.values())):
            return
        if self.views.pop(path, None) is not None and self.loop is not None and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self.collect_soon)

    def collect_soon(self) -> None:
        """A full garbage collection on the worker, shortly after the answers now due are sent: called when a model
        was let go (an analysis rebuilt, a view or a document closed). A model's graph is cyclic (nodes and values
        point at each other), so only the collector frees it, and Python runs a full collection only once the
        objects left since the last one number a quarter of those that survived it: a model of 10k nodes is a
        third of a million objects, and a session kept several dead ones (0.5 GB after 2,000 edits)."""
        if self._collecting or self.loop is None or self.loop.is_closed():
            return
        self._collecting = True

        def collect() -> None:
            self._collecting = False
            gc.collect()

        self.loop.call_later(COLLECT_DELAY_S, lambda: self.on_worker(collect))

    def view_or_error(self, path: str, cap: int) -> BinaryView:
        try:
            return self.view_of(path, cap)
        except OSError as e:
            log.warning("cannot read %s: %s", path, e)
            return views.unreadable(path, e, cap)

    def cap_of(self, path: str) -> int:
        return self.settings_for(Path(path).as_uri()).fold_size_cap

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

    def sources_for(self, uri: str) -> Any:
        """Where the Python files of a document's nodes are looked for (graphlsp.provenance.locate.Sources): the
        workspace folders (else the settings' folder) and the settings' `path-map`."""
        found = self._sources.get(uri)
        if found is None:
            from graphlsp.provenance.locate import Sources

            settings = self.settings_for(uri)
            roots = [p for f in (self.workspace.folders or {}).values() if (p := views.fs_path(f.uri))]
            if not roots:
                roots = [settings.root or os.getcwd()]
            found = self._sources[uri] = Sources(roots, settings.path_map)
        return found

    def forget_settings(self) -> None:
        self._sources.clear()
        self._settings.clear()
        self._config_errors_shown.clear()

    def show_size_problems(self, model: Any, settings: Settings) -> None:
        """The sizes of the settings (`dims`, `inputShapes`) the model contradicts, said once each, as `check` says
        them (a usage error there). From the analysis worker's thread."""
        if not settings.sizes:
            return
        from graphlsp.infer.sizes import size_problems

        for p in size_problems(model, settings.sizes):
            key = "dims" if p.kind == "dim" else "inputShapes"
            if p.unknown and not isinstance(self.options.get(key), dict):
                continue  # the project config's name: another of its models has it
            mine = isinstance(self.options.get(key), dict)
            where = "editor settings" if mine or settings.source in ("", "editor settings") else settings.source
            self._show_config_error(f"graphlsp: {where}: {key}: {p.name}: {p.message}", lsp.MessageType.Warning)

    def _show_config_error(self, message: str, kind: lsp.MessageType = lsp.MessageType.Error) -> None:
        """window/showMessage, once per message; from the event loop's thread (settings are also read on the
        analysis worker's)."""
        log.warning("%s", message)
        if message in self._config_errors_shown or self.loop is None or self.loop.is_closed():
            return
        self._config_errors_shown.add(message)
        params = lsp.ShowMessageParams(type=kind, message=message)
        self.loop.call_soon_threadsafe(self.window_show_message, params)

    def publish(self, state: DocState, version: int, payload: list[str]) -> None:
        """publishDiagnostics from the diagnostics' JSON text (pygls would convert and serialize each again)."""
        params = f'{{"uri":{json.dumps(state.uri)},"version":{version},"diagnostics":[{",".join(payload)}]}}'
        self.protocol.notify_json(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, RawJSON(params))


def guard(default: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A failure inside one feature is logged and answered with `default`; the server keeps going."""

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        # functools.wraps keeps the signature: pygls looks at it to decide whether to pass the server.
        if asyncio.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def run_async(*args: Any) -> Any:
                try:
                    return await fn(*args)
                except NoAnswer:
                    return default
                except Exception:
                    log.exception("%s failed", fn.__name__)
                    return default

            return run_async

        @functools.wraps(fn)
        def run(*args: Any) -> Any:
            try:
                return fn(*args)
            except NoAnswer:
                return default
            except Exception:
                log.exception("%s failed", fn.__name__)
                return default

        return run

    return wrap


def or_library(handler: Callable[..., Awaitable[Any]]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A model request's handler that hands an op library document (`*.onnxop`) on to `handler`
    (graphlsp/lsp/opdocs.py)."""

    def wrap(fn: Callable[..., Awaitable[Any]]) -> Callable[..., Any]:
        @functools.wraps(fn)
        async def run(ls: GraphLspServer, params: Any) -> Any:
            if is_library(params.text_document.uri):
                return await handler(ls, params)
            return await fn(ls, params)

        return run

    return wrap


def refresh_support(ls: GraphLspServer, kind: str) -> bool:
    """Whether the client takes workspace/<kind>/refresh (diagnostics, inlayHint, semanticTokens)."""
    workspace = getattr(getattr(ls.protocol, "client_capabilities", None), "workspace", None)
    attr = {"diagnostics": "diagnostics", "inlayHint": "inlay_hint", "semanticTokens": "semantic_tokens"}[kind]
    return bool(getattr(getattr(workspace, attr, None), "refresh_support", False))


class NoAnswer(Exception):
    """Raised inside a handler when there is nothing to answer (the document is not open, or has no analysis): the
    request is answered with the handler's default (`guard`), and nothing is logged."""


class AtPosition(Protocol):
    """The params of a request at a place in a document (hover, definition, completion...)."""

    @property
    def text_document(self) -> lsp.TextDocumentIdentifier: ...

    @property
    def position(self) -> lsp.Position: ...


async def analysed_at(ls: GraphLspServer, params: AtPosition) -> tuple[DocState, Analysis, str, int]:
    """A request's document once its queued changes are applied, its analysis, the position encoding and the offset
    the request's position names. Raises NoAnswer when the document is not open or has no analysis."""
    state = await ls.current(params.text_document.uri)
    if state is None or state.analysis is None:
        raise NoAnswer
    enc = ls.encoding
    return state, state.analysis, enc, convert.offset(state.lines, params.position, enc)


def cached(state: DocState, key: str, make: Callable[[], T]) -> T:
    """A result kept with the analysis until the next edit (editors ask for symbols several times per edit, and
    for code actions at every move of the cursor)."""
    a = state.analysis
    assert a is not None
    if key not in a.cache:
        a.cache[key] = make()
    return a.cache[key]  # type: ignore[return-value]
