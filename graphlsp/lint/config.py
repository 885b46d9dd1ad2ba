"""Settings: `[tool.graphlsp]` in the nearest pyproject.toml, or a graphlsp.toml (the same keys at top level).

    [tool.graphlsp]
    select = ["GL1", "GL2", "GL3"]          # code prefixes or names; default: everything
    ignore = ["GL207", "unused-value"]
    severity = { GL206 = "error" }          # per-rule severity overrides
    per-file-ignores = { "legacy/*.onnxtxt" = ["GL3"] }
    fold-size-cap = 1048576                 # bytes: the largest constant the runner materializes
    inlay-hints = true                      # editor only
    op-libraries = ["ops/*.onnxop"]         # the project's op declarations (paths and globs, relative to this file)
    dims = { batch = 8 }                    # sizes of input dims (dim_params) to check the model at
    input-shapes = { images = [1, 3, 640, 640] }  # whole input shapes to check the model at
    targets = ["onnxruntime:cpu"]           # where the model must load (GL7xx): onnxruntime:cpu, :cuda, :dml
    path-map = { "/build/src" = "src" }     # an exporter's Python paths -> folders here (inside this project)
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

from graphlsp.infer.sizes import InputSizes, from_config
from graphlsp.lint.rules import RULES

SEVERITIES = ("error", "warning", "info", "hint")
CONFIG_BYTES = 16 << 20  # a config file larger than this is refused
DEFAULT_TARGETS = ("onnxruntime:cpu",)


class ConfigError(ValueError):
    pass


class Settings:
    """The `[tool.graphlsp]` settings of a project (the defaults when it has none), as a check uses them."""

    __slots__ = ("select", "ignore", "severity", "per_file_ignores", "fold_size_cap", "inlay_hints", "root", "source",
                 "op_libraries", "sizes", "targets", "path_map")

    select: list[str]
    ignore: list[str]
    severity: dict[str, str]
    per_file_ignores: dict[str, list[str]]
    fold_size_cap: int
    inlay_hints: bool
    root: str | None  # the folder of the config file (per-file-ignores patterns are relative to it)
    source: str
    op_libraries: list[str]  # the library files `op-libraries` names, resolved
    sizes: InputSizes  # `dims` and `input-shapes`: inference runs at these
    targets: list[str]  # runtimes the model must load on
    path_map: dict[str, str]  # `path-map`: a Python path prefix an exporter wrote -> an absolute folder here

    def __init__(
        self,
        select: list[str] | None = None,
        ignore: list[str] | None = None,
        severity: dict[str, str] | None = None,
        per_file_ignores: dict[str, list[str]] | None = None,
        fold_size_cap: int = 1 << 20,
        inlay_hints: bool = True,
        root: str | None = None,
        source: str = "",
        op_libraries: list[str] | None = None,
        sizes: InputSizes | None = None,
        targets: list[str] | None = None,
        path_map: dict[str, str] | None = None,
    ) -> None:
        self.select = [] if select is None else select
        self.ignore = [] if ignore is None else ignore
        self.severity = {} if severity is None else severity
        self.per_file_ignores = {} if per_file_ignores is None else per_file_ignores
        self.fold_size_cap = fold_size_cap
        self.inlay_hints = inlay_hints
        self.root = root
        self.source = source
        self.op_libraries = [] if op_libraries is None else op_libraries
        self.sizes = InputSizes() if sizes is None else sizes
        self.targets = list(DEFAULT_TARGETS) if targets is None else targets
        self.path_map = {} if path_map is None else path_map

    def __repr__(self) -> str:
        return (
            f"Settings(select={self.select!r}, ignore={self.ignore!r}, severity={self.severity!r}, "
            f"per_file_ignores={self.per_file_ignores!r}, fold_size_cap={self.fold_size_cap!r}, "
            f"inlay_hints={self.inlay_hints!r}, root={self.root!r}, source={self.source!r}, "
            f"op_libraries={self.op_libraries!r}, sizes={self.sizes!r}, targets={self.targets!r}, "
            f"path_map={self.path_map!r})"
        )

    def __eq__(self, other: object) -> bool:
        if type(other) is not Settings:
            return NotImplemented
        mine = (self.select, self.ignore, self.severity, self.per_file_ignores, self.fold_size_cap, self.inlay_hints,
                self.root, self.source, self.op_libraries, self.sizes, self.targets, self.path_map)
        theirs = (other.select, other.ignore, other.severity, other.per_file_ignores, other.fold_size_cap,
                  other.inlay_hints, other.root, other.source, other.op_libraries, other.sizes, other.targets,
                  other.path_map)
        return mine == theirs

    def __getstate__(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}  # type: ignore[attr-defined]

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            object.__setattr__(self, name, value)
        if self.op_libraries:  # a worker process: the project's op libraries are in use there too
            _use_libraries(self.op_libraries, self.source)

    def _matches(self, code: str, selectors: list[str]) -> bool:
        name = RULES[code].name if code in RULES else ""
        return any(code.startswith(s) or s == name for s in selectors)

    def enabled(self, code: str, path: str = "") -> bool:
        if self.select and not self._matches(code, self.select):
            return False
        if self._matches(code, self.ignore):
            return False
        if path and self.per_file_ignores:
            import fnmatch  # for a project with per-file-ignores

            rel = _relative(path, self.root)
            for pattern, codes in self.per_file_ignores.items():
                if fnmatch.fnmatch(rel, pattern) and self._matches(code, codes):
                    return False
        return True

    def severity_of(self, code: str, default: str) -> str:
        name = RULES[code].name if code in RULES else code
        return self.severity.get(code) or self.severity.get(name) or default

    def key(self) -> str:
        """What the result cache must depend on."""
        return repr((self.select, self.ignore, sorted(self.severity.items()), sorted(self.per_file_ignores.items()),
                     self.fold_size_cap, _digest(self.op_libraries), self.sizes, self.targets,
                     sorted(self.path_map.items())))  # fmt: skip


def _relative(path: str, root: str | None) -> str:
    """The path relative to `root` when it lies under it, else as given (written as pathlib writes it)."""
    from graphlsp.source import normal_path

    real = os.path.realpath(path)  # not Path.resolve: it raises RuntimeError on a symlink loop
    if root is not None:
        base = os.path.realpath(root)
        if real == base:
            return "."
        if real.startswith(base.rstrip(os.sep) + os.sep):
            return normal_path(real[len(base.rstrip(os.sep)) + 1 :]).replace(os.sep, "/")
    return normal_path(path).replace(os.sep, "/")


def _digest(paths: list[str]) -> str:
    import hashlib  # 2 ms of imports, for a config that names op libraries

    from graphlsp.files import read_regular

    h = hashlib.sha256()
    for p in paths:
        h.update(p.encode())
        with contextlib.suppress(OSError):
            h.update(read_regular(p))
    return h.hexdigest()[:16] if paths else ""


def check_rules(values: list[str], where: str, prefixes: bool = True) -> None:
    """Each of `values` names a rule: a code, a code prefix (`GL3`; not with `prefixes` False) or a rule name.
    A typo would silently turn checking off, so it is an error, with the nearest names offered."""
    import difflib

    names = {r.name for r in RULES.values()}
    for value in values:
        known = value in names or value in RULES or (prefixes and any(code.startswith(value) for code in RULES))
        if known and value:
            continue
        look_alike = value.upper().replace("O", "0").replace("I", "1").replace("L", "1").replace("G1", "GL")
        close = [look_alike] if look_alike in RULES else []  # GL3O1 (letter O), gl301
        close += [c for c in difflib.get_close_matches(value, [*RULES, *sorted(names)], n=3, cutoff=0.6)
                  if c not in close][: 3 - len(close)]  # fmt: skip
        if not close and value[:2].upper() == "GL":  # GL9999 -> GL9xx
            close = [c for c in RULES if c.startswith(value.upper()[:3])][:3]
        hint = f" (did you mean {' or '.join(close)}?)" if close else ""
        raise ConfigError(f"{where}: unknown rule code or name '{value}'{hint}; `graphlsp rules` lists them")


def _check_codes(s: Settings, source: str) -> None:
    """Every code and name the settings mention names a rule."""
    check_rules(s.select, f"{source}: select")
    check_rules(s.ignore, f"{source}: ignore")
    check_rules(list(s.severity), f"{source}: severity", prefixes=False)
    for pattern, codes in s.per_file_ignores.items():
        check_rules(codes, f"{source}: per-file-ignores '{pattern}'")


def _op_libraries(value: Any, root: str | None, source: str, confined: bool = True) -> list[str]:
    """`op-libraries`: paths and globs relative to the config file's folder; each must name a file. A project's
    config (`confined`) names files inside its folder only (graphlsp/lint/project_paths.py)."""
    from graphlsp.lint.project_paths import PathProblem, expand

    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise ConfigError(f"{source}: op-libraries must be a list of paths or glob patterns of .onnxop files")
    try:
        found = expand(value, root if root is not None else os.getcwd(), confined)
    except PathProblem as e:
        raise ConfigError(f"{source}: op-libraries: {e}") from None
    out: list[str] = []
    for pattern in value:
        files = found[pattern]
        if "*" in pattern or "?" in pattern or "[" in pattern:
            if not files:
                raise ConfigError(f"{source}: op-libraries: '{pattern}' matches no file")
        elif not os.path.isfile(files[0]):
            raise ConfigError(f"{source}: op-libraries: '{pattern}' is not a file")
        for path in files:
            _a_library(path, pattern, source)
        out += files
    return list(dict.fromkeys(out))


def _a_library(path: str, pattern: str, source: str) -> None:
    """A file `op-libraries` names is an op library (a regular file, not of /proc, that starts as one): else a
    config error that quotes nothing of it (its syntax errors would print its lines)."""
    from graphlsp.files import read_regular
    from graphlsp.source import HEAD_BYTES, not_model_problem

    try:
        problem = not_model_problem(read_regular(path)[:HEAD_BYTES], library=True)
    except OSError as e:
        raise ConfigError(f"{source}: op-libraries: '{pattern}': {path}: {e.strerror or e}") from None
    if problem is not None:
        raise ConfigError(f"{source}: op-libraries: '{pattern}': {path}: {problem}")


def _use_libraries(paths: list[str], source: str) -> None:
    """Put a project's op libraries in use (graphlsp.oplib's catalog); their errors are a ConfigError, except in a
    file an editor has open (its text stands for the file: the editor shows its errors on it)."""
    from graphlsp.oplib.catalog import CATALOG

    libs = CATALOG.add_files(list(paths))
    problems = [p for lib in libs if not CATALOG.overlaid(lib.path) for p in lib.errors]
    if problems:
        shown = "\n".join(f"  {p}" for p in problems[:20])
        more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
        raise ConfigError(f"{source}: op-libraries: {len(problems)} error(s) (the ops they are in are left out; "
                          f"`python -m graphlsp.oplib check FILE` lists them):\n{shown}{more}")  # fmt: skip


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(x, str) for x in value)


def _validate(raw: dict[str, Any], source: str, root: str | None = None, confined: bool = True) -> Settings:
    s = Settings(source=source)
    known = {"select", "ignore", "severity", "per-file-ignores", "fold-size-cap", "inlay-hints", "op-libraries",
             "dims", "input-shapes", "targets", "path-map"}
    unknown = set(raw) - known
    if unknown:
        import difflib

        def near(key: str) -> str:
            close = difflib.get_close_matches(key.replace("_", "-").lower(), sorted(known), n=1, cutoff=0.6)
            return f"'{key}' (did you mean '{close[0]}'?)" if close else f"'{key}'"

        raise ConfigError(f"{source}: unknown setting{'s' if len(unknown) > 1 else ''} "
                          f"{', '.join(near(k) for k in sorted(unknown))}; the settings are {', '.join(sorted(known))}")
    for key in ("select", "ignore"):
        value = raw.get(key, [])
        if not _strings(value):
            raise ConfigError(f"{source}: {key} must be a list of rule codes or names")
        setattr(s, key, value)
    sev = raw.get("severity", {})
    if not isinstance(sev, dict) or not all(v in SEVERITIES for v in sev.values()):
        raise ConfigError(f"{source}: severity values must be one of {', '.join(SEVERITIES)}")
    s.severity = dict(sev)
    pfi = raw.get("per-file-ignores", {})
    if not isinstance(pfi, dict) or not all(_strings(v) for v in pfi.values()):
        raise ConfigError(f"{source}: per-file-ignores maps glob patterns to lists of codes")
    s.per_file_ignores = dict(pfi)
    if confined:  # a project's patterns match paths inside it
        from graphlsp.lint.project_paths import PathProblem, confined_parts

        for pattern in pfi:
            try:
                confined_parts(pattern)
            except PathProblem as e:
                raise ConfigError(f"{source}: per-file-ignores: {e}") from None
    cap = raw.get("fold-size-cap", s.fold_size_cap)
    if not isinstance(cap, int) or isinstance(cap, bool) or cap < 0:
        raise ConfigError(f"{source}: fold-size-cap must be a non-negative integer (bytes)")
    s.fold_size_cap = cap
    s.inlay_hints = bool(raw.get("inlay-hints", True))
    try:
        s.sizes = from_config(raw.get("dims", {}), raw.get("input-shapes", {}), source)
    except ValueError as e:
        raise ConfigError(str(e)) from None
    s.targets = validate_targets(raw.get("targets", list(DEFAULT_TARGETS)), source)
    s.root = root
    s.path_map = validate_path_map(raw.get("path-map", {}), root, source, anywhere=not confined)
    _check_codes(s, source)
    if "op-libraries" in raw:
        s.op_libraries = _op_libraries(raw["op-libraries"], root, source, confined)
        _use_libraries(s.op_libraries, source)
    return s


def validate_path_map(value: Any, root: str | None, source: str, anywhere: bool = False) -> dict[str, str]:
    """`path-map`: a table of an exporter's path prefixes (`/build/src`) to folders here, relative to the config's
    folder. A project's config may map only into its own folder (graphlsp reads the mapped files' lines; a
    repository must not make it read elsewhere); the user's own config (`anywhere`) may map anywhere."""
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) and k and v
                                              for k, v in value.items()):  # fmt: skip
        raise ConfigError(f"{source}: path-map must be a table of path prefixes to folders, like "
                          '{ "/build/src" = "src" }')  # fmt: skip
    base = os.path.realpath(root) if root is not None else os.getcwd()
    out = {}
    for prefix, folder in value.items():
        if "\0" in prefix or "\0" in folder:
            raise ConfigError(f"{source}: path-map: a path with a NUL character")
        target = os.path.realpath(os.path.join(base, os.path.expanduser(folder) if anywhere else folder))
        if not anywhere and target != base and not target.startswith(base.rstrip(os.sep) + os.sep):
            raise ConfigError(f"{source}: path-map: '{folder}' leaves the project's folder ({base}); a project may "
                              "map only into its own files")  # fmt: skip
        if not os.path.isdir(target):
            raise ConfigError(f"{source}: path-map: '{folder}' is not a folder")
        out[prefix] = target
    return out


