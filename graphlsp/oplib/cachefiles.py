"""Where the op DSL's caches live and what keys them: the user's cache folder (graphlsp.files) and the grammar's
digest. Kept apart from the parser so that reading a cached library imports neither it nor lark."""

from __future__ import annotations

from pathlib import Path

from graphlsp.files import cache_dir, digest

__all__ = ["cache_dir", "digest", "grammar_digest", "grammar_path"]


def grammar_path() -> Path:
    """`onnxop.lark`: inside the installed package (graphlsp/grammar), or at the repository root."""
    here = Path(__file__).resolve()
    for candidate in (here.parent.parent / "grammar" / "onnxop.lark", here.parents[2] / "grammar" / "onnxop.lark"):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError("grammar/onnxop.lark not found next to the graphlsp package")


def grammar_digest() -> str:
    return str(digest(grammar_path().read_bytes()).hexdigest()[:16])
