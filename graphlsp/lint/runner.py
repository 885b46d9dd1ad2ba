"""`graphlsp check` over many files: settings, suppressions, safe fixes, a process pool and a result cache.

The cache is keyed by the file's content, graphlsp's version and the settings, so an unchanged file is not
analysed again; it lives in `.graphlsp_cache/` next to the config file (or in the working directory), a folder
graphlsp creates and never follows when it is a link (docs/security.md).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import sys
from typing import TYPE_CHECKING

from graphlsp import __version__
from graphlsp.files import read_regular
from graphlsp.lint.config import Settings
from graphlsp.lint.diagnostics import Diagnostic, collect_analysis, collect_deployment
from graphlsp.lint.rules import rule
from graphlsp.source import is_binary

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from graphlsp.analysis import Analysis
    from graphlsp.graph.core import Model
    from graphlsp.infer.sizes import SizeProblem
    from graphlsp.oplib.query import OpDocument

MAX_FIX_ROUNDS = 8


class FileResult:
    """What checking one file gave: its diagnostics, and with `--fix` / `--diff` the fixed text or model."""

    __slots__ = ("path", "diagnostics", "text", "binary", "error", "fixed_text", "fixed_bytes", "fixes", "hidden_fixes",
                 "cached", "size_problems")

    path: str
    diagnostics: list[Diagnostic]
    text: str
    binary: bool
    error: str  # the file could not be read at all
    fixed_text: str | None  # after --fix / --diff: the text with the safe fixes applied
    fixed_bytes: bytes | None  # the same for a binary model: the fixed model
    fixes: int
    hidden_fixes: int  # unsafe fixes left for `--unsafe-fixes`
    cached: bool
    size_problems: list[SizeProblem]  # given sizes (`--dim`, `dims`) the model contradicts: usage errors

    def __init__(
        self,
        path: str,
        diagnostics: list[Diagnostic] | None = None,
        text: str = "",
        binary: bool = False,
        error: str = "",
        fixed_text: str | None = None,
        fixed_bytes: bytes | None = None,
        fixes: int = 0,
        hidden_fixes: int = 0,
        cached: bool = False,
        size_problems: list[SizeProblem] | None = None,
    ) -> None:
        self.path = path
        self.diagnostics = [] if diagnostics is None else diagnostics
        self.text = text
        self.binary = binary
        self.error = error
        self.fixed_text = fixed_text
        self.fixed_bytes = fixed_bytes
        self.fixes = fixes
        self.hidden_fixes = hidden_fixes
        self.cached = cached
        self.size_problems = [] if size_problems is None else size_problems

    def __repr__(self) -> str:
        return (
            f"FileResult(path={self.path!r}, diagnostics={self.diagnostics!r}, text={self.text!r}, "
            f"binary={self.binary!r}, error={self.error!r}, fixed_text={self.fixed_text!r}, "
            f"fixed_bytes={self.fixed_bytes!r}, fixes={self.fixes!r}, hidden_fixes={self.hidden_fixes!r}, "
            f"cached={self.cached!r}, size_problems={self.size_problems!r})"
        )

    def __eq__(self, other: object) -> bool:
        if type(other) is not FileResult:
            return NotImplemented
        mine = (self.path, self.diagnostics, self.text, self.binary, self.error, self.fixed_text, self.fixed_bytes,
                self.fixes, self.hidden_fixes, self.cached, self.size_problems)
        theirs = (other.path, other.diagnostics, other.text, other.binary, other.error, other.fixed_text,
                  other.fixed_bytes, other.fixes, other.hidden_fixes, other.cached, other.size_problems)
        return mine == theirs


def lint_text(
    text: str, path: str, settings: Settings, source_error: tuple[str, str, int] | None = None
) -> tuple[Analysis, list[Diagnostic]]:
    """One file's diagnostics as `check` reports them: enabled rules, severities from settings, suppressions.

    The cyclic garbage collector is off meanwhile: an analysis is a few million objects that all stay alive until
    it is done, and each full collection would walk them all again for nothing (a sixth of the time on a
    100k-node file). What it leaves is collected after."""
    from graphlsp.analysis import Analysis

    enabled = gc.isenabled()
    gc.disable()
    try:
        analysis = Analysis(text, settings.fold_size_cap, sizes=settings.sizes)
        # an unloadable binary, or bytes that are no text at all (binary data): the one finding says it all
        unread = source_error is not None and (source_error[0] == "GL106" or not text)
        diags = [] if unread else collect_analysis(analysis, path)
        if not unread and analysis.doc.model.graph is not None:
            diags += collect_deployment(analysis, path, settings)
            diags.sort(key=lambda d: (d.start, d.code))
    finally:
        if enabled:
            gc.enable()
    if source_error:
        code, message, offset = source_error
        line, col = analysis.doc.lines.position(offset)
        r = rule(code)
        diags.insert(0, Diagnostic(path, line + 1, col + 1, line + 1, col + 1, r.severity, code, r.name, message,
                                   offset, offset))  # fmt: skip
    return analysis, finalize(diags, text, path, settings)


def lint_binary(path: str, settings: Settings, data: bytes | None = None, folder: str | None = None
                ) -> list[Diagnostic]:  # fmt: skip
    """A binary model's diagnostics (`lint_binary_sized` without the size problems)."""
    return lint_binary_sized(path, settings, data, folder)[0]


