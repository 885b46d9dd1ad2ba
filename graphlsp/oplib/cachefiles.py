"""Where the op DSL's caches live and what keys them: the user's cache folder (graphlsp.files) and the grammar's
digest. Kept apart from the parser so that reading a cached library imports neither it nor lark."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graphlsp.files import cache_dir

try:  # hashlib's own blake2b, without importing hashlib, whose OpenSSL set-up costs 2.5 ms of a check's start
    from _blake2 import blake2b
except ImportError:  # an interpreter without the module
    from hashlib import blake2b

__all__ = ["cache_dir", "digest", "grammar_digest", "grammar_path"]


def digest(data: bytes) -> Any:
    """A hash object over `data` (update it with more), for cache keys."""
    return blake2b(data, digest_size=32)


def grammar_path() -> Path:
    """`onnxop.lark`: inside the installed package (graphlsp/grammar), or at the repository root."""
    here = Path(__file__).resolve()
    for candidate in (here.parent.parent / "grammar" / "onnxop.lark", here.parents[2] / "grammar" / "onnxop.lark"):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError("grammar/onnxop.lark not found next to the graphlsp package")


def grammar_digest() -> str:
    return str(digest(grammar_path().read_bytes()).hexdigest()[:16])