def validate_targets(value: Any, source: str, key: str = "targets: ") -> list[str]:
    """`targets`: runtime:provider names the kernel tables know (checked here, the tables read only when a model
    is checked). `key`: what names the setting after `source` in a message (nothing for `--target`)."""
    from graphlsp.runtime.kernels import TargetError, known_target

    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise ConfigError(f"{source}: targets must be a list like [\"onnxruntime:cpu\", \"onnxruntime:cuda\"]")
    out = []
    for spec in value:
        try:
            out.append(known_target(spec))
        except TargetError as e:
            raise ConfigError(f"{source}: {key}{e}") from None
    return list(dict.fromkeys(out))


def from_editor(base: Settings, options: dict[str, Any] | None) -> Settings:
    """The editor's settings (initializationOptions or workspace/configuration, camelCase) over the file's."""
    if not options:
        return base
    raw = {
        "select": options.get("select", base.select),
        "ignore": options.get("ignore", base.ignore),
        "severity": options.get("severity", base.severity),
        "per-file-ignores": base.per_file_ignores,
        "fold-size-cap": options.get("foldSizeCap", base.fold_size_cap),
        "inlay-hints": options.get("inlayHints", base.inlay_hints),
        "dims": options.get("dims", base.sizes.dim_map()),
        "input-shapes": options.get("inputShapes", {k: list(v) for k, v in base.sizes.shapes}),
        "targets": options.get("targets", base.targets),
        "path-map": options.get("pathMap", base.path_map),
    }
    # a workspace's settings are the repository's (docs/security.md): its rule, like the project's config
    s = _validate(raw, "editor settings", base.root)
    s.op_libraries = base.op_libraries
    return s


