"""The op libraries in use: the shipped ones (`libraries/*.onnxop`, read on first use) and a project's
(`[tool.graphlsp] op-libraries`, added by the settings). Declarations are indexed by (domain, op); a project's
declaration of an op at a version replaces a shipped one.

Importing this module installs the catalog into op resolution (`graphlsp.graph.resolve.library`): a node whose op
onnx does not know, but a library declares, resolves to the declaration (GL209 outside its opset range; GL211, a
portability warning, when the library puts it in a domain onnx owns, as onnxruntime does SimplifiedLayerNormalization).
"""

from __future__ import annotations

import contextlib
import os
import pickle
from _thread import RLock  # threading's RLock is this one; importing threading costs a check 0.5 ms
from bisect import bisect_right
from types import ModuleType
from typing import TYPE_CHECKING

from graphlsp.graph import findings as F
from graphlsp.graph import ops as graph_ops
from graphlsp.graph import resolve
from graphlsp.graph.core import Node
from graphlsp.lazymodule import lazy_module
from graphlsp.oplib import lazy

if TYPE_CHECKING:
    from pathlib import Path

    from graphlsp.oplib import model as m
else:
    m = lazy_module("graphlsp.oplib.model", globals(), "m")  # read when a library is in use

# The parser (and lark) and the checker are imported on first use: a model without such ops never pays for them.

LIBRARIES = os.path.join(os.path.dirname(os.path.realpath(__file__)), "libraries")  # strings: no pathlib to import
CACHE_VERSION = "4"  # bump when the model's classes or the checker change what a checked library holds


def builtin_paths() -> list[Path]:
    from pathlib import Path

    return [Path(p) for p in _builtin_files()]


def _builtin_files() -> list[str]:
    return sorted(os.path.join(LIBRARIES, n) for n in os.listdir(LIBRARIES) if n.endswith(".onnxop"))


def load(path: str | Path) -> m.Library:
    """A library file parsed and checked. Reading the shipped onnxruntime library takes lark a third of a second,
    so the result is kept in the user's cache directory, keyed by the file's path and bytes, the grammar and
    graphlsp's version."""
    from graphlsp import __version__
    from graphlsp.files import read_regular, write_whole
    from graphlsp.oplib.cachefiles import cache_dir, digest, grammar_digest

    try:
        data = read_regular(path)
    except OSError:
        return _checked(_parser().parse_file(path))
    h = digest(data)
    h.update(f"\0{path}\0{grammar_digest()}\0{__version__}\0{CACHE_VERSION}".encode())
    folder = cache_dir()
    cached = os.path.join(folder, f"oplib-{h.hexdigest()[:32]}.pickle") if folder is not None else None
    if cached is not None:
        try:
            lib = lazy.load(read_regular(cached))
            if lib is not None:
                return lib
        except Exception:  # missing, truncated, or written by another version: read the file again
            pass
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return _checked(_parser().parse_file(path))
    lib = _checked(_parser().parse_library(text, str(path)))
    if cached is not None:
        with contextlib.suppress(RecursionError, pickle.PicklingError):  # else not cached: read again next time
            write_whole(cached, lazy.dump(lib))
    return lib


def _checked(lib: m.Library) -> m.Library:
    from graphlsp.oplib.checker import check_library  # 4.5 ms of imports, paid only when a library is parsed

    return check_library(lib)


def _parser() -> ModuleType:
    import graphlsp.oplib.parser

    return graphlsp.oplib.parser


def _key(path: str | Path) -> str:
    return os.path.realpath(path)  # Path.resolve raises RuntimeError on a symlink loop


