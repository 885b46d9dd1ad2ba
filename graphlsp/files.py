"""Opening input files: only regular files, never more than a model can hold.

A path can name a FIFO (opening it blocks until a writer comes, and the server with it), a device (`/dev/zero`
reads without end), a folder or a socket. Every model, op library and cache input is opened here: the path is
checked with `os.stat` first, then opened without blocking and checked again on the open descriptor (the path
may have changed in between), and a file larger than `MAX_BYTES` is refused before it is read.
"""

from __future__ import annotations

import contextlib
import errno
import marshal
import os
import stat
from typing import TYPE_CHECKING, Any, BinaryIO

if TYPE_CHECKING:
    from pathlib import Path

try:  # hashlib's own blake2b, without importing hashlib, whose OpenSSL set-up costs 2.5 ms of a check's start
    from _blake2 import blake2b
except ImportError:  # an interpreter without the module
    from hashlib import blake2b

MAX_BYTES = 2 << 30  # 2 GiB: protobuf's limit for a model; a text file this large is no model either


class NotRegularFile(OSError):
    """The path is not a regular file (a FIFO, a device, a folder, a socket), or it is too large to read."""


def _check(st: os.stat_result, path: str | Path, limit: int) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise NotRegularFile(errno.EINVAL, "not a regular file", str(path))
    if st.st_size > limit:
        raise NotRegularFile(errno.EFBIG, f"file too large ({st.st_size} bytes; at most {limit} are read)", str(path))


def open_regular(path: str | Path, limit: int = MAX_BYTES) -> BinaryIO:
    """The file opened for binary reading; raises NotRegularFile (an OSError) for anything but a regular file of
    at most `limit` bytes, and OSError when it cannot be opened."""
    _check(os.stat(path), path, limit)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        _check(os.fstat(fd), path, limit)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str | Path, limit: int = MAX_BYTES) -> bytes:
    """The bytes of a regular file (see `open_regular`)."""
    with open_regular(path, limit) as f:
        # read what fstat says is there (a read of `limit` bytes would reserve that much memory up front), then
        # whatever the file grew by since, a chunk at a time, up to the limit
        size = os.fstat(f.fileno()).st_size
        parts = [f.read(min(size, limit) + 1)]
        total = len(parts[0])
        while total > size and total <= limit and (chunk := f.read(min(1 << 20, limit + 1 - total))):
            parts.append(chunk)
            total += len(chunk)
        data = parts[0] if len(parts) == 1 else b"".join(parts)
    if len(data) > limit:  # it grew after the check
        raise NotRegularFile(errno.EFBIG, f"file too large (at most {limit} bytes are read)", str(path))
    return data


def read_regular_text(path: str | Path, limit: int = MAX_BYTES) -> str:
    """A regular file's UTF-8 text (raises UnicodeDecodeError as `Path.read_text` does)."""
    return read_regular(path, limit).decode("utf-8")


def is_regular(path: str | Path) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def cache_dir() -> str | None:
    """graphlsp's folder in the user's cache directory (None when there is none). A string, as every path of a
    check is: pathlib and what it imports are 4 ms of a check's start."""
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        home = os.path.expanduser("~")
        if home == "~":  # no home folder to be found (Path.home() would raise)
            return None
        base = os.path.join(home, ".cache")
    folder = os.path.join(base, "graphlsp")
    try:
        os.makedirs(folder, exist_ok=True)
    except (OSError, ValueError):
        return None
    return folder


def digest(data: bytes) -> Any:
    """A hash object over `data` (update it with more), for cache keys."""
    return blake2b(data, digest_size=32)


def read_kept(path: str) -> dict[Any, Any] | None:
    """A table `keep` wrote (None when there is none, or it cannot be read: another Python's marshal, a truncated
    file)."""
    with contextlib.suppress(OSError, ValueError, EOFError, TypeError):
        data = marshal.loads(read_regular(path))
        if isinstance(data, dict):
            return data
    return None


def keep(path: str, table: dict[Any, Any]) -> None:
    """`table` written to `path` as marshal data, whole or not at all; nothing when it cannot be (a value marshal
    cannot write, a full disk): it is only a cache."""
    try:
        data = marshal.dumps(table)
    except ValueError:
        return
    write_whole(path, data)


def write_whole(path: str, data: bytes) -> None:
    """`data` written to `path` whole or not at all, through a temporary file beside it renamed over it; nothing
    when it cannot be (a full disk, a folder not writable): the callers write caches."""
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