def load_settings(start: str | os.PathLike[str], user: bool = False) -> Settings:
    """The settings for files under `start`: the nearest graphlsp.toml or pyproject.toml with [tool.graphlsp].
    A project's config names files inside its folder only; `user`: the config is the user's own (`--config`),
    whose paths may lead anywhere (docs/security.md)."""
    # os.path, not pathlib: a symlink loop, a name too long or with a NUL is a file that cannot be read, not an error
    try:
        here = os.path.realpath(start)
    except ValueError:  # a NUL in the path
        here = os.path.abspath(str(start).replace("\0", ""))
    if os.path.isfile(here):
        here = os.path.dirname(here)
    folder, parent = here, ""
    while folder != parent:  # the folder, then each folder above it up to the root
        if parent:
            folder = parent
        parent = os.path.dirname(folder)
        own = os.path.join(folder, "graphlsp.toml")
        if os.path.isfile(own):
            return _validate(_read(own), own, folder, not user)
        py = os.path.join(folder, "pyproject.toml")
        if os.path.isfile(py):
            tool = _read(py).get("tool", {})
            if not isinstance(tool, dict):
                raise ConfigError(f"{py}: `tool` must be a table ([tool.graphlsp] holds graphlsp's settings)")
            table = tool.get("graphlsp")
            if isinstance(table, dict):
                return _validate(table, f"{py} [tool.graphlsp]", folder, not user)
            if table is not None:
                raise ConfigError(f"{py}: tool.graphlsp must be a table of settings")
    return Settings()