class Catalog:
    """The libraries in use. An editor's unsaved text of a library file (an *overlay*, `set_overlay`) stands for
    the file while it is open: the models open beside it are checked against the declarations as typed."""

    def __init__(self) -> None:
        self._lock = RLock()
        self._builtin: list[m.Library] | None = None
        self._builtin_keys: list[str] = []
        self._project: dict[str, tuple[tuple[int, int], m.Library]] = {}  # path -> ((mtime_ns, size), library)
        self._overlays: dict[str, tuple[str, m.Library]] = {}  # path -> (the editor's text, its library)
        self._index: dict[tuple[str, str], list[m.OpDecl]] | None = None
        self.generation = 0  # bumped whenever the set of declarations changes

    # ---- loading
    def builtin(self) -> list[m.Library]:
        with self._lock:
            if self._builtin is None:
                paths = _builtin_files()
                self._builtin = [load(p) for p in paths]
                self._builtin_keys = [_key(p) for p in paths]
                self._changed()
            return self._builtin

    def add_files(self, paths: list[str] | list[Path]) -> list[m.Library]:
        """Read (or read again, when changed) a project's library files; returns them, problems included."""
        out = []
        with self._lock:
            for p in paths:
                key = os.path.realpath(p)
                try:
                    st = os.stat(p)
                    stamp = (st.st_mtime_ns, st.st_size)
                except OSError:
                    stamp = (-1, -1)
                found = self._project.get(key)
                if found is None or found[0] != stamp:
                    lib = load(p)
                    self._project[key] = (stamp, lib)
                    if key not in self._overlays or found is None:
                        self._changed()
                    found = self._project[key]
                overlay = self._overlays.get(key)
                out.append(overlay[1] if overlay is not None else found[1])
        return out

    # ---- an editor's text of a library file
    def set_overlay(self, path: str | Path, text: str, lib: m.Library) -> bool:
        """The editor's text of a library file (parsed and checked: `lib`) stands for the file from now on, until
        `drop_overlay`; the same text as the file's on disk is the file. True when the declarations in use changed
        (the file is a shipped library or one of a project's)."""
        key = _key(path)
        with self._lock:
            old = self._overlays.get(key)
            if old is not None and old[0] == text:
                return False
            if _disk_text(key) == text:  # the file as saved
                if old is None:
                    return False
                del self._overlays[key]
                self._reload(key)
            else:
                self._overlays[key] = (text, lib)
            if not self._in_use(key):
                return False
            self._changed()
            return True

    def drop_overlay(self, path: str | Path) -> bool:
        """The editor closed the file: its text on disk stands for it again. True when the declarations in use
        changed."""
        key = _key(path)
        with self._lock:
            old = self._overlays.pop(key, None)
            if old is None:
                return False
            if _disk_text(key) == old[0] and key in self._project:  # saved as typed: the overlay's library is the file
                self._project[key] = (_stamp(key), old[1])
                return False
            self._reload(key)
            if not self._in_use(key):
                return False
            self._changed()
            return True

    def overlaid(self, path: str | Path) -> bool:
        """Whether an editor's text stands for the file."""
        return _key(path) in self._overlays

    def library(self, path: str | Path) -> m.Library | None:
        """The library in use for a file (an editor's text of it, if any), None when it is not in use."""
        key = _key(path)
        with self._lock:
            if not self._in_use(key):
                return None
            overlay = self._overlays.get(key)
            if overlay is not None:
                return overlay[1]
            if key in self._project:
                return self._project[key][1]
            return self.builtin()[self._builtin_keys.index(key)]

    def _in_use(self, key: str) -> bool:
        self.builtin()
        return key in self._project or key in self._builtin_keys

    def _reload(self, key: str) -> None:
        """Read a file in use again from disk (after its overlay went)."""
        if key in self._project:
            self._project[key] = (_stamp(key), load(key))
        elif self._builtin is not None and key in self._builtin_keys:
            self._builtin[self._builtin_keys.index(key)] = load(key)

    def clear_project(self) -> None:
        """Forget every project library (the shipped ones stay)."""
        with self._lock:
            if self._project:
                self._project.clear()
                self._changed()

    def libraries(self) -> list[m.Library]:
        builtin = self.builtin()
        overlays = self._overlays
        if not overlays:
            return [*builtin, *(lib for _, lib in self._project.values())]
        out = [overlays[k][1] if k in overlays else lib for k, lib in zip(self._builtin_keys, builtin, strict=True)]
        return out + [overlays[k][1] if k in overlays else lib for k, (_, lib) in self._project.items()]

    def _changed(self) -> None:
        self._index = None
        self.generation += 1

    def _ops(self) -> dict[tuple[str, str], list[m.OpDecl]]:
        """(domain, op) -> its declarations, oldest first; a cached library's are unpickled by `versions` when
        first asked for."""
        index = self._index
        if index is not None:
            return index
        with self._lock:
            by_key: dict[tuple[str, str], dict[int, m.OpDecl | _Pending]] = {}
            for lib in self.libraries():  # shipped first: a project's declarations replace theirs
                ops = lib.ops
                if isinstance(ops, lazy.LazyOps) and not ops.full:
                    for i, (domain, name, since) in enumerate(ops.keys):
                        by_key.setdefault((domain, name), {})[since] = _Pending(ops, i)
                    continue
                for op in ops:
                    by_key.setdefault((op.domain, op.name), {})[op.since] = op
            index = {k: [v[s] for s in sorted(v)] for k, v in by_key.items()}  # type: ignore[misc]
            self._index = index
            return index

    # ---- queries
    def versions(self, domain: str, op: str) -> list[m.OpDecl]:
        """Every declaration of the op, oldest `since` first."""
        decls = self._ops().get((domain, op), [])
        if any(isinstance(d, _Pending) for d in decls):
            with self._lock:
                decls[:] = [d.decl() if isinstance(d, _Pending) else d for d in decls]
        return decls

    def lookup(self, domain: str, op: str, version: int | None) -> m.OpDecl | None:
        """The declaration in force at an opset version (the newest whose `since` is at most the version)."""
        decls = self.versions(domain, op)
        if not decls:
            return None
        if version is None:
            return decls[-1]
        i = bisect_right([d.since for d in decls], version) - 1
        if i < 0 or not decls[i].covers(version):
            return None
        return decls[i]

    def domains(self) -> set[str]:
        return {d for d, _ in self._ops()}

    def op_names(self, domain: str) -> list[str]:
        return sorted(op for d, op in self._ops() if d == domain)


