"""The files a config's `op-libraries` names: paths and globs inside the project, expanded under a budget.

A repository's config is untrusted input (docs/security.md): an absolute path, a `..` or a link that leads out of
the config file's folder would have graphlsp read (and, through the error messages of a file that does not parse,
print) any file of the machine, so they are config errors. Globs are matched by one walk of the folder shared by
all patterns, which follows no folder link, visits at most `MAX_FOLDERS` folders and goes no deeper than a
pattern can match; a pattern has at most `MAX_DOUBLE_STARS` `**` (`d/**/**/**/**/**/**/**/**/*.onnxop` over a
deep tree took pathlib minutes). Past a bound, a config error names the pattern.
"""

from __future__ import annotations

import fnmatch
import os
import re

MAX_FOLDERS = 20_000
MAX_DOUBLE_STARS = 2
MAX_DEPTH = 64


class PathProblem(ValueError):
    """Why a config's path or pattern cannot be used (the caller makes it a ConfigError naming its file)."""


def is_glob(pattern: str) -> bool:
    return any(ch in pattern for ch in "*?[")


def confined_parts(pattern: str) -> list[str]:
    """The pattern's path components, refused when they leave the project (absolute, `~`, `..`)."""
    if os.path.isabs(pattern) or pattern.startswith("~") or pattern.startswith("\\"):
        raise PathProblem(f"'{pattern}' is an absolute path: a project's config names files inside its folder "
                          "(graphlsp reads nothing outside the project it was given)")  # fmt: skip
    parts = [p for p in re.split(r"[/\\]", pattern) if p not in ("", ".")]
    if ".." in parts:
        raise PathProblem(f"'{pattern}' leads out of the project with '..': a project's config names files inside "
                          "its folder")  # fmt: skip
    return parts


def inside(path: str, root: str) -> bool:
    """Whether `path` (links resolved) lies inside `root` (links resolved)."""
    real, base = os.path.realpath(path), os.path.realpath(root)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def _segment(part: str) -> re.Pattern[str] | None:
    """A matcher of one path component (None for `**`)."""
    if part == "**":
        return None
    if "**" in part:
        raise PathProblem("'**' can only be a whole path component")
    return re.compile(fnmatch.translate(part))


class _Pattern:
    def __init__(self, text: str, parts: list[str]) -> None:
        self.text = text
        stars = parts.count("**")
        if stars > MAX_DOUBLE_STARS:
            raise PathProblem(f"'{text}' has {stars} '**' (at most {MAX_DOUBLE_STARS}): one '**' already matches "
                              "folders at any depth")  # fmt: skip
        if not parts:
            raise PathProblem(f"'{text}' names no file")
        self.segments = [_segment(p) for p in parts]
        self.deep = stars > 0
        self.found: list[str] = []

    def could_hold(self, dirs: tuple[str, ...]) -> bool:
        """Whether a file below the folder `dirs` (components under the root) could match."""
        for i, name in enumerate(dirs):
            if i >= len(self.segments) - 1 and not self.deep:
                return False
            seg = self.segments[i] if i < len(self.segments) else None
            if seg is None:  # a `**`: anything from here on may match
                return True
            if not seg.match(name):
                return False
        return True

    def matches(self, names: tuple[str, ...]) -> bool:
        return _match(self.segments, 0, names, 0)


def _match(segs: list[re.Pattern[str] | None], i: int, names: tuple[str, ...], j: int) -> bool:
    """Components `names[j:]` against segments `segs[i:]` (`**` matches zero or more folders; at most
    MAX_DOUBLE_STARS of them, so the backtracking stays small)."""
    while i < len(segs):
        seg = segs[i]
        if seg is None:
            if i == len(segs) - 1:
                return False  # `d/**` names folders, not files (as pathlib's glob)
            return any(_match(segs, i + 1, names, k) for k in range(j, len(names)))
        if j >= len(names) or not seg.match(names[j]):
            return False
        i, j = i + 1, j + 1
    return j == len(names)


def expand(patterns: list[str], root: str, confined: bool) -> dict[str, list[str]]:
    """pattern -> the regular files it names under `root` (sorted), by one walk of the folder for all the globs.
    `confined` (a repository's config): every pattern and every file found stays inside `root`. Raises
    PathProblem naming the pattern."""
    out: dict[str, list[str]] = {}
    globs: list[_Pattern] = []
    for text in patterns:
        if confined:
            parts = confined_parts(text)
        elif os.path.isabs(os.path.expanduser(text)):
            parts = None
        else:
            parts = [p for p in re.split(r"[/\\]", text) if p not in ("", ".")]
        if not is_glob(text):
            path = os.path.join(root, *parts) if parts is not None else os.path.expanduser(text)
            if confined and os.path.lexists(path) and not inside(path, root):
                raise PathProblem(f"'{text}' is a link that leads out of the project")
            out[text] = [path]
            continue
        if parts is None:  # a user's own absolute glob: walked from its fixed leading folders
            absolute = os.path.expanduser(text)
            fixed: list[str] = []
            rest = [p for p in absolute.split(os.sep) if p]
            while rest and not is_glob(rest[0]) and len(rest) > 1:
                fixed.append(rest.pop(0))
            sub = expand([os.sep.join(rest)], os.sep + os.sep.join(fixed), False)
            out[text] = next(iter(sub.values()))
            continue
        try:
            globs.append(_Pattern(text, parts))
        except (PathProblem, re.error) as e:
            raise PathProblem(f"'{text}' is not a usable glob pattern ({e})") from None
    if globs:
        _walk(root, globs, confined)
        for g in globs:
            out[g.text] = sorted(g.found)
    return out


def _walk(root: str, globs: list[_Pattern], confined: bool) -> None:
    """One walk of `root` for every pattern: no folder link followed, at most MAX_FOLDERS folders."""
    visited = 0
    todo: list[tuple[str, tuple[str, ...]]] = [(root, ())]
    while todo:
        folder, dirs = todo.pop()
        visited += 1
        if visited > MAX_FOLDERS or len(dirs) > MAX_DEPTH:
            deep = [g.text for g in globs if g.deep] or [g.text for g in globs]
            raise PathProblem(f"'{deep[0]}' walks more than {MAX_FOLDERS} folders (or deeper than {MAX_DEPTH}): "
                              "name the folder the op libraries are in")  # fmt: skip
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError:
            continue
        for e in entries:
            names = (*dirs, e.name)
            try:
                is_dir = e.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if any(g.could_hold(names) for g in globs):
                    todo.append((e.path, names))
                continue
            wanted = [g for g in globs if g.matches(names)]
            if not wanted:
                continue
            try:
                if not e.is_file():  # a FIFO, a socket, a dangling link
                    continue
            except OSError:
                continue
            if confined and e.is_symlink() and not inside(e.path, root):
                raise PathProblem(f"'{wanted[0].text}' names {'/'.join(names)}, a link that leads out of the project")
            for g in wanted:
                g.found.append(e.path)