def lint_binary_sized(path: str, settings: Settings, data: bytes | None = None, folder: str | None = None
                      ) -> tuple[list[Diagnostic], list[SizeProblem]]:  # fmt: skip
    """A binary model's diagnostics: read straight from its protobuf, located by node. Raises OSError.

    With `data` the model is those bytes and `path` only names it: external data is read from `folder` (the
    model's own folder, for the bytes `--fix` is about to write over it); without one (standard input) there is
    no folder to read external data from, which the reader reports."""
    from graphlsp.analysis import ModelAnalysis
    from graphlsp.binary.read import EmptyModel, model_from_proto, read_model
    from graphlsp.lint.diagnostics import collect_binary

    try:
        if data is None:
            model, findings = read_model(path)
        elif not data:
            raise EmptyModel("the file is empty (0 bytes)")
        else:
            from onnx import ModelProto

            proto = ModelProto()
            proto.ParseFromString(data)
            model, findings = model_from_proto(proto, folder)
    except OSError:
        raise
    except Exception as e:  # protobuf's DecodeError, RuntimeError from a malformed message
        r = rule("GL106")
        return [Diagnostic(path, None, None, None, None, r.severity, r.code, r.name, load_failure(e))], []
    analysis = ModelAnalysis(model, findings, settings.fold_size_cap, settings.sizes)
    return finalize(collect_binary(analysis, path, settings), "", path, settings), _size_problems(model, settings)


def load_failure(e: Exception) -> str:
    """GL106's message for a binary model protobuf (or the reader) refuses."""
    from graphlsp.binary.read import EmptyModel

    return f"cannot load binary ONNX model: {e if isinstance(e, EmptyModel) else f'{type(e).__name__}: {e}'}"


def _size_problems(model: Model, settings: Settings) -> list[SizeProblem]:
    if not settings.sizes:
        return []
    from graphlsp.infer.sizes import size_problems

    return size_problems(model, settings.sizes)


def finalize(diags: list[Diagnostic], text: str, path: str, settings: Settings) -> list[Diagnostic]:
    """Settings (selected rules, severities) and suppressions applied to a file's diagnostics."""
    enabled: dict[str, bool] = {}  # per code: a file has many diagnostics of few codes
    kept = []
    for d in diags:
        on = enabled.get(d.code)
        if on is None:
            on = enabled[d.code] = settings.enabled(d.code, path)
        if on:
            d.severity = settings.severity_of(d.code, d.severity)
            kept.append(d)
    if "#" in text:  # every suppression is a comment (a binary model's text is ""): else none to import and apply
        from graphlsp.lint import suppress

        kept = suppress.apply(kept, text, path)
    return [d for d in kept if enabled.get(d.code) or settings.enabled(d.code, path)]


def lint_library(text: str, path: str, settings: Settings, doc: OpDocument | None = None) -> list[Diagnostic]:
    """An op library file's diagnostics as `check` reports them (GL6xx; settings and suppressions applied, except
    that a syntax error is never silenced, as in a model). `doc`: the text analysed already (the editor)."""
    from graphlsp.lint.diagnostics import collect_library
    from graphlsp.oplib.query import SYNTAX, analyse

    diags = collect_library(doc if doc is not None else analyse(text, path), path)
    syntax = finalize([d for d in diags if d.code == SYNTAX], "", path, settings)  # no suppression applies
    kept = finalize([d for d in diags if d.code != SYNTAX], text, path, settings)
    return sorted(syntax + kept, key=lambda d: (d.start, d.code))


