"""Reading model files: ONNX text (UTF-8, tolerant of bad bytes) and binary .onnx (printed to text)."""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path

TEXT_SUFFIXES = (".onnxtxt", ".onnxtext")
MODEL_SUFFIXES = (*TEXT_SUFFIXES, ".onnx")
LIBRARY_SUFFIX = ".onnxop"  # an op library (graphlsp/oplib): `graphlsp check` reports its problems too


@dataclass(slots=True)
class Source:
    """A file's text. `binary` is set for .onnx input (the text is onnx's printout); `error` is a problem
    reading it, as (code, message, offset)."""

    path: str
    text: str
    binary: bool = False
    error: tuple[str, str, int] | None = None


def decode(data: bytes) -> tuple[str, tuple[str, str, int] | None]:
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as e:
        text = data.decode("utf-8", errors="replace")
        offset = len(data[: e.start].decode("utf-8", errors="replace"))
        return text, ("GL105", f"the file is not valid UTF-8 (byte 0x{data[e.start]:02x} at byte {e.start})", offset)


def read_source(path: str | Path) -> Source:
    """Read a model file; raises OSError when it cannot be read at all."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except ValueError as e:  # a NUL in the path: no file has that name
        raise OSError(errno.ENOENT, f"no such file ({e})") from None
    if p.suffix == ".onnx":
        import onnx
        import onnx.printer

        try:
            model = onnx.load_from_string(data)
            return Source(str(path), onnx.printer.to_text(model), binary=True)
        except Exception as e:  # onnx raises DecodeError, ValueError, RuntimeError...
            return Source(str(path), "", binary=True, error=("GL106", f"cannot load binary ONNX model: {e}", 0))
    text, error = decode(data)
    return Source(str(path), text, error=error)


def find_model_files(paths: list[str]) -> tuple[list[str], list[str]]:
    """Expand folders into model files and op library files (sorted); returns (files, paths that do not exist)."""
    files: list[str] = []
    missing: list[str] = []
    for raw in paths:
        p = Path(raw)
        if os.path.isdir(raw):  # os.path: False for a name too long or with a NUL (pathlib raises)
            files.extend(
                str(f) for f in sorted(p.rglob("*")) if f.suffix in (*MODEL_SUFFIXES, LIBRARY_SUFFIX) and f.is_file()
                and not any(part.startswith(".") for part in f.relative_to(p).parts)
            )  # fmt: skip
        elif os.path.isfile(raw):
            files.append(str(p))
        else:
            missing.append(raw)
    return files, missing