class _Pending:
    """A cached library's declaration not unpickled yet."""

    __slots__ = ("ops", "i")

    def __init__(self, ops: lazy.LazyOps, i: int) -> None:
        self.ops = ops
        self.i = i

    def decl(self) -> m.OpDecl:
        return self.ops.decl(self.i)


def _stamp(key: str) -> tuple[int, int]:
    try:
        st = os.stat(key)
        return st.st_mtime_ns, st.st_size
    except OSError:
        return -1, -1


def _disk_text(key: str) -> str | None:
    from graphlsp.files import read_regular

    try:
        return read_regular(key).decode("utf-8")  # never a FIFO that blocks, nor a file of /proc
    except (OSError, UnicodeDecodeError, ValueError):
        return None


CATALOG = Catalog()


def _resolve(node: Node, importer: str) -> tuple[bool, resolve.Issue | None]:
    """Op resolution for an op onnx does not know: (declared, what to report)."""
    decls = CATALOG.versions(node.domain, node.op_type)
    if not decls:
        return False, None
    where = graph_ops.domain_label(node.domain)
    decl = CATALOG.lookup(node.domain, node.op_type, node.version)
    if decl is None:
        ranges = ", ".join(f"{d.since}" + ("+" if d.until is None else f"-{d.until}" if d.until != d.since else "")
                           for d in decls)  # fmt: skip
        return True, (F.OP_NOT_IN_OPSET, f"'{node.op_type}' is not in opset {node.version} of {where}: the "
                      f"{decls[0].library} library declares it for opset {ranges}", node.op_span)  # fmt: skip
    from graphlsp.oplib.checker import onnx_domains

    if node.domain == "" or node.domain in onnx_domains():
        message = f"'{node.op_type}' is not an ONNX op: only {decl.library} defines it in {where}, a domain the " \
            "ONNX standard owns; onnx's checker and other runtimes reject the model"  # fmt: skip
        if decl.alternative:
            message += f"; {decl.alternative}"
        return True, (F.RUNTIME_SPECIFIC_OP, message, node.op_span)
    return True, None


resolve.library = _resolve
