"""Reading model files: ONNX text (UTF-8, tolerant of bad bytes) and binary .onnx (printed to text)."""

from __future__ import annotations

import errno
import os
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

TEXT_SUFFIXES = (".onnxtxt", ".onnxtext")
MODEL_SUFFIXES = (*TEXT_SUFFIXES, ".onnx")
LIBRARY_SUFFIX = ".onnxop"  # an op library (graphlsp/oplib): `graphlsp check` reports its problems too


class Source:
    """A file's text. `binary` is set for .onnx input (the text is onnx's printout); `error` is a problem
    reading it, as (code, message, offset)."""

    __slots__ = ("path", "text", "binary", "error")

    path: str
    text: str
    binary: bool
    error: tuple[str, str, int] | None

    def __init__(
        self,
        path: str,
        text: str,
        binary: bool = False,
        error: tuple[str, str, int] | None = None,
    ) -> None:
        self.path = path
        self.text = text
        self.binary = binary
        self.error = error

    def __repr__(self) -> str:
        return f"Source(path={self.path!r}, text={self.text!r}, binary={self.binary!r}, error={self.error!r})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not Source:
            return NotImplemented
        return (self.path, self.text, self.binary, self.error) == (other.path, other.text, other.binary, other.error)


_STDIN_HINT = "name the file *.onnx (on standard input: `--stdin-filename model.onnx`)"


def binary_problem(data: bytes) -> str | None:
    """Why these bytes are not ONNX text at all (a binary model, or other binary data), or None. One finding
    says so: parsing raw bytes as text would only give a syntax error per line."""
    from graphlsp.binary.wire import looks_like_model

    if looks_like_model(data):
        return f"this is a binary ONNX model (protobuf), not ONNX text: {_STDIN_HINT}"
    if b"\0" in data[:65536]:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as e:
            return (f"this is binary data, not ONNX text (byte 0x{data[e.start]:02x} at byte {e.start} is not UTF-8); "
                    f"a binary ONNX model: {_STDIN_HINT}")
    return None


# What the first bytes of ONNX text are (after a BOM, blank space and `#` comments): a header entry `<name:`, or a
# graph's name and its signature `name (` / `name =>`; or nothing at all. Protobuf text format (GL102 explains it)
# starts with a ModelProto field's name. An op library starts with `library`, `domain` or `op`.
_LEAD = rb"\A(?:\xef\xbb\xbf)?(?:\s++|#[^\r\n]*+)*+"
_TEXT_MODEL = re.compile(_LEAD + rb"""(?:\Z|<\s*+[A-Za-z_]\w*+\s*+:"""
                         rb"""|(?:[A-Za-z_]\w*+|"(?:[^"\\]|\\[\s\S])*+")\s*+(?:\(|=>)"""
                         rb"|(?:ir_version|producer_name|producer_version|opset_import|graph|model_version|doc_string"
                         rb"|domain|metadata_props|functions)\s*+[:{])")  # fmt: skip
_LIBRARY = re.compile(_LEAD + rb"(?:\Z|(?:library|domain|op)\s)")
HEAD_BYTES = 1 << 16  # the structure is judged on the first 64 KiB


def not_model_problem(data: bytes, library: bool = False) -> str | None:
    """Why a file read from disk is not ONNX text (or, `library`, not an op library), or None. A file that is not
    one is never parsed: every syntax error would quote a line of it, and a link in a repository can name any file
    (`models/bert.onnxtxt -> ~/.aws/credentials`). Binary data is left to `binary_problem`, which names it."""
    head = data[:HEAD_BYTES]
    if (_LIBRARY if library else _TEXT_MODEL).match(head) or binary_problem(data) is not None:
        return None
    what = ("an op library (it starts with no `library`, `domain` or `op` declaration)" if library else
            "a model (neither ONNX text, which starts with a `<ir_version: ...>` header or `name (inputs) => "
            "(outputs)`, nor a binary model)")  # fmt: skip
    return f"this file is not {what}: it is not read, and nothing of it is shown"