def _fix(text: str, path: str, settings: Settings, unsafe: bool = False) -> tuple[str, int, int]:
    """Apply the safe fixes (and the unsafe ones too when asked) of enabled, unsuppressed findings, round after
    round until none is left. Returns the text, the fixes applied and the unsafe fixes left (ruff's "hidden")."""
    from graphlsp.lint.fixes import apply_edits, fixes_for

    total = hidden = 0
    for _ in range(MAX_FIX_ROUNDS):
        analysis, diags = lint_text(text, path, settings, None)
        wanted = {(d.code, d.start) for d in diags}
        edits: list[tuple[int, int, str]] = []
        applied = hidden = 0
        from graphlsp.lint.diagnostics import deployment_findings

        for f in [*analysis.findings(), *deployment_findings(analysis, path, settings)]:
            if (f.code, f.start) not in wanted:
                continue
            found = fixes_for(analysis, f, settings.targets)
            if not unsafe and found and not any(fix.safe for fix in found):
                hidden += 1
            for fix in found:
                if (fix.safe or unsafe) and all(e[1] <= s or e[0] >= en for s, en, _ in fix.edits for e in edits):
                    edits += fix.edits
                    applied += 1
                    break
        if not edits:
            break
        text = apply_edits(text, edits)
        total += applied
    return text, total, hidden


def check_file(path: str, settings: Settings, fix: bool = False, unsafe: bool = False) -> FileResult:
    from graphlsp.source import read_source

    if is_binary(path):
        try:
            if fix:
                from graphlsp.lint.binary_fix import fix_binary

                try:
                    fixed, count = fix_binary(path, settings)
                except OSError:
                    raise
                except Exception:  # an unreadable model: lint_binary reports it
                    fixed, count = None, 0
                if fixed is not None:
                    folder = os.path.dirname(os.path.realpath(path))  # the fixed bytes go beside its data
                    diags, problems = lint_binary_sized(path, settings, fixed, folder)
                    return FileResult(path, diags, binary=True, fixed_bytes=fixed, fixes=count,
                                      size_problems=problems)  # fmt: skip
            diags, problems = lint_binary_sized(path, settings)
            return FileResult(path, diags, binary=True, size_problems=problems)
        except OSError as e:
            return FileResult(path, error=e.strerror or str(e))
    try:
        source = read_source(path)
    except OSError as e:
        return FileResult(path, error=e.strerror or str(e))
    if is_library(path):  # nothing to fix in a library
        return _check_library(path, source.text, source.error, settings)
    return _check_text(path, source.text, source.error, settings, fix, unsafe)


def is_library(path: str) -> bool:
    from graphlsp.source import LIBRARY_SUFFIX

    return path.lower().endswith(LIBRARY_SUFFIX)


def _check_library(path: str, text: str, error: tuple[str, str, int] | None, settings: Settings) -> FileResult:
    result = FileResult(path, text=text)
    if error is not None:  # not UTF-8
        code, message, _ = error
        r = rule(code)
        result.diagnostics.append(Diagnostic(path, 1, 1, 1, 1, r.severity, code, r.name, message))
        if not text:  # binary data: nothing to parse
            return result
    result.diagnostics += lint_library(text, path, settings)
    return result


def _check_text(path: str, text: str, error: tuple[str, str, int] | None, settings: Settings,
                fix: bool, unsafe: bool = False) -> FileResult:  # fmt: skip
    result = FileResult(path, text=text)
    if fix and error is None:
        fixed, result.fixes, result.hidden_fixes = _fix(text, path, settings, unsafe)
        if fixed != text:
            result.fixed_text = fixed
        analysis, result.diagnostics = lint_text(fixed, path, settings, None)
    else:
        analysis, result.diagnostics = lint_text(text, path, settings, error)
    result.size_problems = _size_problems(analysis.model, settings)
    return result


def check_stdin(data: bytes, path: str, settings: Settings, fix: bool = False, unsafe: bool = False) -> FileResult:
    """A model read from standard input, named `path` (`--stdin-filename`, `-` without one): binary when the
    name ends in .onnx, else UTF-8 text. Nothing is cached."""
    from graphlsp.source import decode

    if is_binary(path):
        diags, problems = lint_binary_sized(path, settings, data)
        return FileResult(path, diags, binary=True, size_problems=problems)
    text, error = decode(data)
    if is_library(path):
        return _check_library(path, text, error, settings)
    return _check_text(path, text, error, settings, fix, unsafe)


# ---- cache
def _cache_key(data: bytes, settings: Settings) -> str:
    import hashlib  # 2 ms of imports: not for a check without the cache

    from graphlsp.files import cache_salt

    h = hashlib.sha256(cache_salt())  # a repository's planted entries never match
    h.update(data)
    h.update(f"\0{__version__}\0{_code_stamp()}\0{settings.key()}\0{_runtime_stamp(bool(settings.targets))}".encode())
    return h.hexdigest()


@functools.cache
def _runtime_stamp(targets: bool) -> str:
    """The installed onnxruntime (its kernel tables decide GL7xx): an upgrade must not reuse old results."""
    if not targets:
        return ""
    from graphlsp.runtime.kernels import installed_version

    return repr(installed_version())


