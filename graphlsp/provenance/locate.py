"""A frame's file as a file this machine has, and its lines, within the trust rules: a line is read only from a
file inside the workspace or a `path-map` target (through `graphlsp.files`, a regular file, never through a link
that leaves them); a file of the installed environment is located (its path checked with `stat`) and never read.

A frame's path is mapped, in order: by the longest `path-map` prefix (`{"/build/src": "src"}`: an export made on
another machine); as it is, when it lies inside the workspace (a relative path: inside a workspace folder); a
`site-packages/` or `dist-packages/` path to the same file of an environment (a virtual environment inside the
workspace, then the running Python's).
"""

from __future__ import annotations

import os
import re

from graphlsp.files import is_regular, read_regular_inside

SOURCE_BYTES = 8 << 20  # a Python file larger than this is not read for its lines
_PACKAGES = re.compile(r"[/\\](?:site|dist)-packages[/\\]")


class Place:
    """A frame's file on this machine: its absolute path and how it was found (`workspace`, `map`,
    `environment`); `readable` when it lies inside the workspace or a mapped folder."""

    __slots__ = ("path", "kind", "readable")

    def __init__(self, path: str, kind: str, readable: bool) -> None:
        self.path, self.kind, self.readable = path, kind, readable

    def __repr__(self) -> str:
        return f"Place({self.path!r}, {self.kind!r}, {self.readable!r})"


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


class Sources:
    """The files frames map to, for one workspace: `roots` (the workspace folders), `path_map` (a frame's path
    prefix -> an absolute folder), `environments` (site-packages folders; default: the workspace's virtual
    environments, then the running Python's). Answers are kept per file."""

    def __init__(self, roots: list[str], path_map: dict[str, str] | None = None,
                 environments: list[str] | None = None) -> None:  # fmt: skip
        self.roots = [os.path.realpath(r) for r in roots if r]
        self.path_map = sorted(((k.rstrip("/\\") or k, os.path.realpath(v)) for k, v in (path_map or {}).items()),
                               key=lambda kv: -len(kv[0]))  # fmt: skip
        self.trusted = self.roots + [v for _, v in self.path_map]
        self._environments = environments
        self._places: dict[str, Place | None] = {}
        self._lines: dict[str, list[str] | None] = {}  # a readable file's lines (None: it cannot be read)

    def environments(self) -> list[str]:
        if self._environments is None:
            found = []
            for root in self.roots:
                for venv in (".venv", "venv", "env"):
                    lib = os.path.join(root, venv, "lib")
                    try:
                        names = sorted(os.listdir(lib))
                    except OSError:
                        names = []
                    found += [os.path.join(lib, n, "site-packages") for n in names if n.startswith("python")]
                    found.append(os.path.join(root, venv, "Lib", "site-packages"))
            import sysconfig  # the running Python's: where the packages it would import are

            paths = sysconfig.get_paths()
            found += [paths[k] for k in ("purelib", "platlib") if k in paths]
            self._environments = [p for p in dict.fromkeys(found) if os.path.isdir(p)]
        return self._environments

    def trusted_path(self, path: str) -> bool:
        """Whether `path` (resolved, links followed) lies inside the workspace or a mapped folder."""
        try:
            real = os.path.realpath(path)
        except (OSError, ValueError):
            return False
        return any(_inside(real, t) for t in self.trusted)

    def place(self, file: str) -> Place | None:
        """The local file of a frame's path, None when there is none."""
        if file in self._places:
            return self._places[file]
        found = self._find(file)
        self._places[file] = found
        return found

    def _find(self, file: str) -> Place | None:
        if not file or file.startswith("<") or "\0" in file:
            return None
        norm = file.replace("\\", "/")
        for prefix, target in self.path_map:
            p = prefix.replace("\\", "/")
            if norm == p or norm.startswith(p + "/"):
                candidate = os.path.join(target, *norm[len(p):].strip("/").split("/"))
                if self.trusted_path(candidate) and is_regular(candidate):
                    return Place(os.path.realpath(candidate), "map", True)
        if os.path.isabs(file):
            if self.trusted_path(file) and is_regular(file):
                return Place(os.path.realpath(file), "workspace", True)
        else:  # relative to where the exporter ran: a workspace folder, when it has the file
            for root in self.roots:
                candidate = os.path.join(root, file)
                if self.trusted_path(candidate) and is_regular(candidate):
                    return Place(os.path.realpath(candidate), "workspace", True)
        m = _PACKAGES.search(file)
        if m is not None:
            rest = file[m.end():].replace("\\", "/").split("/")
            if ".." not in rest:
                for env in self.environments():
                    candidate = os.path.join(env, *rest)
                    if is_regular(candidate):
                        return Place(candidate, "environment", self.trusted_path(candidate))
        return None

    def line(self, place: Place, line: int) -> str | None:
        """Line `line` (1-based) of a readable place, without its line break; None when it cannot be read."""
        if not place.readable:
            return None
        if place.path in self._lines:
            lines = self._lines[place.path]
        else:
            lines = None
            try:  # checked again at the read: a link may have changed since the place was found
                text = read_regular_inside(place.path, self.trusted, SOURCE_BYTES).decode("utf-8", "replace")
                lines = text.splitlines()
            except OSError:
                lines = None
            self._lines[place.path] = lines
        if lines is None or not 1 <= line <= len(lines):
            return None
        return lines[line - 1]