def decode(data: bytes) -> tuple[str, tuple[str, str, int] | None]:
    """The text and a problem reading it (code, message, offset). Binary data gives no text and one problem."""
    problem = binary_problem(data)
    if problem is not None:
        return "", ("GL105", problem, 0)
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as e:
        text = data.decode("utf-8", errors="replace")
        offset = len(data[: e.start].decode("utf-8", errors="replace"))
        return text, ("GL105", f"the file is not valid UTF-8 (byte 0x{data[e.start]:02x} at byte {e.start})", offset)


def is_binary(path: str | os.PathLike[str]) -> bool:
    """A binary model's name: `*.onnx`, in any case (`MODEL.ONNX` from a Windows export)."""
    return os.fspath(path).lower().endswith(".onnx")


def read_source(path: str | Path) -> Source:
    """Read a model file; raises OSError when it cannot be read at all."""
    from graphlsp.files import read_regular

    try:
        data = read_regular(path)
    except ValueError as e:  # a NUL in the path: no file has that name
        raise OSError(errno.ENOENT, f"no such file ({e})") from None
    if is_binary(path):
        import onnx
        import onnx.printer

        try:
            model = onnx.load_from_string(data)
            return Source(str(path), onnx.printer.to_text(model), binary=True)
        except Exception as e:  # onnx raises DecodeError, ValueError, RuntimeError...
            return Source(str(path), "", binary=True, error=("GL106", f"cannot load binary ONNX model: {e}", 0))
    problem = not_model_problem(data, str(path).lower().endswith(LIBRARY_SUFFIX))
    if problem is not None:
        return Source(str(path), "", error=("GL105", problem, 0))
    text, error = decode(data)
    return Source(str(path), text, error=error)


def _plain(path: str) -> bool:
    """Whether pathlib writes the path as it is given (most paths: then pathlib, 4 ms of imports, is not needed)."""
    return (os.sep == "/" and path not in ("", ".") and "//" not in path and "/./" not in path
            and not path.startswith("./") and not path.endswith(("/", "/.")))  # fmt: skip


def normal_path(path: str) -> str:
    """The path as pathlib writes it (`./a//b/` -> `a/b`), as every report names the files it was given; pathlib
    is imported only for a path it would write otherwise."""
    if _plain(path):
        return path
    from pathlib import Path

    return str(Path(path))


def _stays_in(path: Path, root: str) -> bool:
    """Whether a file found under `root` is inside it: a link that leads out of the folder (`m.onnxtxt ->
    /etc/passwd`, `-> ../../.env`) is not one of its files (rglob follows no folder link, git and ruff keep to
    the tree as well)."""
    if not path.is_symlink():
        return True
    real = os.path.realpath(path)
    return real.startswith(root.rstrip(os.sep) + os.sep)


def find_model_files(paths: list[str]) -> tuple[list[str], list[str]]:
    """Expand folders into model files and op library files (sorted), never one through a link that leaves the
    folder; returns (files, paths that do not exist)."""
    files: list[str] = []
    missing: list[str] = []
    for raw in paths:
        if os.path.isdir(raw):  # os.path: False for a name too long or with a NUL (pathlib raises)
            from pathlib import Path

            p = Path(raw)
            root = os.path.realpath(raw)
            files.extend(
                str(f) for f in sorted(p.rglob("*")) if f.suffix.lower() in (*MODEL_SUFFIXES, LIBRARY_SUFFIX)
                and f.is_file() and not any(part.startswith(".") for part in f.relative_to(p).parts)
                and _stays_in(f, root)
            )  # fmt: skip
        elif os.path.lexists(raw):  # a file, or what is not one (a FIFO, a loop): reading it says which
            files.append(normal_path(raw))
        else:
            missing.append(raw)
    return files, missing
