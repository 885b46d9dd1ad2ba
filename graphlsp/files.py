"""Every file graphlsp reads or writes goes through here (docs/security.md).

Reading: only regular files, never more than a model can hold. A path can name a FIFO (opening it blocks until a
writer comes, and the server with it), a device (`/dev/zero` reads without end), a folder, a socket, or a file of
a kernel's file system (`/proc/self/environ`: a "regular file" of size 0 that holds the process's secrets). Every
model, op library, config and cache input is opened here: the path is checked with `os.stat` first, then opened
without blocking and checked again on the open descriptor (the path may have changed in between), the file the
descriptor really is must not lie under /proc, /sys or /dev, and a file larger than `MAX_BYTES` is refused before
it is read.

Writing: `write_file` creates a temporary file exclusively (O_EXCL, O_NOFOLLOW) in the target's folder and renames
it over the target, so a link planted at the target's name is replaced, never written through; `project_cache`
is the one folder of a project graphlsp writes into without being asked, and never one that is a link.
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
SPECIAL_ROOTS = ("/proc", "/sys", "/dev")  # kernels' file systems: never a model, an op library or a config


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
        where = special_root(_opened_path(fd, path))
        if where is not None:
            raise NotRegularFile(errno.EINVAL, f"a file of the kernel's {where} file system, not a model", str(path))
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def special_root(real: str) -> str | None:
    """/proc, /sys or /dev when the (resolved) path lies under it."""
    for root in SPECIAL_ROOTS:
        if real == root or real.startswith(root + "/"):
            return root
    return None


def _opened_path(fd: int, path: str | Path) -> str:
    """The path of the file a descriptor is open on: what the kernel says (links and `..` resolved, no race with
    a path changed since), else the path resolved."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return os.path.realpath(path)


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


def read_regular_inside(path: str, folders: list[str], limit: int = MAX_BYTES) -> bytes:
    """The bytes of a regular file that lies inside one of `folders` (all resolved): checked on the path before it
    is opened (a file outside is never opened) and on the open descriptor after (a link swapped in between)."""

    def within(real: str) -> bool:
        return any(real == f or real.startswith(f.rstrip(os.sep) + os.sep) for f in folders)

    if not within(os.path.realpath(path)):
        raise OSError(errno.EACCES, "outside the workspace and the mapped folders", path)
    with open_regular(path, limit) as f:
        if not within(_opened_path(f.fileno(), path)):
            raise OSError(errno.EACCES, "outside the workspace and the mapped folders", path)
        return f.read(limit + 1)[:limit]


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
    """`data` written to `path` whole or not at all (`write_file`); nothing when it cannot be (a full disk, a folder
    not writable): the callers write caches."""
    with contextlib.suppress(OSError, ValueError):
        write_file(path, data)


_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def write_file(path: str, data: bytes, keep_mode: bool = False, sync: bool = False, dir_fd: int | None = None
               ) -> None:  # fmt: skip
    """`data` written to `path` whole or not at all: a temporary file created exclusively beside it (never one
    that exists, never through a link), then renamed over it. A link at `path` is replaced by the file, not
    followed: a repository cannot plant `m.graph.html -> ~/.bashrc` and have graphlsp write there. `keep_mode`:
    the new file takes the permission bits of the regular file it replaces; `sync`: flushed to disk before the
    rename (a fixed model: an interrupted `--fix` leaves the old file or the new one). With `dir_fd`, `path` is a
    name in that open folder. Raises OSError (and ValueError for a NUL in the path)."""
    folder, name = os.path.split(path)
    if dir_fd is None:
        folder = folder or "."
    mode = 0o666 & ~_umask()  # what open(path, "w") would give a new file
    if keep_mode:
        with contextlib.suppress(OSError):
            st = os.stat(path, dir_fd=dir_fd, follow_symlinks=False)
            if stat.S_ISREG(st.st_mode):
                mode = stat.S_IMODE(st.st_mode)
    for _ in range(8):
        tmp = f".{name[:120]}.{os.getpid()}.{os.urandom(6).hex()}.tmp"
        tmp_path = tmp if dir_fd is not None else os.path.join(folder, tmp)
        try:
            fd = os.open(tmp_path, _CREATE, 0o600, dir_fd=dir_fd)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(errno.EEXIST, "no temporary file name is free", path)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fchmod(f.fileno(), mode)
            if sync:
                os.fsync(f.fileno())
        if dir_fd is None:
            os.replace(tmp_path, path)
        else:
            os.replace(tmp_path, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_path, dir_fd=dir_fd)
        raise


_UMASK: list[int] = []


def _umask() -> int:
    """The process's umask (read once: reading it means setting it)."""
    if not _UMASK:
        mask = os.umask(0o022)
        os.umask(mask)
        _UMASK.append(mask)
    return _UMASK[0]


PROJECT_CACHE = ".graphlsp_cache"


def project_cache(root: str, create: bool = True) -> int | None:
    """The project's result cache folder (`root/.graphlsp_cache`) opened as a folder descriptor, created when
    missing; None when it cannot be or must not be used: a link (followed, it would put graphlsp's files
    anywhere), not a folder, or another user's. The caller closes the descriptor."""
    path = os.path.join(root, PROJECT_CACHE)
    if create:
        with contextlib.suppress(FileExistsError, OSError):
            os.mkdir(path, 0o755)
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except (OSError, ValueError):
        return None
    st = os.fstat(fd)
    if not stat.S_ISDIR(st.st_mode) or (hasattr(os, "geteuid") and st.st_uid != os.geteuid()):
        os.close(fd)
        return None
    return fd


def read_at(dir_fd: int, name: str, limit: int = MAX_BYTES) -> bytes:
    """The bytes of the regular file `name` in an open folder, never through a link."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(name, flags, dir_fd=dir_fd)
    with os.fdopen(fd, "rb") as f:
        _check(os.fstat(fd), name, limit)
        return f.read(limit + 1)[: limit + 1]


_SALT: list[bytes] = []


def cache_salt() -> bytes:
    """Random bytes of this user's (kept in the user's cache folder; this process's own when there is none) that
    every result cache key includes: a cache entry a repository ships can never be taken for one graphlsp wrote."""
    if _SALT:
        return _SALT[0]
    folder = cache_dir()
    salt = b""
    if folder is not None:
        path = os.path.join(folder, "salt")
        with contextlib.suppress(OSError):
            salt = read_regular(path, 64)
        if len(salt) != 32:
            salt = os.urandom(32)
            write_whole(path, salt)
    _SALT.append(salt if len(salt) == 32 else os.urandom(32))
    return _SALT[0]
