"""A model as it is at a git revision (`HEAD`): its bytes from `git cat-file` and its text view, for "Compare
with HEAD" in the editor. git runs with its own binary, reading one blob: no filter, textconv or hook of the
repository runs (cat-file applies none), and the fsmonitor setting is switched off."""

from __future__ import annotations

import os
import re
import subprocess

from graphlsp.files import MAX_BYTES

_REV = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./~^@{}-]*\Z")


class RevisionError(Exception):
    """The file cannot be had at that revision (the message says why)."""


def blob(path: str, rev: str = "HEAD") -> bytes:
    """The file's bytes at `rev` in the repository it is in. Raises RevisionError."""
    if not _REV.match(rev) or ".." in rev:
        raise RevisionError(f"'{rev}' is not a revision name graphlsp asks git for")
    folder, name = os.path.split(os.path.abspath(path))
    try:
        command = ["git", "-c", "core.fsmonitor=false", "--no-pager", "cat-file", "blob", f"{rev}:./{name}"]
        done = subprocess.run(command, cwd=folder, capture_output=True, timeout=60, stdin=subprocess.DEVNULL,
                              env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"})  # fmt: skip
    except FileNotFoundError:
        raise RevisionError("git is not installed") from None
    except (OSError, subprocess.TimeoutExpired) as e:
        raise RevisionError(f"git could not be run: {e}") from None
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RevisionError(f"{name} at {rev}: {why[-1] if why else 'git failed'}")
    if len(done.stdout) > MAX_BYTES:
        raise RevisionError(f"{name} at {rev} is larger than {MAX_BYTES} bytes")
    return done.stdout


def text_at(path: str, rev: str = "HEAD") -> str:
    """The file at `rev` as the editor shows it: a text model's text, a binary's view (weights summarised; external
    data read from the file's folder as it is now). Raises RevisionError."""
    data = blob(path, rev)
    name = os.path.basename(path)
    if not path.lower().endswith(".onnx"):
        from graphlsp.source import decode

        return decode(data)[0]
    from onnx import ModelProto

    from graphlsp.binary.read import model_from_proto
    from graphlsp.syntax.printer import print_model

    head = f"# graphlsp: a read-only view of {name} at {rev} (binary ONNX); weights are summarised, not shown\n"
    try:
        proto = ModelProto()
        proto.ParseFromString(data)
        model, _ = model_from_proto(proto, os.path.dirname(os.path.abspath(path)))
        return head + print_model(model, data="summary")
    except Exception as e:  # protobuf's DecodeError, a model the printer cannot write
        return head + f"# cannot read this binary ONNX model: {type(e).__name__}: {e}".replace("\n", " ") + "\n"