@functools.cache
def _code_stamp() -> str:
    """The newest modification time of graphlsp's own files: a changed checkout (same version) must not reuse
    results the old code computed."""
    from pathlib import Path

    package = Path(__file__).resolve().parent.parent
    newest = 0
    for root, pattern in ((package, "**/*.py"), (package, "**/*.onnxop"), (package.parent / "grammar", "*.lark")):
        for f in root.glob(pattern):
            with contextlib.suppress(OSError):
                newest = max(newest, f.stat().st_mtime_ns)
    return str(newest)


def _cache_root(settings: Settings) -> str:
    return settings.root if settings.root is not None else os.getcwd()


def _load_cached(path: str, settings: Settings, folder: int | None) -> FileResult | None:
    import json

    from graphlsp.files import read_at
    from graphlsp.infer.sizes import SizeProblem
    from graphlsp.source import decode

    if folder is None:
        return None
    try:
        data = read_regular(path)
        entry = json.loads(read_at(folder, f"{_cache_key(data, settings)}.json"))
        diags = [Diagnostic(**{**d, "file": path}) for d in entry["diagnostics"]]
    except (OSError, ValueError, TypeError, KeyError):
        return None
    text = "" if is_binary(path) else decode(data)[0]
    problems = [SizeProblem(*p) for p in entry.get("sizes", [])] if entry.get("sizes") else []
    return FileResult(path, diags, text, is_binary(path), cached=True, size_problems=problems)


def _store(result: FileResult, settings: Settings, folder: int) -> None:
    """A file's findings kept in the project's cache folder (files.project_cache: never a link), every file
    through the one writer (a planted `.gitignore -> elsewhere` is replaced, not written through)."""
    import json

    from graphlsp.files import write_file

    try:
        data = read_regular(result.path)
        write_file(".gitignore", b"*\n", dir_fd=folder)
        payload = [{k: getattr(d, k) for k in Diagnostic.__slots__} for d in result.diagnostics]  # type: ignore[attr-defined]
        entry = {"diagnostics": payload, "sizes": [p.to_json() for p in result.size_problems]}
        write_file(f"{_cache_key(data, settings)}.json", json.dumps(entry).encode(), dir_fd=folder)
    except (OSError, ValueError):
        pass  # a read-only tree: no cache, same results


def ProcessPoolExecutor(max_workers: int) -> Executor:  # noqa: N802 (stands for the class)
    """concurrent.futures' process pool, imported only when a check shares work between processes (importing
    multiprocessing costs every other check its start-up time)."""
    from concurrent.futures import ProcessPoolExecutor as Pool

    return Pool(max_workers=max_workers)


def _worker(args: tuple[str, Settings, bool, bool]) -> FileResult:
    path, settings, fix, unsafe = args
    try:
        return check_file(path, settings, fix, unsafe)
    except Exception as e:  # a bug of ours: report it on the file, keep checking the others
        return FileResult(path, error=f"internal error: {type(e).__name__}: {e}")


def check_files(paths: list[str], settings: Settings, fix: bool = False, jobs: int = 0, cache: bool = True,
                progress: bool = False, unsafe: bool = False) -> list[FileResult]:  # fmt: skip
    from graphlsp.files import project_cache

    results: dict[str, FileResult] = {}
    todo = []
    folder = project_cache(_cache_root(settings)) if cache and not fix and paths else None
    for p in paths:
        cached = _load_cached(p, settings, folder) if cache and not fix else None
        if cached is not None:
            results[p] = cached
        else:
            todo.append(p)
    jobs = min(jobs or os.cpu_count() or 1, len(todo))  # a worker per file at most (-j 10**20 asked for more)
    work = [(p, settings, fix, unsafe) for p in todo]
    done = 0
    if jobs > 1 and len(todo) > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            for r in pool.map(_worker, work, chunksize=max(1, len(work) // (jobs * 4))):
                results[r.path] = r
                done += 1
                _progress(progress, done, len(todo), r.path)
    else:
        for w in work:
            r = _worker(w)
            results[r.path] = r
            done += 1
            _progress(progress, done, len(todo), r.path)
    if progress and todo:
        sys.stderr.write("\r\033[K")
    if folder is not None:
        for p in todo:
            r = results[p]
            if not r.error:
                _store(r, settings, folder)
        os.close(folder)
    return [results[p] for p in paths]


def _progress(show: bool, done: int, total: int, path: str) -> None:
    if show:
        sys.stderr.write(f"\r\033[K[{done}/{total}] {path[-60:]}")
        sys.stderr.flush()