def _read(path: str) -> dict[str, Any]:
    """The TOML of a config file. A file read before is not parsed again: its parse is kept in the cache folder,
    named by a digest of its bytes (tomllib's import and a pyproject.toml's parse take 5-7 ms, a twentieth of a
    small model's whole check; reading the kept parse, 0.1 ms)."""
    from graphlsp.files import cache_dir, digest, keep, read_kept, read_regular

    try:
        data = read_regular(path, CONFIG_BYTES)  # a regular file (never a FIFO that blocks), of a config's size
    except OSError as e:
        raise ConfigError(f"{path}: {e}") from None
    folder = cache_dir()
    kept = os.path.join(folder, f"toml-{digest(data).hexdigest()[:32]}.marshal") if folder is not None else None
    found = read_kept(kept) if kept is not None else None
    if found is not None:
        return found
    parsed = _parse(path, data)
    if kept is not None:
        keep(kept, parsed)  # not kept when marshal cannot write a value (a TOML date)
    return parsed


def _parse(path: str, data: bytes) -> dict[str, Any]:
    import tomllib  # 5 ms of imports, for a folder that has a config file

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not UTF-8 text, as TOML must be (byte {e.start}: {e.reason})") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: {e}") from None
    except RecursionError:  # tomllib parses arrays and inline tables recursively
        raise ConfigError(f"{path}: arrays or tables nested too deeply to read") from None
